package mcp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

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
	if first, second := c.get(big), c.get(big); first == nil || first == second {
		t.Fatal("a large object was kept, or not decoded")
	}
}

// The Mcp-Name check sees the last name member, a string or not: no
// check when it is not a string, a mismatch for a string that follows a
// member the tools/call reading stopped at.
func TestModernNameNotString(t *testing.T) {
	t.Parallel()
	s := NewServer(Implementation{Name: "t", Version: "1"}, nil)
	if err := AddTool(s, &Tool{Name: "echo"}, func(context.Context, *CallToolRequest, EchoIn) (*CallToolResult, error) {
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	ep := Controller(&Options{Handler: s})
	for p, mismatch := range map[string]bool{
		`{"name":5}`:                               false,
		`{"name":"echo","name":5}`:                 false,
		`{"name":"echo","arguments":5,"name":"x"}`: true,
		`{"name":"x","name":"echo"}`:               false,
	} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},` + p[1:] + `}`
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		r.Header.Set("Accept", acceptBoth)
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		r.Header.Set("Mcp-Method", "tools/call")
		r.Header.Set("Mcp-Name", "echo")
		w := httptest.NewRecorder()
		ep.ServeHTTP(w, r)
		gotMismatch := strings.Contains(w.Body.String(), `"code":-32020`)
		if gotMismatch != mismatch {
			t.Errorf("%s: %d %s", p, w.Code, w.Body)
		}
	}
}
