package cluster_test

import (
	"context"
	"errors"
	"fmt"
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
	if err := a.Create(ctx, &cluster.Record{ID: "s", Initialized: true, Seq: 4}, time.Minute); err != nil {
		t.Fatal(err)
	}
	events := func(id string, after int64) (out []string) {
		evs, err := b.Events(ctx, id, after)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			out = append(out, fmt.Sprintf("%d:%s:%d", ev.Seq, ev.Data, ev.Change))
		}
		return out
	}

	// Every replica, the announcing one included, hears each change,
	// numbered.
	b.Announce(cluster.Change{Notification: "notifications/tools/list_changed"}, []byte("tools"))
	b.Announce(cluster.Change{Notification: "notifications/resources/updated", URI: "test://r"}, []byte("r"))
	for name, heard := range map[string]*notices{"a": &heardA, "b": &heardB} {
		ns := heard.all()
		if len(ns) != 2 || ns[0].Kind != cluster.NoticeChange || ns[0].Seq != 1 || string(ns[0].Data) != "tools" ||
			ns[1].Seq != 2 || ns[1].Change.URI != "test://r" {
			t.Errorf("replica %s heard %+v", name, ns)
		}
	}

	// The owner logs its session's events, its own and the changes it
	// delivered; another replica's, out-of-order or unknown sessions'
	// are dropped.
	a.Append(cluster.Event{Session: "s", Seq: 5, Data: []byte("own")},
		cluster.Event{Session: "s", Seq: 6, Data: []byte("tools"), Change: 1},
		cluster.Event{Session: "s", Seq: 6, Data: []byte("again")},
		cluster.Event{Session: "gone", Seq: 1, Data: []byte("x")})
	b.Append(cluster.Event{Session: "s", Seq: 7, Data: []byte("not b's")})
	if got := events("s", 0); fmt.Sprint(got) != "[5:own:0 6:tools:1]" {
		t.Errorf("log: %q", got)
	}
	if got := events("s", 5); fmt.Sprint(got) != "[6:tools:1]" {
		t.Errorf("log after 5: %q", got)
	}
	if got := events("gone", 0); len(got) != 0 {
		t.Errorf("an unknown session's log: %q", got)
	}
	if rec, err := b.Load(ctx, "s"); err != nil || rec.Seq != 6 {
		t.Errorf("the record's seq follows the log: %+v %v", rec, err)
	}

	for i := range cluster.MemoryMaxEvents + 5 {
		a.Append(cluster.Event{Session: "s", Seq: int64(10 + i), Data: []byte("x")})
	}
	if evs, _ := a.Events(ctx, "s", 0); len(evs) != cluster.MemoryMaxEvents || evs[0].Seq != 15 {
		t.Errorf("the log is bounded: %d events, first %d", len(evs), evs[0].Seq)
	}

	// Recover records again, and names what another replica holds.
	if err := b.Create(ctx, &cluster.Record{ID: "b's"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	moved, err := a.Recover(ctx, []*cluster.Record{{ID: "s"}, {ID: "b's"}, {ID: "new"}}, time.Minute)
	if err != nil || fmt.Sprint(moved) != "[b's]" {
		t.Errorf("recover: %v %v", moved, err)
	}
	if rec, err := b.Load(ctx, "new"); err != nil || rec.Owner != a.Self().ID {
		t.Errorf("recorded again: %+v %v", rec, err)
	}
}
