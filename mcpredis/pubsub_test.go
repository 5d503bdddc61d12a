package mcpredis

import (
	"context"
	"testing"
	"time"

	"github.com/saguaro-go/saguaro/mcp/cluster"
	"github.com/saguaro-go/saguaro/mcpredis/redistest"
)

// TestPlainPubSub: on a server without sharded pub/sub (Redis before 7),
// changes and the notice of a session taken over travel on plain
// channels, and still reach every replica once.
func TestPlainPubSub(t *testing.T) {
	url, prefix := redistest.URL(t), redistest.Prefix(t)
	redistest.DeleteOnCleanup(t, url, prefix)
	plain := false
	join := func(name string) (*Cluster, chan cluster.Notice) {
		rdb, err := NewClient(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rdb.Close() })
		c, err := newCluster(context.Background(), rdb, &Options{URL: "http://" + name + "/mcp", Prefix: prefix, ChangeWindow: -1}, &plain)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		heard := make(chan cluster.Notice, 16)
		t.Cleanup(c.Watch(func(n cluster.Notice) { heard <- n }))
		return c, heard
	}
	a, heardA := join("a")
	b, heardB := join("b")
	wait := func(ch chan cluster.Notice, kind cluster.NoticeKind) cluster.Notice {
		t.Helper()
		select {
		case n := <-ch:
			if n.Kind != kind {
				t.Fatalf("heard %+v, want kind %d", n, kind)
			}
			return n
		case <-time.After(5 * time.Second):
			t.Fatalf("nothing heard, want kind %d", kind)
		}
		return cluster.Notice{}
	}
	a.Announce(cluster.Change{Notification: "notifications/tools/list_changed"}, []byte("x"))
	na, nb := wait(heardA, cluster.NoticeChange), wait(heardB, cluster.NoticeChange)
	if na.Seq != nb.Seq || string(nb.Data) != "x" {
		t.Fatalf("a heard %+v, b %+v", na, nb)
	}
	ctx := context.Background()
	if err := a.Create(ctx, &cluster.Record{ID: "s", Revision: "2025-11-25"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if won, err := b.Claim(ctx, "s", a.Self().ID); !won || err != nil {
		t.Fatalf("claim: %v %v", won, err)
	}
	if n := wait(heardA, cluster.NoticeMoved); n.Session != "s" {
		t.Fatalf("a heard %+v", n)
	}
	select {
	case n := <-heardB:
		t.Fatalf("b heard %+v", n)
	case <-time.After(200 * time.Millisecond):
	}
}
