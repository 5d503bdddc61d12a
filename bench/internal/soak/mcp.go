package soak

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
)

// modernRev is the stateless revision; legacyRev the session one.
const (
	modernRev = "2026-07-28"
	legacyRev = "2025-11-25"
)

// rpcMessage is one JSON-RPC message as the harness reads it.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// answer is what one POST to /mcp came back with.
type answer struct {
	Status     int
	RetryAfter bool
	Session    string      // Mcp-Session-Id of an initialize answer
	Response   *rpcMessage // the JSON-RPC response, nil for a 202
	Progress   int         // notifications/progress before it
	Streamed   bool        // answered as an event stream
}

// failure turns a bad answer (or a transport error) into an outcome.
func (a *answer) failure(kind, target string, err error) (outcome, bool) {
	o := outcome{Kind: kind, Target: target}
	if err != nil {
		o.Err = errClass(err)
		if a != nil {
			o.Status, o.RetryAfter = a.Status, a.RetryAfter
		}
		return o, true
	}
	o.Status, o.RetryAfter = a.Status, a.RetryAfter
	if a.Status/100 != 2 {
		if a.Response != nil && a.Response.Error != nil {
			o.RPCCode = a.Response.Error.Code
		}
		return o, true
	}
	if a.Response != nil && a.Response.Error != nil {
		o.RPCCode = a.Response.Error.Code
		o.Err = "error answer"
		return o, true
	}
	if a.Response != nil && bytes.Contains(a.Response.Result, []byte(`"isError":true`)) {
		o.Err = "tool error"
		return o, true
	}
	return o, false
}

// errClass names a transport error without its addresses, so that equal
// failures count together.
func errClass(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "connection closed mid-answer"
	case errors.Is(err, errNoResponse):
		return "stream ended without the response"
	case errors.Is(err, errBadAnswer):
		return err.Error()
	}
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return s
}

var (
	errNoResponse = errors.New("no response on the stream")
	errBadAnswer  = errors.New("bad answer")
)

// mcpClient posts to one MCP endpoint with one token.
type mcpClient struct {
	http  *http.Client
	url   string // …/mcp
	token string
}

// post sends one JSON-RPC message; headers are extra request headers.
func (c *mcpClient) post(ctx context.Context, body []byte, headers map[string]string) (*answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	a := &answer{Status: res.StatusCode, RetryAfter: res.Header.Get("Retry-After") != "", Session: res.Header.Get("Mcp-Session-Id")}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		a.Streamed = true
		err := readStream(res.Body, func(_ string, data []byte) bool {
			var m rpcMessage
			if json.Unmarshal(data, &m) != nil {
				return true
			}
			if m.Method == "notifications/progress" {
				a.Progress++
				return true
			}
			if m.Method == "" && len(m.ID) > 0 {
				a.Response = &m
				return false
			}
			return true
		})
		if err != nil {
			return a, err
		}
		if a.Response == nil && a.Status == http.StatusOK {
			return a, errNoResponse
		}
		return a, nil
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return a, err
	}
	if len(bytes.TrimSpace(b)) > 0 {
		var m rpcMessage
		if err := json.Unmarshal(b, &m); err != nil {
			if res.StatusCode/100 == 2 {
				return a, fmt.Errorf("%w: %d bytes that are not JSON-RPC", errBadAnswer, len(b))
			}
		} else {
			a.Response = &m
		}
	}
	return a, nil
}

// readStream reads Server-Sent Events until fn returns false or the
// stream ends; fn gets each event's id and data.
func readStream(r io.Reader, fn func(id string, data []byte) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var id string
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if len(data) > 0 || id != "" {
				if !fn(id, data) {
					return nil
				}
			}
			id, data = "", data[:0]
		case bytes.HasPrefix(line, []byte("id:")):
			id = strings.TrimSpace(string(line[3:]))
		case bytes.HasPrefix(line, []byte("data:")):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(line[5:], []byte(" "))...)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}

// modernMeta is the _meta every 2026-07-28 request carries.
var modernMeta = map[string]any{
	"io.modelcontextprotocol/protocolVersion":    modernRev,
	"io.modelcontextprotocol/clientCapabilities": map[string]any{},
}

// call encodes a request.
func call(id int, method string, params map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return b
}

// modernCall is a stateless tools/call with the headers its revision asks for.
func (c *mcpClient) modernCall(ctx context.Context, id int, tool string, args map[string]any, progress bool) (*answer, error) {
	params := map[string]any{"name": tool, "arguments": args, "_meta": modernMeta}
	if progress {
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    modernRev,
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			"progressToken": id,
		}
	}
	return c.post(ctx, call(id, "tools/call", params), map[string]string{
		"MCP-Protocol-Version": modernRev, "Mcp-Method": "tools/call", "Mcp-Name": tool})
}

// session is a legacy-era session.
type session struct {
	c  *mcpClient
	id string
	n  int
}

// initialize opens a session: initialize, then notifications/initialized.
func (c *mcpClient) initialize(ctx context.Context) (*session, *answer, error) {
	a, err := c.post(ctx, call(0, "initialize", map[string]any{"protocolVersion": legacyRev, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "soak", "version": "1"}}), nil)
	if err != nil || a.Status != http.StatusOK || a.Session == "" || a.Response == nil || a.Response.Error != nil {
		if err == nil && a.Status == http.StatusOK {
			err = fmt.Errorf("%w: initialize without a session", errBadAnswer)
		}
		return nil, a, err
	}
	s := &session{c: c, id: a.Session}
	b, err := c.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), s.headers())
	if err != nil || b.Status != http.StatusAccepted {
		return nil, b, err
	}
	return s, a, nil
}

func (s *session) headers() map[string]string {
	return map[string]string{"Mcp-Session-Id": s.id, "MCP-Protocol-Version": legacyRev}
}

// tool calls a tool in the session, with a progress token when asked.
func (s *session) tool(ctx context.Context, name string, args map[string]any, progress bool) (*answer, error) {
	s.n++
	params := map[string]any{"name": name, "arguments": args}
	if progress {
		params["_meta"] = map[string]any{"progressToken": s.n}
	}
	return s.c.post(ctx, call(s.n, "tools/call", params), s.headers())
}

// end sends DELETE.
func (s *session) end(ctx context.Context) (*answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.c.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.c.token)
	for k, v := range s.headers() {
		req.Header.Set(k, v)
	}
	res, err := s.c.http.Do(req)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return &answer{Status: res.StatusCode, RetryAfter: res.Header.Get("Retry-After") != ""}, nil
}
