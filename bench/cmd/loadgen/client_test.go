package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/check"
)

// fakeServer answers initialize, notifications/initialized and tools/call
// echo; mutate can spoil the tools/call answer.
func fakeServer(t *testing.T, mutate func(w http.ResponseWriter, id json.RawMessage, text string) bool) *endpoint {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Arguments struct {
					Text string `json:"text"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		switch req.Method {
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "sess-1")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{},"serverInfo":{"name":"f","version":"0"}}}`, req.ID, ProtocolVersion)
		case "notifications/initialized":
			if r.Header.Get("Mcp-Session-Id") != "sess-1" {
				http.Error(w, "no session", 400)
				return
			}
			w.WriteHeader(202)
		case "tools/call":
			if mutate != nil && mutate(w, req.ID, req.Params.Arguments.Text) {
				return
			}
			w.Header().Set("Content-Type", "application/json")
			text, _ := json.Marshal(req.Params.Arguments.Text)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s}]}}`, req.ID, text)
		default:
			http.Error(w, "unknown", 400)
		}
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ep, err := newEndpoint(srv.URL+"/mcp", map[string]string{"Authorization": "Bearer t"})
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

func TestConnCallAndInitialize(t *testing.T) {
	ep := fakeServer(t, nil)
	c, err := dial(ep, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.initialize(1, true); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if c.session != "sess-1" {
		t.Fatalf("session %q", c.session)
	}
	for i := int64(2); i < 50; i++ {
		if err := c.call(i, string(echoText(nil, 3, i))); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
}

func TestConnCallRejectsBadAnswers(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(w http.ResponseWriter, id json.RawMessage, text string) bool
		kind   string
	}{
		{"wrong echo", func(w http.ResponseWriter, id json.RawMessage, text string) bool {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"not it"}]}}`, id)
			return true
		}, "echo"},
		{"json-rpc error", func(w http.ResponseWriter, id json.RawMessage, text string) bool {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"boom"}}`, id)
			return true
		}, "jsonrpc-error"},
		{"bad status", func(w http.ResponseWriter, id json.RawMessage, text string) bool {
			http.Error(w, "overloaded", 503)
			return true
		}, "status"},
		{"another request's answer", func(w http.ResponseWriter, id json.RawMessage, text string) bool {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":%q}]}}`, text)
			return true
		}, "id"},
		{"chunked event stream is fine", func(w http.ResponseWriter, id json.RawMessage, text string) bool {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n")
			w.(http.Flusher).Flush()
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%q}]}}\n\n", id, text)
			return true
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := fakeServer(t, tt.mutate)
			c, err := dial(ep, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			err = c.call(9, "hello from w1 #9")
			if tt.kind == "" {
				if err != nil {
					t.Fatalf("call: %v", err)
				}
				return
			}
			if err == nil || check.Kind(err) != tt.kind {
				t.Fatalf("call = %v, want a %q failure", err, tt.kind)
			}
		})
	}
}

func TestEndpointRefusesNonLoopback(t *testing.T) {
	for _, u := range []string{"http://10.0.0.1:80/mcp", "http://example.com:80/mcp", "http://192.168.1.1:8080/mcp"} {
		if _, err := newEndpoint(u, nil); err == nil {
			t.Errorf("newEndpoint(%q) accepted a non-loopback target", u)
		}
	}
	if _, err := newEndpoint("http://127.0.0.1:9/mcp", nil); err != nil {
		t.Errorf("loopback refused: %v", err)
	}
}
