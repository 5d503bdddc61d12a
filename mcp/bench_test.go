package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// The hot path of a stateless tools/call: decode, dispatch to a typed echo
// tool (validation included), encode into a pooled buffer.

var benchCall = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello, world"}}}`)

func benchEngine(b *testing.B) *engine { return benchEngineWith(b, nil) }

// benchEngineWith is benchEngine with so's options.
func benchEngineWith(b *testing.B, so *ServerOptions) *engine {
	s := NewServer(Implementation{Name: "bench", Version: "1"}, so)
	err := AddTool(s, &Tool{Name: "echo", Description: "echoes"}, func(ctx context.Context, req *CallToolRequest, in EchoIn) (*CallToolResult, error) {
		return &CallToolResult{Content: []Content{Text(in.Text)}}, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return newEngine(s, engineOptions{})
}

// serveEngine answers body as the HTTP transport does: decode, dispatch,
// AppendReply into a new response (which a big result is written into
// in place), one write.
func serveEngine(e *engine, ctx context.Context, body []byte, w io.Writer) {
	m, derr := e.Decoder().Decode(body)
	if derr != nil {
		_, _ = w.Write(wire.AppendErrorResponse(nil, m.ID, derr))
		return
	}
	c := testCall(&m, Rev20251125)
	r := e.Dispatch(ctx, &c, nil)
	_, _ = w.Write(e.AppendReply(nil, m.ID, r))
}

func BenchmarkStatelessToolsCall(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	var sink bytes.Buffer
	serveEngine(e, ctx, benchCall, &sink)
	if sink.String() != `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"hello, world"}]}}` {
		b.Fatalf("unexpected reply %s", sink.String())
	}
	b.ReportAllocs()
	for b.Loop() {
		sink.Reset()
		serveEngine(e, ctx, benchCall, &sink)
	}
}

// The same call through method middleware that does nothing but look
// at the request and result, and through a tool with an Access a caller
// passes: what each extension point costs once it is used.
func BenchmarkStatelessToolsCallMiddleware(b *testing.B) {
	var calls int
	look := func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, req *Request) (json.RawMessage, error) {
			res, err := next(ctx, req)
			if req.Target() == "echo" && len(res) > 0 {
				calls++
			}
			return res, err
		}
	}
	e := benchEngineWith(b, &ServerOptions{Middleware: []func(MethodHandler) MethodHandler{look}})
	benchServe(b, e)
	if calls == 0 {
		b.Fatal("the middleware saw nothing")
	}
}

func BenchmarkStatelessToolsCallAccess(b *testing.B) {
	s := NewServer(Implementation{Name: "bench", Version: "1"}, nil)
	err := AddTool(s, &Tool{Name: "echo", Description: "echoes", Access: &Access{Scopes: []string{"echo"}, Hidden: true}},
		func(ctx context.Context, req *CallToolRequest, in EchoIn) (*CallToolResult, error) {
			return &CallToolResult{Content: []Content{Text(in.Text)}}, nil
		})
	if err != nil {
		b.Fatal(err)
	}
	granted := []string{"read", "echo"}
	benchServe(b, newEngine(s, engineOptions{Scopes: func(context.Context) []string { return granted }}))
}

// benchServe measures serveEngine of benchCall on e.
func benchServe(b *testing.B, e *engine) {
	ctx := context.Background()
	var sink bytes.Buffer
	serveEngine(e, ctx, benchCall, &sink)
	if sink.String() != `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"hello, world"}]}}` {
		b.Fatalf("unexpected reply %s", sink.String())
	}
	b.ReportAllocs()
	for b.Loop() {
		sink.Reset()
		serveEngine(e, ctx, benchCall, &sink)
	}
}

// BenchmarkBareDecodeCannedReply is gopeers.md's baseline without HTTP:
// one encoding/json decode of the request and a canned reply.
func BenchmarkBareDecodeCannedReply(b *testing.B) {
	reply := []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"hello, world"}]}}`)
	var sink bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		var env struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(benchCall, &env); err != nil {
			b.Fatal(err)
		}
		sink.Reset()
		sink.Write(reply)
	}
}

// The same two through net/http (in-process, httptest.ResponseRecorder):
// the ratio the transport's ≥0.8× target is about.

func benchHTTP(b *testing.B, h http.Handler) {
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(benchCall))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}

func BenchmarkHTTPEngineToolsCall(b *testing.B) {
	e := benchEngine(b)
	benchHTTP(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		serveEngine(e, r.Context(), body, w)
	}))
}

func BenchmarkHTTPBare(b *testing.B) {
	reply := []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"hello, world"}]}}`)
	benchHTTP(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var env struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&env); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(reply)
	}))
}

func BenchmarkToolsListFirstPage(b *testing.B) {
	e := benchEngine(b)
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	var sink bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		sink.Reset()
		serveEngine(e, context.Background(), body, &sink)
	}
}
