package mcp

// Helpers shared by the transport's tests: a fixture server with tools
// that exercise every transport path, a real HTTP server around the
// Controller, and a small client that speaks the wire protocol.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/mcp/internal/streamable"
	"github.com/saguaro-go/saguaro/sse"
)

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fixtureArgs is the input of most fixture tools.
type fixtureArgs struct {
	N       int    `json:"n,omitempty"`
	DelayMS int    `json:"delayMs,omitempty"`
	Text    string `json:"text,omitempty"`
}

// fixture is the controllable part of the test server: channels the
// tools wait on, so tests decide when a call goes on.
type fixture struct {
	srv *Server
	// gate is received from by the "gated" tool between its two halves.
	gate chan struct{}
	// started receives the request id of each "block" call once it runs.
	started chan string
}

// newFixture builds a Server with the transport tests' tools.
func newFixture(t testing.TB) *fixture {
	f := &fixture{
		srv:     NewServer(Implementation{Name: "transport-test", Version: "1"}, nil),
		gate:    make(chan struct{}, 16),
		started: make(chan string, 64),
	}
	s := f.srv
	add := func(err error) {
		t.Helper()
		require.NoError(t, err)
	}
	add(AddTool(s, &Tool{Name: "echo"}, func(ctx context.Context, r *CallToolRequest, in EchoIn) (string, error) {
		return in.Text, nil
	}))
	add(AddTool(s, &Tool{Name: "quiet"}, func(ctx context.Context, r *CallToolRequest, in fixtureArgs) (string, error) {
		return "quiet " + in.Text, nil
	}))
	// progress sends n progress notifications, delayMs apart, then its
	// result, which names the token it saw.
	add(AddTool(s, &Tool{Name: "progress"}, func(ctx context.Context, r *CallToolRequest, in fixtureArgs) (string, error) {
		for i := 1; i <= in.N; i++ {
			if err := r.Progress(ctx, float64(i), float64(in.N), ""); err != nil {
				return "", err
			}
			if in.DelayMS > 0 {
				if err := pauseCtx(ctx, time.Duration(in.DelayMS)*time.Millisecond); err != nil {
					return "", err
				}
			}
		}
		return "done " + r.Meta.ProgressToken.String(), nil
	}))
	// logs sends n log messages as fast as it can, then its result.
	add(AddTool(s, &Tool{Name: "logs"}, func(ctx context.Context, r *CallToolRequest, in fixtureArgs) (string, error) {
		for i := 1; i <= in.N; i++ {
			if err := r.Log(ctx, LogInfo, "flood", i); err != nil {
				return "", err
			}
		}
		return fmt.Sprintf("logged %d", in.N), nil
	}))
	add(AddTool(s, &Tool{Name: "panic"}, func(ctx context.Context, r *CallToolRequest, in fixtureArgs) (string, error) {
		panic("secret-panic-detail")
	}))
	add(s.AddToolRaw(&Tool{Name: "badutf8"}, func(ctx context.Context, r *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{Content: []Content{Text("bad \xff text")}}, nil
	}))
	add(AddTool(s, &Tool{Name: "sample"}, func(ctx context.Context, r *CallToolRequest, in fixtureArgs) (string, error) {
		res, err := r.CreateMessage(ctx, &CreateMessageParams{
			Messages:  []*SamplingMessage{{Role: RoleUser, Content: Text(in.Text)}},
			MaxTokens: 10,
		})
		if err != nil {
			return "", err
		}
		txt, _ := res.Content.(*TextContent)
		if txt == nil {
			return "", errors.New("no text")
		}
		return "sampled " + txt.Text + " by " + res.Model, nil
	}))
	add(AddTool(s, &Tool{Name: "elicit"}, func(ctx context.Context, r *CallToolRequest, in fixtureArgs) (string, error) {
		res, err := r.Elicit(ctx, &ElicitParams{Message: in.Text, RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("elicited %s %v", res.Action, res.Content["name"]), nil
	}))
	add(AddTool(s, &Tool{Name: "roots"}, func(ctx context.Context, r *CallToolRequest, in fixtureArgs) (string, error) {
		res, err := r.ListRoots(ctx)
		if err != nil {
			return "", err
		}
		uris := make([]string, 0, len(res.Roots))
		for _, root := range res.Roots {
			uris = append(uris, root.URI)
		}
		return "roots " + strings.Join(uris, ","), nil
	}))
	// block runs until its context ends; with text "stream" it first
	// logs, which turns its answer into an event stream.
	add(AddTool(s, &Tool{Name: "block"}, func(ctx context.Context, r *CallToolRequest, in fixtureArgs) (string, error) {
		if in.Text == "stream" {
			_ = r.Log(ctx, LogInfo, "block", "started")
		}
		f.started <- r.ID.String()
		<-ctx.Done()
		return "", ctx.Err()
	}))
	// gated logs "first", closes its connection (2025-11-25 polling),
	// waits for the gate, logs "second" and answers.
	add(AddTool(s, &Tool{Name: "gated"}, func(ctx context.Context, r *CallToolRequest, in fixtureArgs) (string, error) {
		_ = r.Log(ctx, LogInfo, "gated", "first")
		if in.Text == "close" && !r.CloseStream(20*time.Millisecond) {
			return "", errors.New("CloseStream refused")
		}
		select {
		case <-f.gate:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		_ = r.Log(ctx, LogInfo, "gated", "second")
		return "gated done", nil
	}))
	add(s.AddResource(&Resource{URI: "test://watched", Name: "watched"}, func(ctx context.Context, r *ReadResourceRequest) (*ReadResourceResult, error) {
		return &ReadResourceResult{Contents: []*ResourceContents{{URI: r.URI, Text: "w"}}}, nil
	}))
	return f
}

func pauseCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// tserver is a Controller behind a real loopback HTTP server.
type tserver struct {
	t   testing.TB
	ep  *Endpoint
	srv *httptest.Server
	url string
	hc  *http.Client
	log *syncBuffer
}

// quietLogger returns a logger into a buffer the test may read.
func quietLogger() (*slog.Logger, *syncBuffer) {
	b := &syncBuffer{}
	return slog.New(slog.NewTextHandler(b, nil)), b
}

// startServer serves opts (a fixture Server when opts.Handler is nil)
// over loopback HTTP until the test ends; then every session is ended,
// so no call or stream outlives the test.
func startServer(t testing.TB, opts *Options) *tserver {
	t.Helper()
	o := *opts
	lg, buf := quietLogger()
	if o.Logger == nil {
		o.Logger = lg
	}
	if o.Handler == nil {
		o.Handler = newFixture(t).srv
	}
	ep := Controller(&o)
	srv := httptest.NewServer(ep)
	ts := &tserver{t: t, ep: ep, srv: srv, url: srv.URL + "/mcp", hc: srv.Client(), log: buf}
	t.Cleanup(func() {
		ts.endAll()
		srv.CloseClientConnections()
		srv.Close()
	})
	return ts
}

// endAll ends every live session.
func (ts *tserver) endAll() { _ = ts.ep.Shutdown(context.Background()) }

// sessionCount is the number of live sessions.
func (ts *tserver) sessionCount() int { return ts.ep.Sessions() }

// session describes a live session; ok is false once it ended.
func (ts *tserver) session(id string) (info streamable.SessionInfo, ok bool) {
	return ts.ep.t.Session(id)
}

// live reports whether a session is live.
func (ts *tserver) live(id string) bool {
	_, ok := ts.session(id)
	return ok
}

const acceptBoth = "application/json, text/event-stream"

// newReq builds a request with the headers a well-behaved client sends;
// hdr pairs (name, value) override them, an empty value removes one.
func (ts *tserver) newReq(ctx context.Context, method, sid string, body io.Reader, hdr ...string) *http.Request {
	ts.t.Helper()
	r, err := http.NewRequestWithContext(ctx, method, ts.url, body)
	require.NoError(ts.t, err)
	if method == http.MethodGet {
		r.Header.Set("Accept", "text/event-stream")
	} else {
		r.Header.Set("Accept", acceptBoth)
	}
	if method == http.MethodPost {
		r.Header.Set("Content-Type", "application/json")
	}
	if sid != "" {
		r.Header.Set("Mcp-Session-Id", sid)
		r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			r.Header.Del(hdr[i])
		} else {
			r.Header.Set(hdr[i], hdr[i+1])
		}
	}
	return r
}

func (ts *tserver) do(r *http.Request) *http.Response {
	ts.t.Helper()
	resp, err := ts.hc.Do(r)
	require.NoError(ts.t, err)
	return resp
}

// post sends body on the session sid ("" for none).
func (ts *tserver) post(sid, body string, hdr ...string) *http.Response {
	ts.t.Helper()
	return ts.do(ts.newReq(context.Background(), http.MethodPost, sid, strings.NewReader(body), hdr...))
}

// rpcMsg is any JSON-RPC message as the tests read it.
type rpcMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcErr         `json:"error,omitempty"`
}

type rpcErr struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// text returns the first text block of a tools/call result.
func (m rpcMsg) text(t testing.TB) string {
	t.Helper()
	require.Nil(t, m.Error, "an error answer: %+v", m.Error)
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	require.NoError(t, json.Unmarshal(m.Result, &res), "result %s", m.Result)
	require.NotEmpty(t, res.Content, "result %s", m.Result)
	return res.Content[0].Text
}

// isToolError reports whether a tools/call result has isError.
func (m rpcMsg) isToolError(t testing.TB) bool {
	t.Helper()
	var res struct {
		IsError bool `json:"isError"`
	}
	require.NoError(t, json.Unmarshal(m.Result, &res))
	return res.IsError
}

// readJSON reads a JSON answer with the given status and closes it.
func readJSON(t testing.TB, resp *http.Response, status int) rpcMsg {
	t.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, status, resp.StatusCode, "body %s", body)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"), "body %s", body)
	var m rpcMsg
	require.NoError(t, json.Unmarshal(body, &m), "body %s", body)
	require.Equal(t, "2.0", m.JSONRPC)
	return m
}

// readError reads a JSON-RPC error answer with the given status and code.
func readError(t testing.TB, resp *http.Response, status, code int) rpcMsg {
	t.Helper()
	m := readJSON(t, resp, status)
	require.NotNil(t, m.Error, "want error %d, got result %s", code, m.Result)
	require.Equal(t, code, m.Error.Code, "message %q", m.Error.Message)
	require.Nil(t, m.Result)
	return m
}

// readEmpty reads an answer without a body.
func readEmpty(t testing.TB, resp *http.Response, status int) {
	t.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, status, resp.StatusCode, "body %s", body)
	require.Empty(t, body)
}

// sseStream reads an event-stream answer one message at a time.
type sseStream struct {
	t    testing.TB
	resp *http.Response
	r    *sse.Reader
}

func openStream(t testing.TB, resp *http.Response) *sseStream {
	t.Helper()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.FailNow(t, "not an event stream", "%d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	return &sseStream{t: t, resp: resp, r: sse.NewReader(resp.Body)}
}

// next returns the next event.
func (s *sseStream) next() sse.Event {
	s.t.Helper()
	ev, err := s.r.Next()
	require.NoError(s.t, err)
	return ev
}

// priming reads the event that opens every stream: an id and no data.
func (s *sseStream) priming() string {
	s.t.Helper()
	ev := s.next()
	require.NotEmpty(s.t, ev.ID)
	require.Empty(s.t, ev.Data)
	return ev.ID
}

// msg returns the next event decoded as a JSON-RPC message, and its id.
func (s *sseStream) msg() (rpcMsg, string) {
	s.t.Helper()
	ev := s.next()
	var m rpcMsg
	require.NoError(s.t, json.Unmarshal(ev.Data, &m), "event %q", ev.Data)
	return m, ev.ID
}

// end asserts that the stream ends cleanly now.
func (s *sseStream) end() {
	s.t.Helper()
	ev, err := s.r.Next()
	require.ErrorIs(s.t, err, io.EOF, "unexpected event %q", ev.Data)
	s.resp.Body.Close()
}

func (s *sseStream) close() { s.resp.Body.Close() }

// rest reads messages until the stream ends, skipping nothing.
func (s *sseStream) rest() []rpcMsg {
	s.t.Helper()
	var out []rpcMsg
	for {
		ev, err := s.r.Next()
		if errors.Is(err, io.EOF) {
			s.resp.Body.Close()
			return out
		}
		require.NoError(s.t, err)
		var m rpcMsg
		require.NoError(s.t, json.Unmarshal(ev.Data, &m), "event %q", ev.Data)
		out = append(out, m)
	}
}

// The client side of a session.

const clientCapsAll = `{"sampling":{},"elicitation":{},"roots":{"listChanged":true}}`

func initBody(rev, caps string) string {
	return req("0", "initialize", fmt.Sprintf(`{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"t","version":"1"}}`, rev, caps))
}

// open initializes a session of revision rev with the client's caps and
// sends notifications/initialized; it returns the session id.
func (ts *tserver) open(rev, caps string, hdr ...string) string {
	ts.t.Helper()
	resp := ts.post("", initBody(rev, caps), hdr...)
	m := readJSON(ts.t, resp, http.StatusOK)
	require.Nil(ts.t, m.Error)
	sid := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(ts.t, sid)
	readEmpty(ts.t, ts.post(sid, note("notifications/initialized", ""), append([]string{"MCP-Protocol-Version", rev}, hdr...)...), http.StatusAccepted)
	return sid
}

// call sends a request on a session and expects a JSON answer.
func (ts *tserver) call(sid, body string, hdr ...string) rpcMsg {
	ts.t.Helper()
	return readJSON(ts.t, ts.post(sid, body, hdr...), http.StatusOK)
}

// del ends a session with DELETE.
func (ts *tserver) del(sid string, hdr ...string) *http.Response {
	ts.t.Helper()
	return ts.do(ts.newReq(context.Background(), http.MethodDelete, sid, nil, hdr...))
}

// get opens a GET stream.
func (ts *tserver) get(ctx context.Context, sid string, hdr ...string) *http.Response {
	ts.t.Helper()
	return ts.do(ts.newReq(ctx, http.MethodGet, sid, nil, hdr...))
}

func toolCall(id, name, args string) string {
	return req(id, "tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s}`, name, args))
}

func toolCallToken(id, name, args, token string) string {
	return req(id, "tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s,"_meta":{"progressToken":%s}}`, name, args, token))
}

// eventually polls cond for up to 5s.
func eventually(t testing.TB, cond func() bool, msg string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			require.FailNowf(t, "condition not met in time", msg, args...)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
