package sse

import (
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ids(evs []Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

func TestLogBoundedByCount(t *testing.T) {
	t.Parallel()
	l := NewLog(&LogOptions{MaxEvents: 3})
	assert.Equal(t, "", l.LastID())
	for i := 1; i <= 5; i++ {
		e := l.Append(Event{Data: []byte("x")})
		assert.Equal(t, strconv.Itoa(i), e.ID, "ids are monotonic from 1")
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
	l := NewLog(&LogOptions{MaxEvents: 100, MaxBytes: 25})
	for i := 0; i < 5; i++ {
		l.Append(Event{Data: []byte("0123456789")}) // 10 bytes + 1 byte id
	}
	assert.Equal(t, 2, l.Len(), "two 11-byte events fit in 25 bytes")
	big := l.Append(Event{Data: make([]byte, 100)})
	assert.Equal(t, 1, l.Len(), "the newest event stays even alone over the budget")
	got, err := l.Since("")
	require.NoError(t, err)
	assert.Equal(t, []string{big.ID}, ids(got))
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
				l.Append(Event{})
			}
		}()
	}
	wg.Wait()
	all, err := l.Since("")
	require.NoError(t, err)
	require.Len(t, all, 4000)
	for i, e := range all {
		assert.Equal(t, strconv.Itoa(i+1), e.ID)
	}
}
