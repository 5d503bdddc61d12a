package mcp

// Sessions over real HTTP: ids, 400/404, DELETE, identity binding, the
// one GET stream, MaxSessions, the per-session queue of stateful
// callbacks.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSessionIDs(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{Sessions: &SessionOptions{}})
	seen := map[string]bool{}
	for range 20 {
		sid := ts.open("2025-11-25", "{}")
		require.GreaterOrEqual(t, len(sid), 32, "at least 128 random bits in hex")
		for _, c := range []byte(sid) {
			require.True(t, c >= 0x21 && c <= 0x7e, "visible ASCII only: %q", sid)
		}
		require.False(t, seen[sid], "ids are unique")
		seen[sid] = true
	}
	require.Equal(t, 20, ts.sessionCount())
	// The id is only on the initialize answer.
	sid := ts.open("2025-11-25", "{}")
	resp := ts.post(sid, req("1", "ping", ""))
	require.Empty(t, resp.Header.Get("Mcp-Session-Id"))
	require.Nil(t, readJSON(t, resp, 200).Error)
}

func TestSessionRequiredAndUnknown(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{Sessions: &SessionOptions{}})
	sid := ts.open("2025-11-25", "{}")

	// Missing: 400 for every method but initialize.
	readError(t, ts.post("", req("1", "ping", "")), 400, -32600)
	readError(t, ts.post("", toolCall("1", "echo", `{"text":"x"}`)), 400, -32600)
	readError(t, ts.post("", `[`+req("1", "ping", "")+`]`), 400, -32600)
	readError(t, ts.get(context.Background(), ""), 400, -32600)
	readError(t, ts.del(""), 400, -32600)
	// Two ids: 400.
	r := ts.newReq(context.Background(), http.MethodPost, sid, strings.NewReader(req("1", "ping", "")))
	r.Header.Add("Mcp-Session-Id", sid)
	readError(t, ts.do(r), 400, -32600)

	// Unknown: 404 for every method.
	for _, bad := range []string{"nope", strings.Repeat("a", 32), sid + "x"} {
		readError(t, ts.post(bad, req("1", "ping", "")), 404, -32600)
		readError(t, ts.get(context.Background(), bad), 404, -32600)
		readError(t, ts.del(bad), 404, -32600)
	}

	// The session is checked before the headers.
	readError(t, ts.post("nope", req("1", "ping", ""), "Accept", "text/plain"), 404, -32600)
	readError(t, ts.post(sid, req("1", "ping", ""), "Accept", "text/plain"), 406, -32600)
	readError(t, ts.post("nope", req("1", "ping", ""), "Content-Type", "text/plain"), 404, -32600)
	readError(t, ts.post(sid, req("1", "ping", ""), "Content-Type", "text/plain"), 415, -32600)
	readError(t, ts.get(context.Background(), "nope", "Accept", "text/plain"), 404, -32600)
	readError(t, ts.get(context.Background(), "", "Accept", "text/plain"), 406, -32600)

	// DELETE: 204, then 404 everywhere.
	readEmpty(t, ts.del(sid), 204)
	require.Equal(t, 0, ts.sessionCount())
	readError(t, ts.post(sid, req("1", "ping", "")), 404, -32600)
	readError(t, ts.post(sid, toolCall("2", "progress", `{"n":1}`)), 404, -32600)
	readError(t, ts.get(context.Background(), sid), 404, -32600)
	readError(t, ts.del(sid), 404, -32600)
	// A new initialize without the id starts over.
	sid2 := ts.open("2025-11-25", "{}")
	require.NotEqual(t, sid, sid2)
}

func TestSessionIdentityBinding(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{
		Sessions: &SessionOptions{},
		Identity: func(r *http.Request) string { return r.Header.Get("X-User") },
	})
	sid := ts.open("2025-11-25", "{}", "X-User", "alice")
	require.Nil(t, ts.call(sid, req("1", "ping", ""), "X-User", "alice").Error)

	// Another identity sees exactly what an unknown id gets.
	unknown := func(resp *http.Response) string {
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, 404, resp.StatusCode)
		return string(b)
	}
	want := unknown(ts.post("0123456789abcdef0123456789abcdef", req("1", "ping", ""), "X-User", "bob"))
	for _, who := range []string{"bob", ""} {
		require.Equal(t, want, unknown(ts.post(sid, req("1", "ping", ""), "X-User", who)))
		require.Equal(t, want, unknown(ts.post(sid, toolCall("1", "echo", `{"text":"x"}`), "X-User", who)))
		require.Equal(t, unknown(ts.get(context.Background(), "0123456789abcdef0123456789abcdef", "X-User", who)),
			unknown(ts.get(context.Background(), sid, "X-User", who)))
		require.Equal(t, unknown(ts.del("0123456789abcdef0123456789abcdef", "X-User", who)),
			unknown(ts.del(sid, "X-User", who)))
	}
	// Bob's DELETE did not end Alice's session.
	require.Equal(t, 1, ts.sessionCount())
	require.Nil(t, ts.call(sid, req("2", "ping", ""), "X-User", "alice").Error)
	readEmpty(t, ts.del(sid, "X-User", "alice"), 204)
}

func TestSessionSecondGETConflicts(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{Sessions: &SessionOptions{}})
	sid := ts.open("2025-11-25", "{}")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := openStream(t, ts.get(ctx, sid))
	first.priming()
	readError(t, ts.get(context.Background(), sid), 409, -32600)
	// Wrong Accept on GET: 406; bad version: 400.
	readError(t, ts.get(context.Background(), sid, "Accept", "application/json"), 406, -32600)
	readError(t, ts.get(context.Background(), sid, "MCP-Protocol-Version", "2030-01-01"), 400, -32022)
	// Once the first is gone, a new GET is accepted.
	cancel()
	first.close()
	eventually(t, func() bool {
		resp := ts.get(context.Background(), sid, "Accept", "text/event-stream")
		if resp.StatusCode == 409 {
			resp.Body.Close()
			return false
		}
		s := openStream(t, resp)
		s.priming()
		s.close()
		return true
	}, "the GET slot was not freed")
}

func TestSessionMaxSessions(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{Sessions: &SessionOptions{MaxSessions: 3}})
	var sids []string
	for range 3 {
		sids = append(sids, ts.open("2025-11-25", "{}"))
	}
	resp := ts.post("", initBody("2025-11-25", "{}"))
	require.Equal(t, "5", resp.Header.Get("Retry-After"))
	m := readError(t, resp, 503, -32603)
	require.Equal(t, "0", string(m.ID))
	require.Empty(t, resp.Header.Get("Mcp-Session-Id"))
	require.Equal(t, 3, ts.sessionCount())
	// The full table still serves its sessions.
	for _, sid := range sids {
		require.Nil(t, ts.call(sid, req("1", "ping", "")).Error)
	}
	readEmpty(t, ts.del(sids[0]), 204)
	ts.open("2025-11-25", "{}")
}

func TestSessionInitializeTwice(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{Sessions: &SessionOptions{}})
	sid := ts.open("2025-11-25", "{}")
	m := readError(t, ts.post(sid, initBody("2025-11-25", "{}")), 400, -32600)
	require.Equal(t, "0", string(m.ID))
	// An initialize notification is not a request: accepted and ignored.
	readEmpty(t, ts.post(sid, note("initialize", `{}`)), 202)
	require.Equal(t, 1, ts.sessionCount())
	require.Nil(t, ts.call(sid, req("1", "ping", "")).Error)
}

func TestSessionProtocolVersionHeader(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{Sessions: &SessionOptions{}})
	sid := ts.open("2025-11-25", "{}")
	// 2025-03-26 on a 2025-11-25 session (the conformance client does it),
	// no header, and 2025-06-18 are all accepted and served as 2025-11-25.
	for _, v := range []string{"2025-03-26", "", "2025-06-18"} {
		m := ts.call(sid, toolCall("1", "echo", `{"text":7}`), "MCP-Protocol-Version", v)
		// 2025-11-25 answers bad arguments with an isError result, not -32602.
		require.Nil(t, m.Error, "version %q", v)
		require.True(t, m.isToolError(t), "version %q", v)
	}
	readError(t, ts.post(sid, req("1", "ping", ""), "MCP-Protocol-Version", "2025-11-25, 2025-06-18"), 400, -32022)
}

// A 2025-03-26 session takes batches, with initialize refused inside.
func TestSessionBatch2025_03_26(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{Sessions: &SessionOptions{}})
	sid := ts.open("2025-03-26", "{}", "MCP-Protocol-Version", "")
	resp := ts.post(sid, `[`+initBody("2025-03-26", "{}")+`,`+req("1", "ping", "")+`,`+toolCall(`"t"`, "echo", `{"text":"b"}`)+`,`+note("notifications/progress", `{"progressToken":1,"progress":1}`)+`]`,
		"MCP-Protocol-Version", "")
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	var out []rpcMsg
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Len(t, out, 3)
	require.Equal(t, -32600, out[0].Error.Code)
	require.JSONEq(t, `{}`, string(out[1].Result))
	require.Equal(t, `"t"`, string(out[2].ID))
	require.Equal(t, "b", out[2].text(t))
	// A 2025-11-25 session refuses them.
	sid11 := ts.open("2025-11-25", "{}")
	readError(t, ts.post(sid11, `[`+req("1", "ping", "")+`]`), 400, -32600)
}

func TestSessionConcurrentPOSTs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ts := startServer(t, &Options{Handler: f.srv, Sessions: &SessionOptions{}})
	sid := ts.open("2025-11-25", "{}")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for i := range 3 {
		r := ts.newReq(ctx, http.MethodPost, sid, strings.NewReader(toolCall(fmt.Sprint(i+1), "block", `{}`)))
		wg.Go(func() {
			if resp, err := ts.hc.Do(r); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	// All three run at once: each blocks until its request ends, so one
	// after the other the second would never start.
	started := map[string]bool{}
	for range 3 {
		started[<-f.started] = true
	}
	assert.Len(t, started, 3)
	// A fourth call on the same session is not held back by them either.
	assert.Equal(t, "x", ts.call(sid, toolCall("4", "echo", `{"text":"x"}`)).text(t))
	cancel()
	wg.Wait()
}

// slowHandler is a low-level handler that keeps state (it is not a
// StatelessHandler): its stateful callbacks are queued one at a time per
// session. The state is the number of completed stateful calls.
type slowHandler struct {
	entered chan string   // each SetLogLevel announces itself
	release chan struct{} // and waits for this
}

func newSlowHandler() *slowHandler {
	return &slowHandler{entered: make(chan string, 64), release: make(chan struct{}, 64)}
}

func (h *slowHandler) Initialize(ctx context.Context, req *InitializeRequest, state any) (*InitializeResult, any, error) {
	return &InitializeResult{ServerInfo: Implementation{Name: "slow", Version: "1"}}, 0, nil
}

func (h *slowHandler) SetLogLevel(ctx context.Context, req *SetLogLevelRequest, state any) (any, error) {
	h.entered <- req.ID.String()
	select {
	case <-h.release:
		return state.(int) + 1, nil
	case <-ctx.Done():
		return state, ctx.Err()
	}
}

// Complete answers the state; "panic" panics; any other value counts.
func (h *slowHandler) Complete(ctx context.Context, req *CompleteRequest, state any) (*CompleteResult, any, error) {
	n := state.(int)
	if req.ArgumentValue == "panic" {
		panic("boom")
	}
	return &CompleteResult{Values: []string{fmt.Sprint(n)}}, n + 1, nil
}

func completeBody(id, value string) string {
	return req(id, "completion/complete", fmt.Sprintf(`{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":%q}}`, value))
}

func completion(t *testing.T, m rpcMsg) string {
	t.Helper()
	require.Nil(t, m.Error)
	var res struct {
		Completion struct {
			Values []string `json:"values"`
		} `json:"completion"`
	}
	require.NoError(t, json.Unmarshal(m.Result, &res))
	require.Len(t, res.Completion.Values, 1)
	return res.Completion.Values[0]
}

func TestSessionStatefulQueue(t *testing.T) {
	t.Parallel()
	h := newSlowHandler()
	ts := startServer(t, &Options{Handler: h, Sessions: &SessionOptions{QueueSize: 2}})
	sid := ts.open("2025-11-25", "{}")
	require.True(t, ts.live(sid))

	// State threads through stateful calls; a panic keeps the old state.
	require.Equal(t, "0", completion(t, ts.call(sid, completeBody("1", "x"))))
	require.Equal(t, "1", completion(t, ts.call(sid, completeBody("2", "x"))))
	readError(t, ts.post(sid, completeBody("3", "panic")), 200, -32603)
	require.Equal(t, "2", completion(t, ts.call(sid, completeBody("4", "x"))))

	// One slow stateful call holds the slot; two more queue behind it.
	type answer struct {
		id  string
		msg rpcMsg
	}
	answers := make(chan answer, 8)
	send := func(id string) {
		go func() {
			resp := ts.post(sid, req(id, "logging/setLevel", `{"level":"info"}`))
			answers <- answer{id, readJSON(t, resp, 200)}
		}()
	}
	send("10")
	require.Equal(t, "10", <-h.entered)
	send("11")
	send("12")
	eventually(t, func() bool { info, _ := ts.session(sid); return info.Waiting == 2 }, "two calls queued")

	// The queue is full: the next stateful call is refused at once.
	m := readError(t, ts.post(sid, completeBody("13", "x")), 200, -32603)
	require.Contains(t, m.Error.Message, "Server overloaded")

	// ping and cancellation never wait behind the queue.
	start := time.Now()
	require.Nil(t, ts.call(sid, req("14", "ping", "")).Error)
	readEmpty(t, ts.post(sid, note("notifications/cancelled", `{"requestId":12,"reason":"changed my mind"}`)), 202)
	require.Less(t, time.Since(start), time.Second)
	a := <-answers
	require.Equal(t, "12", a.id)
	require.NotNil(t, a.msg.Error)
	require.Equal(t, -32603, a.msg.Error.Code)
	require.Equal(t, "Request cancelled", a.msg.Error.Message)

	// Let the two others through, one at a time.
	h.release <- struct{}{}
	a = <-answers
	require.Equal(t, "10", a.id)
	require.JSONEq(t, `{}`, string(a.msg.Result))
	require.Equal(t, "11", <-h.entered)
	h.release <- struct{}{}
	a = <-answers
	require.Equal(t, "11", a.id)
	require.JSONEq(t, `{}`, string(a.msg.Result))
	// Two setLevel calls completed, after three completions.
	require.Equal(t, "5", completion(t, ts.call(sid, completeBody("15", "x"))))

	// A client that leaves while its stateful call waits cancels it, and
	// the slot is freed.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		r := ts.newReq(ctx, http.MethodPost, sid, strings.NewReader(req("16", "logging/setLevel", `{"level":"info"}`)))
		resp, err := ts.hc.Do(r)
		if err == nil {
			resp.Body.Close()
		}
	}()
	require.Equal(t, "16", <-h.entered)
	cancel()
	eventually(t, func() bool { info, _ := ts.session(sid); return !info.Turn }, "the slot was not freed")
	require.Equal(t, "6", completion(t, ts.call(sid, completeBody("17", "x"))))
}

// TestStatelessLowLevelHandler: a stateful handler served without
// sessions gets a fresh state from Initialize for every call.
func TestStatelessLowLevelHandler(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{Handler: newSlowHandler()})
	for i := range 3 {
		require.Equal(t, "0", completion(t, ts.call("", completeBody(fmt.Sprint(i), "x"))))
	}
}
