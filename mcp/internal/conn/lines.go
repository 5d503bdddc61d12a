package conn

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// ErrTooLarge is what a Conn's Read returns for a message over its size
// limit, which it skips: Serve answers it with an error and goes on.
var ErrTooLarge = errors.New("mcp: message too large")

// errGone is what the stdio framing's Write returns, wrapping io.EOF,
// once the client closed its end of the output: Serve then ends the
// session as at the end of the input.
var errGone = errors.New("mcp: the client closed the output")

var errTooLarge = wire.NewError(wire.InvalidRequest, "Invalid Request: message too large")

// lines is the stdio framing: one JSON-RPC message per line (messages
// contain no newline), UTF-8, nothing else on the output.
type lines struct {
	r    *bufio.Reader
	w    *bufio.Writer // Write and WriteHeld are called one at a time
	max  int
	skip bool // the rest of a line over max is still to be read

	start sync.Once
	in    chan lineRead
	stop  chan struct{} // closed when a Read gave up: the reader stops
	stopd sync.Once
}

type lineRead struct {
	msg []byte
	err error
}

// NewLines returns the newline-delimited framing of stdio over r and w:
// messages longer than max bytes are skipped (Read reports ErrTooLarge as
// soon as the reader's 64 KiB buffer holds the byte past the limit, not at
// the line's end, which may never come; the rest of the line is then read
// and dropped, so memory stays bounded by max). A Write that finds the client's end closed (EPIPE)
// returns an error wrapping io.EOF.
// Reading happens on a goroutine of its own, so that Read honours its
// context; it ends when r does.
func NewLines(r io.Reader, w io.Writer, max int) Conn {
	return &lines{r: bufio.NewReaderSize(r, 64<<10), w: bufio.NewWriterSize(w, 64<<10), max: max, in: make(chan lineRead), stop: make(chan struct{})}
}

func (l *lines) Read(ctx context.Context) ([]byte, error) {
	l.start.Do(func() { go l.reader() })
	select {
	case rd, ok := <-l.in:
		if !ok {
			return nil, io.EOF
		}
		return rd.msg, rd.err
	case <-ctx.Done():
		l.stopd.Do(func() { close(l.stop) })
		return nil, ctx.Err()
	}
}

// send hands a read to Read, unless Read gave up.
func (l *lines) send(rd lineRead) bool {
	select {
	case l.in <- rd:
		return true
	case <-l.stop:
		return false
	}
}

// reader reads lines until the input ends, then closes in.
func (l *lines) reader() {
	defer close(l.in)
	for {
		msg, err := l.line()
		if err != nil && !errors.Is(err, ErrTooLarge) {
			if !errors.Is(err, io.EOF) {
				l.send(lineRead{err: err})
			} else if len(trimSpace(msg)) > 0 {
				l.send(lineRead{msg: msg}) // a last line without its newline
			}
			return
		}
		if err == nil && len(trimSpace(msg)) == 0 {
			continue
		}
		if !l.send(lineRead{msg: msg, err: err}) {
			return
		}
	}
}

// line reads one line without its newline, into a buffer of its own. A
// line that grows past max is reported at once (ErrTooLarge); the next
// call drops the rest of it first.
func (l *lines) line() ([]byte, error) {
	for l.skip {
		_, err := l.r.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil:
			return nil, err
		}
		l.skip = false
	}
	var msg []byte
	for {
		chunk, err := l.r.ReadSlice('\n')
		n := len(msg) + len(chunk)
		if err == nil {
			n-- // the newline
		}
		if n > l.max {
			l.skip = err != nil
			return nil, ErrTooLarge
		}
		msg = append(msg, chunk...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil:
			return msg, err
		}
		return msg[:len(msg)-1], nil
	}
}

// Write writes msg and its newline, and what WriteHeld held back before.
func (l *lines) Write(ctx context.Context, msg []byte, related wire.ID) error {
	if err := l.WriteHeld(ctx, msg, related); err != nil {
		return err
	}
	return gone(l.w.Flush())
}

// WriteHeld writes msg and its newline into the buffer, which the next
// Write sends (or sooner, when it is full). Serve uses it for a message
// that another is about to follow.
func (l *lines) WriteHeld(_ context.Context, msg []byte, _ wire.ID) error {
	_, err := l.w.Write(msg)
	if err == nil {
		err = l.w.WriteByte('\n')
	}
	return gone(err)
}

// gone wraps a write error that says the client closed its end in io.EOF.
func gone(err error) error {
	if err != nil && (errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed)) {
		return fmt.Errorf("%w: %w (%w)", errGone, io.EOF, err)
	}
	return err
}
