// Package payload is the big text of the payload workload, shared by the
// load generator and every server so that what a server returns is
// exactly what the checker expects: the documents served by resources/read
// (Document, one per size, at DocURI) and the text of each tools/call echo
// (Echo: a head line distinct per request, then a fixed body).
//
// The text looks like the file contents MCP traffic carries: Go source
// code with tabs, newlines, quotes, backslashes, HTML-special characters
// and some non-ASCII letters (two-, three- and four-byte UTF-8), so that
// its JSON form has the escapes real files have. It is deterministic (a
// fixed pseudo-random sequence, the same in every process and on every
// run) and valid UTF-8.
package payload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// DefaultSizesKiB are the sizes of the payload workload, in KiB, unless
// the load generator's -payload-sizes says otherwise; the servers serve a
// document of each size the load generator names (serve's -payload-docs).
var DefaultSizesKiB = []int{1, 16, 256}

// MIMEType is the media type of every document.
const MIMEType = "text/x-go"

// DocURI is the URI of the document of kib KiB: bench://doc/<kib>.
func DocURI(kib int) string { return "bench://doc/" + strconv.Itoa(kib) }

// DocName is the resource name of the document of kib KiB.
func DocName(kib int) string { return "doc-" + strconv.Itoa(kib) + "KiB" }

var docs sync.Map // size in bytes -> string

// Document is n bytes of source-like text (n ≥ 0): exactly n bytes of
// valid UTF-8, the same for the same n in every process. Documents are
// generated once per size and kept.
func Document(n int) string {
	if d, ok := docs.Load(n); ok {
		return d.(string)
	}
	d, _ := docs.LoadOrStore(n, generate(n))
	return d.(string)
}

// generate writes lines of the fixed sequence until there are n bytes,
// cuts at n (backing off to the start of a rune cut in two) and fills
// the end with newlines, so the size is exact.
func generate(n int) string {
	var b strings.Builder
	b.Grow(n + 256)
	g := &gen{state: 0x5eed_5a6a_a0b0_c0d0}
	for b.Len() < n {
		g.block(&b)
	}
	s := b.String()[:n]
	for len(s) > 0 {
		if r, size := utf8.DecodeLastRuneInString(s); r != utf8.RuneError || size > 1 {
			break
		}
		s = s[:len(s)-1] // the last rune was cut in two
	}
	return s + strings.Repeat("\n", n-len(s))
}

// gen is a splitmix64 sequence: fixed here, so the text cannot change
// with a Go release.
type gen struct{ state uint64 }

func (g *gen) next() uint64 {
	g.state += 0x9e3779b97f4a7c15
	z := g.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (g *gen) intn(n int) int { return int(g.next() % uint64(n)) }

func (g *gen) pick(xs []string) string { return xs[g.intn(len(xs))] }

var (
	idents = []string{"parse", "render", "lookup", "encode", "decode", "flush", "index", "merge", "split", "resolve", "quote", "scan"}
	nouns  = []string{"header", "cursor", "token", "payload", "résumé", "entry", "façade", "segment", "naïve path", "Straße", "niño", "cliché"}
	words  = []string{"clé", "über", "smörgåsbord", "Ελλάδα", "日本語", "café", "Zürich", "São Paulo", "Kraków", "jalapeño", "résumé", "ñandú"}
	types  = []string{"string", "int", "[]byte", "map[string]any", "*Entry", "error", "bool", "float64"}
)

// block writes one function-sized block of source, a comment and a body
// of lines chosen from the templates below.
func (g *gen) block(b *strings.Builder) {
	name := g.pick(idents) + strconv.Itoa(g.intn(1000))
	fmt.Fprintf(b, "// %s returns the %s of a %q value (see docs\\%s.md).\n", name, g.pick(nouns), g.pick(words), g.pick(idents))
	if g.intn(7) == 0 {
		b.WriteString("// “Smart quotes”, an em dash — and a rocket 🚀 in a comment.\n")
	}
	fmt.Fprintf(b, "func %s(ctx context.Context, in map[string]any) (%s, error) {\n", name, g.pick(types))
	for lines := 3 + g.intn(8); lines > 0; lines-- {
		g.line(b)
	}
	b.WriteString("\treturn nil, nil\n}\n\n")
}

func (g *gen) line(b *strings.Builder) {
	w, n := g.pick(words), g.intn(1<<16)
	switch g.intn(10) {
	case 0:
		fmt.Fprintf(b, "\tv, ok := in[%q].(string)\n\tif !ok || v == \"\" {\n\t\treturn nil, fmt.Errorf(\"%%s: missing %%q\", %q, %q)\n\t}\n", w, g.pick(idents), w)
	case 1:
		fmt.Fprintf(b, "\tpath := \"C:\\\\Users\\\\%s\\\\%d.txt\" // a Windows path\n", w, n)
	case 2:
		fmt.Fprintf(b, "\tre := regexp.MustCompile(`^\\d+\\.\\d{%d}$|\\s*\"%s\"`)\n", n%9, w)
	case 3:
		fmt.Fprintf(b, "\ts := strings.ReplaceAll(v, \"\\t\", \"    \") + \"\\n\" // tab → spaces\n")
	case 4:
		fmt.Fprintf(b, "\tif n := len(s); n > %d && n <= 1<<%d {\n\t\ts = s[:n-1]\n\t}\n", n, n%20)
	case 5:
		fmt.Fprintf(b, "\tfor i := 0; i < %d; i++ {\n\t\tsum += float64(i) * %d.5\n\t}\n", n%512, n%97)
	case 6:
		fmt.Fprintf(b, "\thtml := fmt.Sprintf(\"<p class=\\\"%s\\\">%%s &amp; %%s</p>\", a, b)\n", w)
	case 7:
		fmt.Fprintf(b, "\tm := map[string]int{%q: %d, \"key\\u00e9\": %d} // é escaped in source\n", w, n, n/3)
	case 8:
		fmt.Fprintf(b, "\t/* %s: '%c' and \"%s\" */\n", g.pick(nouns), []rune(w)[0], w)
	default:
		fmt.Fprintf(b, "\tlog.Printf(\"%s=%%v %s\\n\", %s) // %s\n", g.pick(idents), w, g.pick(idents), g.pick(nouns))
	}
}

// HeadLen is the length of an Echo head line: fixed, so that the body
// after it, and its JSON encoding, are computed once per size.
const HeadLen = 64

// Echo is the tools/call text of one size: a head line distinct per
// request (Head), then the same body, so that an answer routed to the
// wrong request fails the check while the load generator encodes the
// long part once.
type Echo struct {
	// Size is the text's size in bytes: HeadLen plus the body.
	Size int
	// Body is Document(Size - HeadLen).
	Body string
	// bodyJSON is Body as a JSON string without its opening quote.
	bodyJSON []byte
}

// NewEcho is the echo text of size bytes (at least HeadLen).
func NewEcho(size int) *Echo {
	size = max(size, HeadLen)
	body := Document(size - HeadLen)
	return &Echo{Size: size, Body: body, bodyJSON: AppendString(nil, body)[1:]}
}

// Head appends the head line of one request to dst: "/* tag */" padded
// with spaces to HeadLen bytes, ending in a newline. tag must be printable
// ASCII; a tag too long for HeadLen makes a longer line.
func (e *Echo) Head(dst []byte, tag []byte) []byte {
	start := len(dst)
	dst = append(dst, "/* "...)
	dst = append(dst, tag...)
	for len(dst)-start < HeadLen-4 {
		dst = append(dst, ' ')
	}
	return append(dst, " */\n"...)
}

// AppendJSON appends the text head+Body to dst as a JSON string: head
// encoded by AppendString, then the body's encoding made once. JSON
// escapes each character on its own, so the two parts make the encoding
// of the whole.
func (e *Echo) AppendJSON(dst []byte, head []byte) []byte {
	q := AppendString(dst, string(head))
	return append(q[:len(q)-1], e.bodyJSON...)
}

// AppendString appends s to dst as a JSON string, encoded by
// encoding/json with HTML escaping off (as JSON.stringify writes it: '<',
// '>' and '&' as they are, non-ASCII letters as UTF-8).
func AppendString(dst []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err) // a string always encodes
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
