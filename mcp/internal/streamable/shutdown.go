package streamable

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// Draining and shutting down. Drain only flips what Draining reports (a
// readiness probe turns 503 while the endpoint goes on serving, so that
// the balancer stops sending it requests). Shutdown drains too, then
// refuses new work on sessions (503 with Retry-After, so that the
// client's retry reaches another replica), releases the sessions in the
// store, ends the event streams that have no call behind them, and waits
// for the session calls in flight, all at once and each bounded by its
// context.

// Drain marks the transport as draining: Draining reports true from now
// on. Requests are served as before.
func (t *Transport) Drain() { t.draining.Store(true) }

// Draining reports whether Drain or Shutdown was called.
func (t *Transport) Draining() bool { return t.draining.Load() }

// closing reports whether Shutdown began: sessions take no new work.
func (t *Transport) closing() bool { return t.shutdown.Load() }

var errShuttingDown = wire.NewError(wire.InternalError, "Service Unavailable: the server is shutting down; retry")

// shuttingDown answers a request a transport that is shutting down does
// not take: 503, try again in a second (on another replica, which takes
// the session over).
func shuttingDown(id wire.ID) controller.Reply {
	h := jsonHeader()
	h.Set("Retry-After", "1")
	h.Set("Connection", "close")
	return controller.Buffered(http.StatusServiceUnavailable, h, wire.AppendErrorResponse(nil, id, errShuttingDown))
}

// Shutdown stops the transport, bounded by ctx at every step:
//
//   - Draining reports true, and session requests that would start
//     something (a call, a stream, a new session, a DELETE) are answered
//     503 with Retry-After: 1; a client's answers to server→client
//     requests and its notifications still reach the calls that run.
//   - At once: every session is released in the cluster for another
//     replica to take over (ended, when the transport is Standalone);
//     the sessions' GET streams and the subscriptions/listen streams end
//     (their clients reconnect); the session calls in flight run to
//     their end.
//   - When the calls are done, or ctx is about to end (a tenth of the
//     time left, at most a second), calls still running are cancelled
//     and their answers ("Request cancelled") go out; then every session
//     ends here (OnClose hears CloseShutdown).
//
// It returns nil when everything was released and every call finished,
// else an error that says what was not, wrapping ctx's error or the
// store's. The transport stops hearing the cluster and the engine:
// Shutdown is its last call.
func (t *Transport) Shutdown(ctx context.Context) error {
	t.draining.Store(true)
	t.shutdown.Store(true)
	defer t.stopOnce.Do(func() {
		for _, stop := range t.stop {
			stop()
		}
	})
	t.listeners.endAll()
	if t.sessions == nil {
		return nil
	}
	all := t.sessions.all()
	released := make(chan error, 1)
	go func() { released <- t.sessions.releaseAll(ctx, all) }()
	for _, s := range all {
		s.endGetStream()
	}
	// The calls are cancelled a little before ctx ends (a tenth of the
	// time left, at most a second), so that their answers can go out on
	// their streams before the sessions, and the streams, end.
	calls := ctx
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		calls, cancel = context.WithDeadline(ctx, deadline.Add(-min(time.Until(deadline)/10, time.Second)))
		defer cancel()
	}
	var errs []error
	if err := t.calls.wait(calls); err != nil {
		errs = append(errs, fmt.Errorf("mcp: shutdown: %d calls still running were cancelled: %w", t.calls.n.Load(), err))
		for _, s := range t.sessions.all() {
			s.CancelCalls()
		}
		_ = t.calls.wait(ctx)
	}
	var relErr error
	select {
	case relErr = <-released:
	default:
		select {
		case relErr = <-released:
		case <-ctx.Done():
			relErr = ctx.Err()
		}
	}
	if relErr != nil {
		errs = append(errs, fmt.Errorf("mcp: shutdown: sessions left unreleased in the store: %w", relErr))
	}
	// Sessions that started meanwhile (a request already past its check
	// when Shutdown began) end too.
	for _, s := range t.sessions.all() {
		s.endLocal(CloseShutdown)
	}
	return errors.Join(errs...)
}

// releaseAll gives up this replica's sessions in the cluster, so that the
// next request of each, on any replica, takes it over: all at once (the
// store sends them in batches, checking ctx between them). What is left
// when the store fails or ctx ends is taken over once this replica is
// gone.
func (tab *sessionTable) releaseAll(ctx context.Context, all []*session) error {
	ids := make([]string, len(all))
	for i, s := range all {
		ids[i] = s.id
	}
	return tab.cluster.Release(ctx, ids...)
}

// endGetStream closes the connection of the session's GET stream, if one
// is attached: the client reconnects after the retry delay, with its
// Last-Event-ID, and reaches the replica that takes the session over.
func (s *session) endGetStream() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.streams[0]; st != nil && st.mb != nil {
		st.closeRetry = s.tab.opts.Retry
		st.wakeLocked()
	}
}

// callCount counts the session calls in flight, for Shutdown to wait
// on. An atomic counter rather than a WaitGroup: calls start from any
// goroutine while Shutdown may be waiting.
type callCount struct {
	n       atomic.Int64
	waiting atomic.Bool
	once    sync.Once
	idle    chan struct{} // closed once n reaches 0 while waiting; made by New
}

func (c *callCount) add() { c.n.Add(1) }

func (c *callCount) done() {
	if c.n.Add(-1) == 0 && c.waiting.Load() {
		c.once.Do(func() { close(c.idle) })
	}
}

// wait returns once no call runs, or with ctx's error.
func (c *callCount) wait(ctx context.Context) error {
	c.waiting.Store(true)
	if c.n.Load() == 0 {
		return nil
	}
	select {
	case <-c.idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// streamEnd tells a subscriptions/listen loop to end: the transport shuts
// down.
type streamEnd struct{}

// endAll ends every open subscriptions/listen stream.
func (l *listenLimits) endAll() {
	l.mu.Lock()
	l.ended = true
	mbs := make([]*controller.Mailbox, 0, len(l.open))
	for mb := range l.open {
		mbs = append(mbs, mb)
	}
	l.mu.Unlock()
	for _, mb := range mbs {
		_ = mb.Notify(streamEnd{})
	}
}
