// Package session holds what every transport keeps of one client's MCP
// session: the revision and capabilities initialize negotiated, what the
// engine's effects recorded (notifications/initialized, the log level,
// resource subscriptions), the calls in flight that notifications/cancelled
// can reach, the server→client requests waiting for the client's answer,
// and the handler's state with its one-at-a-time turn. A transport adds
// its own framing around it: the Streamable HTTP transport its streams,
// reaper and cluster record; a message connection (stdio) its reader and
// writer.
package session

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/saguaro-go/saguaro/internal/jsonstr"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// Session is one client's protocol session. It is safe for concurrent use
// and holds no goroutine.
type Session struct {
	revision protocol.Revision
	client   any
	queue    int
	done     chan struct{}

	logLevel    atomic.Uint32
	initialized atomic.Bool
	waiting     atomic.Int32

	mu       sync.Mutex
	ended    bool
	subs     map[string]struct{}
	inflight map[wire.ID]context.CancelFunc
	pending  map[int64]chan outcome
	nextReq  int64

	stateMu sync.Mutex
	state   any
	slot    chan struct{}
}

// outcome is a client's answer to a server→client request.
type outcome struct {
	result json.RawMessage
	err    *wire.Error
}

// New starts a session of revision rev with the client's capabilities as
// the engine decoded them, the handler's initial state, and room for
// queue stateful callbacks waiting for their turn.
func New(rev protocol.Revision, client any, state any, queue int) *Session {
	return &Session{revision: rev, client: client, state: state, queue: queue, done: make(chan struct{})}
}

// Revision is the negotiated revision.
func (s *Session) Revision() protocol.Revision { return s.revision }

// Client is the client's capabilities (the engine's value, read-only).
func (s *Session) Client() any { return s.client }

// Done is closed when the session ends.
func (s *Session) Done() <-chan struct{} { return s.done }

// Initialized reports whether notifications/initialized arrived.
func (s *Session) Initialized() bool { return s.initialized.Load() }

// LogLevel is the level logging/setLevel set (zero: unset).
func (s *Session) LogLevel() protocol.LogLevel { return protocol.LogLevel(s.logLevel.Load()) }

// Subscribed reports whether the client subscribed to uri.
func (s *Session) Subscribed(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.subs[uri]
	return ok
}

// Subscriptions lists the subscribed URIs, in no order.
func (s *Session) Subscriptions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.subs))
	for u := range s.subs {
		out = append(out, u)
	}
	return out
}

// Restore sets what a session recorded elsewhere (a replica that takes it
// over), and starts its server→client request ids at base, far from the
// ids its previous owner handed out.
func (s *Session) Restore(initialized bool, level protocol.LogLevel, subs []string, base int64) {
	s.initialized.Store(initialized)
	s.logLevel.Store(uint32(level))
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(subs) > 0 {
		s.subs = make(map[string]struct{}, len(subs))
		for _, u := range subs {
			s.subs[u] = struct{}{}
		}
	}
	s.nextReq = base
}

// Call is the engine's Call of a message of this session.
func (s *Session) Call(msg *wire.Message, out protocol.Outbound) protocol.Call {
	return protocol.Call{Method: msg.Method, ID: msg.ID, Params: msg.Params, Revision: s.revision,
		Client: s.client, LogLevel: s.LogLevel(), Outbound: out, Tape: msg.Tape}
}

// Apply records a call's effect.
func (s *Session) Apply(e *protocol.Effect) {
	switch e.Kind {
	case protocol.EffectInitialized:
		s.initialized.Store(true)
	case protocol.EffectSetLogLevel:
		s.logLevel.Store(uint32(e.LogLevel))
	case protocol.EffectSubscribe:
		s.mu.Lock()
		if s.subs == nil {
			s.subs = map[string]struct{}{}
		}
		s.subs[e.URI] = struct{}{}
		s.mu.Unlock()
	case protocol.EffectUnsubscribe:
		s.mu.Lock()
		delete(s.subs, e.URI)
		s.mu.Unlock()
	case protocol.EffectCancel:
		s.Cancel(e.RequestID)
	}
}

// CallContext is a call's context: detached from parent's cancellation
// (the transport decides when a departed client cancels the call),
// bounded by timeout (none when it is not positive), and registered under
// the call's id so that notifications/cancelled and the session's end
// reach it. ok is false when the session has ended; the caller must
// Untrack the id when the call is over.
func (s *Session) CallContext(parent context.Context, id wire.ID, timeout time.Duration) (ctx context.Context, cancel context.CancelFunc, ok bool) {
	ctx = context.WithoutCancel(parent)
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	if id.IsZero() {
		if s.isEnded() {
			cancel()
			return nil, nil, false
		}
		return ctx, cancel, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		cancel()
		return nil, nil, false
	}
	if s.inflight == nil {
		s.inflight = map[wire.ID]context.CancelFunc{}
	}
	s.inflight[id] = cancel
	return ctx, cancel, true
}

func (s *Session) isEnded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

// Untrack forgets a call's registration.
func (s *Session) Untrack(id wire.ID) {
	s.mu.Lock()
	delete(s.inflight, id)
	s.mu.Unlock()
}

// Cancel cancels the context of the call with that id, if it runs.
func (s *Session) Cancel(id wire.ID) {
	s.mu.Lock()
	c := s.inflight[id]
	s.mu.Unlock()
	if c != nil {
		c()
	}
}

// CancelCalls cancels the context of every call in flight; the session
// goes on, and the calls' answers (their cancellation) go out.
func (s *Session) CancelCalls() {
	s.mu.Lock()
	cancels := make([]context.CancelFunc, 0, len(s.inflight))
	for _, c := range s.inflight {
		cancels = append(cancels, c)
	}
	s.mu.Unlock()
	for _, c := range cancels {
		c()
	}
}

// End ends the session: Done closes, every call's context is cancelled,
// every server→client request waiting for an answer fails. It reports
// false when the session had already ended.
func (s *Session) End() bool {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return false
	}
	s.ended = true
	close(s.done)
	cancels := make([]context.CancelFunc, 0, len(s.inflight))
	for _, c := range s.inflight {
		cancels = append(cancels, c)
	}
	s.mu.Unlock()
	for _, c := range cancels {
		c()
	}
	return true
}

// Snapshot reads the handler state. A streaming or fast call runs on it
// and its returned state is discarded; a stateful call reads it in its
// turn and stores what it returns.
func (s *Session) Snapshot() any {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	return s.state
}

// ErrOverloaded answers a stateful call when QueueSize calls already wait
// for their turn.
var ErrOverloaded = wire.NewError(wire.InternalError, "Server overloaded: too many requests queued in this session")

// Dispatch serves a call on the engine with the session's state: a
// stateful method in the session's turn, one at a time in arrival order,
// its returned state kept (then saved runs, when not nil); any other on a
// snapshot. The reply's effect is applied before Dispatch returns.
func (s *Session) Dispatch(ctx context.Context, eng protocol.Engine, call *protocol.Call, mode protocol.Mode, saved func()) protocol.Reply {
	var reply protocol.Reply
	if mode != protocol.ModeStateful {
		reply = eng.Dispatch(ctx, call, s.Snapshot())
	} else {
		if jerr := s.acquire(ctx); jerr != nil {
			return protocol.Reply{Err: jerr}
		}
		reply = eng.Dispatch(ctx, call, s.Snapshot())
		s.stateMu.Lock()
		s.state = reply.State
		s.stateMu.Unlock()
		if saved != nil {
			saved()
		}
		<-s.slot
	}
	s.Apply(&reply.Effect)
	return reply
}

// acquire waits for the session's turn, within the queue bound.
func (s *Session) acquire(ctx context.Context) *wire.Error {
	s.stateMu.Lock()
	if s.slot == nil {
		s.slot = make(chan struct{}, 1)
	}
	slot := s.slot
	s.stateMu.Unlock()
	if int(s.waiting.Add(1)) > s.queue {
		s.waiting.Add(-1)
		return ErrOverloaded
	}
	defer s.waiting.Add(-1)
	select {
	case slot <- struct{}{}:
		return nil
	case <-ctx.Done():
		if ctx.Err() == context.DeadlineExceeded {
			return protocol.ErrTimeout
		}
		return protocol.ErrCancelled
	}
}

// Turn reports how many stateful calls wait for their turn, and whether
// one holds it.
func (s *Session) Turn() (waiting int, busy bool) {
	s.stateMu.Lock()
	busy = len(s.slot) > 0
	s.stateMu.Unlock()
	return int(s.waiting.Load()), busy
}

// Deliver routes a client's response to the server→client request that
// waits for it; a response nobody waits for (it came too late) is
// dropped. It copies what it keeps: the message may alias a buffer that
// is reused once it returns.
func (s *Session) Deliver(msg *wire.Message) {
	n, ok := msg.ID.IntValue()
	if !ok {
		return
	}
	s.mu.Lock()
	ch := s.pending[n]
	delete(s.pending, n)
	s.mu.Unlock()
	if ch == nil {
		return
	}
	var o outcome
	if msg.Kind == wire.KindResponse {
		o.result = append(json.RawMessage(nil), msg.Result...)
	} else if msg.Error != nil {
		e := *msg.Error
		if raw, ok := e.Data.(json.RawMessage); ok {
			e.Data = append(json.RawMessage(nil), raw...)
		}
		o.err = &e
	}
	ch <- o
}

// Request sends a server→client request and waits for the client's
// answer: send publishes the encoded request (its error is returned as
// is); when ctx ends first, send also publishes notifications/cancelled
// for it. A client's error answer is returned as a *wire.Error.
func (s *Session) Request(ctx context.Context, method string, params json.RawMessage, send func(msg []byte) error) (json.RawMessage, error) {
	ch := make(chan outcome, 1)
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return nil, protocol.ErrSessionEnded
	}
	s.nextReq++
	id := s.nextReq
	if s.pending == nil {
		s.pending = map[int64]chan outcome{}
	}
	s.pending[id] = ch
	s.mu.Unlock()
	forget := func() {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
	}
	if err := send(wire.AppendRequest(nil, wire.Int(id), method, params)); err != nil {
		forget()
		return nil, err
	}
	select {
	case o := <-ch:
		if o.err != nil {
			return nil, o.err
		}
		return o.result, nil
	case <-ctx.Done():
		forget()
		// Tell the client to stop working on it.
		p := jsonstr.AppendString([]byte(`{"requestId":`+strconv.FormatInt(id, 10)+`,"reason":`), ctx.Err().Error())
		_ = send(wire.AppendNotification(nil, "notifications/cancelled", append(p, '}')))
		return nil, ctx.Err()
	case <-s.done:
		forget()
		return nil, protocol.ErrSessionEnded
	}
}

// ErrClosed is what a send reports for a stream that is gone.
var ErrClosed = errors.New("mcp: the stream is closed")
