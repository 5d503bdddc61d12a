package streamable

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
	"github.com/saguaro-go/saguaro/sse"
)

// Running calls. A call that cannot emit anything before its result is
// served on the connection's goroutine and answered as JSON. A call that
// may emit (progress, log messages, server→client requests) runs on a
// worker while its connection waits for its first output: the result
// alone is answered as JSON, anything else turns the response into an
// event stream.
//
// Why a worker, and not the connection's own goroutine writing the event
// stream's head at the call's first emission: the connection must be free
// to end its response while the call goes on (Request.CloseStream), which
// the goroutine running the call cannot do. Running session calls inline
// was measured, too: one connection calling in sequence saved 10–15% of
// the time per call (the hop wakes an idle thread), but under load, with
// every core busy, it saved no CPU per call and allocated more. With the
// server on one CPU neither variant paid either: the call run on the
// connection's goroutine with its stream, and the call answered there
// without a stream (as a method that cannot stream is), each cost 1–9%
// more CPU per call than the hand-off, which is not where a session
// call's cost over a stateless one lies.

// streamingCall runs a call that may emit progress, logs or server→client
// requests on its own goroutine. Its connection waits for the first thing
// the call sends: the result alone is answered as JSON; anything else
// turns the response into an event stream that carries it, then the rest,
// then the result.
func (s *session) streamingCall(r *controller.Request, msg *wire.Message, body bodyRef) controller.Reply {
	ctx, cancel, ok := s.callContext(r.Context(), msg.ID)
	if !ok {
		return errorReply(http.StatusNotFound, errSessionNotFound)
	}
	mb := r.Mailbox()
	// One allocation carries the call to its worker, with its response
	// stream and the request's body, which the call keeps (its params
	// point into it) and puts back when it ends.
	sc := &sessionCall{s: s, ctx: ctx, cancel: cancel}
	st := &sc.st
	s.newCallStream(st, mb, cancel, msg.ID)
	sc.out.st = st
	sc.call = s.Call(msg, &sc.out)
	sc.call.Session, sc.call.Identity = s.id, s.identity
	if sc.body = body.take(); sc.body == nil {
		sc.call.Params = append(json.RawMessage(nil), msg.Params...)
		sc.call.Tape = nil
	}
	sc.state = s.Snapshot()
	s.tab.t.workers.run(sc)

	return s.tab.t.answerFirst(r, func() {
		// The client left before anything was sent: it has no event id
		// to resume from, so the call is cancelled.
		cancel()
		st.detach(mb, false)
	}, func() controller.Reply {
		sc.conn = connState{st: st, mb: mb, prime: st.primingFrame(0), ctx: r.Context()}
		return st.streamReply(r, &sc.conn)
	})
}

// answerFirst waits for a call's first output in its connection's
// mailbox: its answer alone (callDone) is answered as JSON, anything
// else (streamStarted) with stream(). When the client leaves first, leave
// runs and the answer is 503, which nobody reads.
func (t *Transport) answerFirst(r *controller.Request, leave func(), stream func() controller.Reply) controller.Reply {
	first, err := r.Mailbox().Receive(r.Context())
	if err != nil {
		leave()
		return controller.Status(http.StatusServiceUnavailable)
	}
	switch m := first.(type) {
	case *callDone:
		t.errorCode(r.Context(), m.code)
		return jsonAnswer(m.status, m.body, m.release)
	case streamStarted:
		return stream()
	}
	leave()
	return controller.Status(http.StatusInternalServerError)
}

// sessionCall is a streaming call on its way to a worker. Its stream
// lives on in the session after the call when a client may still resume
// it, and the rest of sessionCall with it: run lets go of what the call
// no longer needs.
type sessionCall struct {
	s      *session
	ctx    context.Context
	cancel context.CancelFunc
	st     stream
	conn   connState // the POST connection's, once it streams
	out    streamOutbound
	call   protocol.Call
	state  any
	body   *[]byte // the request's body, which call.Params point into
	answer callDone
}

func (sc *sessionCall) run() {
	s, t := sc.s, sc.s.tab.t
	defer func() {
		sc.cancel()
		s.untrack(sc.call.ID)
		wire.PutBuffer(sc.body)
		sc.ctx, sc.state, sc.body = nil, nil, nil
	}()
	reply := t.engine.Dispatch(sc.ctx, &sc.call, sc.state)
	s.apply(&reply.Effect)
	sc.answer = callDone{body: t.engine.AppendReply(nil, sc.call.ID, reply), status: http.StatusOK, release: reply.Buffer}
	if reply.Err != nil {
		sc.answer.code = reply.Err.Code
	}
	sc.st.finish(&sc.answer)
}

// workerPool runs the calls that get their own goroutine (a session's
// streaming calls, a call's own stream without a session); each
// transport has one. A fresh goroutine starts with a small stack that a
// tool call (schema validation, JSON encoding) grows by copying it
// several times: that was a tenth of the CPU of a session tools/call
// under load. A worker that just finished a call keeps its grown stack
// for the next one; workers are made on demand, one per concurrent call,
// and exit once a whole workerIdle period passed without work (between
// one and two periods after their last call). A worker's timer fires
// once a period rather than being reset after every call, which made a
// hand-off to an idle worker cost a good part more CPU.

// workerIdle is the period at the end of which a worker that ran no call
// in it exits. Short, so that a quiet server holds no goroutines for long
// (and goleak-style checks settle quickly); under load a worker is reused
// within microseconds.
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
	tick := make(chan struct{}, 1)
	idle := time.AfterFunc(workerIdle, func() { tick <- struct{}{} })
	defer idle.Stop()
	busy := false // a call ran since the timer was set
	for {
		select {
		case j = <-p.work:
			j.run()
			busy = true
		case <-tick:
			if !busy {
				return
			}
			busy = false
			idle.Reset(workerIdle)
		}
	}
}

// Messages of a call's own stream, besides streamStarted and callDone.
type (
	callFrame struct{ data []byte } // one message on the stream
	callFinal struct {              // the response, last on the stream
		data []byte
		code int // its JSON-RPC error code, 0 for a result
	}
)

// ownedCall is a transport's own Call with room for what it read of the
// params.
type ownedCall struct {
	protocol.Call
	tool protocol.ToolCall
}

// quietCall serves a call that cannot emit anything before its result
// synchronously, as JSON.
func (t *Transport) quietCall(r *controller.Request, call *protocol.Call, encodeErr func(wire.ID, *wire.Error) ([]byte, int)) controller.Reply {
	ctx := r.Context()
	call.Outbound = protocol.Discard{}
	reply := t.dispatchAlone(ctx, call)
	if reply.Err != nil {
		t.attrs(ctx, slog.Int(protocol.AttrErrorCode, reply.Err.Code))
		body, status := encodeErr(call.ID, reply.Err)
		return controller.BufferedType(status, contentJSON, body)
	}
	return jsonAnswer(http.StatusOK, t.engine.AppendReply(nil, call.ID, reply), reply.Buffer)
}

// dispatchAlone serves a call that has no session, on a state of its own.
func (t *Transport) dispatchAlone(ctx context.Context, call *protocol.Call) protocol.Reply {
	state, err := t.engine.NewState(ctx, call.Revision)
	if err != nil {
		t.log.ErrorContext(ctx, "mcp: handler could not make a state", slog.Any("err", err))
		return protocol.Reply{Err: protocol.ErrInternal}
	}
	return t.engine.Dispatch(ctx, call, state)
}

// oneCallStream runs call on its own goroutine with a back channel that
// streams on this request's own response: the connection waits for the
// call's first output and answers JSON when the result comes first, or
// turns into an event stream that carries the call's notifications and
// ends with its result. Closing the stream cancels the call (there is no
// session to resume it in). encodeErr writes an error answer and its HTTP
// status (the eras differ there). It serves the 2026-07-28 era and the
// stateless legacy calls that ask for progress.
func (t *Transport) oneCallStream(r *controller.Request, call *protocol.Call, encodeErr func(wire.ID, *wire.Error) ([]byte, int)) controller.Reply {
	ctx, cancel := context.WithCancel(r.Context())
	mb := r.Mailbox()
	out := &callOutbound{mb: mb}
	call.Outbound = out
	t.workers.run(jobFunc(func() {
		defer cancel()
		reply := t.dispatchAlone(ctx, call)
		if reply.Err != nil {
			body, status := encodeErr(call.ID, reply.Err)
			out.finish(body, status, nil, reply.Err.Code)
			return
		}
		out.finish(t.engine.AppendReply(nil, call.ID, reply), http.StatusOK, reply.Buffer, 0)
	}))
	return t.answerFirst(r, cancel, func() controller.Reply { // the client left: closing is cancelling
		h := http.Header{}
		sse.Headers(h)
		mb.Every(t.keepAlive(), keepAlive{})
		return controller.Loop(http.StatusOK, h, callConn{cancel: cancel, t: t, ctx: r.Context()}, handleCallConn)
	})
}

// callConn is the loop state of a call's own event stream.
type callConn struct {
	cancel context.CancelFunc
	t      *Transport
	ctx    context.Context // the request's, for its log line
}

// handleCallConn is the loop of a call's own event stream.
func handleCallConn(info any, push controller.Push, c callConn) (callConn, controller.Action) {
	switch m := info.(type) {
	case callFrame:
		ev := sse.Event{Data: m.data}
		frame, _ := ev.AppendTo(nil)
		_ = push(frame)
	case callFinal:
		c.t.errorCode(c.ctx, m.code)
		ev := sse.Event{Data: m.data}
		frame, _ := ev.AppendTo(nil)
		return c, controller.Stop(frame)
	case keepAlive:
		_ = push(sse.AppendComment(nil, ""))
	case controller.Disconnect:
		c.cancel()
	}
	return c, controller.Continue
}

// keepAlive is the keep-alive interval of event streams.
func (t *Transport) keepAlive() time.Duration {
	if t.cfg.KeepAlive > 0 {
		return t.cfg.KeepAlive
	}
	return 25 * time.Second
}

// wantsProgress reports whether a request's params carry
// _meta.progressToken: the caller asked to hear how the call goes.
func wantsProgress(params json.RawMessage) bool {
	found := false
	_ = wire.EachMember(params, func(k, v []byte) error {
		if wire.KeyIs(k, "_meta") && len(v) > 0 && v[0] == '{' {
			_ = wire.EachMember(v, func(k, _ []byte) error {
				if wire.KeyIs(k, "progressToken") {
					found = true
				}
				return nil
			})
		}
		return nil
	})
	return found
}

// statelessStreaming reports whether a stateless legacy request is served
// on its own goroutine so that what it emits can stream: a streaming
// method whose caller asked for progress, from a client that accepts an
// event stream, unless JSONResponse is set. Everything else takes the
// synchronous path and is answered as JSON, its notifications dropped:
// without a session a caller has no other way to ask for them, and the
// synchronous path is the fast one.
func (t *Transport) statelessStreaming(msg *wire.Message) bool {
	if t.cfg.JSONResponse || msg.Kind != wire.KindRequest {
		return false
	}
	info, ok := t.engine.Method(msg.Method)
	return ok && info.Mode == protocol.ModeStreaming && wantsProgress(msg.Params)
}

// statelessCall runs a stateless legacy call on its own goroutine (see
// oneCallStream): its progress and log notifications stream on the
// response and the result ends it; a call that emits nothing is answered
// as JSON.
func (t *Transport) statelessCall(r *controller.Request, rev protocol.Revision, msg *wire.Message) controller.Reply {
	call := t.callOf(r.Request, msg, rev)
	call.Params = append(json.RawMessage(nil), msg.Params...) // the body is reused once Handle returns
	return t.oneCallStream(r, &call, func(id wire.ID, e *wire.Error) ([]byte, int) {
		return wire.AppendErrorResponse(nil, id, e), http.StatusOK
	})
}
