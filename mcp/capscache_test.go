package mcp

import (
	"fmt"
	"strings"
	"testing"
)

func TestCapsCache(t *testing.T) {
	var c capsCache
	if c.get([]byte(`[]`)) != nil || c.get([]byte(`{"roots":1}`)) != nil || c.get(nil) != nil {
		t.Fatal("accepted a value that is not a ClientCapabilities object")
	}
	if p := c.entries.Load(); p != nil && len(*p) != 0 {
		t.Fatalf("kept a failure: %d entries", len(*p))
	}
	raw := []byte(`{"roots":{"listChanged":true},"extensions":{"x":{}}}`)
	a := c.get(raw)
	if a == nil || a.Roots == nil || !a.Roots.ListChanged || !clientHasExtension(a, "x") {
		t.Fatalf("decoded %+v", a)
	}
	raw[2] = 'X' // the cache keeps its own copy of the bytes
	raw[2] = 'r'
	if b := c.get([]byte(`{"roots":{"listChanged":true},"extensions":{"x":{}}}`)); b != a {
		t.Fatal("a repeated object was decoded again")
	}
	for i := range 2 * capsCacheSize {
		if c.get(fmt.Appendf(nil, `{"experimental":{"n%d":{}}}`, i)) == nil {
			t.Fatal(i)
		}
	}
	if n := len(*c.entries.Load()); n != capsCacheSize {
		t.Fatalf("%d entries, want %d", n, capsCacheSize)
	}
	if b := c.get([]byte(`{"roots":{"listChanged":true},"extensions":{"x":{}}}`)); b == a || b == nil {
		t.Fatal("the oldest entry was not evicted")
	}
	big := []byte(`{"experimental":{"x":"` + strings.Repeat("a", capsCacheMaxLen) + `"}}`)
	if c.get(big) == nil || c.get(big) == c.get(big) {
		t.Fatal("a large object was kept, or not decoded")
	}
}
