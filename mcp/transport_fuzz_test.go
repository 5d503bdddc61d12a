package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// fuzzServer has tools that always finish quickly, whatever their
// arguments: a fuzzer must not find a way to block.
func fuzzServer(t testing.TB) *Server {
	s := NewServer(Implementation{Name: "fuzz", Version: "1"}, nil)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(AddTool(s, &Tool{Name: "echo"}, func(ctx context.Context, r *CallToolRequest, in EchoIn) (string, error) { return in.Text, nil }))
	must(AddTool(s, &Tool{Name: "panic"}, func(ctx context.Context, r *CallToolRequest, in EchoIn) (string, error) { panic("fuzz") }))
	must(s.AddToolRaw(&Tool{Name: "badutf8"}, func(ctx context.Context, r *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{Content: []Content{Text("\xff")}}, nil
	}))
	must(AddTool(s, &Tool{Name: "progress"}, func(ctx context.Context, r *CallToolRequest, in EchoIn) (string, error) {
		_ = r.Progress(ctx, 1, 2, in.Text)
		_ = r.Log(ctx, LogInfo, "fuzz", in.Text)
		return "ok", nil
	}))
	must(s.AddResource(&Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, r *ReadResourceRequest) (*ReadResourceResult, error) {
		return &ReadResourceResult{Contents: []*ResourceContents{{URI: r.URI, Text: "r"}}}, nil
	}))
	return s
}

// FuzzTransportPOST drives the whole POST path (headers, session lookup,
// body limit, decoding, batches, dispatch, encoding) through the
// transport's handler, stateless and with a session: it never panics and
// every request gets exactly one well-formed answer.
func FuzzTransportPOST(f *testing.F) {
	for _, row := range hostileRows() {
		if len(row.body) < 4096 && (row.method == "" || row.method == http.MethodPost) {
			f.Add([]byte(row.body), uint8(0), false)
			f.Add([]byte(row.body), uint8(0), true)
		}
	}
	for _, b := range []string{
		toolCall("1", "echo", `{"text":"hi"}`),
		toolCallToken(`"x"`, "progress", `{"text":"p"}`, `"tok"`),
		req("2", "resources/read", `{"uri":"test://r"}`),
		`[` + req("1", "ping", "") + `,` + toolCall("2", "echo", `{"text":"b"}`) + `]`,
		`{"jsonrpc":"2.0","id":3,"result":{}}`,
	} {
		for sel := range uint8(64) {
			f.Add([]byte(b), sel, sel%2 == 0)
		}
	}
	lg, _ := quietLogger()
	stateless := Controller(&Options{Handler: fuzzServer(f), Logger: lg, MaxBodyBytes: 64 << 10})
	sessions := Controller(&Options{Handler: fuzzServer(f), Logger: lg, MaxBodyBytes: 64 << 10, JSONResponse: true,
		Sessions: &SessionOptions{}})
	sh := sessions
	sid := ""
	open := func() {
		r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader([]byte(initBody("2025-03-26", "{}"))))
		r.Header.Set("Accept", acceptBoth)
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		sh.ServeHTTP(w, r)
		sid = w.Header().Get("Mcp-Session-Id")
		if sid == "" {
			f.Fatalf("initialize: %d %s", w.Code, w.Body)
		}
	}
	open()
	f.Cleanup(func() { _ = sessions.Shutdown(context.Background()) })

	f.Fuzz(func(t *testing.T, body []byte, sel uint8, withSession bool) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		r.Header.Set("Accept", acceptBoth)
		r.Header.Set("Content-Type", "application/json")
		if sel&1 != 0 {
			r.Header.Set("Accept", "text/event-stream")
		}
		if sel&2 != 0 {
			r.Header.Set("Content-Type", "text/plain")
		}
		switch sel >> 2 & 3 {
		case 1:
			r.Header.Set("MCP-Protocol-Version", "2025-06-18")
		case 2:
			r.Header.Set("MCP-Protocol-Version", "2026-07-28")
		case 3:
			r.Header.Set("MCP-Protocol-Version", string(body[:min(len(body), 12)]))
		}
		if sel&16 != 0 {
			r.Header.Set("Origin", "http://evil.example.com")
		}
		h := stateless
		if withSession {
			h = sh
			if sessions.Sessions() == 0 {
				open()
			}
			if sel&32 == 0 {
				r.Header.Set("Mcp-Session-Id", sid)
			}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		out := w.Body.Bytes()
		switch w.Code {
		case 202:
			if len(out) != 0 {
				t.Fatalf("202 with a body: %q", out)
			}
			return
		case 200, 400, 403, 404, 406, 413, 415, 503:
		default:
			t.Fatalf("status %d for %q: %s", w.Code, body, out)
		}
		if w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("status %d with Content-Type %q", w.Code, w.Header().Get("Content-Type"))
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON answer %q", out)
		}
		var one rpcMsg
		if out[0] == '[' {
			if w.Code != 200 {
				t.Fatalf("a batch answer with status %d", w.Code)
			}
			var many []rpcMsg
			if err := json.Unmarshal(out, &many); err != nil || len(many) == 0 {
				t.Fatalf("bad batch answer %q", out)
			}
			for _, m := range many {
				checkAnswer(t, m, out)
			}
			return
		}
		if err := json.Unmarshal(out, &one); err != nil {
			t.Fatalf("answer %q: %v", out, err)
		}
		checkAnswer(t, one, out)
		if w.Code != 200 && one.Error == nil {
			t.Fatalf("status %d without an error: %s", w.Code, out)
		}
		// A well-formed request answered 200 gets its own id back.
		if msg, derr := wire.Decode(body); derr == nil && msg.Kind == wire.KindRequest && w.Code == 200 {
			want, _ := json.Marshal(msg.ID)
			if string(one.ID) != string(want) {
				t.Fatalf("id %s answered as %s", want, one.ID)
			}
		}
	})
}

func checkAnswer(t *testing.T, m rpcMsg, out []byte) {
	t.Helper()
	if m.JSONRPC != "2.0" || (m.Result == nil) == (m.Error == nil) || m.Method != "" {
		t.Fatalf("not one JSON-RPC response: %s", out)
	}
	if m.Error != nil && (m.Error.Message == "" || bytes.Contains(out, []byte("goroutine "))) {
		t.Fatalf("bad error: %s", out)
	}
}
