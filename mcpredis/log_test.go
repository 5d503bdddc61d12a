package mcpredis_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	mcpcluster "github.com/saguaro-go/saguaro/mcp/cluster"
	"github.com/saguaro-go/saguaro/mcpredis"
	"github.com/saguaro-go/saguaro/mcpredis/redistest"
)

// TestLogKeepsEventsByNumber: the owner's events go to the session's log
// in the background: its own messages whole, a change as its number (the
// message read back from the change log), numbers it skipped as holes
// that Events leaves out, the oldest dropped past MaxEvents. Another
// replica's events for the session are refused, and it hears that the
// session is not its own.
func TestLogKeepsEventsByNumber(t *testing.T) {
	url, prefix := redistest.URL(t), redistest.Prefix(t)
	redistest.DeleteOnCleanup(t, url, prefix)
	join := func(name string) *mcpredis.Cluster {
		rdb, err := mcpredis.NewClient(url)
		require.NoError(t, err)
		t.Cleanup(func() { _ = rdb.Close() })
		cl, err := mcpredis.New(context.Background(), rdb, &mcpredis.Options{URL: "http://" + name + "/mcp", Prefix: prefix,
			MaxEvents: 8, ChangeWindow: -1})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cl.Close() })
		return cl
	}
	a, b := join("a"), join("b")
	ctx := context.Background()
	require.NoError(t, a.Create(ctx, &mcpcluster.Record{ID: "s", Revision: "2025-11-25", Movable: true}, time.Minute))

	changes := make(chan mcpcluster.Notice, 1)
	stop := a.Watch(func(n mcpcluster.Notice) {
		if n.Kind == mcpcluster.NoticeChange {
			changes <- n
		}
	})
	a.Announce(mcpcluster.Change{Notification: "notifications/tools/list_changed"}, []byte(`{"method":"notifications/tools/list_changed"}`))
	var ch mcpcluster.Notice
	select {
	case ch = <-changes:
	case <-time.After(5 * time.Second):
		t.Fatal("no change")
	}
	stop()

	a.Append(mcpcluster.Event{Session: "s", Seq: 1, Data: []byte(`{"id":1}`)},
		mcpcluster.Event{Session: "s", Seq: 2, Data: ch.Data, Change: ch.Seq},
		mcpcluster.Event{Session: "s", Seq: 5, Data: []byte(`{"id":5}`)})
	events := func(after int64) string {
		evs, err := b.Events(ctx, "s", after)
		require.NoError(t, err)
		out := ""
		for _, ev := range evs {
			out += fmt.Sprintf("%d:%s:%d ", ev.Seq, ev.Data, ev.Change)
		}
		return out
	}
	want := fmt.Sprintf(`1:{"id":1}:0 2:%s:%d 5:{"id":5}:0 `, ch.Data, ch.Seq)
	require.Eventually(t, func() bool { return events(0) == want }, 5*time.Second, 10*time.Millisecond, "got %q", events(0))
	assert.Equal(t, `5:{"id":5}:0 `, events(2))
	rec, err := b.Load(ctx, "s")
	require.NoError(t, err)
	assert.EqualValues(t, 5, rec.Seq, "a record's seq covers its log")

	// The log lives as long as the record, and keeps the last MaxEvents.
	opts, err := redis.ParseURL(url)
	if err == nil {
		rdb := redis.NewClient(opts)
		defer rdb.Close()
		ttl, err := rdb.PTTL(ctx, prefix+"e{s}").Result()
		require.NoError(t, err)
		assert.Greater(t, ttl, 50*time.Second)
	}
	for seq := int64(6); seq <= 20; seq++ {
		a.Append(mcpcluster.Event{Session: "s", Seq: seq, Data: []byte(fmt.Sprintf(`{"id":%d}`, seq))})
	}
	require.Eventually(t, func() bool {
		evs, err := b.Events(ctx, "s", 0)
		return err == nil && len(evs) == 8 && evs[0].Seq == 13 && evs[7].Seq == 20
	}, 5*time.Second, 10*time.Millisecond, "got %q", events(0))

	// Not b's session: refused, and b hears it.
	moved := make(chan string, 1)
	defer b.Watch(func(n mcpcluster.Notice) {
		if n.Kind == mcpcluster.NoticeMoved {
			moved <- n.Session
		}
	})()
	b.Append(mcpcluster.Event{Session: "s", Seq: 21, Data: []byte(`{"id":"b"}`)})
	select {
	case id := <-moved:
		assert.Equal(t, "s", id)
	case <-time.After(5 * time.Second):
		t.Fatal("b did not hear that the session is not its own")
	}
	evs, err := b.Events(ctx, "s", 20)
	require.NoError(t, err)
	assert.Empty(t, evs, "another replica's event was logged")
}
