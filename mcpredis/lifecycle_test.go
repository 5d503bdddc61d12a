package mcpredis_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcpredis/redistest"
)

// An endpoint's readiness and shutdown with Redis behind it.

// ready is the endpoint's readiness as a probe asks it: within a second.
func ready(ep *mcp.Endpoint) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return ep.Ready(ctx)
}

// TestReadyFollowsRedis: Ready is nil while Redis answers, an error
// within a second of Redis going away (stopped, or frozen: a probe never
// outlives its context), nil once it is back, and ErrDraining from
// Drain on.
func TestReadyFollowsRedis(t *testing.T) {
	rs := redistest.Start(t)
	prefix := redistest.Prefix(t)
	rp := startReplicaWith(t, "a", rs.URL(), prefix, nil, unlimited)
	require.NoError(t, ready(rp.ep))

	rs.Stop()
	gone := time.Now()
	require.Eventually(t, func() bool { return ready(rp.ep) != nil }, 3*time.Second, 10*time.Millisecond)
	assert.Less(t, time.Since(gone), time.Second, "Ready noticed Redis gone")
	rs.Restart()
	require.Eventually(t, func() bool { return ready(rp.ep) == nil }, 5*time.Second, 20*time.Millisecond)

	rs.Pause()
	start := time.Now()
	err := ready(rp.ep)
	took := time.Since(start)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, took, time.Second+200*time.Millisecond, "a frozen Redis held the probe up")
	rs.Resume()
	require.Eventually(t, func() bool { return ready(rp.ep) == nil }, 5*time.Second, 20*time.Millisecond)

	rp.ep.Drain()
	assert.ErrorIs(t, ready(rp.ep), mcp.ErrDraining)
}

// TestShutdownWithRedisFrozen: with 5,000 sessions and a Redis that
// accepts connections but answers nothing, Shutdown returns when its
// context ends, saying that the sessions were not released, and every
// session has ended here.
func TestShutdownWithRedisFrozen(t *testing.T) {
	const sessions = 5_000
	rs := redistest.Start(t)
	prefix := redistest.Prefix(t)
	rp := startReplicaWith(t, "a", rs.URL(), prefix, nil, unlimited)
	var wg sync.WaitGroup
	work := make(chan struct{})
	for range 8 {
		wg.Go(func() {
			c := newClient(t, rp.srv.URL)
			for range work {
				c.sid = ""
				c.initialize()
			}
		})
	}
	for range sessions {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	require.Equal(t, sessions, rp.ep.Sessions())

	rs.Pause()
	defer rs.Resume()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	err := rp.ep.Shutdown(ctx)
	took := time.Since(start)
	t.Logf("Shutdown with %d sessions and Redis frozen: %v: %v", sessions, took.Round(time.Millisecond), err)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sessions left unreleased")
	assert.Less(t, took, 2*time.Second+200*time.Millisecond, "Shutdown outlived its context")
	assert.Equal(t, 0, rp.ep.Sessions())

	// A request that reaches the replica now is told to go elsewhere.
	c := newClient(t, rp.srv.URL)
	resp := c.do(http.MethodPost, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
}
