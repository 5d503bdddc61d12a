package mcpredis_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpcluster "github.com/saguaro-go/saguaro/mcp/cluster"
	"github.com/saguaro-go/saguaro/mcpredis"
	"github.com/saguaro-go/saguaro/mcpredis/redistest"
)

// TestEveryAnswerAcrossARedisRestartIsDocumented keeps a dozen sessions
// busy on three replicas, behind a balancer with no stickiness, while
// Redis is killed and restarted empty. Every answer, during the outage,
// the recovery and after, is the call's result or 503 with Retry-After
// (a session that is being recorded again must not be reported gone:
// its client would start over); once the replicas have recorded their
// sessions again, every session answers on every replica.
func TestEveryAnswerAcrossARedisRestartIsDocumented(t *testing.T) {
	rs := redistest.Start(t)
	prefix := redistest.Prefix(t)
	a := startReplica(t, "a", rs.URL(), prefix)
	b := startReplica(t, "b", rs.URL(), prefix)
	c := startReplica(t, "c", rs.URL(), prefix)
	lb := roundRobin(t, a, b, c)
	clients := make([]*client, 12)
	for i := range clients {
		clients[i] = newClient(t, lb.URL)
		clients[i].initialize()
	}

	type seen struct {
		status     int
		retryAfter bool
		body       string
	}
	var mu sync.Mutex
	var bad []string
	counts := map[int]int{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, cl := range clients {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"c%d-%d"}}}`, n+1, i, n)
				if n%2 == 1 {
					body = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, n+1)
				}
				resp := cl.do(http.MethodPost, []byte(body), nil)
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				s := seen{resp.StatusCode, resp.Header.Get("Retry-After") != "", string(b)}
				mu.Lock()
				counts[s.status]++
				if s.status != http.StatusOK && (s.status != http.StatusServiceUnavailable || !s.retryAfter) {
					bad = append(bad, fmt.Sprintf("%d (Retry-After %v): %s", s.status, s.retryAfter, s.body))
				}
				mu.Unlock()
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	time.Sleep(500 * time.Millisecond)
	rs.Stop()
	time.Sleep(100 * time.Millisecond)
	// The sessions that run go on (their owners, and the replicas that
	// relay to owners they know, need no Redis), but none can start.
	resp := newClient(t, lb.URL).do(http.MethodPost, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
	resp.Body.Close()
	mu.Lock()
	counts[resp.StatusCode]++
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		bad = append(bad, fmt.Sprintf("initialize while Redis is down: %d (Retry-After %q)", resp.StatusCode, resp.Header.Get("Retry-After")))
	}
	mu.Unlock()
	time.Sleep(900 * time.Millisecond)
	rs.Restart()
	time.Sleep(3 * time.Second) // ReplicaTTL + 2 heartbeats is 1 s here
	close(stop)
	wg.Wait()
	t.Logf("answers across the restart: %v", counts)
	assert.Empty(t, bad, "answers that are neither the result nor 503 + Retry-After")
	assert.Positive(t, counts[http.StatusServiceUnavailable], "the outage was seen")

	for _, cl := range clients {
		for range 3 { // one request on each replica
			require.Equal(t, "back", cl.echo("back"))
		}
	}
}

// TestNoReplicaIsGoneJustAfterARedisRestart: until every live replica
// has beaten into a Redis that restarted empty, Locate does not call a
// replica gone (another replica would take its live sessions from it): it
// answers ErrRecovering, or the replica's URL once it has beaten. A
// replica that stopped beating is gone again once the recovery is over.
func TestNoReplicaIsGoneJustAfterARedisRestart(t *testing.T) {
	rs := redistest.Start(t)
	prefix := redistest.Prefix(t)
	a := startReplica(t, "a", rs.URL(), prefix)
	b := startReplica(t, "b", rs.URL(), prefix)
	ctx := context.Background()
	bURL, err := a.cl.Locate(ctx, b.cl.Self().ID)
	require.NoError(t, err)

	rs.Restart()
	recovering, located := 0, 0
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		url, err := a.cl.Locate(ctx, b.cl.Self().ID)
		switch {
		case errors.Is(err, mcpredis.ErrRecovering):
			recovering++
		case err == nil:
			assert.Equal(t, bURL, url)
			located++
		case errors.Is(err, mcpcluster.ErrReplicaGone):
			t.Fatal("a live replica was called gone just after Redis restarted")
		}
		time.Sleep(5 * time.Millisecond)
	}
	assert.Positive(t, recovering, "the restart was seen")
	assert.Positive(t, located, "b beat again")

	gone := b.cl.Self().ID
	b.stop()
	require.Eventually(t, func() bool {
		_, err := a.cl.Locate(ctx, gone)
		return errors.Is(err, mcpcluster.ErrReplicaGone)
	}, 10*time.Second, 50*time.Millisecond, "a replica that stopped beating is gone")
}

// TestRecoveryWaitsForEveryLiveReplica: after Redis restarts empty, a
// session it does not know is "recovering" (503), not unknown (404),
// for as long as a live replica has not recorded its sessions again,
// however long that takes: here a replica that takes three seconds,
// many times its heartbeat. Once it has, unknown is unknown again; and a
// replica that dies meanwhile does not hold the others up for long.
func TestRecoveryWaitsForEveryLiveReplica(t *testing.T) {
	rs := redistest.Start(t)
	prefix := redistest.Prefix(t)
	join := func(name string) *mcpredis.Cluster {
		rdb, err := mcpredis.NewClient(rs.URL())
		require.NoError(t, err)
		t.Cleanup(func() { _ = rdb.Close() })
		cl, err := mcpredis.New(context.Background(), rdb, &mcpredis.Options{URL: "http://" + name + "/mcp", Prefix: prefix,
			Heartbeat: 100 * time.Millisecond})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cl.Close() })
		return cl
	}
	a, slow, dying := join("a"), join("slow"), join("dying")
	ctx := context.Background()
	rec := &mcpcluster.Record{ID: "kept", Revision: "2025-11-25", Movable: true}
	require.NoError(t, slow.Create(ctx, rec, time.Minute))
	resets := make(chan struct{}, 10)
	defer slow.Watch(func(n mcpcluster.Notice) {
		if n.Kind == mcpcluster.NoticeReset {
			resets <- struct{}{}
		}
	})()
	defer dying.Watch(func(mcpcluster.Notice) {})() // it never records: it dies first

	rs.Restart()
	select {
	case <-resets:
	case <-time.After(5 * time.Second):
		t.Fatal("the slow replica was not told to record its sessions again")
	}
	dying.Close()
	start := time.Now()
	for time.Since(start) < 3*time.Second {
		_, err := a.Load(ctx, "never")
		require.ErrorIs(t, err, mcpredis.ErrRecovering, "after %v", time.Since(start))
		_, err = a.Load(ctx, "kept")
		require.ErrorIs(t, err, mcpredis.ErrRecovering, "after %v", time.Since(start))
		time.Sleep(50 * time.Millisecond)
	}
	moved, err := slow.Recover(ctx, []*mcpcluster.Record{rec}, time.Minute)
	require.NoError(t, err)
	assert.Empty(t, moved)
	got, err := a.Load(ctx, "kept")
	require.NoError(t, err)
	assert.Equal(t, slow.Self().ID, got.Owner)
	_, err = a.Load(ctx, "never")
	assert.ErrorIs(t, err, mcpcluster.ErrSessionUnknown)
}
