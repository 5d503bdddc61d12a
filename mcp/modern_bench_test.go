package mcp

// A 2026-07-28 tools/call of the typed echo tool through the Controller's
// handler, in process (httptest.ResponseRecorder), as the bench's
// saguaro-modern configuration sends it: the four headers and _meta
// protocolVersion + clientCapabilities.
//
//	go test -run '^$' -bench ModernToolsCall -benchmem -count 6 ./mcp/

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

var benchModernCall = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello, world"},` +
	`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)

const benchModernReply = `{"jsonrpc":"2.0","id":42,"result":{"resultType":"complete","content":[{"type":"text","text":"hello, world"}],` +
	`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bench","version":"1"}}}}`

func benchModern(b *testing.B, body []byte) {
	h := Controller(&Options{Handler: benchServer(b)})
	rd := bytes.NewReader(nil)
	req := func() *http.Request {
		rd.Reset(body)
		r := httptest.NewRequest(http.MethodPost, "/mcp", rd)
		r.Header.Set("Accept", acceptBoth)
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		r.Header.Set("Mcp-Method", "tools/call")
		r.Header.Set("Mcp-Name", "echo")
		return r
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req())
	if w.Code != http.StatusOK || w.Body.String() != benchModernReply {
		b.Fatalf("%d %s", w.Code, w.Body.String())
	}
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req())
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}

func BenchmarkModernToolsCall(b *testing.B) { benchModern(b, benchModernCall) }

// With a non-empty clientCapabilities, as real clients send.
func BenchmarkModernToolsCallCaps(b *testing.B) {
	benchModern(b, []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello, world"},`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":`+
		`{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`))
}

// The same call in the 2025-11-25 era, stateless: the reference.
func BenchmarkLegacyStatelessToolsCall(b *testing.B) {
	benchLegacy(b, Controller(&Options{Handler: benchServer(b)}), "")
}

// The same call in a 2025-11-25 session: the connection waits while the
// call runs where it may stream.
func BenchmarkLegacySessionToolsCall(b *testing.B) {
	h := Controller(&Options{Handler: benchServer(b), Sessions: &SessionOptions{}})
	defer func() { _ = h.Shutdown(b.Context()) }()
	benchLegacy(b, h, benchSession(b, h))
}

// benchLegacy posts benchCall to h in process, in session sid ("" for
// none), and checks every answer.
func benchLegacy(b *testing.B, h http.Handler, sid string) {
	rd := bytes.NewReader(nil)
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(benchCall)
		r := httptest.NewRequest(http.MethodPost, "/mcp", rd)
		r.Header.Set("Accept", acceptBoth)
		r.Header.Set("Content-Type", "application/json")
		if sid != "" {
			r.Header.Set("Mcp-Session-Id", sid)
			r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK || w.Body.String() != string(benchReply) {
			b.Fatal(w.Code, w.Body.String())
		}
	}
}
