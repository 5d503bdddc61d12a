package mcp

// Event streams over real HTTP: streaming POST answers, no crosstalk
// between concurrent calls, resumption with Last-Event-ID, and
// server→client requests.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// progressOf returns a progress notification's token and progress.
func progressOf(t testing.TB, m rpcMsg) (string, float64) {
	t.Helper()
	require.Equal(t, "notifications/progress", m.Method)
	var p struct {
		Token    json.RawMessage `json:"progressToken"`
		Progress float64         `json:"progress"`
	}
	require.NoError(t, json.Unmarshal(m.Params, &p))
	return string(p.Token), p.Progress
}

func TestStreamingPOST(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{Sessions: &SessionOptions{Retry: 1500 * time.Millisecond}})
	sid := ts.open("2025-11-25", "{}")
	for _, tok := range []string{`"tok-1"`, `42`, `-7`, `"42"`} {
		s := openStream(t, ts.post(sid, toolCallToken(`"c"`, "progress", `{"n":3}`, tok)))
		require.Equal(t, "no-cache", s.resp.Header.Get("Cache-Control"))
		prime := s.priming()
		require.Equal(t, 1500*time.Millisecond, s.r.Retry(), "the priming event carries retry")
		stream, seq, ok := parseEventID(prime)
		require.True(t, ok, "event id %q", prime)
		require.NotZero(t, stream)
		require.Zero(t, seq)
		for i := 1; i <= 3; i++ {
			m, id := s.msg()
			got, progress := progressOf(t, m)
			require.Equal(t, tok, got, "the token is echoed with its JSON type")
			require.Equal(t, float64(i), progress)
			require.Equal(t, formatEventID(stream, int64(i)), untag(id))
		}
		m, id := s.msg()
		require.Equal(t, `"c"`, string(m.ID))
		want := strings.Trim(tok, `"`)
		require.Equal(t, "done "+want, m.text(t))
		require.Equal(t, formatEventID(stream, 4), untag(id))
		s.end()
	}
	// A quiet tool on the same session is answered as JSON, as is a
	// progress tool whose caller asked for no progress.
	require.Equal(t, "quiet q", ts.call(sid, toolCall("2", "quiet", `{"text":"q"}`)).text(t))
	require.Equal(t, "done ", ts.call(sid, toolCall("3", "progress", `{"n":3}`)).text(t))
	// Nothing is left behind: finished streams are forgotten.
	eventually(t, func() bool {
		info, _ := ts.session(sid)
		return len(info.Streams) == 0
	}, "streams left in the session")
}

func TestStreamingPOSTJSONResponse(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{Sessions: &SessionOptions{}, JSONResponse: true})
	sid := ts.open("2025-11-25", "{}")
	m := ts.call(sid, toolCallToken("1", "progress", `{"n":3}`, `"t"`))
	require.Equal(t, "done t", m.text(t))
	m = ts.call(sid, toolCall("2", "logs", `{"n":5}`))
	require.Equal(t, "logged 5", m.text(t))
}

// TestStreamingStateless: without sessions a call that asks for progress
// streams it (see TestStatelessProgressStreams); everything else is JSON.
func TestStreamingStateless(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{})
	require.Equal(t, "done", ts.call("", toolCall("1", "progress", `{"n":3}`)).text(t)[:4])
	// No back channel: a clear tool error.
	m := ts.call("", toolCall("2", "sample", `{"text":"x"}`))
	require.True(t, m.isToolError(t))
	require.Contains(t, m.text(t), "sampling")
}

// TestStreamingFlood: a call that emits far more than a mailbox holds,
// as fast as it can, still gets every event to a client that reads, in
// order, then its result, and the stream ends.
func TestStreamingFlood(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{Sessions: &SessionOptions{}})
	sid := ts.open("2025-11-25", "{}")
	const n = 3000
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := openStream(t, ts.do(ts.newReq(ctx, http.MethodPost, sid, strings.NewReader(toolCall("1", "logs", fmt.Sprintf(`{"n":%d}`, n))))))
	s.priming()
	msgs := s.rest()
	require.NoError(t, ctx.Err(), "the stream did not end")
	require.Equal(t, n+1, len(msgs), "events lost")
	for i, m := range msgs[:n] {
		require.Equal(t, "notifications/message", m.Method)
		var p struct {
			Data int `json:"data"`
		}
		require.NoError(t, json.Unmarshal(m.Params, &p))
		require.Equal(t, i+1, p.Data)
	}
	require.Equal(t, fmt.Sprintf("logged %d", n), msgs[n].text(t))
}

// TestStreamingNoCrosstalk: concurrent progress-emitting calls on one
// session; every notification arrives on its own request's stream.
func TestStreamingNoCrosstalk(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{Sessions: &SessionOptions{}})
	sid := ts.open("2025-11-25", "{}")
	const calls, n = 8, 25
	var wg sync.WaitGroup
	for i := range calls {
		tok := fmt.Sprintf(`"call-%d"`, i)
		if i%2 == 1 {
			tok = strconv.Itoa(1000 + i)
		}
		wg.Go(func() {
			s := openStream(t, ts.post(sid, toolCallToken(strconv.Itoa(i), "progress", fmt.Sprintf(`{"n":%d,"delayMs":1}`, n), tok)))
			prime := s.priming()
			stream, _, ok := parseEventID(prime)
			assert.True(t, ok)
			msgs := s.rest()
			if !assert.Len(t, msgs, n+1) {
				return
			}
			for j, m := range msgs[:n] {
				got, progress := progressOf(t, m)
				assert.Equal(t, tok, got, "call %d got another call's notification", i)
				assert.Equal(t, float64(j+1), progress)
			}
			assert.Equal(t, strconv.Itoa(i), string(msgs[n].ID))
			assert.Equal(t, "done "+strings.Trim(tok, `"`), msgs[n].text(t))
			_ = stream
		})
	}
	wg.Wait()
}

// attached reports whether a connection is attached to a session's
// stream.
func attached(ts *tserver, sid string, stream int64) bool {
	info, _ := ts.session(sid)
	return info.Streams[stream]
}

func TestStreamResumeGET(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ts := startServer(t, &Options{Handler: f.srv, Sessions: &SessionOptions{}})
	sid := ts.open("2025-11-25", "{}")
	other := ts.open("2025-11-25", "{}") // must hear only list changes
	require.JSONEq(t, `{}`, string(ts.call(sid, req("1", "resources/subscribe", `{"uri":"test://watched"}`)).Result))

	ctx, cancel := context.WithCancel(context.Background())
	g := openStream(t, ts.get(ctx, sid))
	require.Equal(t, "0-0", g.priming())
	f.srv.ResourceUpdated("test://watched")
	f.srv.ResourceUpdated("test://other") // not subscribed: not sent
	m, id := g.msg()
	require.Equal(t, "notifications/resources/updated", m.Method)
	require.JSONEq(t, `{"uri":"test://watched"}`, string(m.Params))
	require.Equal(t, "0-1", id)
	require.NoError(t, AddTool(f.srv, &Tool{Name: "late1"}, func(context.Context, *CallToolRequest, fixtureArgs) (string, error) { return "", nil }))
	m, id = g.msg()
	require.Equal(t, "notifications/tools/list_changed", m.Method)
	require.Equal(t, "0-2", id)
	require.Nil(t, m.ID, "a notification has no id")

	// Kill the connection mid-stream; wait until the server noticed.
	cancel()
	g.close()
	eventually(t, func() bool { return !attached(ts, sid, 0) }, "the GET stream is still attached")

	// Emit more while nobody listens.
	f.srv.ResourceUpdated("test://watched")
	require.NoError(t, AddTool(f.srv, &Tool{Name: "late2"}, func(context.Context, *CallToolRequest, fixtureArgs) (string, error) { return "", nil }))
	f.srv.ResourceUpdated("test://watched")

	// Resume: exactly the missed events, in order, none twice.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	g = openStream(t, ts.get(ctx2, sid, "Last-Event-ID", "0-2"))
	require.Equal(t, "0-2", g.priming())
	wantMethods := []string{"notifications/resources/updated", "notifications/tools/list_changed", "notifications/resources/updated"}
	for i, want := range wantMethods {
		m, id := g.msg()
		require.Equal(t, want, m.Method)
		require.Equal(t, formatEventID(0, int64(3+i)), untag(id))
	}
	// Live again, and nothing is replayed twice.
	f.srv.ResourceUpdated("test://watched")
	m, id = g.msg()
	require.Equal(t, "notifications/resources/updated", m.Method)
	require.Equal(t, "0-6", id)
	g.close()
	cancel2()

	// The other session heard the list changes only.
	eventually(t, func() bool { return !attached(ts, sid, 0) }, "the GET stream is still attached")
	ctx3, cancel3 := context.WithCancel(context.Background())
	defer cancel3()
	o := openStream(t, ts.get(ctx3, other))
	o.priming()
	for range 2 {
		m, _ := o.msg()
		require.Equal(t, "notifications/tools/list_changed", m.Method)
	}
	require.NoError(t, AddTool(f.srv, &Tool{Name: "late3"}, func(context.Context, *CallToolRequest, fixtureArgs) (string, error) { return "", nil }))
	m, _ = o.msg()
	require.Equal(t, "notifications/tools/list_changed", m.Method)
	o.close()
}

// TestStreamResumePOST: a POST stream closed by the server (2025-11-25
// polling) is resumed with GET and Last-Event-ID, up to and including
// its result; the GET stream's own events never appear in it.
func TestStreamResumePOST(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ts := startServer(t, &Options{Handler: f.srv, Sessions: &SessionOptions{}})
	sid := ts.open("2025-11-25", "{}")

	p := openStream(t, ts.post(sid, toolCall("7", "gated", `{"text":"close"}`)))
	prime := p.priming()
	stream, _, ok := parseEventID(prime)
	require.True(t, ok)
	m, firstID := p.msg()
	require.Equal(t, "notifications/message", m.Method)
	require.Contains(t, string(m.Params), "first")
	require.Equal(t, formatEventID(stream, 1), untag(firstID))
	// The server closes the connection with a retry, not the stream.
	_, err := p.r.Next()
	require.Error(t, err)
	require.Equal(t, 20*time.Millisecond, p.r.Retry())
	p.close()
	eventually(t, func() bool { return !attached(ts, sid, stream) }, "the POST stream is still attached")

	// Meanwhile the session's GET stream has its own events.
	require.NoError(t, AddTool(f.srv, &Tool{Name: "late"}, func(context.Context, *CallToolRequest, fixtureArgs) (string, error) { return "", nil }))

	// Let the call go on while nobody listens; then resume.
	f.gate <- struct{}{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := openStream(t, ts.get(ctx, sid, "Last-Event-ID", firstID))
	require.Equal(t, firstID, r.priming())
	msgs := r.rest()
	require.Len(t, msgs, 2, "the second log and the result, nothing of the GET stream")
	require.Equal(t, "notifications/message", msgs[0].Method)
	require.Contains(t, string(msgs[0].Params), "second")
	require.Equal(t, "7", string(msgs[1].ID))
	require.Equal(t, "gated done", msgs[1].text(t))

	// The finished stream is forgotten; its id now opens the GET stream,
	// which has the list change (and not the POST's events).
	eventually(t, func() bool {
		info, _ := ts.session(sid)
		_, kept := info.Streams[stream]
		return !kept
	}, "the finished POST stream was kept")
	g := openStream(t, ts.get(ctx, sid, "Last-Event-ID", firstID))
	g.priming()
	m, id := g.msg()
	require.Equal(t, "notifications/tools/list_changed", m.Method)
	require.Equal(t, "0-1", id)
	g.close()
}

// TestStreamResumeConflict: a stream has one connection at a time.
func TestStreamResumeConflict(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ts := startServer(t, &Options{Handler: f.srv, Sessions: &SessionOptions{}})
	sid := ts.open("2025-11-25", "{}")
	p := openStream(t, ts.post(sid, toolCall("7", "gated", `{}`)))
	prime := p.priming()
	p.msg()
	readError(t, ts.get(context.Background(), sid, "Last-Event-ID", prime), 409, -32600)
	f.gate <- struct{}{}
	msgs := p.rest()
	require.Len(t, msgs, 2)
	require.Equal(t, "gated done", msgs[1].text(t))
}

// answerOn reads the next server→client request on s, checks its method
// and answers it with result (or an error when result starts with "!").
func answerOn(t *testing.T, ts *tserver, sid string, s *sseStream, method, result string) rpcMsg {
	t.Helper()
	m, _ := s.msg()
	require.Equal(t, method, m.Method)
	require.NotNil(t, m.ID, "a request has an id")
	var body string
	if strings.HasPrefix(result, "!") {
		body = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":%s}`, m.ID, result[1:])
	} else {
		body = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)
	}
	readEmpty(t, ts.post(sid, body), http.StatusAccepted)
	return m
}

func TestServerToClientRoundTrips(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{Sessions: &SessionOptions{}})
	sid := ts.open("2025-11-25", `{"sampling":{},"elicitation":{"form":{}},"roots":{}}`)
	cases := []struct {
		tool, method, answer, want string
	}{
		{"sample", "sampling/createMessage", `{"role":"assistant","content":{"type":"text","text":"HELLO"},"model":"m1"}`, "sampled HELLO by m1"},
		{"elicit", "elicitation/create", `{"action":"accept","content":{"name":"Ann"}}`, "elicited accept Ann"},
		{"roots", "roots/list", `{"roots":[{"uri":"file:///a"},{"uri":"file:///b"}]}`, "roots file:///a,file:///b"},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			s := openStream(t, ts.post(sid, toolCall(`"x"`, c.tool, `{"text":"hi"}`)))
			s.priming()
			q := answerOn(t, ts, sid, s, c.method, c.answer)
			if c.tool == "sample" {
				require.Contains(t, string(q.Params), `"maxTokens":10`)
			}
			msgs := s.rest()
			require.Len(t, msgs, 1)
			require.Equal(t, `"x"`, string(msgs[0].ID))
			require.Equal(t, c.want, msgs[0].text(t))
		})
	}
	// Concurrent round trips on one session each get their own answer.
	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 6 {
			wg.Go(func() {
				s := openStream(t, ts.post(sid, toolCall(strconv.Itoa(i), "sample", `{"text":"hi"}`)))
				s.priming()
				answerOn(t, ts, sid, s, "sampling/createMessage", fmt.Sprintf(`{"role":"assistant","content":{"type":"text","text":"n%d"},"model":"m"}`, i))
				msgs := s.rest()
				if assert.Len(t, msgs, 1) {
					assert.Equal(t, fmt.Sprintf("sampled n%d by m", i), msgs[0].text(t))
				}
			})
		}
		wg.Wait()
	})
}

// TestServerToClientErrorAnswer: the client's error answer reaches the
// call intact, even after its POST's buffer is reused.
func TestServerToClientErrorAnswer(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{Sessions: &SessionOptions{}})
	sid := ts.open("2025-11-25", clientCapsAll)
	data := `{"reason":"` + strings.Repeat("r", 2000) + `"}`
	s := openStream(t, ts.post(sid, toolCall("1", "sample", `{"text":"hi"}`)))
	s.priming()
	answerOn(t, ts, sid, s, "sampling/createMessage", `!{"code":-1,"message":"user rejected","data":`+data+`}`)
	// Reuse the pooled body buffers at once.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			resp := ts.post(sid, toolCall("2", "echo", `{"text":"`+strings.Repeat("z", 3000)+`"}`))
			resp.Body.Close()
		})
	}
	msgs := s.rest()
	wg.Wait()
	require.Len(t, msgs, 1)
	// The client's refusal is the tool's trouble: a tool error result
	// carrying the client's message (intact although the body buffers
	// were reused), not the call's own JSON-RPC error.
	require.Nil(t, msgs[0].Error)
	require.True(t, msgs[0].isToolError(t))
	require.Contains(t, msgs[0].text(t), "user rejected")
	require.Contains(t, msgs[0].text(t), "-1")
}

func TestServerToClientWithoutCapability(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{Sessions: &SessionOptions{}})
	sid := ts.open("2025-11-25", `{}`)
	for _, c := range []struct{ tool, want string }{
		{"sample", "sampling"}, {"elicit", "elicitation"}, {"roots", "roots"},
	} {
		// Nothing was sent: the answer is plain JSON, a tool error.
		m := ts.call(sid, toolCall("1", c.tool, `{"text":"x"}`))
		require.True(t, m.isToolError(t))
		require.Contains(t, m.text(t), c.want)
		require.Contains(t, m.text(t), "capability")
	}
}

func TestServerToClientTimeout(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{Sessions: &SessionOptions{RequestTimeout: 300 * time.Millisecond}})
	sid := ts.open("2025-11-25", clientCapsAll)
	start := time.Now()
	s := openStream(t, ts.post(sid, toolCall("1", "sample", `{"text":"x"}`)))
	s.priming()
	q, _ := s.msg()
	require.Equal(t, "sampling/createMessage", q.Method)
	// Nobody answers: the server withdraws its request, then the call
	// fails with a timeout.
	m, _ := s.msg()
	require.Equal(t, "notifications/cancelled", m.Method)
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	require.NoError(t, json.Unmarshal(m.Params, &p))
	require.Equal(t, string(q.ID), string(p.RequestID))
	msgs := s.rest()
	require.Len(t, msgs, 1)
	require.NotNil(t, msgs[0].Error)
	require.Equal(t, -32603, msgs[0].Error.Code)
	require.Equal(t, "Request timed out", msgs[0].Error.Message)
	require.Less(t, time.Since(start), 3*time.Second)
	// A late answer is accepted and dropped.
	readEmpty(t, ts.post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, q.ID)), 202)
}

func TestServerToClientCancelled(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{Sessions: &SessionOptions{}})
	sid := ts.open("2025-11-25", clientCapsAll)
	for _, id := range []string{`"call-a"`, `17`} {
		s := openStream(t, ts.post(sid, toolCall(id, "elicit", `{"text":"x"}`)))
		s.priming()
		q, _ := s.msg()
		require.Equal(t, "elicitation/create", q.Method)
		readEmpty(t, ts.post(sid, note("notifications/cancelled", `{"requestId":`+id+`}`)), 202)
		m, _ := s.msg()
		require.Equal(t, "notifications/cancelled", m.Method)
		msgs := s.rest()
		require.Len(t, msgs, 1)
		require.Equal(t, id, string(msgs[0].ID))
		require.Equal(t, "Request cancelled", msgs[0].Error.Message)
	}
	// A JSON-answered call is cancelled the same way.
	f := newFixture(t)
	ts2 := startServer(t, &Options{Handler: f.srv, Sessions: &SessionOptions{}})
	sid2 := ts2.open("2025-11-25", "{}")
	done := make(chan rpcMsg, 1)
	go func() { done <- readJSON(t, ts2.post(sid2, toolCall("5", "block", `{}`)), 200) }()
	require.Equal(t, "5", <-f.started)
	readEmpty(t, ts2.post(sid2, note("notifications/cancelled", `{"requestId":5}`)), 202)
	m := <-done
	require.Equal(t, "Request cancelled", m.Error.Message)
}

// TestSessionEndReleases: DELETE ends a waiting call, the GET stream and
// the call's stream at once.
func TestSessionEndReleases(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ts := startServer(t, &Options{Handler: f.srv, Sessions: &SessionOptions{}})
	sid := ts.open("2025-11-25", clientCapsAll)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := openStream(t, ts.get(ctx, sid))
	g.priming()
	s := openStream(t, ts.post(sid, toolCall("1", "sample", `{"text":"x"}`)))
	s.priming()
	q, _ := s.msg()
	require.Equal(t, "sampling/createMessage", q.Method)
	blockDone := make(chan rpcMsg, 1)
	go func() { blockDone <- readJSON(t, ts.post(sid, toolCall("2", "block", `{}`)), 200) }()
	require.Equal(t, "2", <-f.started)
	bs := openStream(t, ts.post(sid, toolCall("3", "block", `{"text":"stream"}`)))
	bs.priming()
	bs.msg()
	require.Equal(t, "3", <-f.started)

	start := time.Now()
	readEmpty(t, ts.del(sid), 204)
	s.rest()
	g.rest()
	bs.rest()
	m := <-blockDone
	require.NotNil(t, m.Error)
	require.Less(t, time.Since(start), 2*time.Second)
	require.Equal(t, 0, ts.sessionCount())
}

// TestStreamAbandoned: a client that leaves a streaming call and never
// resumes it gets its call cancelled after ResumeGrace, and the stream
// and the session's hold on it are released.
func TestStreamAbandoned(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ts := startServer(t, &Options{Handler: f.srv, Sessions: &SessionOptions{ResumeGrace: 100 * time.Millisecond}})
	sid := ts.open("2025-11-25", "{}")
	idle := func() bool {
		info, _ := ts.session(sid)
		return len(info.Streams) == 0 && info.Holds == 0 && info.Inflight == 0
	}

	// Left mid-call: the call is cancelled after the grace.
	ctx, cancel := context.WithCancel(context.Background())
	p := openStream(t, ts.do(ts.newReq(ctx, http.MethodPost, sid, strings.NewReader(toolCall("1", "block", `{"text":"stream"}`)))))
	p.priming()
	p.msg()
	require.Equal(t, "1", <-f.started)
	cancel()
	p.close()
	eventually(t, idle, "the abandoned call and its stream were kept")

	// Closed by the server, finished, never resumed: forgotten after the
	// grace.
	q := openStream(t, ts.post(sid, toolCall("2", "gated", `{"text":"close"}`)))
	q.priming()
	q.msg()
	_, err := q.r.Next()
	require.Error(t, err)
	q.close()
	f.gate <- struct{}{}
	eventually(t, idle, "the finished, unresumed stream was kept")
}

// TestStreamSlowReader: a client that reads slowly slows the call down
// instead of losing its events.
func TestStreamSlowReader(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{Sessions: &SessionOptions{StreamEvents: 4}})
	sid := ts.open("2025-11-25", "{}")
	const n = 40
	s := openStream(t, ts.post(sid, toolCall("1", "logs", fmt.Sprintf(`{"n":%d}`, n))))
	s.priming()
	for i := 1; i <= n; i++ {
		m, _ := s.msg()
		require.Equal(t, "notifications/message", m.Method)
		require.Contains(t, string(m.Params), fmt.Sprintf(`"data":%d}`, i))
		if i%8 == 0 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	msgs := s.rest()
	require.Len(t, msgs, 1)
	require.Equal(t, fmt.Sprintf("logged %d", n), msgs[0].text(t))
}

// parseEventID splits an event id "<stream>-<seq>", ignoring the tag
// that names a POST stream's call.
func parseEventID(id string) (stream, seq int64, ok bool) {
	a, b, found := strings.Cut(untag(id), "-")
	if !found {
		return 0, 0, false
	}
	stream, err1 := strconv.ParseInt(a, 10, 64)
	seq, err2 := strconv.ParseInt(b, 10, 64)
	return stream, seq, err1 == nil && err2 == nil
}

// untag is an event id without the tag that names a POST stream's call.
func untag(id string) string {
	id, _, _ = strings.Cut(id, ".")
	return id
}

func formatEventID(stream, seq int64) string { return fmt.Sprintf("%d-%d", stream, seq) }
