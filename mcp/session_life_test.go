package mcp

// Session lifetime: abandoned sessions are reaped and cost no goroutine
// while idle; held sessions are never reaped; and everything at once
// under the race detector.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// settledGoroutines waits for the goroutine count to stop falling and
// returns it.
func settledGoroutines() int {
	n := runtime.NumGoroutine()
	for range 50 {
		time.Sleep(20 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m == n {
			return n
		}
		n = m
	}
	return n
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// createSessions initializes n sessions through h, from 4 goroutines,
// and abandons them. It goes through the transport's own handler: a real
// HTTP client and server would triple the time under the race detector,
// and they are exercised everywhere else.
func createSessions(t *testing.T, h http.Handler, n int) time.Duration {
	t.Helper()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	body := initBody("2025-11-25", `{"sampling":{}}`)
	for range 4 {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
				r.Header.Set("Accept", acceptBoth)
				r.Header.Set("Content-Type", "application/json")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != 200 || w.Header().Get("Mcp-Session-Id") == "" {
					t.Errorf("initialize failed: %d %s", w.Code, w.Body)
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

// TestAbandonedSessions creates 10,000 sessions and abandons them: while
// idle they hold memory but no goroutine; after IdleTimeout they are all
// gone and so is their memory. Not parallel: it counts goroutines and
// heap.
func TestAbandonedSessions(t *testing.T) {
	const n = 10_000
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })

	// What an idle session costs, measured long before its timeout.
	t.Run("cost", func(t *testing.T) {
		ep := Controller(&Options{Handler: newFixture(t).srv, Sessions: &SessionOptions{IdleTimeout: time.Hour}, Limits: unlimited})
		baseG, baseHeap := settledGoroutines(), heapInUse()
		created := createSessions(t, ep, n)
		require.Equal(t, n, ep.Sessions())
		heap := heapInUse()
		goroutines := settledGoroutines()
		perSession := float64(int64(heap)-int64(baseHeap)) / n
		perSessionG := float64(goroutines-baseG) / n
		t.Logf("%d idle sessions (created in %v): heap %.0f B/session, goroutines %.4f/session (%d before, %d after)",
			n, created.Round(time.Millisecond), perSession, perSessionG, baseG, goroutines)
		assert.Less(t, perSession, 4096.0, "heap per idle session")
		assert.LessOrEqual(t, goroutines-baseG, 1, "an idle session holds no goroutine")
		require.NoError(t, ep.Shutdown(context.Background()))
		require.Equal(t, 0, ep.Sessions())
	})

	// A short IdleTimeout reaps all of them, even while more are made.
	t.Run("reaped", func(t *testing.T) {
		idle := 300 * time.Millisecond
		ep := Controller(&Options{Handler: newFixture(t).srv, Sessions: &SessionOptions{IdleTimeout: idle}, Limits: unlimited})
		baseG, baseHeap := settledGoroutines(), heapInUse()
		created := createSessions(t, ep, n)
		eventually2(t, 10*time.Second, func() bool { return ep.Sessions() == 0 }, "sessions left: %d", ep.Sessions())
		left := float64(int64(heapInUse())-int64(baseHeap)) / n
		t.Logf("created in %v, all reaped %v after; heap left %.0f B/session", created.Round(time.Millisecond), idle, left)
		// What is left is not sessions: the session map keeps its peak
		// size, and the runtime keeps the goroutine records of the burst
		// of idle timers that fired together (about 150 B each).
		assert.Less(t, left, 1024.0, "heap left per reaped session")
		assert.LessOrEqual(t, settledGoroutines(), baseG)
	})
}

// eventually2 is eventually with a deadline.
func eventually2(t testing.TB, d time.Duration, cond func() bool, msg string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			require.FailNowf(t, "condition not met in time", msg, args...)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHeldSessionsAreNotReaped: an open GET stream, a running call or a
// waiting server→client request keeps its session alive past the idle
// timeout; once released, the session is reaped.
func TestHeldSessionsAreNotReaped(t *testing.T) {
	t.Parallel()
	const idle = 400 * time.Millisecond // long enough that a loaded machine does not reap a session between two steps
	f := newFixture(t)
	ts := startServer(t, &Options{Handler: f.srv, KeepAlive: 20 * time.Millisecond, Sessions: &SessionOptions{IdleTimeout: idle}})

	streamSID := ts.open("2025-11-25", "{}")
	ctx, cancel := context.WithCancel(context.Background())
	g := openStream(t, ts.get(ctx, streamSID))
	g.priming()

	callSID := ts.open("2025-11-25", "{}")
	done := make(chan rpcMsg, 1)
	go func() { done <- readJSON(t, ts.post(callSID, toolCall("1", "block", `{}`)), 200) }()
	require.Equal(t, "1", <-f.started)

	askSID := ts.open("2025-11-25", clientCapsAll)
	ask := openStream(t, ts.post(askSID, toolCall("2", "sample", `{"text":"x"}`)))
	ask.priming()
	q, _ := ask.msg()
	require.Equal(t, "sampling/createMessage", q.Method)

	idleSID := ts.open("2025-11-25", "{}")
	eventually2(t, 10*idle, func() bool { return !ts.live(idleSID) }, "the idle session was not reaped")
	time.Sleep(3 * idle)
	for _, sid := range []string{streamSID, callSID, askSID} {
		require.True(t, ts.live(sid), "a held session was reaped")
	}
	// Keep-alives flowed on the idle GET stream meanwhile (read up to an
	// event to see them).
	require.NoError(t, AddTool(f.srv, &Tool{Name: "poke"}, func(context.Context, *CallToolRequest, fixtureArgs) (string, error) { return "", nil }))
	m, _ := g.msg()
	require.Equal(t, "notifications/tools/list_changed", m.Method)
	require.Greater(t, g.r.Comments(), 1)

	// Release them: each is reaped after its own idle time.
	cancel()
	g.close()
	readEmpty(t, ts.post(askSID, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"role":"assistant","content":{"type":"text","text":"y"},"model":"m"}}`, q.ID)), 202)
	require.Len(t, ask.rest(), 1)
	readEmpty(t, ts.post(callSID, note("notifications/cancelled", `{"requestId":1}`)), 202)
	require.NotNil(t, (<-done).Error)
	for _, sid := range []string{streamSID, callSID, askSID} {
		eventually2(t, 10*idle, func() bool { return !ts.live(sid) }, "a released session was not reaped")
	}
	// A reaped session is unknown.
	readError(t, ts.post(callSID, req("3", "ping", "")), 404, -32600)
}

// TestConcurrencyStorm runs many sessions doing everything at once:
// calls answered as JSON and as streams, cancellations, clients that
// leave mid-stream, GET streams, server→client requests, registry
// changes and DELETEs. Every answer must be well-formed and the server
// must end with nothing running (goleak, in TestMain).
func TestConcurrencyStorm(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ts := startServer(t, &Options{Handler: f.srv, Sessions: &SessionOptions{
		RequestTimeout: 2 * time.Second, ResumeGrace: 50 * time.Millisecond, IdleTimeout: time.Minute,
	}})
	// The fixture's block tool reports on f.started: drain it.
	stopDrain := make(chan struct{})
	var drainWG sync.WaitGroup
	drainWG.Go(func() {
		for {
			select {
			case <-f.started:
			case <-stopDrain:
				return
			}
		}
	})
	defer func() { close(stopDrain); drainWG.Wait() }()

	const workers, ops = 16, 40
	deadline := time.Now().Add(20 * time.Second)
	var wg sync.WaitGroup
	var answered atomic.Int64
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			sid := ts.open("2025-11-25", clientCapsAll)
			for i := 0; i < ops && time.Now().Before(deadline); i++ {
				id := fmt.Sprintf("%d", i+1)
				switch rng.IntN(9) {
				case 0: // JSON call
					resp := ts.post(sid, toolCall(id, "echo", `{"text":"e"}`))
					if resp.StatusCode == 404 {
						resp.Body.Close()
						sid = ts.open("2025-11-25", clientCapsAll)
						continue
					}
					m := readJSON(t, resp, 200)
					assert.Equal(t, id, string(m.ID))
				case 1: // streamed progress
					resp := ts.post(sid, toolCallToken(id, "progress", `{"n":5}`, `"`+id+`"`))
					if resp.StatusCode == 404 {
						resp.Body.Close()
						continue
					}
					s := openStream(t, resp)
					s.priming()
					msgs := s.rest()
					if assert.Len(t, msgs, 6) {
						for _, m := range msgs[:5] {
							tok, _ := progressOf(t, m)
							assert.Equal(t, `"`+id+`"`, tok)
						}
						assert.Equal(t, id, string(msgs[5].ID))
					}
				case 2: // a client that leaves mid-stream
					ctx, cancel := context.WithCancel(context.Background())
					resp, err := ts.hc.Do(ts.newReq(ctx, http.MethodPost, sid, strings.NewReader(toolCallToken(id, "progress", `{"n":50,"delayMs":1}`, "1"))))
					if err == nil {
						buf := make([]byte, 64)
						_, _ = resp.Body.Read(buf)
						cancel()
						resp.Body.Close()
					}
					cancel()
				case 3: // cancelled while running
					done := make(chan struct{})
					go func() {
						defer close(done)
						resp := ts.post(sid, toolCall(id, "block", `{}`))
						resp.Body.Close()
					}()
					// A cancellation that arrives before the call is
					// ignored: repeat it until the call ends.
				cancelLoop:
					for {
						resp := ts.post(sid, note("notifications/cancelled", `{"requestId":`+id+`}`))
						resp.Body.Close()
						select {
						case <-done:
							break cancelLoop
						case <-time.After(2 * time.Millisecond):
						}
					}
				case 4: // a server→client round trip
					resp := ts.post(sid, toolCall(id, "sample", `{"text":"x"}`))
					if resp.StatusCode == 404 {
						resp.Body.Close()
						continue
					}
					s := openStream(t, resp)
					s.priming()
					q, _ := s.msg()
					if q.Method == "sampling/createMessage" {
						r := ts.post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"role":"assistant","content":{"type":"text","text":"y"},"model":"m"}}`, q.ID))
						r.Body.Close()
					}
					s.rest()
				case 5: // a GET stream for a while
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
					resp, err := ts.hc.Do(ts.newReq(ctx, http.MethodGet, sid, nil))
					if err == nil {
						buf := make([]byte, 256)
						for {
							if _, err := resp.Body.Read(buf); err != nil {
								break
							}
						}
						resp.Body.Close()
					}
					cancel()
				case 6: // registry changes reach the GET streams
					name := fmt.Sprintf("t%d_%d", w, i)
					_ = AddTool(f.srv, &Tool{Name: name}, func(context.Context, *CallToolRequest, fixtureArgs) (string, error) { return "", nil })
					f.srv.RemoveTools(name)
				case 7: // DELETE and start over
					readEmptyOr404(t, ts.del(sid))
					sid = ts.open("2025-11-25", clientCapsAll)
				case 8: // ping
					resp := ts.post(sid, req(id, "ping", ""))
					resp.Body.Close()
				}
				answered.Add(1)
			}
		})
	}
	wg.Wait()
	t.Logf("%d operations", answered.Load())
	require.Greater(t, answered.Load(), int64(workers*ops/2))
}

func readEmptyOr404(t testing.TB, resp *http.Response) {
	t.Helper()
	defer resp.Body.Close()
	assert.Contains(t, []int{204, 404}, resp.StatusCode)
}

// unlimited turns off the per-caller bounds, for tests that play many
// clients from one address.
var unlimited = &Limits{Calls: -1, Streams: -1, Sessions: -1}
