package sse

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHubDeliversToEverySubscriber(t *testing.T) {
	t.Parallel()
	h := NewHub(nil)
	defer h.Close()
	a, err := h.Subscribe("t", "")
	require.NoError(t, err)
	b, err := h.Subscribe("t", "")
	require.NoError(t, err)
	other, err := h.Subscribe("other", "")
	require.NoError(t, err)

	e, err := h.Publish("t", Event{ID: "ignored", Data: []byte("hi")})
	require.NoError(t, err)
	assert.Equal(t, "1", e.ID(), "the log gives the id")
	assert.Equal(t, "id: 1\ndata: hi\n\n", string(e.Frame()))
	got := <-a.C
	assert.Same(t, e, got, "every subscriber gets the one entry")
	assert.Equal(t, "hi", string(got.Event().Data))
	assert.Same(t, e, <-b.C)
	assert.Empty(t, other.C, "topics are separate")
	assert.Equal(t, 2, h.Subscribers("t"))

	a.Close()
	a.Close() // idempotent
	assert.Equal(t, 1, h.Subscribers("t"))
	_, open := <-a.C
	assert.False(t, open)
	assert.NoError(t, a.Err(), "a subscriber that left has no error")
}

// TestHubStalledSubscriberDoesNotDelayOthers asserts on delivery, not on wall
// time: a subscriber that never reads is dropped once its queue is full,
// while a reading subscriber gets every event.
func TestHubStalledSubscriberDoesNotDelayOthers(t *testing.T) {
	t.Parallel()
	h := NewHub(&HubOptions{QueueSize: 4})
	defer h.Close()
	stalled, err := h.Subscribe("t", "")
	require.NoError(t, err)
	live, err := h.Subscribe("t", "")
	require.NoError(t, err)

	// Each publish is read by the live subscriber before the next one, so
	// only the stalled subscriber can fall behind.
	const n = 100
	var seen []string
	for i := 0; i < n; i++ {
		h.Publish("t", Event{Data: []byte(strconv.Itoa(i))})
		e, ok := <-live.C
		require.True(t, ok, "live subscriber dropped at event %d", i)
		seen = append(seen, e.ID())
	}
	require.Len(t, seen, n, "the live subscriber received every event")
	for i, id := range seen {
		assert.Equal(t, strconv.Itoa(i+1), id)
	}

	<-stalled.Done()
	assert.ErrorIs(t, stalled.Err(), ErrLagged)
	var queued []string
	for e := range stalled.C {
		queued = append(queued, e.ID())
	}
	assert.Equal(t, []string{"1", "2", "3", "4"}, queued, "what was queued before the drop is still delivered")

	// The dropped client resumes from its last id through the log.
	resumed, err := h.Subscribe("t", "4")
	require.NoError(t, err)
	defer resumed.Close()
	assert.Len(t, resumed.C, n-4)
	assert.Equal(t, "5", (<-resumed.C).ID())
}

func TestHubReplayThenLiveHasNoGapNoDuplicate(t *testing.T) {
	t.Parallel()
	h := NewHub(&HubOptions{QueueSize: 10000, Log: &LogOptions{MaxEvents: 10000}})
	defer h.Close()
	const total = 2000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < total; i++ {
			h.Publish("t", Event{})
		}
	}()
	// Join mid-stream, resuming after whatever id was last published.
	var s *Subscription
	for {
		last := h.Log("t").LastID()
		if last == "" {
			continue
		}
		var err error
		s, err = h.Subscribe("t", last)
		require.NoError(t, err)
		wg.Wait()
		first, _ := strconv.Atoi(last)
		want := first + 1
		for want <= total {
			e := <-s.C
			require.Equal(t, strconv.Itoa(want), e.ID())
			want++
		}
		assert.Empty(t, s.C)
		break
	}
	s.Close()
}

func TestHubSubscribeFunc(t *testing.T) {
	t.Parallel()
	h := NewHub(nil)
	h.Publish("t", Event{Data: []byte("old")})
	var mu sync.Mutex
	var got []string
	room := 2
	s, err := h.SubscribeFunc("t", "0", func(e *Entry) bool {
		mu.Lock()
		defer mu.Unlock()
		if room == 0 {
			return false
		}
		room--
		got = append(got, string(e.Event().Data))
		return true
	})
	require.NoError(t, err)
	h.Publish("t", Event{Data: []byte("new")})
	h.Publish("t", Event{Data: []byte("overflow")})
	<-s.Done()
	assert.ErrorIs(t, s.Err(), ErrLagged)
	assert.Equal(t, []string{"old", "new"}, got)
	s.Close() // safe after the drop

	// A replay that does not fit drops the subscriber at once.
	s2, err := h.SubscribeFunc("t", "0", func(*Entry) bool { return false })
	require.NoError(t, err)
	<-s2.Done()
	assert.ErrorIs(t, s2.Err(), ErrLagged)
	s2.Close()

	h.Close()
	_, err = h.Subscribe("t", "")
	assert.ErrorIs(t, err, ErrHubClosed)
	_, err = h.Publish("t", Event{})
	assert.ErrorIs(t, err, ErrHubClosed)
}

func TestHubCloseEndsSubscribers(t *testing.T) {
	t.Parallel()
	h := NewHub(nil)
	s, err := h.Subscribe("t", "")
	require.NoError(t, err)
	h.Close()
	h.Close()
	<-s.Done()
	assert.ErrorIs(t, s.Err(), ErrHubClosed)
}

func BenchmarkHubPublish(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			h := NewHub(&HubOptions{QueueSize: 1 << 20})
			defer h.Close()
			subs := make([]*Subscription, n)
			for i := range subs {
				subs[i], _ = h.SubscribeFunc("t", "", func(*Entry) bool { return true })
			}
			ev := Event{Event: "tick", Data: []byte(`{"n":1}`)}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_, _ = h.Publish("t", ev)
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "deliveries/s")
		})
	}
}

// TestHubSubscribeFuncReplaysAsOneEntry resumes a subscriber that missed
// more events than its queue holds: the replay comes as one delivery,
// followed by live entries, together exactly the events after its id.
func TestHubSubscribeFuncReplaysAsOneEntry(t *testing.T) {
	t.Parallel()
	h := NewHub(nil)
	defer h.Close()
	var frames []string
	for i := 1; i <= 5; i++ {
		e, err := h.Publish("t", Event{Data: []byte(strconv.Itoa(i))})
		require.NoError(t, err)
		frames = append(frames, string(e.Frame()))
	}
	var got []*Entry
	room := 2 // a queue of two: smaller than the replay
	s, err := h.SubscribeFunc("t", "1", func(e *Entry) bool {
		if room == 0 {
			return false
		}
		room--
		got = append(got, e)
		return true
	})
	require.NoError(t, err)
	require.Len(t, got, 1, "the replay is one delivery")
	assert.Equal(t, 4, got[0].Len())
	assert.Equal(t, "5", got[0].ID(), "the id a client has after reading it")
	assert.Equal(t, "5", string(got[0].Event().Data))
	assert.Equal(t, strings.Join(frames[1:], ""), string(got[0].Frame()))

	e, err := h.Publish("t", Event{Data: []byte("6")})
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Same(t, e, got[1])
	assert.Equal(t, 1, got[1].Len())

	_, err = h.Publish("t", Event{Data: []byte("7")})
	require.NoError(t, err)
	<-s.Done()
	assert.ErrorIs(t, s.Err(), ErrLagged, "the full queue still drops the subscriber")

	// A lone missed event is the log's own entry.
	one, err := h.SubscribeFunc("t", "6", func(e *Entry) bool {
		assert.Equal(t, "7", e.ID())
		assert.Equal(t, 1, e.Len())
		return true
	})
	require.NoError(t, err)
	one.Close()
}

func TestHubPublishRefusesAnUnframeableEvent(t *testing.T) {
	t.Parallel()
	h := NewHub(nil)
	defer h.Close()
	s, err := h.Subscribe("t", "")
	require.NoError(t, err)
	_, err = h.Publish("t", Event{Event: "bad\nname"})
	assert.ErrorIs(t, err, ErrInvalidEvent)
	assert.Empty(t, s.C, "nothing delivered")
	e, err := h.Publish("t", Event{Event: "ok"})
	require.NoError(t, err)
	assert.Equal(t, "1", e.ID(), "the refused event used no id")
}

// testBox is a Mailbox as a controller loop's behaves: a bounded queue
// for Send, Notify past the bound, Defer run at close.
type testBox struct {
	mu       sync.Mutex
	room     int
	closed   bool
	got      []any
	deferred []func()
}

var errTestBoxFull = errors.New("full")

func (b *testBox) Send(info any) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	if len(b.got) >= b.room {
		return errTestBoxFull
	}
	b.got = append(b.got, info)
	return nil
}

func (b *testBox) Notify(info any) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	b.got = append(b.got, info)
	return nil
}

func (b *testBox) Defer(fn func()) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		fn()
		return
	}
	b.deferred = append(b.deferred, fn)
	b.mu.Unlock()
}

func (b *testBox) close() {
	b.mu.Lock()
	b.closed = true
	fns := b.deferred
	b.mu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
}

// messages describes what the box got: an entry's data, or "ended: err".
func (b *testBox) messages() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, m := range b.got {
		switch m := m.(type) {
		case *Entry:
			out = append(out, string(m.Frame()))
		case Ended:
			out = append(out, fmt.Sprintf("ended %s: %v", m.Topic, m.Err))
		default:
			out = append(out, fmt.Sprint(m))
		}
	}
	return out
}

func TestHubSubscribeMailbox(t *testing.T) {
	t.Parallel()
	h := NewHub(nil)
	defer h.Close()
	h.Publish("t", Event{Data: []byte("old")})
	box := &testBox{room: 3}
	s, err := h.SubscribeMailbox("t", "0", box)
	require.NoError(t, err)
	assert.Nil(t, s.C)
	assert.Equal(t, 1, h.Subscribers("t"))
	h.Publish("t", Event{Data: []byte("new")})
	h.Publish("t", Event{Data: []byte("last")})
	h.Publish("t", Event{Data: []byte("overflow")}) // the box is full: dropped
	h.Publish("t", Event{Data: []byte("after")})
	assert.Equal(t, []string{
		"id: 1\ndata: old\n\n", "id: 2\ndata: new\n\n", "id: 3\ndata: last\n\n",
		"ended t: " + ErrLagged.Error(),
	}, box.messages(), "the entries it took, then Ended, and nothing after")
	assert.Equal(t, 0, h.Subscribers("t"))
	assert.ErrorIs(t, s.Err(), ErrLagged)
	<-s.Done()  // made after the end: closed
	box.close() // its Close after the drop is harmless
	assert.ErrorIs(t, s.Err(), ErrLagged)
}

func TestHubSubscribeMailboxEndsWithTheMailbox(t *testing.T) {
	t.Parallel()
	h := NewHub(nil)
	defer h.Close()
	box := &testBox{room: 10}
	_, err := h.SubscribeMailbox("t", "", box)
	require.NoError(t, err)
	h.Publish("t", Event{Data: []byte("one")})
	box.close()
	assert.Equal(t, 0, h.Subscribers("t"), "the mailbox's close left the topic")
	h.Publish("t", Event{Data: []byte("two")})
	assert.Equal(t, []string{"id: 1\ndata: one\n\n"}, box.messages(), "no Ended for a subscriber that left")

	// A mailbox closed before it subscribes leaves at once.
	gone := &testBox{room: 10}
	gone.close()
	_, err = h.SubscribeMailbox("t", "", gone)
	require.NoError(t, err)
	assert.Equal(t, 0, h.Subscribers("t"))
}

func TestHubSubscribeMailboxHubCloseAndRefusedReplay(t *testing.T) {
	t.Parallel()
	h := NewHub(nil)
	for range 3 {
		h.Publish("t", Event{})
	}
	refused := &testBox{room: 0}
	s, err := h.SubscribeMailbox("t", "1", refused)
	require.NoError(t, err)
	assert.Equal(t, []string{"ended t: " + ErrLagged.Error()}, refused.messages(), "a replay that does not fit ends the subscription before it joins")
	assert.ErrorIs(t, s.Err(), ErrLagged)
	assert.Equal(t, 0, h.Subscribers("t"))

	box := &testBox{room: 10}
	_, err = h.SubscribeMailbox("t", "", box)
	require.NoError(t, err)
	h.Close()
	assert.Equal(t, []string{"ended t: " + ErrHubClosed.Error()}, box.messages())
	_, err = h.SubscribeMailbox("t", "", &testBox{room: 10})
	assert.ErrorIs(t, err, ErrHubClosed)
}

// TestSubscriptionStaysSmall pins the size of what a hub holds for each
// connected subscriber: no Done channel unless asked for.
func TestSubscriptionStaysSmall(t *testing.T) {
	t.Parallel()
	assert.LessOrEqual(t, unsafe.Sizeof(Subscription{}), uintptr(48))
	h := NewHub(nil)
	defer h.Close()
	s, err := h.SubscribeMailbox("t", "", &testBox{room: 1})
	require.NoError(t, err)
	assert.Nil(t, s.done, "a mailbox subscriber has no channel")
}
