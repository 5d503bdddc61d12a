package mcpredis_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpcluster "github.com/saguaro-go/saguaro/mcp/cluster"
	"github.com/saguaro-go/saguaro/mcpredis"
	"github.com/saguaro-go/saguaro/mcpredis/redistest"
)

// TestReleaseInBatches: a replica that shuts down releases thousands of
// sessions in one call, and with Redis gone the call returns when its
// context ends, not once per session.
func TestReleaseInBatches(t *testing.T) {
	rs := redistest.Start(t)
	prefix := redistest.Prefix(t)
	join := func(url string) *mcpredis.Cluster {
		rdb, err := mcpredis.NewClient(rs.URL())
		require.NoError(t, err)
		t.Cleanup(func() { _ = rdb.Close() })
		cl, err := mcpredis.New(context.Background(), rdb, &mcpredis.Options{URL: url, Prefix: prefix})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cl.Close() })
		return cl
	}
	a, b := join("http://a/mcp"), join("http://b/mcp")
	ctx := context.Background()
	const n = 3000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprint("s", i)
		require.NoError(t, a.Create(ctx, &mcpcluster.Record{ID: ids[i], Revision: "2025-11-25", Movable: true}, time.Minute))
	}
	require.NoError(t, a.Release(ctx, ids...))
	for _, id := range []string{ids[0], ids[n/2], ids[n-1]} {
		rec, err := b.Load(ctx, id)
		require.NoError(t, err)
		assert.Empty(t, rec.Owner, "released")
	}
	// Another replica's sessions are not released by this one.
	require.NoError(t, b.Create(ctx, &mcpcluster.Record{ID: "theirs", Revision: "2025-11-25"}, time.Minute))
	require.NoError(t, a.Release(ctx, "theirs"))
	rec, err := a.Load(ctx, "theirs")
	require.NoError(t, err)
	assert.Equal(t, b.Self().ID, rec.Owner)

	rs.Stop()
	bounded, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	assert.Error(t, a.Release(bounded, ids...))
	assert.Less(t, time.Since(start), 2*time.Second, "bounded by its context")
}
