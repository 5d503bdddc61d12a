package sse

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ErrClosed reports a write to a Writer after an earlier write failed.
var ErrClosed = errors.New("sse: stream closed")

// WriterOptions configures a Writer. The zero value (or nil) uses the
// defaults.
type WriterOptions struct {
	// Status is the response status; default 200.
	Status int
	// WriteTimeout bounds each write and flush, so a client that stopped
	// reading cannot hold the handler forever; default 10s, negative means
	// none. It uses http.ResponseController.SetWriteDeadline, silently
	// skipped where the writer does not support deadlines.
	WriteTimeout time.Duration
	// Retry, when positive, is sent as a retry field right after the
	// headers.
	Retry time.Duration
}

// Writer writes events to one HTTP response.
//
// A Writer is safe for concurrent use: frames written from several
// goroutines never interleave. After the first failed write every later
// write returns the same error without touching the connection.
type Writer struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	mu      sync.Mutex
	buf     []byte
	err     error
	armed   time.Time
}

// Headers sets the response headers an event stream needs on h:
// Content-Type text/event-stream, Cache-Control no-cache, and
// X-Accel-Buffering no (nginx otherwise buffers the stream). It removes
// Content-Length, which a stream cannot have. It returns h, so that a
// reply that copies its headers into the response, such as
// controller.Loop, can be given one map built once for every stream:
//
//	var streamHeader = sse.Headers(http.Header{}) // shared: never modified
//
// which saves each stream a map of its own.
//
// The values it sets are shared by every stream too, so that a stream's
// headers cost it no memory of their own for as long as it lasts:
// replace a value (Set) or append to it (Add copies it), but do not write
// into it (h["Cache-Control"][0] = ...).
func Headers(h http.Header) http.Header {
	h["Content-Type"] = eventStream[:1:1]
	h["Cache-Control"] = noCache[:1:1]
	h["X-Accel-Buffering"] = no[:1:1]
	h.Del("Content-Length")
	return h
}

// The header values Headers sets, shared.
var (
	eventStream = []string{"text/event-stream"}
	noCache     = []string{"no-cache"}
	no          = []string{"no"}
)

// NewWriter starts an event stream on w: it sets the headers (see
// [Headers]), writes the status explicitly and flushes, so the client and
// any proxy see the stream open at once.
//
// The status is written before the first flush on purpose: chi's Compress
// middleware decides in WriteHeader whether to compress, and a flush that
// bypasses it sends plain headers followed by compressed bytes.
//
// NewWriter fails when w cannot flush (http.TimeoutHandler's writer, for
// one); nothing has been written then, so the caller can still answer 500.
func NewWriter(w http.ResponseWriter, opts *WriterOptions) (*Writer, error) {
	var o WriterOptions
	if opts != nil {
		o = *opts
	}
	if o.Status == 0 {
		o.Status = http.StatusOK
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if !canFlush(w) {
		return nil, http.ErrNotSupported
	}
	sw := &Writer{w: w, rc: http.NewResponseController(w), timeout: o.WriteTimeout}
	Headers(w.Header())
	w.WriteHeader(o.Status)
	if o.Retry > 0 {
		sw.buf = AppendRetry(sw.buf[:0], o.Retry)
		return sw, sw.writeLocked()
	}
	return sw, sw.flushLocked()
}

// canFlush reports whether w, or a writer it wraps, can flush.
func canFlush(w http.ResponseWriter) bool {
	for {
		if _, ok := w.(http.Flusher); ok {
			return true
		}
		if _, ok := w.(interface{ FlushError() error }); ok {
			return true
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return false
		}
		w = u.Unwrap()
	}
}

// Send writes one event and flushes it.
func (w *Writer) Send(e *Event) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	var err error
	w.buf, err = e.AppendTo(w.buf[:0])
	if err != nil {
		return err
	}
	return w.writeLocked()
}

// Comment writes a comment and flushes it. Clients ignore comments; they
// keep connections open through proxies and detect dead peers.
func (w *Writer) Comment(text string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.buf = AppendComment(w.buf[:0], text)
	return w.writeLocked()
}

// WriteFrame writes bytes already framed (an [Entry.Frame], or what
// [Event.AppendTo] or [AppendComment] wrote) and flushes them. The caller is
// responsible for the framing; the bytes are written as they are, not
// copied, and not kept.
func (w *Writer) WriteFrame(frame []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if err := w.writeRawLocked(frame); err != nil {
		return err
	}
	return w.flushLocked()
}

// Err returns the error that closed the stream, or nil.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close clears the write deadline so a kept-alive connection's next response
// is not cut by it, and marks the Writer closed.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timeout > 0 {
		_ = w.rc.SetWriteDeadline(time.Time{})
	}
	if w.err == nil {
		w.err = ErrClosed
	}
	return nil
}

func (w *Writer) writeLocked() error {
	if err := w.writeRawLocked(w.buf); err != nil {
		return err
	}
	return w.flushLocked()
}

// writeRawLocked writes p without flushing it.
func (w *Writer) writeRawLocked(p []byte) error {
	w.deadline()
	if _, err := w.w.Write(p); err != nil {
		w.err = err
		return err
	}
	return nil
}

func (w *Writer) flushLocked() error {
	w.deadline()
	if err := w.rc.Flush(); err != nil {
		w.err = err
		return err
	}
	return nil
}

// deadline re-arms the write deadline at most once a quarter of the
// timeout, so the limit stays between 3/4 and all of it without a
// deadline syscall on every write.
func (w *Writer) deadline() {
	if w.timeout <= 0 {
		return
	}
	if now := time.Now(); now.Sub(w.armed) > w.timeout/4 {
		_ = w.rc.SetWriteDeadline(now.Add(w.timeout))
		w.armed = now
	}
}

// maxBatch bounds how many entries [Writer.KeepAlive] writes between two
// flushes, so a channel that never empties still reaches the client in
// steady steps.
const maxBatch = 64

// KeepAlive copies entries from the channel (a [Hub] subscription's C) to
// the stream until ctx ends, the channel closes, or a write fails, and
// writes a comment whenever the stream has been idle for interval (none
// when interval is not positive). It returns nil when the channel closes,
// ctx's error when ctx ends, and the write error otherwise.
//
// It writes each entry's frame as it is, and flushes once per batch: the
// entry it received and whatever else the channel already holds (up to
// 64), so a burst goes out in a few writes while a lone entry goes out at
// once. It never waits for a batch to fill.
func (w *Writer) KeepAlive(ctx context.Context, interval time.Duration, entries <-chan *Entry) error {
	var tick <-chan time.Time
	if interval > 0 {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-entries:
			if !ok {
				return nil
			}
			closed, err := w.sendBatch(e, entries)
			if err != nil || closed {
				return err
			}
		case <-tick:
			if err := w.Comment(""); err != nil {
				return err
			}
		}
	}
}

// sendBatch writes e and the entries waiting behind it in more, then
// flushes. It reports whether it found more closed.
func (w *Writer) sendBatch(e *Entry, more <-chan *Entry) (closed bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return false, w.err
	}
	for n := 1; ; n++ {
		if err := w.writeRawLocked(e.frame); err != nil {
			return false, err
		}
		if n == maxBatch {
			break
		}
		var ok bool
		select {
		case e, ok = <-more:
		default:
			return false, w.flushLocked()
		}
		if !ok {
			return true, w.flushLocked()
		}
	}
	return false, w.flushLocked()
}

// LastEventID returns the request's Last-Event-ID header, or "" when it is
// absent or holds characters no id can have (CR, LF, NUL), so a forged
// header never reaches a replay lookup.
func LastEventID(r *http.Request) string {
	// The key in its canonical form, looked up directly: Header.Get would
	// canonicalize "Last-Event-ID" into a new string on every request.
	v := r.Header["Last-Event-Id"]
	if len(v) == 0 {
		return ""
	}
	id := v[0]
	if strings.ContainsAny(id, "\r\n\x00") {
		return ""
	}
	return id
}
