package mcp

import (
	"context"
	"sort"

	"github.com/saguaro-go/saguaro/mcp/internal/seal"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// Lists are paged by key (tool name, resource URI, template, prompt name)
// in sorted order. A cursor names the last key of the previous page, so a
// client paging through a list that changes meanwhile neither skips nor
// repeats the items that stayed; the cursor is sealed with an HMAC so a
// forged or damaged cursor is refused (InvalidParams) instead of being
// silently interpreted. Cursors are signed with the Server's Keys.

// DefaultPageSize is the list page size when ServerOptions.PageSize is 0.
const DefaultPageSize = 100

var errBadCursor = wire.NewError(wire.InvalidParams, "Invalid params: invalid cursor")

// nRevs is the number of encodings kept per item: 2025-03-26, 2025-06-18, 2025-11-25 and later.
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
// page pre-assembled: tools/list without a cursor is a slice copy. When
// an item is hidden from some callers (Access.Hidden), each caller's pages
// are assembled from the items it may see; a cursor names the last key
// either way, so it stays right for its caller as the list changes.
type pageSet struct {
	kind    byte
	listKey string
	size    int
	keys    []string
	items   [nRevs][][]byte
	first   [nRevs][]byte
	access  []*Access // per item; nil when no item is hidden from anyone
	gated   bool      // some item has an Access
	ui      *pageSet  // the list for clients that render views (see View); nil: the same
}

// isGated reports whether an item of either list has an Access.
func (p *pageSet) isGated() bool { return p.gated || p.ui != nil && p.ui.gated }

// hides reports whether either list hides an item from some callers.
func (p *pageSet) hides() bool { return p.access != nil || p.ui != nil && p.ui.access != nil }

// newPageSet builds the list from keyed items whose encodings exist; acc
// gives an item's Access.
func newPageSet(kind byte, listKey string, size int, sealKeys *seal.Keys, keys []string, enc func(i int) *[nRevs][]byte, acc func(i int) *Access) *pageSet {
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
		a := acc(i)
		p.gated = p.gated || a != nil
		if a != nil && a.Hidden {
			if p.access == nil {
				p.access = make([]*Access, len(keys))
			}
			p.access[j] = a
		}
	}
	for r := range nRevs {
		p.first[r] = p.assemble(r, 0, sealKeys)
	}
	return p
}

func (p *pageSet) assemble(r, start int, keys *seal.Keys) []byte {
	end := min(start+p.size, len(p.keys))
	next := ""
	if end < len(p.keys) {
		next = keys.Sign(p.kind, p.keys[end-1])
	}
	return appendPage(nil, p.listKey, p.items[r][start:end], next)
}

// page returns the encoded page after req's cursor, for its revision and
// its caller.
func (p *pageSet) page(ctx context.Context, req *ListRequest, keys *seal.Keys) ([]byte, *wire.Error) {
	if p.ui != nil && req.RendersViews() {
		p = p.ui
	}
	r := revIndex(req.Revision)
	if req.Cursor == "" && p.access == nil {
		return p.first[r], nil
	}
	start := 0
	if req.Cursor != "" {
		last, err := keys.Verify(p.kind, req.Cursor)
		if err != nil {
			return nil, errBadCursor
		}
		start = sort.SearchStrings(p.keys, last)
		if start < len(p.keys) && p.keys[start] == last {
			start++
		}
	}
	if p.access == nil {
		return p.assemble(r, start, keys), nil
	}
	return p.assembleFor(ctx, &req.Request, r, start, keys), nil
}

// assembleFor is assemble with only the items the caller of req may see.
func (p *pageSet) assembleFor(ctx context.Context, req *Request, r, start int, keys *seal.Keys) []byte {
	granted := req.grantedScopes(ctx)
	visible := func(j int) bool { return p.access[j] == nil || p.access[j].checkWith(ctx, req, granted) == allowed }
	items := make([][]byte, 0, min(p.size, len(p.keys)-start))
	j := start
	for ; j < len(p.keys) && len(items) < p.size; j++ {
		if visible(j) {
			items = append(items, p.items[r][j])
		}
	}
	next := ""
	for k := j; k < len(p.keys); k++ {
		if visible(k) {
			next = keys.Sign(p.kind, p.keys[j-1])
			break
		}
	}
	return appendPage(nil, p.listKey, items, next)
}
