package sse

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEventAppendTo(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		ev   Event
		want string
	}{
		{"data only", Event{Data: []byte("hello")}, "data: hello\n\n"},
		{"empty data", Event{}, "data:\n\n"},
		{"named", Event{Event: "tick"}, "event: tick\ndata:\n\n"},
		{"named with payload", Event{Event: "tick", Data: []byte("1")}, "event: tick\ndata: 1\n\n"},
		{"with id", Event{ID: "7", Data: []byte("x")}, "id: 7\ndata: x\n\n"},
		{"multiline LF", Event{Data: []byte("a\nb")}, "data: a\ndata: b\n\n"},
		{"CR splits", Event{Data: []byte("a\rb")}, "data: a\ndata: b\n\n"},
		{"CRLF splits once", Event{Data: []byte("a\r\nb")}, "data: a\ndata: b\n\n"},
		{"mixed breaks", Event{Data: []byte("a\r\n\rb\nc\r")}, "data: a\ndata:\ndata: b\ndata: c\ndata:\n\n"},
		{"leading space kept", Event{Data: []byte(" x")}, "data:  x\n\n"},
		{"retry", Event{Data: []byte("r"), Retry: 1500 * time.Millisecond}, "retry: 1500\ndata: r\n\n"},
		{"everything", Event{ID: "id-1", Event: "e", Data: []byte("d"), Retry: time.Second}, "id: id-1\nevent: e\nretry: 1000\ndata: d\n\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := tc.ev.AppendTo(nil)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
}

func TestEventRejectsInjection(t *testing.T) {
	t.Parallel()
	for _, ev := range []Event{{ID: "a\nb"}, {ID: "a\rb"}, {ID: "a\x00b"}} {
		out, err := ev.AppendTo([]byte("keep"))
		assert.ErrorIs(t, err, ErrInvalidID)
		assert.Equal(t, "keep", string(out), "nothing written on error")
	}
	for _, ev := range []Event{{Event: "a\nb"}, {Event: "a\rb"}} {
		_, err := ev.AppendTo(nil)
		assert.ErrorIs(t, err, ErrInvalidEvent)
	}
	// NUL is legal in an event name and in data.
	_, err := (&Event{Event: "a\x00", Data: []byte("\x00")}).AppendTo(nil)
	assert.NoError(t, err)
}

func TestAppendComment(t *testing.T) {
	t.Parallel()
	assert.Equal(t, ":\n\n", string(AppendComment(nil, "")))
	assert.Equal(t, ": ping\n\n", string(AppendComment(nil, "ping")))
	assert.Equal(t, ": a\n: b\n:\n: c\n\n", string(AppendComment(nil, "a\r\nb\r\rc")),
		"line breaks become separate comment lines, never a field")
	assert.Equal(t, "retry: 250\n\n", string(AppendRetry(nil, 250*time.Millisecond)))

	// A comment with an injected field dispatches nothing.
	r := NewReader(strings.NewReader(string(AppendComment(nil, "x\ndata: evil")) + "data: ok\n\n"))
	ev, err := r.Next()
	require.NoError(t, err)
	assert.Equal(t, "ok", string(ev.Data))
	assert.Equal(t, 2, r.Comments())
}

func TestAppendToDoesNotAllocate(t *testing.T) {
	ev := Event{ID: "42", Event: "message", Data: []byte("line one\nline two")}
	buf := make([]byte, 0, 256)
	allocs := testing.AllocsPerRun(100, func() {
		buf, _ = ev.AppendTo(buf[:0])
	})
	assert.Zero(t, allocs)
}

// normalise turns CRLF and CR into LF, as a client's line splitting does.
func normalise(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(b, []byte("\r"), []byte("\n"))
}

// FuzzRoundTrip checks that every event that encodes reads back identically
// through a conforming parser, and that the encoder refuses exactly the
// events that cannot be framed. The seed corpus lives in
// testdata/fuzz/FuzzRoundTrip.
func FuzzRoundTrip(f *testing.F) {
	f.Add("1", "message", "hello", int64(0))
	f.Add("", "", "", int64(3000))
	f.Add("x y", "ev", "a\r\nb\rc\n", int64(1))
	f.Add("\xef\xbb\xbf", ": not a comment", "data: inner\n\nid: 9", int64(0))
	f.Fuzz(func(t *testing.T, id, name, data string, retryMs int64) {
		ev := Event{ID: id, Event: name, Data: []byte(data)}
		if retryMs > 0 && retryMs < 1<<40 {
			ev.Retry = time.Duration(retryMs) * time.Millisecond
		}
		frame, err := ev.AppendTo(nil)
		bad := strings.ContainsAny(id, "\r\n\x00") || strings.ContainsAny(name, "\r\n")
		if bad {
			if err == nil {
				t.Fatalf("unframeable event accepted: %q", frame)
			}
			return
		}
		if err != nil {
			t.Fatalf("valid event refused: %v", err)
		}
		// A second event proves the first one ended exactly where it should.
		frame = append(frame, "data: next\n\n"...)
		r := NewReader(bytes.NewReader(frame))
		got, err := r.Next()
		if err != nil {
			t.Fatalf("parse: %v (frame %q)", err, frame)
		}
		if got.ID != id || got.Event != name || !bytes.Equal(got.Data, normalise([]byte(data))) {
			t.Fatalf("round trip changed the event:\n in %+v\nout %+v\nframe %q", ev, got, frame)
		}
		if ev.Retry > 0 && r.Retry() != ev.Retry {
			t.Fatalf("retry %v read back as %v", ev.Retry, r.Retry())
		}
		next, err := r.Next()
		if err != nil || string(next.Data) != "next" {
			t.Fatalf("following event lost: %+v %v", next, err)
		}
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("trailing bytes after the events: %v", err)
		}
	})
}

func BenchmarkAppendTo(b *testing.B) {
	ev := Event{ID: "12345", Event: "message", Data: []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":50}}`)}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	b.SetBytes(int64(len(ev.Data)))
	for i := 0; i < b.N; i++ {
		buf, _ = ev.AppendTo(buf[:0])
	}
}

func BenchmarkAppendToMultiline(b *testing.B) {
	ev := Event{ID: "1", Data: []byte(strings.Repeat("a line of text\n", 16))}
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	b.SetBytes(int64(len(ev.Data)))
	for i := 0; i < b.N; i++ {
		buf, _ = ev.AppendTo(buf[:0])
	}
}
