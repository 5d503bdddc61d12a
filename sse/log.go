package sse

import (
	"errors"
	"strconv"
	"sync"

	"github.com/saguaro-go/saguaro/internal/replay"
)

// ErrUnknownID reports a Last-Event-ID that this log never issued: not a
// number, or newer than the newest event. Treat it like a fresh connection.
var ErrUnknownID = errors.New("sse: unknown event id")

// ErrEvicted reports that events after the given id were dropped from the
// log to respect its bounds: the client missed events that cannot be
// replayed. [Log.Since] still returns what the log holds.
var ErrEvicted = errors.New("sse: events after this id are no longer in the log")

// LogOptions bounds a Log. Zero fields take the defaults.
type LogOptions struct {
	// MaxEvents is the most events kept; default 1024.
	MaxEvents int
	// MaxBytes is the most bytes kept, counting each event's data, id and
	// name and its encoded frame (so an event costs about twice its data);
	// default 1 MiB. The newest event is always kept, even when it alone is
	// larger.
	MaxBytes int
}

// Log is a bounded replay log: it numbers the events it is given with
// monotonic ids ("1", "2", …), encodes each one once into an immutable
// [Entry], and keeps the newest entries, within a count and a byte budget,
// for clients that reconnect with Last-Event-ID.
//
// A Log is safe for concurrent use. Ids are unique within one Log only; a
// restarted process starts again at 1, so a Last-Event-ID from before the
// restart can look valid: give each Log's ids a distinct meaning (a stream
// name in the URL or the event) where that matters.
type Log struct {
	mu   sync.Mutex
	ring replay.Ring[*Entry]
	last uint64 // id of the newest event ever appended
}

// NewLog returns an empty Log with the given bounds (nil for defaults).
func NewLog(opts *LogOptions) *Log {
	var o LogOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxEvents <= 0 {
		o.MaxEvents = 1024
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 1 << 20
	}
	return &Log{ring: replay.NewRing[*Entry](o.MaxEvents, o.MaxBytes)}
}

func size(e *Entry) int {
	return len(e.ev.ID) + len(e.ev.Event) + len(e.ev.Data) + len(e.frame)
}

// Append gives the event the next id (any ID it carries is replaced),
// encodes it, stores it and returns the entry. It fails with
// [ErrInvalidEvent], storing nothing and using no id, when the event's name
// cannot be framed. The log keeps the event's Data slice: do not modify it
// afterwards.
func (l *Log) Append(e Event) (*Entry, error) {
	e.ID = ""
	if err := e.Validate(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last++
	e.ID = strconv.FormatUint(l.last, 10)
	frame, _ := e.AppendTo(nil) // validated above; the id is digits
	ent := &Entry{ev: e, frame: frame}
	l.ring.Push(int64(l.last), ent, size(ent))
	for l.ring.Over() {
		l.ring.DropOldest()
	}
	return ent, nil
}

// LastID returns the id of the newest event, or "" when nothing was
// appended.
func (l *Log) LastID() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == 0 {
		return ""
	}
	return strconv.FormatUint(l.last, 10)
}

// Len returns how many events the log holds.
func (l *Log) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ring.Len()
}

// Since returns the entries after lastID, oldest first. An empty lastID
// returns every entry held. With [ErrEvicted] it still returns the entries
// it holds (the client then knows it has a gap); with [ErrUnknownID] it
// returns none.
func (l *Log) Since(lastID string) ([]*Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sinceLocked(lastID)
}

func (l *Log) sinceLocked(lastID string) ([]*Entry, error) {
	var after uint64
	if lastID != "" {
		n, err := strconv.ParseUint(lastID, 10, 64)
		if err != nil || n > l.last {
			return nil, ErrUnknownID
		}
		after = n
	}
	oldest := l.last + 1 // the id the next event gets, when none is held
	if seq, ok := l.ring.Oldest(); ok {
		oldest = uint64(seq)
	}
	var err error
	if lastID != "" && after+1 < oldest {
		err = ErrEvicted
	}
	var out []*Entry
	l.ring.After(int64(after), func(_ int64, e *Entry) bool {
		if out == nil {
			out = make([]*Entry, 0, l.ring.Len())
		}
		out = append(out, e)
		return true
	})
	return out, err
}
