package sse

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

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
