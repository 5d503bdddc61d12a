package streamable

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
	"github.com/saguaro-go/saguaro/sse"
)

var (
	errSessionNotFound      = wire.NewError(wire.InvalidRequest, "Session not found")
	errAlreadyInitialized   = wire.NewError(wire.InvalidRequest, "Invalid Request: the session is already initialized")
	errOverloaded           = wire.NewError(wire.InternalError, "Server overloaded: too many requests queued in this session")
	errTooManySessions      = wire.NewError(wire.InternalError, "Service Unavailable: too many sessions")
	errStoreUnavailable     = wire.NewError(wire.InternalError, "Service Unavailable: the session store did not answer")
	jsonrpcNotAcceptableSSE = wire.NewError(wire.InvalidRequest, "Not Acceptable: Accept must list text/event-stream")
)

func slogString(k, v string) slog.Attr  { return slog.String(k, v) }
func slogInt(k string, v int) slog.Attr { return slog.Int(k, v) }
func itoa(n int64) string               { return strconv.FormatInt(n, 10) }

func jsonrpcError(msg string) *wire.Error { return wire.NewError(wire.InvalidRequest, msg) }

func sseLastEventID(r *http.Request) string { return sse.LastEventID(r) }

// initialize serves an initialize without a session: it creates one.
func (tab *sessionTable) initialize(r *controller.Request, msg *wire.Message) controller.Reply {
	if tab.count() >= tab.opts.MaxSessions {
		h := jsonHeader()
		h.Set("Retry-After", "5")
		return controller.Buffered(http.StatusServiceUnavailable, h,
			wire.AppendErrorResponse(nil, msg.ID, errTooManySessions))
	}
	t := tab.t
	t.callAttrs(r.Request, msg, 0)
	call := callOf(msg, 0)
	reply := t.engine.Dispatch(r.Context(), &call, nil)
	if reply.Err != nil || reply.Effect.Kind != protocol.EffectInitialize {
		return t.answer(r.Request, msg, &reply)
	}
	s, err := tab.add(r.Request, reply.Effect.Revision, reply.Effect.Client, reply.State)
	if err != nil {
		e, retry := errTooManySessions, "5"
		if err != errTableFull {
			t.log.ErrorContext(r.Context(), "mcp: the cluster could not record a new session", slog.Any("err", err))
			e, retry = errStoreUnavailable, "1"
		}
		h := jsonHeader()
		h.Set("Retry-After", retry)
		return controller.Buffered(http.StatusServiceUnavailable, h,
			wire.AppendErrorResponse(nil, msg.ID, e))
	}
	t.attrs(r.Context(), slogString(protocol.AttrSession, s.id))
	out := t.engine.AppendReply(nil, msg.ID, &reply)
	return controller.Buffered(http.StatusOK, s.sessionHeader(jsonHeader()), out)
}

// post serves one message of a session.
func (s *session) post(r *controller.Request, rev protocol.Revision, msg *wire.Message) controller.Reply {
	t := s.tab.t
	switch msg.Kind {
	case wire.KindResponse, wire.KindErrorResponse:
		t.attrs(r.Context(), slogString(protocol.AttrSession, s.id))
		s.deliver(msg)
		return controller.Status(http.StatusAccepted)
	}
	if msg.Method == "initialize" {
		t.attrs(r.Context(), slogString(protocol.AttrSession, s.id))
		if msg.Kind == wire.KindNotification {
			return controller.Status(http.StatusAccepted)
		}
		return controller.Buffered(http.StatusBadRequest, jsonHeader(),
			wire.AppendErrorResponse(nil, msg.ID, errAlreadyInitialized))
	}
	t.callAttrsIn(r.Request, msg, s.revision, s.id) // the session's id first, in one SetAttrs
	if refused := t.authorize(r.Request, msg); refused != nil {
		return refused
	}
	info, known := t.engine.Method(msg.Method)
	if known && info.Mode == protocol.ModeStreaming && msg.Kind == wire.KindRequest && !t.cfg.JSONResponse {
		return s.streamingCall(r, msg)
	}
	reply := s.dispatchSync(r.Request, rev, msg)
	if reply != nil && reply.Err == errSessionNotFound {
		// The session ended between lookup and dispatch.
		return errorReply(http.StatusNotFound, errSessionNotFound)
	}
	return t.answer(r.Request, msg, reply)
}

// call builds the engine call of a message in this session.
func (s *session) call(msg *wire.Message, out protocol.Outbound) protocol.Call {
	c := callOf(msg, s.revision)
	c.Client = s.client
	c.LogLevel = protocol.LogLevel(s.logLevel.Load())
	c.Outbound = out
	return c
}

// dispatchSync serves a message on the connection's goroutine and returns
// its reply (for a request) after applying its effect. Stateful callbacks
// take the session's slot; fast ones never wait.
func (s *session) dispatchSync(r *http.Request, _ protocol.Revision, msg *wire.Message) *protocol.Reply {
	t := s.tab.t
	switch msg.Kind {
	case wire.KindResponse, wire.KindErrorResponse:
		s.deliver(msg)
		return nil
	}
	ctx, cancel, ok := s.callContext(r.Context(), msg.ID)
	if !ok {
		return &protocol.Reply{Err: errSessionNotFound}
	}
	// A buffered answer goes back on this connection: if the client
	// leaves, nobody can receive it, so the call stops too.
	stop := context.AfterFunc(r.Context(), cancel)
	defer func() {
		stop()
		cancel()
		if !msg.ID.IsZero() {
			s.untrack(msg.ID)
		}
	}()
	call := s.call(msg, &sessionOutbound{s: s})
	info, _ := t.engine.Method(msg.Method)
	var reply protocol.Reply
	if info.Mode != protocol.ModeStateful {
		reply = t.engine.Dispatch(ctx, &call, s.snapshot())
	} else {
		if jerr := s.acquire(ctx); jerr != nil {
			return &protocol.Reply{Err: jerr}
		}
		reply = t.engine.Dispatch(ctx, &call, s.snapshot())
		s.setState(reply.State)
		if t.cfg.Codec.Movable() {
			s.save() // the new state, for a replica that takes over
		}
		s.releaseSlot()
	}
	s.apply(&reply.Effect)
	return &reply
}

// snapshot reads the handler state. A streaming or fast call runs on it
// and its returned state is discarded; a stateful call reads it holding
// the slot and stores what it returns.
func (s *session) snapshot() any {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	return s.state
}

func (s *session) setState(v any) {
	s.stateMu.Lock()
	s.state = v
	s.stateMu.Unlock()
}

// acquire waits for the session's slot, within the queue bound.
func (s *session) acquire(ctx context.Context) *wire.Error {
	s.stateMu.Lock()
	if s.slot == nil {
		s.slot = make(chan struct{}, 1)
	}
	slot := s.slot
	s.stateMu.Unlock()
	if int(s.waiting.Add(1)) > s.tab.opts.QueueSize {
		s.waiting.Add(-1)
		return errOverloaded
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

func (s *session) releaseSlot() { <-s.slot }

// streamingCall runs a call that may emit progress, logs or server→client
// requests on its own goroutine. Its connection waits for the first thing
// the call sends: the result alone is answered as JSON; anything else
// turns the response into an event stream that carries it, then the rest,
// then the result.
func (s *session) streamingCall(r *controller.Request, msg *wire.Message) controller.Reply {
	ctx, cancel, ok := s.callContext(r.Context(), msg.ID)
	if !ok {
		return errorReply(http.StatusNotFound, errSessionNotFound)
	}
	mb := r.Mailbox()
	st := s.newCallStream(mb, cancel, msg.ID)
	// One allocation carries the call to its worker. The body is reused
	// once Handle returns: the call keeps a copy of the params.
	sc := &sessionCall{s: s, ctx: ctx, cancel: cancel, attrsCtx: r.Context(), st: st}
	sc.out.st = st
	sc.call = s.call(msg, &sc.out)
	sc.call.Params = append(json.RawMessage(nil), msg.Params...)
	sc.state = s.snapshot()
	s.tab.t.workers.run(sc)

	first, err := mb.Receive(r.Context())
	if err != nil {
		// The client left before anything was sent: it has no event id
		// to resume from, so the call is cancelled.
		cancel()
		st.detach(mb, false)
		return controller.Status(http.StatusServiceUnavailable)
	}
	switch m := first.(type) {
	case callDone:
		return controller.BufferedType(http.StatusOK, contentJSON, m.body)
	case streamStarted:
		return st.streamReply(r, &connState{st: st, mb: mb, prime: st.primingFrame(0)})
	}
	return controller.Status(http.StatusInternalServerError)
}

// sessionCall is a streaming call on its way to a worker.
type sessionCall struct {
	s        *session
	ctx      context.Context
	cancel   context.CancelFunc
	attrsCtx context.Context // the POST's, for the log line's attributes
	st       *stream
	out      streamOutbound
	call     protocol.Call
	state    any
}

func (sc *sessionCall) run() {
	s, t := sc.s, sc.s.tab.t
	defer func() {
		sc.cancel()
		s.untrack(sc.call.ID)
	}()
	reply := t.engine.Dispatch(sc.ctx, &sc.call, sc.state)
	s.apply(&reply.Effect)
	if reply.Err != nil {
		t.attrs(sc.attrsCtx, slogInt(protocol.AttrErrorCode, reply.Err.Code))
	}
	sc.st.finish(t.engine.AppendReply(nil, sc.call.ID, &reply))
}

// deliver routes a client's response to the server→client request that
// waits for it; a response nobody waits for (it came too late) is
// dropped.
func (s *session) deliver(msg *wire.Message) {
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
	// The body's buffer is reused once this POST is answered, and the
	// waiting call reads the answer after that: keep copies.
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

// request sends a server→client request on st and waits for the answer.
func (s *session) request(ctx context.Context, st *stream, method string, params json.RawMessage) (json.RawMessage, error) {
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
	frame := wire.AppendRequest(nil, wire.Int(id), method, params)
	published := true
	if st.id == 0 {
		// The GET stream is the cluster's log.
		s.mu.Unlock()
		published = st.publish(frame)
	} else {
		st.emitLocked(frame)
		s.mu.Unlock()
	}
	forget := func() {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
	}
	if !published {
		forget()
		return nil, fmt.Errorf("%s: %w", method, protocol.ErrStoreUnavailable)
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
		params := wire.AppendString([]byte(`{"requestId":`+itoa(id)+`,"reason":`), ctx.Err().Error())
		st.emit(wire.AppendNotification(nil, "notifications/cancelled", append(params, '}')))
		return nil, ctx.Err()
	case <-s.done:
		forget()
		return nil, protocol.ErrSessionEnded
	}
}

// streamOutbound is the back channel of a streaming call: everything goes
// on the call's own stream.
type streamOutbound struct{ st *stream }

func (o *streamOutbound) Notify(ctx context.Context, method string, params json.RawMessage) error {
	if !o.st.emitWait(ctx, wire.AppendNotification(nil, method, params)) {
		return protocol.ErrSessionEnded
	}
	return nil
}

func (o *streamOutbound) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return o.st.s.request(ctx, o.st, method, params)
}

// CloseStream ends the call's current connection without ending its
// stream; see Request.CloseStream.
func (o *streamOutbound) CloseStream(retry time.Duration) bool {
	if o.st.s.revision < protocol.Rev20251125 {
		// Before 2025-11-25 a server should not end a response stream
		// before the response, and clients need not resume one.
		return false
	}
	return o.st.closeConnection(retry)
}

// sessionOutbound is the back channel of a call answered with JSON:
// notifications cannot reach the client on this connection and are
// dropped; server→client requests go on the session's GET stream.
type sessionOutbound struct{ s *session }

func (o *sessionOutbound) Notify(context.Context, string, json.RawMessage) error { return nil }

func (o *sessionOutbound) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return o.s.request(ctx, o.s.standalone(), method, params)
}

// workerPool runs the calls that get their own goroutine (a session's
// streaming calls, a stateless call's stream); each transport has one. A fresh goroutine starts
// with a small stack that a tool call (schema validation, JSON encoding)
// grows by copying it several times: that was a tenth of the CPU of a
// session tools/call under load. A worker that just finished a call keeps
// its grown stack for the next one; workers are made on demand, one per
// concurrent call as before, and exit after workerIdle without work.

// workerIdle is how long an idle worker waits for another call. Short, so
// that a quiet server holds no goroutines for long (and goleak-style
// checks settle quickly); under load a worker is reused within
// microseconds.
const workerIdle = 100 * time.Millisecond

type workerPool struct{ work chan job }

// A job is what a worker runs: a pointer to the call's own state, so
// handing it over allocates nothing more.
type job interface{ run() }

// jobFunc is a func as a job.
type jobFunc func()

func (f jobFunc) run() { f() }

// run runs j on an idle worker, or on a new one.
func (p *workerPool) run(j job) {
	select {
	case p.work <- j:
	default:
		go p.worker(j)
	}
}

func (p *workerPool) worker(j job) {
	j.run()
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		select {
		case j = <-p.work:
			j.run()
			idle.Reset(workerIdle)
		case <-idle.C:
			return
		}
	}
}
