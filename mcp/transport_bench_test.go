package mcp

// A stateless and a session tools/call of a typed echo tool through the
// Controller over real loopback HTTP, against a bare net/http handler that
// decodes the same request with encoding/json and writes a canned reply.
//
//	go test -run '^$' -bench Loopback -benchmem ./mcp/

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

var benchReply = []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"hello, world"}]}}`)

func benchServer(b *testing.B) *Server {
	s := NewServer(Implementation{Name: "bench", Version: "1"}, nil)
	err := AddTool(s, &Tool{Name: "echo", Description: "echoes"}, func(ctx context.Context, req *CallToolRequest, in EchoIn) (*CallToolResult, error) {
		return &CallToolResult{Content: []Content{Text(in.Text)}}, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// benchLoopback posts benchCall to h over loopback, sequentially on one
// keep-alive connection, and checks the first reply.
func benchLoopback(b *testing.B, h http.Handler, sid string) {
	srv := httptest.NewServer(h)
	defer srv.Close()
	hc := srv.Client()
	url := srv.URL + "/mcp"
	post := func() []byte {
		r, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(benchCall))
		if err != nil {
			b.Fatal(err)
		}
		r.Header.Set("Accept", acceptBoth)
		r.Header.Set("Content-Type", "application/json")
		if sid != "" {
			r.Header.Set("Mcp-Session-Id", sid)
			r.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := hc.Do(r)
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("%d %s %v", resp.StatusCode, body, err)
		}
		return body
	}
	if got := post(); !bytes.Equal(got, benchReply) {
		b.Fatalf("reply %s", got)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		post()
	}
}

// bareJSONHandler is the floor: decode the envelope with encoding/json, write
// a canned reply. With sessions it also looks the session id up.
func bareJSONHandler(sessions map[string]bool, mu *sync.RWMutex) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sessions != nil {
			mu.RLock()
			ok := sessions[r.Header.Get("Mcp-Session-Id")]
			mu.RUnlock()
			if !ok {
				http.Error(w, "no session", http.StatusNotFound)
				return
			}
		}
		var env struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&env); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(benchReply)
	})
}

func BenchmarkLoopbackBare(b *testing.B) {
	benchLoopback(b, bareJSONHandler(nil, nil), "")
}

func BenchmarkLoopbackController(b *testing.B) {
	benchLoopback(b, Controller(&Options{Handler: benchServer(b)}), "")
}

func BenchmarkLoopbackBareSession(b *testing.B) {
	sessions := map[string]bool{"0123456789abcdef0123456789abcdef": true}
	benchLoopback(b, bareJSONHandler(sessions, &sync.RWMutex{}), "0123456789abcdef0123456789abcdef")
}

func BenchmarkLoopbackControllerSession(b *testing.B) {
	h := Controller(&Options{Handler: benchServer(b), Sessions: &SessionOptions{}})
	defer func() { _ = h.Shutdown(context.Background()) }()
	benchLoopback(b, h, benchSession(b, h))
}

// benchSession opens a 2025-11-25 session on h in process and returns its
// id.
func benchSession(b *testing.B, h http.Handler) string {
	r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader([]byte(initBody("2025-11-25", "{}"))))
	r.Header.Set("Accept", acceptBoth)
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	sid := w.Header().Get("Mcp-Session-Id")
	if sid == "" {
		b.Fatalf("initialize: %d %s", w.Code, w.Body)
	}
	return sid
}
