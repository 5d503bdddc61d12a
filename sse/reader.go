package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"time"
)

// ErrLineTooLong reports a line longer than the Reader's limit.
var ErrLineTooLong = errors.New("sse: line too long")

// Reader parses an event stream the way the HTML standard's EventSource
// does: lines end with CRLF, LF or CR; a leading byte-order mark is skipped;
// a blank line dispatches the event; an event without data is not
// dispatched; an id containing NUL is ignored; retry takes only digits.
//
// Reader is meant for tests and simple clients. It is not safe for
// concurrent use.
type Reader struct {
	br       *bufio.Reader
	maxLine  int
	started  bool
	lastID   string
	pendCR   bool
	line     []byte
	retry    time.Duration
	comments int
}

// NewReader returns a Reader of r that refuses lines longer than 1 MiB.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReader(r), maxLine: 1 << 20}
}

// LastEventID returns the last event id the stream has set, as a browser
// would send it in Last-Event-ID when reconnecting.
func (r *Reader) LastEventID() string { return r.lastID }

// Retry returns the last reconnection delay the stream asked for, or zero.
func (r *Reader) Retry() time.Duration { return r.retry }

// Comments returns how many comment lines the Reader has seen.
func (r *Reader) Comments() int { return r.comments }

// Next returns the next dispatched event. The returned event's ID is the
// stream's last event id at dispatch time, as EventSource reports it. At the
// end of the stream Next returns io.EOF, and an unterminated final event is
// discarded, as the standard says.
func (r *Reader) Next() (Event, error) {
	var (
		data    []byte
		hasData bool
		typ     string
	)
	for {
		line, err := r.readLine()
		if err != nil {
			return Event{}, err
		}
		if len(line) == 0 {
			if !hasData {
				typ = ""
				continue
			}
			// The data buffer ends with a LF that the standard removes.
			data = data[:len(data)-1]
			return Event{ID: r.lastID, Event: typ, Data: data}, nil
		}
		if line[0] == ':' {
			r.comments++
			continue
		}
		name, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			name, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(name) {
		case "event":
			typ = string(value)
		case "data":
			data = append(data, value...)
			data = append(data, '\n')
			hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				r.lastID = string(value)
			}
		case "retry":
			if n, ok := parseDigits(value); ok {
				r.retry = time.Duration(n) * time.Millisecond
			}
		}
	}
}

func parseDigits(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}

// readLine returns the next line without its terminator. The returned slice
// is valid until the next call.
func (r *Reader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	for {
		c, err := r.br.ReadByte()
		if err != nil {
			// A final line without a terminator never completes, so it
			// is dropped with whatever event it belonged to.
			return nil, err
		}
		if r.pendCR {
			r.pendCR = false
			if c == '\n' {
				continue
			}
		}
		if !r.started {
			r.started = true
			if c == 0xEF {
				if b, err := r.br.Peek(2); err == nil && b[0] == 0xBB && b[1] == 0xBF {
					_, _ = r.br.Discard(2)
					continue
				}
			}
		}
		switch c {
		case '\n':
			return r.line, nil
		case '\r':
			r.pendCR = true
			return r.line, nil
		}
		if len(r.line) >= r.maxLine {
			return nil, ErrLineTooLong
		}
		r.line = append(r.line, c)
	}
}
