// Command bare is the physical ceiling of the comparison: a plain net/http
// handler that decodes the same JSON-RPC tools/call request with
// encoding/json, checks it, and writes the echo result: the text it
// received, encoded by encoding/json, in a templated envelope. With
// -payload-docs it also answers resources/read of the payload workload's
// documents (docs.go). No MCP library, no sessions, no schema.
package main

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/saguaro-go/saguaro/bench/internal/serve"
)

var mode = "plain"

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name      string `json:"name"`
		URI       string `json:"uri"`
		Arguments struct {
			Text *string `json:"text"`
		} `json:"arguments"`
	} `json:"params"`
}

const (
	head = `{"jsonrpc":"2.0","id":`
	mid  = `,"result":{"content":[{"type":"text","text":`
	tail = "}]}}\n"
)

func handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeErr(w, nil, -32700, "parse error")
		return
	}
	if req.JSONRPC != "2.0" || len(req.ID) == 0 {
		writeErr(w, req.ID, -32600, "invalid request")
		return
	}
	if req.Method == "resources/read" {
		readResource(w, req.ID, req.Params.URI)
		return
	}
	if req.Method != "tools/call" {
		writeErr(w, req.ID, -32601, "method not found")
		return
	}
	if req.Params.Name != "echo" || req.Params.Arguments.Text == nil {
		writeErr(w, req.ID, -32602, "invalid params")
		return
	}
	text, err := json.Marshal(*req.Params.Arguments.Text)
	if err != nil {
		writeErr(w, req.ID, -32603, "internal error")
		return
	}
	buf := make([]byte, 0, len(head)+len(req.ID)+len(mid)+len(text)+len(tail))
	buf = append(buf, head...)
	buf = append(buf, req.ID...)
	buf = append(buf, mid...)
	buf = append(buf, text...)
	buf = append(buf, tail...)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(buf)))
	_, _ = w.Write(buf)
}

func writeErr(w http.ResponseWriter, id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error":   map[string]any{"code": code, "message": msg},
	})
}

func main() {
	serve.Main("bare", mode, func(o serve.Options) (serve.Built, error) {
		addDocs(o.PayloadDocs)
		return serve.Built{
			Handler: http.HandlerFunc(handle),
			Notes:   "net/http + encoding/json: the request decoded, the echoed text encoded per request in a templated envelope; no sessions",
		}, nil
	})
}
