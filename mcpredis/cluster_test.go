package mcpredis_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/saguaro-go/saguaro/mcp"
	mcpcluster "github.com/saguaro-go/saguaro/mcp/cluster"
	"github.com/saguaro-go/saguaro/mcpredis"
	"github.com/saguaro-go/saguaro/mcpredis/redistest"
	"github.com/saguaro-go/saguaro/sse"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// replica is one replica of a clustered endpoint, in this process, on
// its own loopback HTTP server.
type replica struct {
	name string
	srv  *httptest.Server
	cl   *mcpredis.Cluster
	ep   *mcp.Endpoint
	mcp  *mcp.Server
	// calls counts the echo calls this replica served.
	calls atomic.Int64
}

type echoIn struct {
	Text string `json:"text"`
}

func newServer(rp *replica) *mcp.Server {
	s := mcp.NewServer(mcp.Implementation{Name: "cluster-test", Version: "1"},
		&mcp.ServerOptions{Tasks: &mcp.TaskOptions{PollInterval: 50 * time.Millisecond}})
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (string, error) {
		rp.calls.Add(1)
		return in.Text, nil
	}))
	must(mcp.AddTool(s, &mcp.Tool{Name: "progress"}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (string, error) {
		for i := 1; i <= 3; i++ {
			time.Sleep(20 * time.Millisecond)
			if err := req.Progress(ctx, float64(i), 3, in.Text); err != nil {
				return "", err
			}
		}
		return "done " + in.Text, nil
	}))
	must(mcp.AddTool(s, &mcp.Tool{Name: "sample"}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (string, error) {
		res, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: mcp.Text(in.Text)}}})
		if err != nil {
			return "", err
		}
		return "sampled " + res.Model, nil
	}))
	must(mcp.AddTool(s, &mcp.Tool{Name: "touch"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (string, error) {
		rp.mcp.ResourceUpdated(in.Text)
		return "touched", nil
	}))
	must(mcp.AddTool(s, &mcp.Tool{Name: "block"}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (string, error) {
		if err := req.Progress(ctx, 1, 0, "started"); err != nil {
			return "", err
		}
		<-ctx.Done()
		return "", ctx.Err()
	}))
	must(mcp.AddTool(s, &mcp.Tool{Name: "later", TaskSupport: mcp.TaskRequired}, func(ctx context.Context, _ *mcp.CallToolRequest, in echoIn) (string, error) {
		time.Sleep(50 * time.Millisecond)
		return "later " + in.Text + " from " + rp.name, nil
	}))
	must(s.AddResource(&mcp.Resource{URI: "test://r", Name: "r"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	}))
	return s
}

func startReplica(t *testing.T, name, redisURL, prefix string) *replica {
	return startReplicaWith(t, name, redisURL, prefix, nil)
}

// startReplicaWith serves h (nil: the test's *mcp.Server) and applies
// adjust to the endpoint's options.
func startReplicaWith(t *testing.T, name, redisURL, prefix string, h mcp.Handler, adjust ...func(*mcp.Options)) *replica {
	t.Helper()
	rp := &replica{name: name}
	rp.srv = httptest.NewUnstartedServer(nil)
	rdb, err := mcpredis.NewClient(redisURL)
	require.NoError(t, err)
	rp.cl, err = mcpredis.New(context.Background(), rdb, &mcpredis.Options{
		URL: "http://" + rp.srv.Listener.Addr().String() + "/mcp", Prefix: prefix,
		Heartbeat: 200 * time.Millisecond,
	})
	require.NoError(t, err)
	rp.mcp = newServer(rp)
	if h == nil {
		h = rp.mcp
	}
	opts := &mcp.Options{Handler: h, Cluster: rp.cl, Sessions: &mcp.SessionOptions{ResumeGrace: time.Second}}
	for _, fn := range adjust {
		fn(opts)
	}
	rp.ep = mcp.Controller(opts)
	mux := http.NewServeMux()
	mux.Handle("/mcp", rp.ep)
	rp.srv.Config.Handler = mux
	rp.srv.Start()
	t.Cleanup(func() {
		rp.stop()
		_ = rdb.Close()
	})
	return rp
}

// crash ends the replica's HTTP side only: other replicas still see it
// beat, and find out it is gone when a relay to it cannot connect.
func (rp *replica) crash() {
	rp.srv.CloseClientConnections()
	rp.srv.Close()
	rp.srv = nil
}

// stop ends the replica's HTTP side at once (a crash, as far as the
// other replicas can tell: connections refused) and then its cluster.
func (rp *replica) stop() {
	if rp.srv != nil {
		rp.srv.CloseClientConnections()
		rp.srv.Close()
		rp.srv = nil
	}
	if rp.cl != nil {
		_ = rp.ep.Shutdown(context.Background())
		_ = rp.cl.Close()
		rp.cl = nil
	}
}

// roundRobin is a load balancer with no stickiness in front of the
// replicas; it keeps the client's Host, as a real one does.
func roundRobin(t *testing.T, targets ...*replica) *httptest.Server {
	var n atomic.Int64
	urls := make([]*url.URL, len(targets))
	for i, rp := range targets {
		urls[i], _ = url.Parse(rp.srv.URL)
	}
	tr := &http.Transport{}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			u := urls[int(n.Add(1))%len(urls)]
			pr.Out.URL.Scheme, pr.Out.URL.Host = u.Scheme, u.Host
			pr.Out.Host = pr.In.Host
		},
		FlushInterval: -1,
		Transport:     tr,
		ErrorLog:      log.New(io.Discard, "", 0),
	}
	// Full duplex: Go's HTTP/1 server otherwise closes the request body
	// once the response starts, racing the proxy's transport, which then
	// cuts the streamed answer (golang.org/issue/40747).
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		tr.CloseIdleConnections()
	})
	return srv
}

// client is a minimal MCP client over real HTTP, enough to watch every
// message.
type client struct {
	t    *testing.T
	url  string
	hc   *http.Client
	sid  string
	next atomic.Int64
}

func newClient(t *testing.T, base string) *client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &client{t: t, url: base + "/mcp", hc: &http.Client{Transport: tr, Timeout: 20 * time.Second}}
}

func (c *client) do(method string, body []byte, header http.Header) *http.Response {
	c.t.Helper()
	req, err := http.NewRequest(method, c.url, bytes.NewReader(body))
	require.NoError(c.t, err)
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.hc.Do(req)
	require.NoError(c.t, err)
	return resp
}

type rpcMsg struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

func (c *client) initialize() {
	c.t.Helper()
	resp := c.do(http.MethodPost, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}`), nil)
	defer resp.Body.Close()
	require.Equal(c.t, http.StatusOK, resp.StatusCode)
	c.sid = resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(c.t, c.sid)
	resp2 := c.do(http.MethodPost, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	resp2.Body.Close()
	require.Equal(c.t, http.StatusAccepted, resp2.StatusCode)
}

// call makes one request and returns its response and the messages that
// came before it on its stream. onRequest answers server→client
// requests.
func (c *client) call(method, params string, onRequest func(rpcMsg) string) (rpcMsg, []rpcMsg) {
	c.t.Helper()
	id := c.next.Add(1)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
	resp := c.do(http.MethodPost, []byte(body), nil)
	defer resp.Body.Close()
	require.Equal(c.t, http.StatusOK, resp.StatusCode, "%s %s", method, params)
	var before []rpcMsg
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		var m rpcMsg
		require.NoError(c.t, json.NewDecoder(resp.Body).Decode(&m))
		return m, nil
	}
	r := sse.NewReader(resp.Body)
	for {
		ev, err := r.Next()
		require.NoError(c.t, err, "stream of %s ended before its response", method)
		if len(ev.Data) == 0 {
			continue // priming
		}
		var m rpcMsg
		require.NoError(c.t, json.Unmarshal(ev.Data, &m))
		switch {
		case m.Method != "" && m.ID != nil:
			answer := onRequest(m)
			resp := c.do(http.MethodPost, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, answer)), nil)
			resp.Body.Close()
			require.Equal(c.t, http.StatusAccepted, resp.StatusCode)
			before = append(before, m)
		case m.Method != "":
			before = append(before, m)
		case string(m.ID) == fmt.Sprint(id):
			return m, before
		default:
			c.t.Fatalf("a response to another request on this stream: %s", ev.Data)
		}
	}
}

func (c *client) echo(text string) string {
	c.t.Helper()
	m, _ := c.call("tools/call", fmt.Sprintf(`{"name":"echo","arguments":{"text":%q}}`, text), nil)
	require.Nil(c.t, m.Error)
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	require.NoError(c.t, json.Unmarshal(m.Result, &res))
	require.Len(c.t, res.Content, 1)
	return res.Content[0].Text
}

// cluster starts n replicas on one Redis and a round-robin proxy.
func cluster(t *testing.T, n int) ([]*replica, *httptest.Server) {
	url, prefix := redistest.URL(t), redistest.Prefix(t)
	redistest.DeleteOnCleanup(t, url, prefix)
	rps := make([]*replica, n)
	for i := range rps {
		rps[i] = startReplica(t, fmt.Sprint("r", i), url, prefix)
	}
	return rps, roundRobin(t, rps...)
}

func TestOneSessionAcrossReplicas(t *testing.T) {
	rps, lb := cluster(t, 3)
	c := newClient(t, lb.URL)
	c.initialize()
	for i := range 12 {
		assert.Equal(t, fmt.Sprint("hi ", i), c.echo(fmt.Sprint("hi ", i)))
	}
	// Every call ran on the session's owner, one replica.
	owners := 0
	for _, rp := range rps {
		if n := rp.calls.Load(); n > 0 {
			owners++
			assert.EqualValues(t, 12, n)
		}
	}
	assert.Equal(t, 1, owners)

	// Progress streams back through the relay, on the call's own stream.
	res, before := c.call("tools/call", `{"name":"progress","arguments":{"text":"p"},"_meta":{"progressToken":"tok"}}`, nil)
	require.Nil(t, res.Error)
	require.Len(t, before, 3)
	for i, m := range before {
		assert.Equal(t, "notifications/progress", m.Method)
		assert.Contains(t, string(m.Params), fmt.Sprintf(`"progress":%d`, i+1))
		assert.Contains(t, string(m.Params), `"progressToken":"tok"`)
	}

	// Sampling: the answer is POSTed through the balancer, lands on any
	// replica, and reaches the waiting call.
	for range 3 {
		res, before = c.call("tools/call", `{"name":"sample","arguments":{"text":"q"}}`, func(m rpcMsg) string {
			assert.Equal(t, "sampling/createMessage", m.Method)
			return `{"role":"assistant","content":{"type":"text","text":"a"},"model":"m1"}`
		})
		require.Nil(t, res.Error)
		assert.Contains(t, string(res.Result), "sampled m1")
		assert.Len(t, before, 1)
	}

	// DELETE through any replica ends it everywhere.
	resp := c.do(http.MethodDelete, nil, nil)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	for range 3 {
		resp := c.do(http.MethodPost, []byte(`{"jsonrpc":"2.0","id":99,"method":"ping"}`), nil)
		resp.Body.Close()
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	}
}

// getStream opens the session's GET stream, after lastID when set, and
// returns a channel of its events.
func (c *client) getStream(ctx context.Context, lastID string) (<-chan sse.Event, *http.Response) {
	c.t.Helper()
	h := http.Header{}
	if lastID != "" {
		h.Set("Last-Event-ID", lastID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	require.NoError(c.t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Session-Id", c.sid)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	hc := &http.Client{Transport: c.hc.Transport}
	resp, err := hc.Do(req)
	require.NoError(c.t, err)
	require.Equal(c.t, http.StatusOK, resp.StatusCode)
	out := make(chan sse.Event, 64)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		r := sse.NewReader(resp.Body)
		for {
			ev, err := r.Next()
			if err != nil {
				return
			}
			if len(ev.Data) > 0 {
				out <- ev
			}
		}
	}()
	return out, resp
}

func next(t *testing.T, ch <-chan sse.Event) sse.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		require.True(t, ok, "the stream ended")
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return sse.Event{}
}

func TestResourceUpdatesReachEveryReplica(t *testing.T) {
	rps, lb := cluster(t, 3)
	subscriber := newClient(t, lb.URL)
	subscriber.initialize()
	res, _ := subscriber.call("resources/subscribe", `{"uri":"test://r"}`, nil)
	require.Nil(t, res.Error)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, _ := subscriber.getStream(ctx, "")

	// Other sessions, whose owners are spread over the replicas, change
	// the resource one after another: the subscriber hears of each
	// change once.
	seen := map[string]bool{}
	for i := range 6 {
		other := newClient(t, lb.URL)
		other.initialize()
		res, _ := other.call("tools/call", `{"name":"touch","arguments":{"text":"test://r"}}`, nil)
		require.Nil(t, res.Error, "toucher %d", i)
		ev := next(t, events)
		assert.Contains(t, string(ev.Data), `"notifications/resources/updated"`)
		assert.False(t, seen[ev.ID], "event %s twice", ev.ID)
		seen[ev.ID] = true
	}

	// The same update made on every replica at once (each hears of it
	// from a shared source, say) makes one notification.
	for _, rp := range rps {
		rp.mcp.ResourceUpdated("test://r")
	}
	ev := next(t, events)
	assert.Contains(t, string(ev.Data), `"uri":"test://r"`)
	select {
	case ev := <-events:
		t.Fatalf("a second notification of one update: %s", ev.Data)
	case <-time.After(500 * time.Millisecond):
	}
}

func TestTakeOverWhenTheOwnerDies(t *testing.T) {
	rps, lb := cluster(t, 3)
	c := newClient(t, lb.URL)
	c.initialize()
	res, _ := c.call("resources/subscribe", `{"uri":"test://r"}`, nil)
	require.Nil(t, res.Error)
	c.echo("before")
	var owner *replica
	for _, rp := range rps {
		if rp.calls.Load() > 0 {
			owner = rp
		}
	}
	require.NotNil(t, owner)

	// Two updates reach the GET stream; the client reads them.
	ctx, cancel := context.WithCancel(context.Background())
	events, _ := c.getStream(ctx, "")
	other := newClient(t, lb.URL)
	other.initialize()
	var first, second sse.Event
	for i := range 2 {
		res, _ := other.call("tools/call", `{"name":"touch","arguments":{"text":"test://r"}}`, nil)
		require.Nil(t, res.Error)
		if i == 0 {
			first = next(t, events)
		} else {
			second = next(t, events)
		}
	}
	cancel()

	// The owner crashes. Meanwhile one more update is logged for the
	// session.
	owner.crash()
	var survivor *replica
	for _, rp := range rps {
		if rp != owner {
			survivor = rp
		}
	}
	lb2 := roundRobin(t, rpsExcept(rps, owner)...)
	other.url = lb2.URL + "/mcp"
	c.url = lb2.URL + "/mcp"
	res, _ = other.call("tools/call", `{"name":"touch","arguments":{"text":"test://r"}}`, nil)
	require.Nil(t, res.Error)

	// The session goes on elsewhere: calls work, and the GET stream
	// resumed after the second event replays exactly the third. The
	// crashed replica, still alive to Redis, heard that it lost the
	// session.
	assert.Equal(t, "after", c.echo("after"))
	require.Eventually(t, func() bool { return owner.ep.Sessions() == 0 }, 5*time.Second, 10*time.Millisecond)
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	resumed, _ := c.getStream(ctx2, second.ID)
	third := next(t, resumed)
	assert.NotEqual(t, first.ID, third.ID)
	assert.NotEqual(t, second.ID, third.ID)
	assert.Contains(t, string(third.Data), `"notifications/resources/updated"`)
	select {
	case ev := <-resumed:
		t.Fatalf("an event that was not missed: %s %s", ev.ID, ev.Data)
	case <-time.After(300 * time.Millisecond):
	}
	_ = survivor
}

func rpsExcept(all []*replica, gone *replica) []*replica {
	var out []*replica
	for _, rp := range all {
		if rp != gone {
			out = append(out, rp)
		}
	}
	return out
}

func TestRedisDownFailsFastAndRecovers(t *testing.T) {
	rs := redistest.Start(t)
	prefix := redistest.Prefix(t)
	a := startReplica(t, "a", rs.URL(), prefix)
	b := startReplica(t, "b", rs.URL(), prefix)
	lb := roundRobin(t, a, b)
	c := newClient(t, lb.URL)
	c.initialize()
	c.echo("up")

	rs.Stop()
	fresh := newClient(t, lb.URL)
	start := time.Now()
	resp := fresh.do(http.MethodPost, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s", body)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	assert.Contains(t, string(body), "session store")
	assert.Less(t, time.Since(start), 3*time.Second)

	rs.Restart()
	// After its next heartbeat each replica records its sessions again:
	// the old session goes on, on whichever replica requests land.
	require.Eventually(t, func() bool {
		resp := c.do(http.MethodPost, []byte(`{"jsonrpc":"2.0","id":7,"method":"ping"}`), nil)
		resp.Body.Close()
		resp2 := c.do(http.MethodPost, []byte(`{"jsonrpc":"2.0","id":8,"method":"ping"}`), nil)
		resp2.Body.Close()
		return resp.StatusCode == http.StatusOK && resp2.StatusCode == http.StatusOK
	}, 10*time.Second, 100*time.Millisecond)
	for range 4 {
		assert.Equal(t, "again", c.echo("again"))
	}
	// A relay to an owner the replica knows needs no Redis, so the
	// calls above may pass before Redis is back in use: a new session,
	// created on one replica and found by the other, shows that it is.
	require.Eventually(t, func() bool {
		resp := fresh.do(http.MethodPost, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false
		}
		fresh.sid = resp.Header.Get("Mcp-Session-Id")
		resp = fresh.do(http.MethodPost, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
		resp.Body.Close()
		fresh.sid = ""
		return resp.StatusCode == http.StatusAccepted
	}, 10*time.Second, 100*time.Millisecond)
	fresh.initialize()
	assert.Equal(t, "new", fresh.echo("new"))
}

// counter is a low-level handler that keeps state: the number of
// completion/complete calls, answered before counting.
type counter struct{}

func (counter) Initialize(context.Context, *mcp.InitializeRequest, any) (*mcp.InitializeResult, any, error) {
	return &mcp.InitializeResult{ServerInfo: mcp.Implementation{Name: "counter", Version: "1"}}, 0, nil
}

func (counter) Complete(_ context.Context, _ *mcp.CompleteRequest, state any) (*mcp.CompleteResult, any, error) {
	n := state.(int)
	return &mcp.CompleteResult{Values: []string{fmt.Sprint(n)}}, n + 1, nil
}

// savedCounter is a counter whose state can move between replicas.
type savedCounter struct{ counter }

func (savedCounter) EncodeState(state any) ([]byte, error) {
	return []byte(fmt.Sprint(state.(int))), nil
}

func (savedCounter) DecodeState(b []byte) (any, error) {
	var n int
	_, err := fmt.Sscan(string(b), &n)
	return n, err
}

func (c *client) complete() string {
	c.t.Helper()
	m, _ := c.call("completion/complete", `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"x"}}`, nil)
	require.Nil(c.t, m.Error)
	var res struct {
		Completion struct {
			Values []string `json:"values"`
		} `json:"completion"`
	}
	require.NoError(c.t, json.Unmarshal(m.Result, &res))
	require.Len(c.t, res.Completion.Values, 1)
	return res.Completion.Values[0]
}

// owner finds the replica that runs the client's session, by asking each
// replica directly whether it holds it.
func owner(t *testing.T, rps []*replica) *replica {
	for _, rp := range rps {
		if rp.ep.Sessions() > 0 {
			return rp
		}
	}
	t.Fatal("no replica holds the session")
	return nil
}

func TestStatefulSessionMoves(t *testing.T) {
	url, prefix := redistest.URL(t), redistest.Prefix(t)
	redistest.DeleteOnCleanup(t, url, prefix)
	rps := []*replica{
		startReplicaWith(t, "a", url, prefix, savedCounter{}),
		startReplicaWith(t, "b", url, prefix, savedCounter{}),
	}
	lb := roundRobin(t, rps...)
	c := newClient(t, lb.URL)
	c.initialize()
	for i := range 4 {
		assert.Equal(t, fmt.Sprint(i), c.complete()) // one at a time, on the owner
	}
	dead := owner(t, rps)
	dead.crash()
	lb2 := roundRobin(t, rpsExcept(rps, dead)...)
	c.url = lb2.URL + "/mcp"
	// The state saved after each callback goes on on the other replica.
	assert.Equal(t, "4", c.complete())
	assert.Equal(t, "5", c.complete())
}

func TestUnsavableStateEndsWithItsReplica(t *testing.T) {
	url, prefix := redistest.URL(t), redistest.Prefix(t)
	redistest.DeleteOnCleanup(t, url, prefix)
	rps := []*replica{
		startReplicaWith(t, "a", url, prefix, counter{}),
		startReplicaWith(t, "b", url, prefix, counter{}),
	}
	lb := roundRobin(t, rps...)
	c := newClient(t, lb.URL)
	c.initialize()
	assert.Equal(t, "0", c.complete())
	assert.Equal(t, "1", c.complete())
	dead := owner(t, rps)
	dead.stop()
	lb2 := roundRobin(t, rpsExcept(rps, dead)...)
	c.url = lb2.URL + "/mcp"
	// The session cannot move: 404, and the client starts over.
	resp := c.do(http.MethodPost, []byte(`{"jsonrpc":"2.0","id":5,"method":"ping"}`), nil)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	c.sid = ""
	c.initialize()
	assert.Equal(t, "0", c.complete())
}

func TestServerRequestOnTheGETStream(t *testing.T) {
	// With JSON responses, a call's sampling request goes on the
	// session's GET stream: the cluster's log.
	url, prefix := redistest.URL(t), redistest.Prefix(t)
	redistest.DeleteOnCleanup(t, url, prefix)
	jsonOnly := func(o *mcp.Options) { o.JSONResponse = true }
	rps := []*replica{
		startReplicaWith(t, "a", url, prefix, nil, jsonOnly),
		startReplicaWith(t, "b", url, prefix, nil, jsonOnly),
		startReplicaWith(t, "c", url, prefix, nil, jsonOnly),
	}
	lb := roundRobin(t, rps...)
	// What each replica hears from the others: nothing about a session
	// it does not run.
	heard := make([]atomic.Int64, len(rps))
	for i, rp := range rps {
		defer rp.cl.Watch(func(mcpcluster.Notice) { heard[i].Add(1) })()
	}
	c := newClient(t, lb.URL)
	c.initialize()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, _ := c.getStream(ctx, "")
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		ev := next(t, events)
		var m rpcMsg
		if !assert.NoError(t, json.Unmarshal(ev.Data, &m)) {
			return
		}
		assert.Equal(t, "sampling/createMessage", m.Method)
		resp := c.do(http.MethodPost, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"role":"assistant","content":{"type":"text","text":"a"},"model":"via-get"}}`, m.ID)), nil)
		resp.Body.Close()
		assert.Equal(t, http.StatusAccepted, resp.StatusCode)
	}()
	res, before := c.call("tools/call", `{"name":"sample","arguments":{"text":"q"}}`, nil)
	<-answered
	require.Nil(t, res.Error)
	assert.Empty(t, before)
	assert.Contains(t, string(res.Result), "sampled via-get")
	for i := range rps {
		assert.Zero(t, heard[i].Load(), "replica %d heard of another's session", i)
	}
}

func TestListenHearsOtherReplicas(t *testing.T) {
	// 2026-07-28 subscriptions/listen streams are stateless: whichever
	// replica serves one hears the resource updates made on the others.
	rps, _ := cluster(t, 3)
	body := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["test://r"]},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}`
	req, err := http.NewRequest(http.MethodPost, rps[0].srv.URL+"/mcp", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req.WithContext(ctx))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	r := sse.NewReader(resp.Body)
	ack, err := r.Next()
	require.NoError(t, err)
	require.Contains(t, string(ack.Data), "notifications/subscriptions/acknowledged")

	rps[1].mcp.ResourceUpdated("test://other")
	rps[2].mcp.ResourceUpdated("test://r")
	ev, err := r.Next()
	require.NoError(t, err)
	assert.Contains(t, string(ev.Data), `"notifications/resources/updated"`)
	assert.Contains(t, string(ev.Data), `"uri":"test://r"`)
}

func TestCallLostWithItsReplica(t *testing.T) {
	rps, lb := cluster(t, 3)
	c := newClient(t, lb.URL)
	c.initialize()
	c.echo("warm")
	resp := c.do(http.MethodPost, []byte(`{"jsonrpc":"2.0","id":"call-7","method":"tools/call","params":{"name":"block","arguments":{"text":"x"},"_meta":{"progressToken":1}}}`), nil)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	r := sse.NewReader(resp.Body)
	var last string
	for {
		ev, err := r.Next()
		require.NoError(t, err)
		last = ev.ID
		if len(ev.Data) > 0 {
			assert.Contains(t, string(ev.Data), "notifications/progress")
			break
		}
	}
	dead := owner(t, rps)
	dead.crash()
	lb2 := roundRobin(t, rpsExcept(rps, dead)...)
	c.url = lb2.URL + "/mcp"
	// The client resumes the broken stream on another replica: it learns
	// that its call is lost, and the session goes on.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, _ := c.getStream(ctx, last)
	ev := next(t, events)
	var m rpcMsg
	require.NoError(t, json.Unmarshal(ev.Data, &m))
	assert.Equal(t, `"call-7"`, string(m.ID))
	require.NotNil(t, m.Error)
	assert.Equal(t, -32603, m.Error.Code)
	assert.Contains(t, m.Error.Message, "lost")
	assert.Equal(t, "after", c.echo("after"))
}

// modern sends one 2026-07-28 request to base and returns its JSON-RPC
// message (a JSON answer).
func modern(t *testing.T, base, method, params string) rpcMsg {
	t.Helper()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{%s,%s}}`, method, params, meta)
	req, err := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if method == "tools/call" {
		req.Header.Set("Mcp-Name", "later")
	}
	if _, id, ok := strings.Cut(params, `"taskId":`); ok {
		req.Header.Set("Mcp-Name", strings.Trim(id, `"`))
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var m rpcMsg
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&m), "status %d", resp.StatusCode)
	return m
}

func TestTasksAnsweredOnEveryReplica(t *testing.T) {
	rps, lb := cluster(t, 3)
	m := modern(t, rps[1].srv.URL, "tools/call", `"name":"later","arguments":{"text":"x"}`)
	require.Nil(t, m.Error)
	var created struct {
		ResultType string `json:"resultType"`
		TaskID     string `json:"taskId"`
	}
	require.NoError(t, json.Unmarshal(m.Result, &created))
	require.Equal(t, "task", created.ResultType)
	// Polled through the balancer, the task is found whichever replica
	// the poll lands on: it is relayed to the replica that runs it.
	require.Eventually(t, func() bool {
		got := modern(t, lb.URL, "tasks/get", fmt.Sprintf(`"taskId":%q`, created.TaskID))
		require.Nil(t, got.Error, "%s", got.Result)
		return strings.Contains(string(got.Result), "later x from r1")
	}, 5*time.Second, 20*time.Millisecond)
	// A task of a replica that is gone is unknown, as the spec wants.
	rps[1].stop()
	got := modern(t, rps[0].srv.URL, "tasks/get", fmt.Sprintf(`"taskId":%q`, created.TaskID))
	require.NotNil(t, got.Error)
	assert.Equal(t, -32602, got.Error.Code)
}
