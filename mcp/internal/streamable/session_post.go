package streamable

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	core "github.com/saguaro-go/saguaro/mcp/internal/session"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

var (
	errSessionNotFound      = wire.NewError(wire.InvalidRequest, "Session not found")
	errAlreadyInitialized   = wire.NewError(wire.InvalidRequest, "Invalid Request: the session is already initialized")
	errTooManySessions      = wire.NewError(wire.InternalError, "Service Unavailable: too many sessions")
	errStoreUnavailable     = wire.NewError(wire.InternalError, "Service Unavailable: the session store did not answer")
	jsonrpcNotAcceptableSSE = wire.NewError(wire.InvalidRequest, "Not Acceptable: Accept must list text/event-stream")
)

// initialize serves an initialize without a session: it creates one.
func (tab *sessionTable) initialize(r *controller.Request, msg *wire.Message) controller.Reply {
	if tab.t.closing() {
		return shuttingDown(msg.ID)
	}
	if tab.count() >= tab.opts.MaxSessions {
		h := jsonHeader()
		h.Set("Retry-After", "5")
		return controller.Buffered(http.StatusServiceUnavailable, h,
			wire.AppendErrorResponse(nil, msg.ID, errTooManySessions))
	}
	t := tab.t
	t.callAttrs(r.Request, msg, 0)
	call := t.callOf(r.Request, msg, 0)
	reply := t.engine.Dispatch(r.Context(), &call, nil)
	if reply.Err != nil || reply.Effect.Kind != protocol.EffectInitialize {
		return t.answer(r.Request, msg, &reply)
	}
	s, err := tab.add(r.Request, reply.Effect.Revision, reply.Effect.Client, reply.State)
	if err == errCallerFull {
		return tooManyReply(30, wire.AppendErrorResponse(nil, msg.ID, errCallerSessions))
	}
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
	t.attrs(r.Context(), slog.String(protocol.AttrSession, s.id))
	out := t.engine.AppendReply(nil, msg.ID, reply)
	return controller.Buffered(http.StatusOK, s.sessionHeader(jsonHeader()), out)
}

// post serves one message of a session.
func (s *session) post(r *controller.Request, rev protocol.Revision, msg *wire.Message, body bodyRef) controller.Reply {
	t := s.tab.t
	switch msg.Kind {
	case wire.KindResponse, wire.KindErrorResponse:
		t.attrs(r.Context(), slog.String(protocol.AttrSession, s.id))
		s.Deliver(msg)
		return controller.Status(http.StatusAccepted)
	}
	if msg.Kind == wire.KindRequest && t.closing() {
		// No new call on a session being released; its notifications
		// (a cancellation) still reach the calls that run.
		return shuttingDown(msg.ID)
	}
	if msg.Method == "initialize" {
		t.attrs(r.Context(), slog.String(protocol.AttrSession, s.id))
		if msg.Kind == wire.KindNotification {
			return controller.Status(http.StatusAccepted)
		}
		return controller.Buffered(http.StatusBadRequest, jsonHeader(),
			wire.AppendErrorResponse(nil, msg.ID, errAlreadyInitialized))
	}
	t.callAttrsIn(r.Request, msg, s.Revision(), s.id) // the session's id first, in one SetAttrs
	if refused := t.authorize(r.Request, msg); refused != nil {
		return refused
	}
	if t.cfg.Scopes != nil {
		s.regrant(r.Context())
	}
	if t.cfg.StepUp != nil && msg.Kind == wire.KindRequest {
		call := s.Call(msg, nil)
		call.Session, call.Identity = s.id, s.identity
		if refused := t.stepUp(r.Request, &call); refused != nil {
			return refused
		}
	}
	info, known := t.engine.Method(msg.Method)
	if known && info.Mode == protocol.ModeStreaming && msg.Kind == wire.KindRequest && !t.cfg.JSONResponse {
		return s.streamingCall(r, msg, body)
	}
	reply := s.dispatchSync(r.Request, msg)
	if reply != nil && reply.Err == errSessionNotFound {
		// The session ended between lookup and dispatch.
		return errorReply(http.StatusNotFound, errSessionNotFound)
	}
	return t.answer(r.Request, msg, reply)
}

// regrant tells the session's client that its lists changed when the
// scopes its caller holds did (a token that stepped up, or one with
// fewer scopes), for the lists that hide items from some callers: what it
// may see changed, though the lists did not.
func (s *session) regrant(ctx context.Context) {
	t := s.tab.t
	lists := t.engine.HiddenLists()
	if len(lists) == 0 {
		return
	}
	grants := grantsOf(t.cfg.Scopes(ctx))
	s.mu.Lock()
	changed := grants != s.grants
	s.grants = grants
	s.mu.Unlock()
	if !changed {
		return
	}
	st := s.standalone()
	for _, c := range lists {
		st.emit(wire.AppendNotification(nil, c.Notification(), nil))
	}
}

// grantsOf is a set of scopes as one comparable string.
func grantsOf(scopes []string) string {
	scopes = slices.Clone(scopes)
	slices.Sort(scopes)
	return strings.Join(scopes, " ")
}

// dispatchSync serves a message on the connection's goroutine and returns
// its reply (for a request) after applying its effect. Stateful callbacks
// take the session's turn; fast ones never wait.
func (s *session) dispatchSync(r *http.Request, msg *wire.Message) *protocol.Reply {
	t := s.tab.t
	switch msg.Kind {
	case wire.KindResponse, wire.KindErrorResponse:
		s.Deliver(msg)
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
		s.untrack(msg.ID)
	}()
	call := s.Call(msg, &sessionOutbound{s: s})
	call.Session, call.Identity = s.id, s.identity
	info, _ := t.engine.Method(msg.Method)
	var saved func()
	if t.cfg.Codec.Movable() {
		saved = s.save // the new state, for a replica that takes over
	}
	reply := s.Dispatch(ctx, t.engine, &call, info.Mode, saved)
	if reply.Err == core.ErrOverloaded && t.cfg.Observer != nil {
		t.cfg.Observer.QueueOverflow()
	}
	s.applied(&reply.Effect)
	return &reply
}
