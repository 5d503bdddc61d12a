package mcpconn

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/check"
)

// fakeServer answers initialize, notifications/initialized and tools/call
// echo; mutate can spoil the tools/call answer.
func fakeServer(t *testing.T, mutate func(w http.ResponseWriter, id json.RawMessage, text string) bool) *Endpoint {
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
	ep, err := NewEndpoint(srv.URL+"/mcp", map[string]string{"Authorization": "Bearer t"})
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

func TestConnCallAndInitialize(t *testing.T) {
	ep := fakeServer(t, nil)
	c, err := Dial(ep, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Initialize(1, true); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if c.Session() != "sess-1" {
		t.Fatalf("session %q", c.Session())
	}
	for i := int64(2); i < 50; i++ {
		if err := c.Call(i, string(EchoText(nil, 3, i))); err != nil {
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
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
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
			c, err := Dial(ep, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			err = c.Call(9, "hello from w1 #9")
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
		if _, err := NewEndpoint(u, nil); err == nil {
			t.Errorf("NewEndpoint(%q) accepted a non-loopback target", u)
		}
	}
	if ep, err := NewEndpoint("http://127.0.0.1:9/mcp", nil); err != nil || ep.Path != "/mcp" {
		t.Errorf("loopback refused: %v %v", ep, err)
	}
}

func TestCheckJSONCall(t *testing.T) {
	good := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}`
	for _, tc := range []struct {
		name string
		r    check.Response
		kind string // "" for a pass
	}{
		{"right", check.Response{Status: 200, ContentType: "application/json", Body: []byte(good)}, ""},
		{"right, charset", check.Response{Status: 200, ContentType: "application/json; charset=utf-8", Body: []byte(good)}, ""},
		{"event stream", check.Response{Status: 200, ContentType: "text/event-stream", Body: []byte("event: message\ndata: " + good + "\n\n")}, "media-type"},
		{"wrong echo", check.Response{Status: 200, ContentType: "application/json", Body: []byte(strings.Replace(good, `"hi"`, `"ho"`, 1))}, "echo"},
		{"wrong id", check.Response{Status: 200, ContentType: "application/json", Body: []byte(strings.Replace(good, `"id":7`, `"id":8`, 1))}, "id"},
		{"bad gateway", check.Response{Status: 502, ContentType: "application/json", Body: []byte(`{}`)}, "status"},
		{"JSON-RPC error", check.Response{Status: 200, ContentType: "application/json",
			Body: []byte(`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"Bad Gateway"}}`)}, "jsonrpc-error"},
		{"isError", check.Response{Status: 200, ContentType: "application/json",
			Body: []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}],"isError":true}}`)}, "result"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckJSONCall(tc.r, 7, "hi")
			switch {
			case tc.kind == "" && err != nil:
				t.Fatalf("want a pass, got %v", err)
			case tc.kind != "" && err == nil:
				t.Fatalf("want a %s failure, got a pass", tc.kind)
			case tc.kind != "" && check.Kind(err) != tc.kind:
				t.Fatalf("want a %s failure, got %v", tc.kind, err)
			}
		})
	}
}
