package mcp

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"sort"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// Lists are paged by key (tool name, resource URI, template, prompt name)
// in sorted order. A cursor names the last key of the previous page, so a
// client paging through a list that changes meanwhile neither skips nor
// repeats the items that stayed; the cursor is sealed with an HMAC so a
// forged or damaged cursor is refused (InvalidParams) instead of being
// silently interpreted.

// DefaultPageSize is the list page size when ServerOptions.PageSize is 0.
const DefaultPageSize = 100

const macLen = 16

type cursorSealer struct{ key []byte }

func newSealer(key []byte) cursorSealer {
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			panic("mcp: no randomness for the cursor key: " + err.Error())
		}
	} else {
		key = append([]byte(nil), key...)
	}
	return cursorSealer{key: key}
}

func (c cursorSealer) mac(kind byte, last string) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte{kind})
	m.Write([]byte(last))
	return m.Sum(nil)[:macLen]
}

func (c cursorSealer) seal(kind byte, last string) string {
	b := make([]byte, 0, 1+len(last)+macLen)
	b = append(b, kind)
	b = append(b, last...)
	b = append(b, c.mac(kind, last)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (c cursorSealer) open(kind byte, cursor string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) < 1+macLen || b[0] != kind {
		return "", false
	}
	last := string(b[1 : len(b)-macLen])
	if !hmac.Equal(b[len(b)-macLen:], c.mac(kind, last)) {
		return "", false
	}
	return last, true
}

var errBadCursor = wire.NewError(wire.InvalidParams, "Invalid params: invalid cursor")

// nRevs is the number of encodings kept per item: 03, 06, 11 (and later).
const nRevs = 3

func revIndex(r Revision) int {
	switch r.orDefault() {
	case Rev20250326:
		return 0
	case Rev20250618:
		return 1
	}
	return 2
}

var encodeRevs = [nRevs]Revision{Rev20250326, Rev20250618, Rev20251125}

// pageSet is one list, sorted and pre-encoded per revision, with its first
// page pre-assembled: tools/list without a cursor is a slice copy.
type pageSet struct {
	kind    byte
	listKey string
	size    int
	keys    []string
	items   [nRevs][][]byte
	first   [nRevs][]byte
}

// newPageSet builds the list from keyed items whose encodings exist.
func newPageSet(kind byte, listKey string, size int, sealer cursorSealer, keys []string, enc func(i int) *[nRevs][]byte) *pageSet {
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return keys[idx[a]] < keys[idx[b]] })
	p := &pageSet{kind: kind, listKey: listKey, size: size, keys: make([]string, len(keys))}
	for r := range nRevs {
		p.items[r] = make([][]byte, len(keys))
	}
	for j, i := range idx {
		p.keys[j] = keys[i]
		e := enc(i)
		for r := range nRevs {
			p.items[r][j] = e[r]
		}
	}
	for r := range nRevs {
		p.first[r] = p.assemble(r, 0, sealer)
	}
	return p
}

func (p *pageSet) assemble(r, start int, sealer cursorSealer) []byte {
	end := min(start+p.size, len(p.keys))
	next := ""
	if end < len(p.keys) {
		next = sealer.seal(p.kind, p.keys[end-1])
	}
	return appendPage(nil, p.listKey, p.items[r][start:end], next)
}

// page returns the encoded page after cursor for revision rev.
func (p *pageSet) page(rev Revision, cursor string, sealer cursorSealer) ([]byte, *wire.Error) {
	r := revIndex(rev)
	if cursor == "" {
		return p.first[r], nil
	}
	last, ok := sealer.open(p.kind, cursor)
	if !ok {
		return nil, errBadCursor
	}
	start := sort.SearchStrings(p.keys, last)
	if start < len(p.keys) && p.keys[start] == last {
		start++
	}
	return p.assemble(r, start, sealer), nil
}
