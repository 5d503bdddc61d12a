package middleware

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httplog/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/mcp"
)

// These tests serve a real MCP endpoint behind the preset, with the mcp
// package's log hook set to httplog.SetAttrs, and read the lines.

type mcpLog struct {
	t       *testing.T
	srv     *httptest.Server
	sink    *logSink
	release chan struct{} // ends the wait tool's wait
}

// serveMCP starts RequestID → Logging → mcp.Controller, with sessions or
// without. Its tools: echo; fail, which reports progress (so its answer
// is an event stream) and then refuses its params; wait, which does the
// same once release is closed.
func serveMCP(t *testing.T, sessions bool) *mcpLog {
	t.Helper()
	srv := mcp.NewServer(mcp.Implementation{Name: "log-test", Version: "1.0.0"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	require.NoError(t, mcp.AddTool(srv, &mcp.Tool{Name: "echo"},
		func(_ context.Context, _ *mcp.CallToolRequest, in in) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.Text(in.Text)}}, nil
		}))
	release := make(chan struct{})
	require.NoError(t, mcp.AddTool(srv, &mcp.Tool{Name: "wait"},
		func(ctx context.Context, req *mcp.CallToolRequest, in in) (*mcp.CallToolResult, error) {
			if err := req.Progress(ctx, 1, 2, "waiting"); err != nil {
				return nil, err
			}
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%w: %s", mcp.ErrInvalidParams, in.Text)
		}))
	require.NoError(t, mcp.AddTool(srv, &mcp.Tool{Name: "fail"},
		func(ctx context.Context, req *mcp.CallToolRequest, in in) (*mcp.CallToolResult, error) {
			if err := req.Progress(ctx, 1, 2, "half way"); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %s", mcp.ErrInvalidParams, in.Text)
		}))
	opts := &mcp.Options{Handler: srv, Attrs: httplog.SetAttrs}
	if sessions {
		opts.Sessions = &mcp.SessionOptions{}
	}
	ep := mcp.Controller(opts)
	logger, sink := newTestLogger()
	r := chi.NewRouter()
	r.Use(chimw.RequestID, Logging(logger, nil))
	r.Mount("/mcp", ep)
	hs := httptest.NewServer(r)
	t.Cleanup(func() {
		_ = ep.Shutdown(context.Background())
		hs.CloseClientConnections()
		hs.Close()
	})
	return &mcpLog{t: t, srv: hs, sink: sink, release: release}
}

// post sends one JSON-RPC message and returns the response and its whole
// body.
func (m *mcpLog) post(sid, body string) (*http.Response, string) {
	req, err := http.NewRequest(http.MethodPost, m.srv.URL+"/mcp", strings.NewReader(body))
	require.NoError(m.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	return do(m.t, req)
}

// next waits for line n (0-based) and returns it decoded, after checking
// that it carries no key twice (httplog.SetAttrs appends; a key set
// twice would be written twice).
func (m *mcpLog) next(n int) map[string]any {
	m.t.Helper()
	require.Eventually(m.t, func() bool { return len(m.sink.lines(m.t)) > n }, 5*time.Second, 5*time.Millisecond,
		"want line %d, have:\n%s", n, m.sink.String())
	raw := strings.Split(strings.TrimSpace(m.sink.String()), "\n")[n]
	assert.Empty(m.t, duplicateKeys(m.t, raw), "a key written twice in %s", raw)
	return m.sink.lines(m.t)[n]
}

// duplicateKeys returns the top-level keys that occur more than once in a
// JSON object.
func duplicateKeys(t *testing.T, line string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	_, err := dec.Token() // {
	require.NoError(t, err)
	seen, dups := map[string]bool{}, []string(nil)
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		if seen[k.(string)] {
			dups = append(dups, k.(string))
		}
		seen[k.(string)] = true
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return dups
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`

func TestLogging_MCPSession(t *testing.T) {
	t.Parallel()
	m := serveMCP(t, true)

	res, _ := m.post("", initialize)
	require.Equal(t, http.StatusOK, res.StatusCode)
	sid := res.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	l := m.next(0)
	assert.Equal(t, "initialize", l[mcp.AttrMethod])
	assert.Equal(t, "1", l[mcp.AttrID])
	assert.Equal(t, sid, l[mcp.AttrSession], "the session the answer hands out")

	res, _ = m.post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	l = m.next(1)
	assert.Equal(t, "notifications/initialized", l[mcp.AttrMethod])
	assert.NotContains(t, l, mcp.AttrID)

	// A call answered as JSON.
	res, body := m.post(sid, `{"jsonrpc":"2.0","id":"a-2","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, body, `"hi"`)
	l = m.next(2)
	assert.Equal(t, "INFO", l["log.level"])
	assert.Equal(t, "POST", l["http.request.method"])
	assert.Equal(t, "/mcp", l["url.path"])
	assert.Equal(t, "tools/call", l[mcp.AttrMethod])
	assert.Equal(t, `"a-2"`, l[mcp.AttrID], "the id as JSON: a string id keeps its quotes")
	assert.Equal(t, "echo", l[mcp.AttrTool])
	assert.Equal(t, sid, l[mcp.AttrSession])
	assert.Equal(t, "2025-11-25", l[mcp.AttrRevision])
	assert.NotContains(t, l, mcp.AttrErrorCode)
	assert.NotContains(t, l, StreamLogKey)

	// A JSON-RPC error answered as JSON.
	_, body = m.post(sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope","arguments":{}}}`)
	l = m.next(3)
	assert.Equal(t, "nope", l[mcp.AttrTool])
	assert.EqualValues(t, errorCode(t, body), l[mcp.AttrErrorCode])

	// A call that streams progress, then fails: its code is on the POST's
	// line, reported by the request's goroutine when it writes the answer.
	res, body = m.post(sid, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"fail","arguments":{"text":"bad"},"_meta":{"progressToken":"p"}}}`)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	require.Contains(t, body, "notifications/progress")
	streamStart, end := m.next(4), m.next(5)
	assert.Equal(t, "start", streamStart[StreamLogKey])
	assert.Equal(t, sid, streamStart[mcp.AttrSession], "from the request's header")
	assert.Equal(t, "2025-11-25", streamStart[mcp.AttrRevision])
	assert.Equal(t, "end", end[StreamLogKey])
	assert.Equal(t, streamStart[RequestIDLogKey], end[RequestIDLogKey])
	assert.Equal(t, "fail", end[mcp.AttrTool])
	assert.Equal(t, "4", end[mcp.AttrID])
	assert.EqualValues(t, -32602, end[mcp.AttrErrorCode])

	// The session's GET stream: a line when it opens, with the session,
	// and one when DELETE ends the session, and one for the DELETE.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, m.srv.URL+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Session-Id", sid)
	get, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer get.Body.Close()
	require.Equal(t, http.StatusOK, get.StatusCode)
	readFrame(t, bufio.NewReader(get.Body)) // the priming event
	l = m.next(6)
	assert.Equal(t, "GET /mcp => HTTP 200 stream start", l["message"])
	assert.Equal(t, sid, l[mcp.AttrSession])

	del, _ := http.NewRequest(http.MethodDelete, m.srv.URL+"/mcp", nil)
	del.Header.Set("Mcp-Session-Id", sid)
	del.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	res, _ = do(t, del)
	assert.Equal(t, http.StatusNoContent, res.StatusCode)
	_, _ = io.Copy(io.Discard, get.Body) // the stream ends with the session
	byMethod := map[string]map[string]any{}
	for _, l := range []map[string]any{m.next(7), m.next(8)} {
		byMethod[l["http.request.method"].(string)] = l
	}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		l := byMethod[method]
		assert.Equal(t, sid, l[mcp.AttrSession], method)
		assert.Equal(t, "2025-11-25", l[mcp.AttrRevision], method)
	}
	assert.Equal(t, "end", byMethod[http.MethodGet][StreamLogKey])
	assert.NotContains(t, byMethod[http.MethodDelete], StreamLogKey)
}

// A call whose client left before its answer: the POST's line is written
// without the error code, and the GET that resumes the stream and
// delivers the answer carries it (the call's own goroutine reports
// nothing: its POST's line is gone).
func TestLogging_MCPResumedCall(t *testing.T) {
	t.Parallel()
	m := serveMCP(t, true)
	res, _ := m.post("", initialize)
	sid := res.Header.Get("Mcp-Session-Id")
	m.post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, m.srv.URL+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"wait","arguments":{"text":"late"},"_meta":{"progressToken":"p"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Session-Id", sid)
	post, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	br := bufio.NewReader(post.Body)
	var lastID string
	for {
		frame := readFrame(t, br)
		for _, line := range strings.Split(frame, "\n") {
			if id, ok := strings.CutPrefix(line, "id: "); ok {
				lastID = id
			}
		}
		if strings.Contains(frame, "notifications/progress") {
			break
		}
	}
	require.NotEmpty(t, lastID)
	cancel() // the client leaves; the call runs on, waiting to be resumed
	post.Body.Close()
	postEnd := m.next(3) // after initialize, initialized and the stream's start
	assert.Equal(t, "end", postEnd[StreamLogKey])
	assert.Equal(t, "wait", postEnd[mcp.AttrTool])
	assert.NotContains(t, postEnd, mcp.AttrErrorCode, "the answer is not out yet")

	close(m.release)
	get, _ := http.NewRequest(http.MethodGet, m.srv.URL+"/mcp", nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	get.Header.Set("Mcp-Session-Id", sid)
	get.Header.Set("Last-Event-ID", lastID)
	res, body := do(t, get)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, body, `"id":9`)
	require.Contains(t, body, "-32602")
	getEnd := m.next(5)
	assert.Equal(t, "GET", getEnd["http.request.method"])
	assert.Equal(t, "end", getEnd[StreamLogKey])
	assert.Equal(t, sid, getEnd[mcp.AttrSession])
	assert.EqualValues(t, -32602, getEnd[mcp.AttrErrorCode], "on the line that delivered the answer")
}

// Without sessions a call that asks for progress streams on its own
// response (its worker hands the answer, and its error code, to the
// request's goroutine); one that does not is answered as JSON.
func TestLogging_MCPStateless(t *testing.T) {
	t.Parallel()
	m := serveMCP(t, false)

	_, body := m.post("", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fail","arguments":{"text":"bad"},"_meta":{"progressToken":1}}}`)
	require.Contains(t, body, "notifications/progress")
	start, end := m.next(0), m.next(1)
	assert.Equal(t, "start", start[StreamLogKey])
	assert.Equal(t, "end", end[StreamLogKey])
	assert.Equal(t, "tools/call", end[mcp.AttrMethod])
	assert.Equal(t, "fail", end[mcp.AttrTool])
	assert.EqualValues(t, -32602, end[mcp.AttrErrorCode])
	assert.NotContains(t, end, mcp.AttrSession)

	// The same failure without progress: JSON, through the same worker.
	_, body = m.post("", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fail","arguments":{"text":"bad"}}}`)
	l := m.next(2)
	assert.NotContains(t, l, StreamLogKey)
	assert.EqualValues(t, errorCode(t, body), l[mcp.AttrErrorCode])
	assert.EqualValues(t, -32602, l[mcp.AttrErrorCode])
}

// errorCode is the JSON-RPC error code of a JSON answer.
func errorCode(t *testing.T, body string) int {
	t.Helper()
	var msg struct {
		Error *struct{ Code int } `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &msg), body)
	require.NotNil(t, msg.Error, body)
	return msg.Error.Code
}
