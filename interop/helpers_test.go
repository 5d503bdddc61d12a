package interop

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fixture's constants (example_app/conformance/fixture.go).
const (
	simpleText    = "This is a simple text response for testing."
	errorToolText = "This tool intentionally returns an error for testing"
	staticText    = "This is the content of the static text resource."
	serverName    = "saguaro-conformance"

	// rootsTool is the fixture tool the roots tests need and the fixture
	// does not have yet: no arguments; it calls Request.ListRoots and
	// answers one text block "Roots: " + the JSON of the roots array, or
	// a tool error when the client declared no roots capability.
	rootsTool = "test_list_roots"
)

// pngData is the fixture's 1×1 PNG.
var pngData, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")

// fixtureTools, fixturePrompts, fixtureResources: what the lists must hold
// (at least).
var (
	fixtureTools = []string{
		"test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
		"test_multiple_content_types", "test_error_handling", "test_tool_with_logging",
		"test_tool_with_progress", "test_sampling", "test_elicitation", "json_schema_2020_12_tool",
	}
	fixturePrompts   = []string{"test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_embedded_resource", "test_prompt_with_image"}
	fixtureResources = []string{"test://static-text", "test://static-binary", "test://watched-resource"}
	logMessages      = []string{"Tool execution started", "Tool processing data", "Tool execution completed"}
)

// exchange is one HTTP exchange a client made, as the recorder saw it.
type exchange struct {
	HTTPMethod string        // POST, GET, DELETE
	RPCMethod  string        // the JSON-RPC method of a POSTed request or notification ("" for a response)
	RPCVersion string        // params.protocolVersion of an initialize
	Header     string        // the MCP-Protocol-Version header sent
	Session    string        // the Mcp-Session-Id header sent
	LastEvent  string        // the Last-Event-ID header sent (a resumption)
	Request    []byte        // the POSTed message
	Status     int           // 0 when the round trip failed
	Body       *lockedWriter // what the client has read of the response body so far
}

// recorder is an http.RoundTripper that records every exchange a client
// makes, so a test can assert what went over the wire.
type recorder struct {
	base *http.Transport
	mu   sync.Mutex
	log  []exchange
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{base: &http.Transport{}}
	t.Cleanup(r.base.CloseIdleConnections)
	return r
}

func (r *recorder) client() *http.Client { return &http.Client{Transport: r} }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	ex := exchange{
		HTTPMethod: req.Method,
		Header:     req.Header.Get("MCP-Protocol-Version"),
		Session:    req.Header.Get("Mcp-Session-Id"),
		LastEvent:  req.Header.Get("Last-Event-ID"),
		Body:       &lockedWriter{w: &bytes.Buffer{}},
	}
	if req.Body != nil && req.Method == http.MethodPost {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		ex.Request = body
		var msg struct {
			Method string `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil {
			ex.RPCMethod = msg.Method
			if msg.Method == "initialize" {
				ex.RPCVersion = msg.Params.ProtocolVersion
			}
		}
	}
	res, err := r.base.RoundTrip(req)
	if err == nil {
		ex.Status = res.StatusCode
		res.Body = teeBody{Reader: io.TeeReader(res.Body, ex.Body), Closer: res.Body}
	}
	r.mu.Lock()
	r.log = append(r.log, ex)
	r.mu.Unlock()
	return res, err
}

// teeBody is a response body that copies what the client reads.
type teeBody struct {
	io.Reader
	io.Closer
}

// exchanges returns a copy of what was recorded so far.
func (r *recorder) exchanges() []exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]exchange(nil), r.log...)
}

// find returns the exchanges whose JSON-RPC method (or, for GET and
// DELETE, HTTP method) is m.
func (r *recorder) find(m string) []exchange {
	var out []exchange
	for _, ex := range r.exchanges() {
		if ex.RPCMethod == m || ex.RPCMethod == "" && ex.HTTPMethod == m {
			out = append(out, ex)
		}
	}
	return out
}

// checkHandshake asserts that the client negotiated rev through initialize
// (never server/discover, since rev is a legacy revision) and then sent
// the MCP-Protocol-Version header the revision calls for.
func checkHandshake(t *testing.T, rec *recorder, rev string) {
	t.Helper()
	log := rec.exchanges()
	require.NotEmpty(t, log)
	require.Equal(t, "initialize", log[0].RPCMethod, "first exchange: %+v", log)
	require.Equal(t, rev, log[0].RPCVersion, "initialize params.protocolVersion")
	require.Equal(t, http.StatusOK, log[0].Status)
	require.Empty(t, rec.find("server/discover"), "a client pinned to a legacy revision must not probe server/discover")
	inited := rec.find("notifications/initialized")
	require.Len(t, inited, 1)
	require.Equal(t, http.StatusAccepted, inited[0].Status)
	require.NotEmpty(t, inited[0].Session, "notifications/initialized without Mcp-Session-Id")
	if rev >= "2025-06-18" {
		require.Equal(t, rev, inited[0].Header, "MCP-Protocol-Version after initialize")
	}
}

// postRaw sends one JSON-RPC message to the fixture outside any client and
// returns the status code and body.
func postRaw(t *testing.T, session, rev, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, fixtureURL, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if rev != "" {
		req.Header.Set("MCP-Protocol-Version", rev)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}

// sessionAlive reports whether the fixture still knows session: a ping in
// it answers 200, an unknown session 404.
func sessionStatus(t *testing.T, session, rev string) int {
	t.Helper()
	status, _ := postRaw(t, session, rev, `{"jsonrpc":"2.0","id":"probe","method":"ping"}`)
	return status
}

// events collects what a client's handler received, safely across
// goroutines.
type events[T any] struct {
	mu    sync.Mutex
	items []T
}

func (e *events[T]) add(v T) {
	e.mu.Lock()
	e.items = append(e.items, v)
	e.mu.Unlock()
}

func (e *events[T]) all() []T {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]T(nil), e.items...)
}

func (e *events[T]) len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.items)
}

// waitLen waits until at least n events arrived (up to 5s) and returns them.
func (e *events[T]) waitLen(t *testing.T, n int) []T {
	t.Helper()
	require.Eventually(t, func() bool { return e.len() >= n }, 5*time.Second, 5*time.Millisecond,
		"want at least %d events", n)
	return e.all()
}

// ctxFor is a test's context, bounded so a hung peer fails the test rather
// than the whole run.
func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// progressEvent is one notifications/progress, client-independent.
type progressEvent struct {
	Token    any
	Progress float64
	Total    float64
}

// logEvent is one notifications/message, client-independent.
type logEvent struct {
	Level  string
	Logger string
	Data   any
}

// checkProgress: at least three notifications, all for token, progress
// strictly increasing, total 100.
func checkProgress(t *testing.T, got []progressEvent, token string) {
	t.Helper()
	require.GreaterOrEqual(t, len(got), 3, "progress notifications: %+v", got)
	for i, p := range got {
		require.Equal(t, token, p.Token, "notification %d carries the wrong progressToken", i)
		require.EqualValues(t, 100, p.Total, "notification %d total", i)
		if i > 0 {
			require.Greater(t, p.Progress, got[i-1].Progress, "progress must increase: %+v", got)
		}
	}
	require.EqualValues(t, 100, got[len(got)-1].Progress)
}

// checkLogs: the tool's three messages, in order, at info from "conformance".
func checkLogs(t *testing.T, got []logEvent) {
	t.Helper()
	require.GreaterOrEqual(t, len(got), 3, "log messages: %+v", got)
	var data []any
	for _, l := range got {
		require.Equal(t, "info", l.Level)
		require.Equal(t, "conformance", l.Logger)
		data = append(data, l.Data)
	}
	require.Equal(t, []any{logMessages[0], logMessages[1], logMessages[2]}, data)
}

// elicitationRevision reports whether rev has elicitation (06+).
func elicitationRevision(rev string) bool { return rev >= "2025-06-18" }

// sseEvent is one event of a text/event-stream body.
type sseEvent struct {
	ID, Data string
	HasData  bool // a data field was present (possibly empty)
}

// sseEvents parses the complete events of an SSE body (fields id and
// data; comments and retry are skipped).
func sseEvents(body string) []sseEvent {
	var out []sseEvent
	var cur sseEvent
	var data []string
	for _, line := range strings.SplitAfter(body, "\n") {
		if !strings.HasSuffix(line, "\n") {
			break // incomplete last line
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if cur.ID != "" || cur.HasData {
				cur.Data = strings.Join(data, "\n")
				out = append(out, cur)
			}
			cur, data = sseEvent{}, nil
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			cur.ID = value
		case "data":
			cur.HasData = true
			data = append(data, value)
		}
	}
	return out
}

// deleteRaw ends a session outside any client and returns the status.
func deleteRaw(t *testing.T, session, rev string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodDelete, fixtureURL, nil)
	require.NoError(t, err)
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("MCP-Protocol-Version", rev)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err)
	res.Body.Close()
	return res.StatusCode
}

// checkPriming looks at the event stream that answered the client's one
// tools/call: it opens with a priming event (an id and empty data,
// SEP-1699) at every revision. saguaro primes 2025-03-26 and 2025-06-18
// streams too, on purpose (the conformance suite's polling scenario speaks
// 2025-03-26 headers on a 2025-11-25 session); this test proves that both
// peer clients read such a stream at those revisions without trouble.
func checkPriming(t *testing.T, rec *recorder, rev string) {
	t.Helper()
	calls := rec.find("tools/call")
	require.Len(t, calls, 1)
	evs := sseEvents(calls[0].Body.String())
	require.GreaterOrEqual(t, len(evs), 4, "a call with progress is answered as an event stream: %q", calls[0].Body.String())
	last := evs[len(evs)-1]
	assert.Contains(t, last.Data, `"result"`, "the stream ends with the response")
	assert.NotEmpty(t, evs[0].ID, "priming event without an id")
	assert.True(t, evs[0].HasData && evs[0].Data == "", "%s streams open with a priming event: %+v", rev, evs[0])
	for i, e := range evs[1:] {
		assert.NotEmpty(t, e.Data, "event %d (id %q) after the priming event has empty data", i+1, e.ID)
	}
}

// checkResumed: the client resumed the call's stream with GET and a
// Last-Event-ID that the server had sent on it, and the server answered.
func checkResumed(t *testing.T, rec *recorder) {
	t.Helper()
	calls := rec.find("tools/call")
	require.Len(t, calls, 1)
	var sent []string
	for _, e := range sseEvents(calls[0].Body.String()) {
		sent = append(sent, e.ID)
	}
	var resumes []exchange
	for _, ex := range rec.find(http.MethodGet) {
		if ex.LastEvent != "" {
			resumes = append(resumes, ex)
		}
	}
	require.NotEmpty(t, resumes, "no GET with Last-Event-ID: %+v", rec.exchanges())
	assert.Contains(t, sent, resumes[0].LastEvent, "Last-Event-ID is not an id the call's stream carried")
	assert.Equal(t, http.StatusOK, resumes[0].Status)
	assert.Contains(t, resumes[len(resumes)-1].Body.String(), `"result"`, "the response arrives on the resumed stream")
}
