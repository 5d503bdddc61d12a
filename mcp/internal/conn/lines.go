package conn

import (
	"bufio"
	"context"
	"errors"
	"io"
	"sync"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// ErrTooLarge is what a Conn's Read returns for a message over its size
// limit, which it skipped: Serve answers it with an error and goes on.
var ErrTooLarge = errors.New("mcp: message too large")

var errTooLarge = wire.NewError(wire.InvalidRequest, "Invalid Request: message too large")

// lines is the stdio framing: one JSON-RPC message per line (messages
// contain no newline), UTF-8, nothing else on the output.
type lines struct {
	r   *bufio.Reader
	w   io.Writer
	max int

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
// messages longer than max bytes are skipped (Read reports ErrTooLarge).
// Reading happens on a goroutine of its own, so that Read honours its
// context; it ends when r does.
func NewLines(r io.Reader, w io.Writer, max int) Conn {
	return &lines{r: bufio.NewReaderSize(r, 64<<10), w: w, max: max, in: make(chan lineRead), stop: make(chan struct{})}
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

// line reads one line without its newline, into a buffer of its own.
func (l *lines) line() ([]byte, error) {
	var msg []byte
	tooLarge := false
	for {
		chunk, err := l.r.ReadSlice('\n')
		if !tooLarge {
			if len(msg)+len(chunk) > l.max+1 {
				tooLarge, msg = true, nil
			} else {
				msg = append(msg, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil:
			return msg, err
		case tooLarge:
			return nil, ErrTooLarge
		}
		return msg[:len(msg)-1], nil
	}
}

func (l *lines) Write(_ context.Context, msg []byte, _ wire.ID) error {
	buf := make([]byte, 0, len(msg)+1)
	buf = append(append(buf, msg...), '\n')
	_, err := l.w.Write(buf)
	return err
}
