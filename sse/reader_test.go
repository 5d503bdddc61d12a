package sse

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readAll(t *testing.T, s string) ([]Event, *Reader) {
	t.Helper()
	r := NewReader(strings.NewReader(s))
	var out []Event
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return out, r
		}
		require.NoError(t, err)
		out = append(out, ev)
	}
}

func TestReaderFollowsTheStandard(t *testing.T) {
	t.Parallel()
	evs, r := readAll(t, "\xef\xbb\xbfdata: bom skipped\n\n"+
		"data:a\r\rdata:b\r\ndata\n\n"+ // CR, CRLF; a field without colon
		"id: 5\n\n"+ // id without data: sets the id, dispatches nothing
		"event: x\nid: bad\x00id\ndata: y\n\n"+ // NUL id ignored
		"retry: 12a\nretry: 70\n: comment\ndata: z\n\n"+
		"data: unterminated")
	require.Len(t, evs, 5)
	assert.Equal(t, "bom skipped", string(evs[0].Data))
	assert.Equal(t, "a", string(evs[1].Data), "a lone CR ends the line and a blank CR line dispatches")
	assert.Equal(t, "b\n", string(evs[2].Data))
	assert.Equal(t, "5", evs[3].ID, "an id containing NUL is ignored")
	assert.Equal(t, "x", evs[3].Event)
	assert.Equal(t, "y", string(evs[3].Data))
	assert.Equal(t, "z", string(evs[4].Data))
	assert.Equal(t, "5", evs[4].ID, "the last id sticks to later events")
	assert.Equal(t, 70*time.Millisecond, r.Retry(), "retry takes digits only")
	assert.Equal(t, 1, r.Comments())
}

func TestReaderEventTypeResetsBetweenEvents(t *testing.T) {
	t.Parallel()
	evs, _ := readAll(t, "event: a\n\ndata: 1\n\n")
	require.Len(t, evs, 1)
	assert.Equal(t, "", evs[0].Event, "an event without data does not dispatch, and its type is forgotten")
}

func TestReaderLineLimit(t *testing.T) {
	t.Parallel()
	r := NewReader(strings.NewReader("data: " + strings.Repeat("x", 1<<20) + "\n\n"))
	_, err := r.Next()
	assert.ErrorIs(t, err, ErrLineTooLong)
}
