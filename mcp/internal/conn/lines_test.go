package conn

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestLines(t *testing.T) {
	in := "one\n\n  \n" + strings.Repeat("x", 100) + "\ntwo\r\n" + strings.Repeat("y", 70000) + "\nthree"
	var out bytes.Buffer
	l := NewLines(strings.NewReader(in), &out, 50)
	ctx := context.Background()
	var got []string
	for {
		msg, err := l.Read(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, ErrTooLarge) {
			got = append(got, "!large")
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(msg))
	}
	want := []string{"one", "!large", "two\r", "!large", "three"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("read %q, want %q", got, want)
	}
	if err := l.Write(ctx, []byte(`{"a":1}`), wire.ID{}); err != nil || out.String() != "{\"a\":1}\n" {
		t.Errorf("wrote %q %v", out.String(), err)
	}
}

// A Read that gives up stops the reader, which does not leak.
func TestLinesReadGivesUp(t *testing.T) {
	r, w := io.Pipe()
	l := NewLines(r, io.Discard, 1<<10)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Read(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("read: %v", err)
	}
	_, _ = w.Write([]byte("late\n"))
	w.Close()
}

// A line over the limit is reported while it is still being written (at
// the latest once the reader's buffer is full of it),
// and the next line is read whole.
func TestLinesTooLargeEarly(t *testing.T) {
	r, w := io.Pipe()
	l := NewLines(r, io.Discard, 100)
	ctx := context.Background()
	go func() {
		_, _ = w.Write([]byte(strings.Repeat("x", 200<<10))) // past the reader's 64 KiB buffer
	}()
	if _, err := l.Read(ctx); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("read %v, want ErrTooLarge before the line ends", err)
	}
	go func() {
		_, _ = w.Write([]byte(strings.Repeat("y", 100) + "\nnext\n"))
		w.Close()
	}()
	msg, err := l.Read(ctx)
	if err != nil || string(msg) != "next" {
		t.Fatalf("read %q %v, want the next line", msg, err)
	}
	if _, err := l.Read(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("read %v, want EOF", err)
	}
}

// A Write to a closed pipe says the client left: it wraps io.EOF.
func TestLinesWriteGone(t *testing.T) {
	r, w := io.Pipe()
	r.Close()
	l := NewLines(strings.NewReader(""), w, 100)
	if err := l.Write(context.Background(), []byte("{}"), wire.ID{}); !errors.Is(err, io.EOF) {
		t.Fatalf("write: %v, want an error wrapping io.EOF", err)
	}
}
