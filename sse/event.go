package sse

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrInvalidID reports an event id that contains CR, LF or NUL. A line break
// would split the id into a second field (an injection), and clients ignore
// ids that contain NUL.
var ErrInvalidID = errors.New("sse: event id contains CR, LF or NUL")

// ErrInvalidEvent reports an event name that contains CR or LF.
var ErrInvalidEvent = errors.New("sse: event name contains CR or LF")

// Event is one Server-Sent Event.
//
// The zero value is a valid event with empty data. Data may hold several
// lines separated by LF, CR or CRLF; each becomes its own "data:" field and
// a client joins them back with LF, so CR and CRLF come back as LF.
type Event struct {
	// ID sets the client's last event id, sent back as Last-Event-ID when
	// the client reconnects. Empty means no id field.
	ID string
	// Event is the event type. Empty means the default type, "message".
	Event string
	// Data is the payload. An event always carries at least one data field,
	// so an empty payload is still delivered (as an empty string).
	Data []byte
	// Retry, when positive, asks the client to wait this long before it
	// reconnects. It is sent in whole milliseconds.
	Retry time.Duration
}

// Validate reports whether the event can be framed without breaking the
// stream.
func (e *Event) Validate() error {
	if strings.ContainsAny(e.ID, "\r\n\x00") {
		return ErrInvalidID
	}
	if strings.ContainsAny(e.Event, "\r\n") {
		return ErrInvalidEvent
	}
	return nil
}

// AppendTo appends the event's wire form, ending with the blank line that
// dispatches it, to dst and returns the extended slice. It allocates nothing
// when dst has room. On error dst is returned unchanged.
func (e *Event) AppendTo(dst []byte) ([]byte, error) {
	if err := e.Validate(); err != nil {
		return dst, err
	}
	// One allocation at most: field names, the data's line prefixes and
	// the blank line fit in the slack for any event but a many-line one.
	dst = slices.Grow(dst, len(e.ID)+len(e.Event)+len(e.Data)+48)
	if e.ID != "" {
		dst = append(dst, "id: "...)
		dst = append(dst, e.ID...)
		dst = append(dst, '\n')
	}
	if e.Event != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, e.Event...)
		dst = append(dst, '\n')
	}
	if e.Retry > 0 {
		dst = appendRetry(dst, e.Retry)
	}
	dst = appendData(dst, e.Data)
	return append(dst, '\n'), nil
}

// appendData writes one data field per line of data, splitting on CRLF, LF
// and CR alike.
func appendData(dst, data []byte) []byte {
	for {
		i := indexLineBreak(data)
		if i < 0 {
			return appendField(dst, "data:", data)
		}
		dst = appendField(dst, "data:", data[:i])
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
}

// appendField writes "name: value\n", or "name:\n" for an empty value. The
// space after the colon is the one a parser strips, so a value that starts
// with a space survives.
func appendField(dst []byte, name string, value []byte) []byte {
	dst = append(dst, name...)
	if len(value) > 0 {
		dst = append(dst, ' ')
		dst = append(dst, value...)
	}
	return append(dst, '\n')
}

func appendRetry(dst []byte, d time.Duration) []byte {
	dst = append(dst, "retry: "...)
	dst = strconv.AppendInt(dst, d.Milliseconds(), 10)
	return append(dst, '\n')
}

func indexLineBreak(b []byte) int {
	for i, c := range b {
		if c == '\n' || c == '\r' {
			return i
		}
	}
	return -1
}

// AppendComment appends a comment, which clients ignore, to dst. Comments
// keep idle connections open through proxies. A text with line breaks
// becomes several comment lines, so it can never inject a field. The
// comment does not end with a blank line, so it dispatches nothing; it is
// followed by one anyway to flush any proxy's line buffering.
func AppendComment(dst []byte, text string) []byte {
	b := []byte(text)
	for {
		i := indexLineBreak(b)
		if i < 0 {
			dst = appendField(dst, ":", b)
			break
		}
		dst = appendField(dst, ":", b[:i])
		if b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n' {
			i++
		}
		b = b[i+1:]
	}
	return append(dst, '\n')
}

// AppendRetry appends a lone retry field, which changes the client's
// reconnection delay without dispatching an event.
func AppendRetry(dst []byte, d time.Duration) []byte {
	return append(appendRetry(dst, d), '\n')
}
