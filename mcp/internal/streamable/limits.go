package streamable

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// What one caller may hold at once, and how long a body may take. A
// caller is the identity Config.Identity returns or, without one, the
// address the request came from; each replica counts its own.

// Limits bounds each caller; package mcp fills in the defaults. A bound
// of 0 is none.
type Limits struct {
	// BodyTimeout bounds the read of a POST body, from when the
	// transport sees the request (408 beyond it).
	BodyTimeout time.Duration
	// Calls bounds a caller's POSTs in flight (429, Retry-After: 1).
	Calls int
	// Streams bounds a caller's open GET and subscriptions/listen
	// streams (429, Retry-After: 5).
	Streams int
	// Sessions bounds the live sessions a caller created (429,
	// Retry-After: 30).
	Sessions int
	// MaxBatch bounds the messages of a batch (400, -32600 beyond it).
	MaxBatch int
	// MaxAnswer bounds the bytes of a batch's answer (its requests past
	// the bound are answered with an error, not run).
	MaxAnswer int
}

// caller is whom a request counts against: an identity, or an address
// for a request without one (the two never share a count).
type caller struct {
	addr bool
	key  string
}

// callerOf returns the caller of r.
func (t *Transport) callerOf(r *http.Request) caller {
	if t.cfg.Identity != nil {
		if id := t.cfg.Identity(r); id != "" {
			return caller{key: id}
		}
	}
	return caller{addr: true, key: clientAddr(r.RemoteAddr)}
}

// clientAddr is the address part of a RemoteAddr, an IPv6 address cut to
// its /64: one host usually holds a whole /64, and counting its
// addresses apart would let it multiply its share.
func clientAddr(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil || a.Is4() || a.Is4In6() {
		return host
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// What a caller holds.
const (
	holdCall = iota
	holdStream
	holdSession
	holdKinds
)

// callers counts what each caller holds.
type callers struct {
	mu sync.Mutex
	m  map[caller][holdKinds]int
}

// acquire counts one more kind for c; false, counting nothing, when c
// already holds limit of them (limit 0: no bound).
func (cs *callers) acquire(c caller, kind, limit int) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.m == nil {
		cs.m = map[caller][holdKinds]int{}
	}
	h := cs.m[c]
	if limit > 0 && h[kind] >= limit {
		return false
	}
	h[kind]++
	cs.m[c] = h
	return true
}

// release counts one kind fewer for c.
func (cs *callers) release(c caller, kind int) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	h := cs.m[c]
	h[kind]--
	if h == ([holdKinds]int{}) {
		delete(cs.m, c)
		return
	}
	cs.m[c] = h
}

// held returns what c holds, for tests.
func (cs *callers) held(c caller) [holdKinds]int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.m[c]
}

var (
	errTooManyCalls    = wire.NewError(wire.InternalError, "Too Many Requests: this caller has too many requests in flight")
	errTooManyStreams  = wire.NewError(wire.InternalError, "Too Many Requests: this caller has too many open streams; close one first")
	errCallerSessions  = wire.NewError(wire.InternalError, "Too Many Requests: this caller has too many sessions; end one (DELETE) first")
	errBodyTimeout     = wire.NewError(wire.InvalidRequest, "Request Timeout: the request body was not sent in time")
	errSlowBodyMessage = "mcp: request body too slow, connection closed"
)

// tooMany writes a 429 with Retry-After.
func tooMany(w http.ResponseWriter, retry int, e *wire.Error) {
	h := w.Header()
	h.Set("Content-Type", contentJSON)
	h.Set("Retry-After", strconv.Itoa(retry))
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write(wire.AppendErrorResponse(nil, wire.ID{}, e))
}

// tooManyReply is a 429 with Retry-After and body.
func tooManyReply(retry int, body []byte) controller.Reply {
	h := jsonHeader()
	h.Set("Retry-After", strconv.Itoa(retry))
	return controller.Buffered(http.StatusTooManyRequests, h, body)
}

// bodyDeadline bounds the read of r's body, when it has one.
func (t *Transport) bodyDeadline(w http.ResponseWriter, r *http.Request) {
	if t.cfg.Limits.BodyTimeout <= 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	// An error means a writer that cannot set deadlines (not net/http's
	// own, nor a wrapper that unwraps to it): the body is then unbounded,
	// as it was.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(t.cfg.Limits.BodyTimeout))
}

// timedOut reports whether a body read failed on its deadline.
func timedOut(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded)
}

// slowBody logs a request whose body was cut for being too slow.
func (t *Transport) slowBody(r *http.Request, read int) {
	t.attrs(r.Context(), slog.Int(protocol.AttrErrorCode, wire.InvalidRequest))
	t.log.WarnContext(r.Context(), errSlowBodyMessage,
		slog.String("remote", r.RemoteAddr), slog.Int("read", read),
		slog.Int64("declared", r.ContentLength), slog.Duration("timeout", t.cfg.Limits.BodyTimeout))
}
