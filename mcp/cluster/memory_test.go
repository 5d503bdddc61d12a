package cluster_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/saguaro-go/saguaro/mcp/cluster"
)

// notices collects what a replica hears.
type notices struct {
	mu sync.Mutex
	ns []cluster.Notice
}

func (n *notices) add(x cluster.Notice) {
	n.mu.Lock()
	n.ns = append(n.ns, x)
	n.mu.Unlock()
}

func (n *notices) all() []cluster.Notice {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]cluster.Notice(nil), n.ns...)
}

func TestMemoryDirectory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := cluster.NewMemory()
	a, b := m.Join("http://a/mcp"), m.Join("http://b/mcp")
	if a.Self().ID == b.Self().ID {
		t.Fatal("two replicas share an id")
	}
	var heardA notices
	defer a.Watch(heardA.add)()

	if _, err := a.Load(ctx, "s1"); !errors.Is(err, cluster.ErrSessionUnknown) {
		t.Fatalf("load of nothing: %v", err)
	}
	rec := &cluster.Record{ID: "s1", Identity: "ann", Revision: "2025-11-25", Client: []byte(`{"roots":{}}`), Movable: true}
	if err := a.Create(ctx, rec, time.Minute); err != nil {
		t.Fatal(err)
	}
	rec.Client[2] = 'X' // the store keeps its own copy
	got, err := b.Load(ctx, "s1")
	if err != nil || got.Owner != a.Self().ID || got.OwnerURL != "http://a/mcp" || got.Identity != "ann" || string(got.Client) != `{"roots":{}}` {
		t.Fatalf("load: %+v %v", got, err)
	}
	if err := b.Create(ctx, &cluster.Record{ID: "s1"}, time.Minute); !errors.Is(err, cluster.ErrSessionMoved) {
		t.Errorf("another replica's create: %v", err)
	}
	if err := b.Save(ctx, &cluster.Record{ID: "s1"}, time.Minute); !errors.Is(err, cluster.ErrSessionMoved) {
		t.Errorf("another replica's save: %v", err)
	}
	if err := a.Save(ctx, &cluster.Record{ID: "s1", LogLevel: "info", Subscriptions: []string{"u"}}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Load(ctx, "s1"); got.LogLevel != "info" || len(got.Subscriptions) != 1 {
		t.Errorf("saved: %+v", got)
	}
	if err := a.Save(ctx, &cluster.Record{ID: "nope"}, time.Minute); !errors.Is(err, cluster.ErrSessionUnknown) {
		t.Errorf("a save never brings a session back: %v", err)
	}

	// The owner leaves; b claims the session, once.
	if won, _ := b.Claim(ctx, "s1", "someone else"); won {
		t.Error("claimed from the wrong owner")
	}
	if _, err := b.Locate(ctx, a.Self().ID); err != nil {
		t.Errorf("locate a live replica: %v", err)
	}
	if won, err := b.Claim(ctx, "s1", a.Self().ID); !won || err != nil {
		t.Fatalf("claim: %v %v", won, err)
	}
	if ns := heardA.all(); len(ns) != 1 || ns[0].Kind != cluster.NoticeMoved || ns[0].Session != "s1" {
		t.Errorf("the old owner heard %+v", ns)
	}
	a.Leave()
	if _, err := b.Locate(ctx, a.Self().ID); !errors.Is(err, cluster.ErrReplicaGone) {
		t.Errorf("locate a replica that left: %v", err)
	}

	// Released while another replica lives: kept for it to claim.
	c := m.Join("")
	if err := b.Release(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Load(ctx, "s1"); err != nil || got.Owner != "" {
		t.Errorf("released: %+v %v", got, err)
	}
	if err := c.End(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Load(ctx, "s1"); !errors.Is(err, cluster.ErrSessionUnknown) {
		t.Errorf("ended: %v", err)
	}
}

func TestMemoryReleaseByTheOnlyReplicaEnds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := cluster.NewMemory().Join("")
	if err := a.Create(ctx, &cluster.Record{ID: "s"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Load(ctx, "s"); !errors.Is(err, cluster.ErrSessionUnknown) {
		t.Errorf("a session nobody else can take was kept: %v", err)
	}
}

func TestMemoryExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := cluster.NewMemory().Join("")
	if err := a.Create(ctx, &cluster.Record{ID: "s"}, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := a.Touch(ctx, "s", time.Minute); err != nil {
		t.Fatal(err)
	}
	time.Sleep(40 * time.Millisecond)
	if _, err := a.Load(ctx, "s"); err != nil {
		t.Errorf("a touched record expired: %v", err)
	}
	if err := a.Touch(ctx, "s", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if _, err := a.Load(ctx, "s"); !errors.Is(err, cluster.ErrSessionUnknown) {
		t.Errorf("an untouched record outlived its ttl: %v", err)
	}
	if err := a.Touch(ctx, "s", time.Minute); !errors.Is(err, cluster.ErrSessionUnknown) {
		t.Errorf("touch of an expired record: %v", err)
	}
}

func TestMemoryLogAndBus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := cluster.NewMemory()
	a, b := m.Join("http://a"), m.Join("http://b")
	var heardA, heardB notices
	defer a.Watch(heardA.add)()
	defer b.Watch(heardB.add)()
	for _, rec := range []*cluster.Record{
		{ID: "live", Initialized: true},
		{ID: "sub", Initialized: true, Subscriptions: []string{"test://r"}},
		{ID: "new"},
	} {
		if err := a.Create(ctx, rec, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Append(ctx, "gone", []byte("x")); !errors.Is(err, cluster.ErrSessionUnknown) {
		t.Errorf("append to nothing: %v", err)
	}
	seq, err := b.Append(ctx, "live", []byte("one"))
	if err != nil || seq != 1 {
		t.Fatalf("append: %d %v", seq, err)
	}
	if ns := heardA.all(); len(ns) != 1 || ns[0].Kind != cluster.NoticeEvent || ns[0].Seq != 1 || string(ns[0].Data) != "one" {
		t.Errorf("the owner heard %+v", ns)
	}

	b.Announce(cluster.Change{Notification: "notifications/tools/list_changed"}, []byte("tools"))
	b.Announce(cluster.Change{Notification: "notifications/resources/updated", URI: "test://r"}, []byte("r"))
	events := func(id string) (out []string) {
		evs, err := a.Events(ctx, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			out = append(out, string(ev.Data))
		}
		return out
	}
	if got := events("live"); len(got) != 2 || got[0] != "one" || got[1] != "tools" {
		t.Errorf("live session's log: %q", got)
	}
	if got := events("sub"); len(got) != 2 || got[0] != "tools" || got[1] != "r" {
		t.Errorf("subscribed session's log: %q", got)
	}
	if got := events("new"); len(got) != 0 {
		t.Errorf("an uninitialized session heard %q", got)
	}
	if evs, _ := a.Events(ctx, "live", 1); len(evs) != 1 || evs[0].Seq != 2 {
		t.Errorf("events after 1: %+v", evs)
	}
	changes := 0
	for _, n := range heardA.all() {
		if n.Kind == cluster.NoticeChange {
			changes++
		}
	}
	if changes != 2 {
		t.Errorf("replica a heard %d changes, want 2", changes)
	}
	for _, n := range heardB.all() {
		if n.Kind == cluster.NoticeChange {
			t.Errorf("the announcing replica heard its own change: %+v", n)
		}
	}

	for range cluster.MemoryMaxEvents + 5 {
		if _, err := a.Append(ctx, "new", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if evs, _ := a.Events(ctx, "new", 0); len(evs) != cluster.MemoryMaxEvents || evs[0].Seq != 6 {
		t.Errorf("the log is bounded: %d events, first %d", len(evs), evs[0].Seq)
	}
}
