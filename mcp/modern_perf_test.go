package mcp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
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

// checkModern's pass reads a tools/call's params as parseToolCall does,
// errors and duplicates included.
func TestCheckModernReadsToolCall(t *testing.T) {
	s := NewServer(Implementation{Name: "t", Version: "1"}, nil)
	if err := AddTool(s, &Tool{Name: "echo"}, func(context.Context, *CallToolRequest, EchoIn) (*CallToolResult, error) {
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	tr := newTransport(&Options{Handler: s})
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":%s}`
	for _, p := range []string{
		`{"name":"echo","arguments":{"text":"a"},` + fmt.Sprintf(meta, `"t"`) + `}`,
		`{"name":"echo","arguments":null,` + fmt.Sprintf(meta, `1`) + `}`,
		`{"name":"echo","arguments":[1],` + fmt.Sprintf(meta, `2`) + `}`,
		`{"name":"x","arguments":{},` + fmt.Sprintf(meta, `true`) + `,"name":"echo"}`,
		`{"arguments":{},` + fmt.Sprintf(meta, `"t"`) + `}`,
		`{"name":"echo","name":"echo","arguments":{},"arguments":{"text":"b"},` + fmt.Sprintf(meta, `"t"`) + `}`,
	} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + p + `}`
		msg, derr := tr.engine.Decoder().Decode([]byte(body))
		if derr != nil {
			t.Fatal(p, derr)
		}
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		r.Header.Set("Mcp-Method", "tools/call")
		r.Header.Set("Mcp-Name", "echo")
		mc, _, jerr := tr.checkModern(r, &msg)
		if jerr != nil {
			t.Fatal(p, jerr)
		}
		n1, a1, m1, e1 := parseToolCall(msg.Params)
		n2, a2, m2, e2 := mc.tool.result()
		if !mc.hasTool || n1 != n2 || string(a1) != string(a2) || string(m1.Raw) != string(m2.Raw) ||
			m1.ProgressToken != m2.ProgressToken || fmt.Sprint(e1) != fmt.Sprint(e2) {
			t.Errorf("%s:\nparseToolCall %q %s %s %v\ncheckModern   %q %s %s %v", p, n1, a1, m1.Raw, e1, n2, a2, m2.Raw, e2)
		}
	}
}

// checkModern's Mcp-Name check sees the last name member, a string or
// not, as before it took the name from tool.visit: no check when it is not
// a string, a mismatch for a string after tool.visit stopped at an error.
func TestCheckModernNameNotString(t *testing.T) {
	s := NewServer(Implementation{Name: "t", Version: "1"}, nil)
	if err := AddTool(s, &Tool{Name: "echo"}, func(context.Context, *CallToolRequest, EchoIn) (*CallToolResult, error) {
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	tr := newTransport(&Options{Handler: s})
	for p, mismatch := range map[string]bool{
		`{"name":5}`:                               false,
		`{"name":"echo","name":5}`:                 false,
		`{"name":"echo","arguments":5,"name":"x"}`: true,
		`{"name":"x","name":"echo"}`:               false,
	} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},` + p[1:] + `}`
		msg, derr := tr.engine.Decoder().Decode([]byte(body))
		if derr != nil {
			t.Fatal(p, derr)
		}
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		r.Header.Set("Mcp-Method", "tools/call")
		r.Header.Set("Mcp-Name", "echo")
		_, _, jerr := tr.checkModern(r, &msg)
		if (jerr != nil) != mismatch || jerr != nil && jerr.Code != wire.HeaderMismatch {
			t.Errorf("%s: %v", p, jerr)
		}
	}
}
