package mcpconn

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/check"
	"github.com/saguaro-go/saguaro/bench/internal/payload"
)

// payloadServer decodes tools/call echo and resources/read with
// encoding/json and answers them; spoil, when set, changes the text it
// returns. It insists on the 2026-07-28 headers when the request names
// that revision.
func payloadServer(t *testing.T, spoil func(string) string) *Endpoint {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				URI       string         `json:"uri"`
				Meta      map[string]any `json:"_meta"`
				Arguments struct {
					Text string `json:"text"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		modern := r.Header.Get("MCP-Protocol-Version") == "2026-07-28"
		if modern && (r.Header.Get("Mcp-Method") != req.Method || req.Params.Meta == nil ||
			req.Method == "resources/read" && r.Header.Get("Mcp-Name") != req.Params.URI) {
			http.Error(w, "headers do not mirror the body", 400)
			return
		}
		result := map[string]any{}
		switch req.Method {
		case "tools/call":
			text := req.Params.Arguments.Text
			if spoil != nil {
				text = spoil(text)
			}
			result["content"] = []map[string]string{{"type": "text", "text": text}}
		case "resources/read":
			text := payload.Document(16 << 10)
			if spoil != nil {
				text = spoil(text)
			}
			result["contents"] = []map[string]string{{"uri": req.Params.URI, "mimeType": payload.MIMEType, "text": text}}
		default:
			http.Error(w, "unknown", 400)
			return
		}
		if modern {
			result["resultType"] = "complete"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ep, err := NewEndpoint(srv.URL+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

func TestCallEchoAndReadResource(t *testing.T) {
	for _, modern := range []bool{false, true} {
		ep := payloadServer(t, nil)
		ep.Modern = modern
		c, err := Dial(ep, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		e := payload.NewEcho(16 << 10)
		for i := int64(2); i < 10; i++ {
			head := e.Head(nil, EchoText(nil, 1, i))
			in, out, err := c.CallEcho(i, e, head)
			if err != nil {
				t.Fatalf("modern %v: echo %d: %v", modern, i, err)
			}
			if in < e.Size || out < e.Size {
				t.Fatalf("echo: in %d, out %d bytes for a %d-byte text", in, out, e.Size)
			}
			uri := payload.DocURI(16)
			in, out, err = c.ReadResource(i, uri, payload.MIMEType, payload.Document(16<<10))
			if err != nil {
				t.Fatalf("modern %v: read %d: %v", modern, i, err)
			}
			if in > 300 || out < 16<<10 {
				t.Fatalf("read: in %d, out %d bytes", in, out)
			}
		}
		c.Close()
	}
}

func TestCallEchoAndReadResourceCatchWrongText(t *testing.T) {
	for name, spoil := range map[string]func(string) string{
		"a letter changed": func(s string) string { return strings.Replace(s, "é", "e", 1) },
		"truncated":        func(s string) string { return s[:len(s)-1] },
		"tab dropped":      func(s string) string { return strings.Replace(s, "\t", "", 1) },
	} {
		ep := payloadServer(t, spoil)
		c, err := Dial(ep, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		e := payload.NewEcho(16 << 10)
		if _, _, err := c.CallEcho(2, e, e.Head(nil, []byte("w0 #2"))); check.Kind(err) != "echo" {
			t.Errorf("%s: echo = %v, want an echo failure", name, err)
		}
		if _, _, err := c.ReadResource(3, payload.DocURI(16), payload.MIMEType, payload.Document(16<<10)); check.Kind(err) != "text" {
			t.Errorf("%s: read = %v, want a text failure", name, err)
		}
		c.Close()
	}
}
