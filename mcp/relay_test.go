package mcp

// The relay between replicas: the owner of a session remembered, so that
// a relayed request in the steady state makes no store call; what it
// remembers dropped when the session moves, ends or its owner is gone; a
// stopped owner costing a bounded wait; answers relayed as they were
// sent (JSON in one piece, event streams as they come).

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/mcp/cluster"
)

// countingCluster is a replica's real cluster store, with its store calls
// (every Directory and Log method) counted.
type countingCluster struct {
	cluster.Cluster
	calls atomic.Int64
	loads atomic.Int64
}

func (c *countingCluster) Create(ctx context.Context, rec *cluster.Record, ttl time.Duration) error {
	c.calls.Add(1)
	return c.Cluster.Create(ctx, rec, ttl)
}

func (c *countingCluster) Load(ctx context.Context, id string) (*cluster.Record, error) {
	c.calls.Add(1)
	c.loads.Add(1)
	return c.Cluster.Load(ctx, id)
}

func (c *countingCluster) Save(ctx context.Context, rec *cluster.Record, ttl time.Duration) error {
	c.calls.Add(1)
	return c.Cluster.Save(ctx, rec, ttl)
}

func (c *countingCluster) Touch(ctx context.Context, id string, ttl time.Duration) error {
	c.calls.Add(1)
	return c.Cluster.Touch(ctx, id, ttl)
}

func (c *countingCluster) Claim(ctx context.Context, id, from string) (bool, error) {
	c.calls.Add(1)
	return c.Cluster.Claim(ctx, id, from)
}

func (c *countingCluster) Release(ctx context.Context, ids ...string) error {
	c.calls.Add(1)
	return c.Cluster.Release(ctx, ids...)
}

func (c *countingCluster) End(ctx context.Context, id string) error {
	c.calls.Add(1)
	return c.Cluster.End(ctx, id)
}

func (c *countingCluster) Locate(ctx context.Context, replica string) (string, error) {
	c.calls.Add(1)
	return c.Cluster.Locate(ctx, replica)
}

func (c *countingCluster) Append(events ...cluster.Event) {
	c.calls.Add(1)
	c.Cluster.Append(events...)
}

func (c *countingCluster) Events(ctx context.Context, session string, after int64) ([]cluster.Event, error) {
	c.calls.Add(1)
	return c.Cluster.Events(ctx, session, after)
}

// relayReplica is one replica of a Memory cluster on loopback HTTP. Its
// handler counts the relayed requests it gets and the 421s it answers,
// and holds relayed requests while stalled (a stopped process: its
// socket still accepts, nothing answers).
type relayReplica struct {
	*tserver
	member  *cluster.Member
	cl      *countingCluster
	relayed atomic.Int64
	refused atomic.Int64 // 421s answered

	mu      sync.Mutex
	stalled chan struct{} // closed to let held requests go; nil: not stalled
}

func startRelayReplica(t *testing.T, store *cluster.Memory, adjust ...func(*Options)) *relayReplica {
	t.Helper()
	rp := &relayReplica{}
	srv := httptest.NewUnstartedServer(nil)
	rp.member = store.Join("http://" + srv.Listener.Addr().String() + "/mcp")
	rp.cl = &countingCluster{Cluster: rp.member}
	lg, buf := quietLogger()
	o := &Options{Handler: newFixture(t).srv, Cluster: rp.cl, Logger: lg}
	for _, f := range adjust {
		f(o)
	}
	ep := Controller(o)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Saguaro-Relay") != "" {
			rp.relayed.Add(1)
			rp.mu.Lock()
			hold := rp.stalled
			rp.mu.Unlock()
			if hold != nil {
				select {
				case <-hold:
				case <-r.Context().Done():
					return
				}
			}
		}
		sw := &codeWriter{ResponseWriter: w}
		if r.Header.Get("Saguaro-Relay") != "" {
			sw.hold = rp.held
			sw.ctx = r.Context()
		}
		ep.ServeHTTP(sw, r)
		if sw.code == http.StatusMisdirectedRequest {
			rp.refused.Add(1)
		}
	})
	srv.Start()
	rp.tserver = &tserver{t: t, ep: ep, srv: srv, url: srv.URL + "/mcp", hc: srv.Client(), log: buf}
	t.Cleanup(func() {
		rp.stall(false)
		_ = ep.Shutdown(context.Background())
		srv.CloseClientConnections()
		srv.Close()
	})
	return rp
}

// stall makes the replica hold every relayed request (on) or lets them
// go (off).
func (rp *relayReplica) stall(on bool) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	switch {
	case on && rp.stalled == nil:
		rp.stalled = make(chan struct{})
	case !on && rp.stalled != nil:
		close(rp.stalled)
		rp.stalled = nil
	}
}

// held returns the channel to wait on while the replica is stalled, nil
// when it is not.
func (rp *relayReplica) held() <-chan struct{} {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return rp.stalled
}

// codeWriter remembers the status written through it; with hold, each
// write waits while the replica is stalled (a relayed stream whose owner
// stops mid-way).
type codeWriter struct {
	http.ResponseWriter
	code int
	hold func() <-chan struct{}
	ctx  context.Context
}

func (w *codeWriter) wait() {
	if w.hold == nil {
		return
	}
	if ch := w.hold(); ch != nil {
		select {
		case <-ch:
		case <-w.ctx.Done():
		}
	}
}

func (w *codeWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *codeWriter) Write(b []byte) (int, error) {
	w.wait()
	return w.ResponseWriter.Write(b)
}

func (w *codeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *codeWriter) Flush() {
	w.wait()
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// TestRelayRemembersTheOwner: the first request of a session that lands
// on another replica loads its record; the next ones go straight to the
// owner, with no store call at all on the relaying replica, and a JSON
// answer comes back in one piece with its Content-Length.
func TestRelayRemembersTheOwner(t *testing.T) {
	store := cluster.NewMemory()
	a, b := startRelayReplica(t, store), startRelayReplica(t, store)
	sid := a.open("2025-11-25", "{}")

	assert.Equal(t, "first", b.call(sid, toolCall("1", "echo", `{"text":"first"}`)).text(t))
	assert.EqualValues(t, 1, b.cl.loads.Load(), "the first relayed request loads the record")
	before := b.cl.calls.Load()
	for i := range 20 {
		resp := b.post(sid, toolCall("2", "echo", `{"text":"again"}`))
		assert.Positive(t, resp.ContentLength, "a relayed JSON answer keeps its length (request %d)", i)
		assert.Empty(t, resp.TransferEncoding, "a relayed JSON answer is not chunked (request %d)", i)
		assert.Equal(t, "again", readJSON(t, resp, http.StatusOK).text(t))
	}
	assert.Equal(t, before, b.cl.calls.Load(), "store calls on the relaying replica in the steady state")
	assert.EqualValues(t, 21, a.relayed.Load())
	assert.Zero(t, b.sessionCount(), "b runs nothing")

	// Notifications, DELETE: relayed the same way; after the DELETE
	// the session is gone on every replica, and b forgot it.
	readEmpty(t, b.post(sid, note("notifications/initialized", "")), http.StatusAccepted)
	readEmpty(t, b.del(sid), http.StatusNoContent)
	assert.False(t, a.live(sid))
	loads := b.cl.loads.Load()
	readError(t, b.post(sid, toolCall("3", "echo", `{"text":"x"}`)), http.StatusNotFound, -32600)
	assert.Equal(t, loads+1, b.cl.loads.Load(), "an ended session is looked up again")
}

// TestRelayFollowsAMovedSession: a replica that relays to the session's
// old owner, which is alive but no longer runs it, gets 421 from it,
// forgets it, finds the new owner in the store and relays there; then it
// remembers the new owner.
func TestRelayFollowsAMovedSession(t *testing.T) {
	store := cluster.NewMemory()
	a, b, c := startRelayReplica(t, store), startRelayReplica(t, store), startRelayReplica(t, store)
	sid := a.open("2025-11-25", "{}")
	assert.Equal(t, "x", b.call(sid, toolCall("1", "echo", `{"text":"x"}`)).text(t))

	// c takes the session from a (a hears that it moved and lets its
	// copy go); c rebuilds it at its first request.
	won, err := c.cl.Claim(context.Background(), sid, a.member.Self().ID)
	require.NoError(t, err)
	require.True(t, won)
	eventually(t, func() bool { return !a.live(sid) }, "a kept the session it lost")

	assert.Equal(t, "moved", b.call(sid, toolCall("2", "echo", `{"text":"moved"}`)).text(t))
	assert.EqualValues(t, 1, a.refused.Load(), "a said 421 once")
	assert.True(t, c.live(sid), "c runs the session now")
	assert.EqualValues(t, 1, c.relayed.Load())

	before := b.cl.calls.Load()
	for range 5 {
		assert.Equal(t, "c", b.call(sid, toolCall("3", "echo", `{"text":"c"}`)).text(t))
	}
	assert.Equal(t, before, b.cl.calls.Load(), "b remembers the new owner")
	assert.EqualValues(t, 6, c.relayed.Load())
	assert.EqualValues(t, 2, a.relayed.Load())
}

// TestRelayToAnOwnerThatIsGone: the owner b remembers no longer listens;
// the relay cannot connect, b forgets that replica, takes the session
// over and answers; its later requests are served where it now runs.
func TestRelayToAnOwnerThatIsGone(t *testing.T) {
	store := cluster.NewMemory()
	a, b := startRelayReplica(t, store), startRelayReplica(t, store)
	sid := a.open("2025-11-25", "{}")
	assert.Equal(t, "x", b.call(sid, toolCall("1", "echo", `{"text":"x"}`)).text(t))

	a.srv.CloseClientConnections()
	a.srv.Close()
	assert.Equal(t, "here", b.call(sid, toolCall("2", "echo", `{"text":"here"}`)).text(t))
	assert.True(t, b.live(sid), "b took the session over")
	assert.Equal(t, "again", b.call(sid, toolCall("3", "echo", `{"text":"again"}`)).text(t))
}

// TestRelayToAStalledOwner: an owner that accepts connections and
// answers nothing (a stopped process) costs a bounded wait. While it
// still beats, the relay gives up once the owner would have ended any
// call (RequestTimeout and one check) and answers 502; once its lease
// lapses, the next relay that waits on it takes the session over and
// answers.
func TestRelayToAStalledOwner(t *testing.T) {
	store := cluster.NewMemory()
	short := func(o *Options) { o.Sessions = &SessionOptions{RequestTimeout: 200 * time.Millisecond} }
	a, b := startRelayReplica(t, store, short), startRelayReplica(t, store, short)
	s1, s2 := a.open("2025-11-25", "{}"), a.open("2025-11-25", "{}")
	for _, sid := range []string{s1, s2} {
		assert.Equal(t, "x", b.call(sid, toolCall("1", "echo", `{"text":"x"}`)).text(t))
	}

	a.stall(true)
	start := time.Now()
	m := readError(t, b.post(s1, toolCall("2", "echo", `{"text":"y"}`)), http.StatusBadGateway, -32603)
	assert.Contains(t, m.Error.Message, "did not answer")
	t.Logf("502 after %v", time.Since(start).Round(time.Millisecond))
	assert.Contains(t, b.log.String(), "did not answer a relayed request in time")

	// a's lease lapses while it is stopped.
	a.member.Leave()
	start = time.Now()
	assert.Equal(t, "taken", b.call(s2, toolCall("3", "echo", `{"text":"taken"}`)).text(t))
	t.Logf("taken over after %v", time.Since(start).Round(time.Millisecond))
	assert.True(t, b.live(s2), "b took the session over")
}

// TestRelayedStreamOfAStalledOwner: a relayed GET stream whose owner
// stops mid-way (nothing comes, not even keep-alive comments) is cut once
// the owner's lease has lapsed, and the client that resumes it finds the
// session taken over by the replica it talks to.
func TestRelayedStreamOfAStalledOwner(t *testing.T) {
	store := cluster.NewMemory()
	quick := func(o *Options) { o.KeepAlive = 50 * time.Millisecond }
	a, b := startRelayReplica(t, store, quick), startRelayReplica(t, store, quick)
	sid := a.open("2025-11-25", "{}")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := openStream(t, b.get(ctx, sid))
	last := s.priming()

	a.stall(true)
	a.member.Leave()
	start := time.Now()
	cut := make(chan error, 1)
	go func() {
		for {
			if _, err := s.r.Next(); err != nil {
				cut <- err
				return
			}
		}
	}()
	select {
	case <-cut:
		t.Logf("cut after %v", time.Since(start).Round(time.Millisecond))
	case <-time.After(10 * time.Second):
		require.FailNow(t, "the stream of a stopped owner was not cut")
	}
	s.close()
	eventually(t, func() bool { return strings.Contains(b.log.String(), "relayed answer was cut") }, "b did not log the cut:\n%s", b.log.String())

	s = openStream(t, b.get(ctx, sid, "Last-Event-ID", last))
	defer s.close()
	s.priming()
	assert.True(t, b.live(sid), "b took the session over")
}

// TestRelayedStreamOutlivesTheBodyTimeout: a relayed call answered as an
// event stream goes on for longer than its body was allowed to take (no
// read deadline outlives the body on either replica), and its progress
// comes through as it is sent.
func TestRelayedStreamOutlivesTheBodyTimeout(t *testing.T) {
	store := cluster.NewMemory()
	quick := func(o *Options) { o.Limits = &Limits{BodyTimeout: 150 * time.Millisecond} }
	a, b := startRelayReplica(t, store, quick), startRelayReplica(t, store, quick)
	sid := a.open("2025-11-25", "{}")
	s := openStream(t, b.post(sid, toolCallToken("1", "progress", `{"n":4,"delayMs":150}`, `"tok"`)))
	s.priming()
	msgs := s.rest()
	require.Len(t, msgs, 5, "four progress notifications and the result")
	for _, m := range msgs[:4] {
		assert.Equal(t, "notifications/progress", m.Method)
	}
	assert.Equal(t, "done tok", msgs[4].text(t))
}

// TestRelayKeepsTheIdentityBinding: a session bound to one identity is
// unknown (404) to another, through a relay too, whether or not the
// relaying replica remembers its owner.
func TestRelayKeepsTheIdentityBinding(t *testing.T) {
	store := cluster.NewMemory()
	who := func(o *Options) { o.Identity = func(r *http.Request) string { return r.Header.Get("X-Who") } }
	a, b := startRelayReplica(t, store, who), startRelayReplica(t, store, who)
	sid := a.open("2025-11-25", "{}", "X-Who", "alice")

	readError(t, b.post(sid, toolCall("1", "echo", `{"text":"x"}`), "X-Who", "bob"), http.StatusNotFound, -32600)
	assert.Equal(t, "mine", b.call(sid, toolCall("2", "echo", `{"text":"mine"}`), "X-Who", "alice").text(t))
	relayed := a.relayed.Load()
	readError(t, b.post(sid, toolCall("3", "echo", `{"text":"x"}`), "X-Who", "bob"), http.StatusNotFound, -32600)
	readError(t, b.post(sid, toolCall("4", "echo", `{"text":"x"}`)), http.StatusNotFound, -32600)
	assert.Equal(t, relayed, a.relayed.Load(), "another identity's requests never reach the owner")
	assert.Equal(t, "still", b.call(sid, toolCall("5", "echo", `{"text":"still"}`), "X-Who", "alice").text(t))
}

// TestRelayRefusesAForgedHeader: a request that names a replica in the
// relay header, as only a replica does, is not relayed again: 421 when it
// names another replica.
func TestRelayRefusesAForgedHeader(t *testing.T) {
	store := cluster.NewMemory()
	a, b := startRelayReplica(t, store), startRelayReplica(t, store)
	sid := a.open("2025-11-25", "{}")
	resp := b.post(sid, toolCall("1", "echo", `{"text":"x"}`), "Saguaro-Relay", "someone-else")
	assert.Equal(t, b.member.Self().ID, resp.Header.Get("Saguaro-Relay"), "the 421 names the replica that answered")
	readError(t, resp, http.StatusMisdirectedRequest, -32600)
	assert.Zero(t, a.relayed.Load())
}

// TestRelayBoundsTheBody: a body over the limit sent to a replica that
// would relay it is answered 413 there, declared or not, and never
// reaches the owner.
func TestRelayBoundsTheBody(t *testing.T) {
	store := cluster.NewMemory()
	small := func(o *Options) { o.MaxBodyBytes = 1 << 10 }
	a, b := startRelayReplica(t, store, small), startRelayReplica(t, store, small)
	sid := a.open("2025-11-25", "{}")
	big := toolCall("1", "echo", `{"text":"`+strings.Repeat("x", 2<<10)+`"}`)
	readError(t, b.post(sid, big), http.StatusRequestEntityTooLarge, -32600)

	// Chunked, with no declared length.
	req := b.newReq(context.Background(), http.MethodPost, sid, struct{ io.Reader }{strings.NewReader(big)})
	req.ContentLength = -1
	readError(t, b.do(req), http.StatusRequestEntityTooLarge, -32600)
	assert.Zero(t, a.relayed.Load())
	assert.Equal(t, "fits", b.call(sid, toolCall("2", "echo", `{"text":"fits"}`)).text(t))
}
