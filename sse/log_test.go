package sse

import (
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ids(ents []*Entry) []string {
	out := make([]string, len(ents))
	for i, e := range ents {
		out[i] = e.ID()
	}
	return out
}

func TestLogBoundedByCount(t *testing.T) {
	t.Parallel()
	l := NewLog(&LogOptions{MaxEvents: 3})
	assert.Equal(t, "", l.LastID())
	for i := 1; i <= 5; i++ {
		e, err := l.Append(Event{Data: []byte("x")})
		require.NoError(t, err)
		assert.Equal(t, strconv.Itoa(i), e.ID(), "ids are monotonic from 1")
	}
	assert.Equal(t, 3, l.Len())
	assert.Equal(t, "5", l.LastID())

	all, err := l.Since("")
	require.NoError(t, err)
	assert.Equal(t, []string{"3", "4", "5"}, ids(all))

	got, err := l.Since("3")
	require.NoError(t, err)
	assert.Equal(t, []string{"4", "5"}, ids(got))

	got, err = l.Since("2")
	require.NoError(t, err, "id 2 is just before the oldest held: nothing missed")
	assert.Equal(t, []string{"3", "4", "5"}, ids(got))

	got, err = l.Since("1")
	assert.ErrorIs(t, err, ErrEvicted, "event 2 is gone")
	assert.Equal(t, []string{"3", "4", "5"}, ids(got))

	got, err = l.Since("5")
	require.NoError(t, err)
	assert.Empty(t, got)

	for _, bad := range []string{"6", "abc", "-1", "1.5"} {
		got, err = l.Since(bad)
		assert.ErrorIs(t, err, ErrUnknownID, bad)
		assert.Empty(t, got)
	}
}

func TestLogBoundedByBytes(t *testing.T) {
	t.Parallel()
	// Each event: 10 bytes of data, a 1-byte id, and its 24-byte frame
	// "id: N\ndata: 0123456789\n\n": 35 bytes.
	l := NewLog(&LogOptions{MaxEvents: 100, MaxBytes: 75})
	for i := 0; i < 5; i++ {
		_, err := l.Append(Event{Data: []byte("0123456789")})
		require.NoError(t, err)
	}
	assert.Equal(t, 2, l.Len(), "two 35-byte events fit in 75 bytes")
	big, err := l.Append(Event{Data: make([]byte, 100)})
	require.NoError(t, err)
	assert.Equal(t, 1, l.Len(), "the newest event stays even alone over the budget")
	got, err := l.Since("")
	require.NoError(t, err)
	assert.Equal(t, []string{big.ID()}, ids(got))
}

func TestLogConcurrentAppendKeepsIDsUnique(t *testing.T) {
	t.Parallel()
	l := NewLog(&LogOptions{MaxEvents: 10000})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				_, _ = l.Append(Event{})
			}
		}()
	}
	wg.Wait()
	all, err := l.Since("")
	require.NoError(t, err)
	require.Len(t, all, 4000)
	for i, e := range all {
		assert.Equal(t, strconv.Itoa(i+1), e.ID())
		assert.Equal(t, "id: "+e.ID()+"\ndata:\n\n", string(e.Frame()))
	}
}

func TestLogRefusesAnUnframeableEvent(t *testing.T) {
	t.Parallel()
	l := NewLog(nil)
	_, err := l.Append(Event{Event: "a\nb"})
	assert.ErrorIs(t, err, ErrInvalidEvent)
	assert.Equal(t, "", l.LastID(), "a refused event uses no id")
	e, err := l.Append(Event{ID: "a\nforged", Event: "ok", Data: []byte("d")})
	require.NoError(t, err, "the caller's id is replaced, so it cannot break the framing")
	assert.Equal(t, "1", e.ID())
	assert.Equal(t, "id: 1\nevent: ok\ndata: d\n\n", string(e.Frame()))
}
