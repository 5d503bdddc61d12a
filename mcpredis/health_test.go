package mcpredis_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/mcpredis"
	"github.com/saguaro-go/saguaro/mcpredis/redistest"
)

// TestHealthyFollowsRedis: Healthy is nil while Redis answers, an
// ErrUnhealthy within ReplicaTTL of Redis going away (bounded by the
// probe's context), and nil again once it is back.
func TestHealthyFollowsRedis(t *testing.T) {
	rs := redistest.Start(t)
	rdb, err := mcpredis.NewClient(rs.URL())
	require.NoError(t, err)
	defer rdb.Close()
	cl, err := mcpredis.New(context.Background(), rdb, &mcpredis.Options{URL: "http://127.0.0.1:1/mcp",
		Prefix: redistest.Prefix(t), Heartbeat: 100 * time.Millisecond})
	require.NoError(t, err)
	defer cl.Close()
	healthy := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		return cl.Healthy(ctx)
	}
	require.NoError(t, healthy())

	rs.Stop()
	require.Eventually(t, func() bool { return errors.Is(healthy(), mcpredis.ErrUnhealthy) }, 5*time.Second, 20*time.Millisecond)
	start := time.Now()
	assert.ErrorIs(t, healthy(), mcpredis.ErrUnhealthy)
	assert.Less(t, time.Since(start), time.Second, "the probe's context bounds it")

	rs.Restart()
	require.Eventually(t, func() bool { return healthy() == nil }, 5*time.Second, 20*time.Millisecond)
}
