package streamable

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp/cluster"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// Config configures a Transport. Zero fields take the defaults.
type Config struct {
	// Engine serves the protocol. Required.
	Engine protocol.Engine
	// Codec saves and restores the handler state of sessions that move
	// between replicas. Required when Sessions is set.
	Codec StateCodec
	// Cluster is where sessions are recorded and their GET streams
	// logged, and how this replica hears of the others. Required (a
	// cluster.Memory member for one process).
	Cluster cluster.Cluster
	// Sessions turns on stateful sessions; nil serves every POST on its
	// own.
	Sessions *SessionConfig
	// JSONResponse answers every POST with application/json.
	JSONResponse bool
	// MaxBodyBytes bounds a POST body (413 beyond it).
	MaxBodyBytes int64
	// Allowed says whether a request's Origin and Host may reach the
	// endpoint (DNS rebinding protection); nil allows every request.
	Allowed func(*http.Request) bool
	// Identity returns who is calling; nil means anonymous.
	Identity func(*http.Request) string
	// Authorize may refuse a request; nil lets everything through.
	Authorize func(r *http.Request, method, name string) http.Handler
	// Scopes reports the scopes a request's caller holds; nil: none
	// (and no session's scopes change).
	Scopes func(context.Context) []string
	// StepUp answers a call whose caller lacks scopes to use what it
	// names (Engine.StepUp), instead of dispatching it; nil dispatches
	// every call.
	StepUp func(w http.ResponseWriter, r *http.Request, id wire.ID, scopes []string)
	// Attrs receives log attributes about each call; nil drops them.
	Attrs func(ctx context.Context, attrs ...slog.Attr)
	// Logger receives transport trouble. Required.
	Logger *slog.Logger
	// WriteTimeout bounds each write to a client.
	WriteTimeout time.Duration
	// KeepAlive is the interval of keep-alive comments on event streams.
	KeepAlive time.Duration
	// MaxListeners bounds the open subscriptions/listen streams of the
	// endpoint (429 beyond it).
	MaxListeners int
	// Limits bounds what each caller holds, and how long a body may take.
	Limits Limits
	// Observer hears sessions, streams, queue overflows and relays, for
	// telemetry; nil hears nothing.
	Observer Observer
	// Standalone says that no other replica can take a session over
	// (Cluster is this process's alone): Shutdown ends the sessions, and
	// a request for one afterwards gets 404.
	Standalone bool
}

// Observer is what telemetry hears of the transport. Its methods must not
// block.
type Observer interface {
	// SessionOpened: a session started here (created or taken over).
	SessionOpened(rev protocol.Revision)
	// SessionClosed: a session that started here ended after d.
	SessionClosed(rev protocol.Revision, d time.Duration, reason CloseReason)
	// StreamOpened and StreamClosed: an event stream with no call behind
	// it (a session's GET stream, subscriptions/listen) opened or closed.
	StreamOpened()
	StreamClosed()
	// QueueOverflow: a stateful call was refused, its session's queue
	// full.
	QueueOverflow()
	// Relay starts what a request relayed to replica owner reports; body
	// is the request's. inject writes the relay's trace context into the
	// relayed request's headers; end ends it.
	Relay(ctx context.Context, body []byte, owner string) (rctx context.Context, inject func(http.Header), end func(status int))
	// Relayed returns the context to serve a relayed request in: ctx with
	// the trace context of the relaying replica's headers.
	Relayed(ctx context.Context, h http.Header) context.Context
}

// StateCodec saves and restores a session's handler state.
type StateCodec interface {
	// EncodeState encodes a state; movable is false when the handler
	// keeps state it cannot encode (the session cannot move).
	EncodeState(state any) (data []byte, movable bool, err error)
	// DecodeState restores an encoded state.
	DecodeState(data []byte) (any, error)
	// Movable reports whether the handler's state can be encoded at all:
	// when it cannot, a stateful callback does not save the session.
	Movable() bool
}

// Transport is the Streamable HTTP transport: one http.Handler serving
// POST, GET and DELETE on one endpoint, every decoded message handed to
// the engine.
type Transport struct {
	engine protocol.Engine
	cfg    Config
	log    *slog.Logger
	allow  string // the Allow header of a 405
	// tasks: the engine serves the tasks extension, whose requests may
	// need relaying to the replica that runs the task.
	tasks    bool
	sessions *sessionTable
	cluster  cluster.Cluster
	self     cluster.Replica
	// changes fans registry changes out to subscriptions/listen streams:
	// this replica's own changes and the other replicas', as the cluster
	// tells them (NoticeChange).
	changes changeHub
	// handler is the endpoint itself (a relay that finds the owner gone
	// serves the request again here); relay is the relays' HTTP client.
	handler http.Handler
	relay   *http.Transport
	// owners remembers where other replicas' sessions run, and where
	// the other replicas listen.
	owners *owners
	// workers run the calls that get a goroutine of their own.
	workers workerPool
	// listeners counts the open subscriptions/listen streams.
	listeners listenLimits
	// callers counts what each caller holds.
	callers callers
	// calls counts the session calls in flight, for Shutdown.
	calls callCount
	// draining: Drain or Shutdown was called; shutdown: Shutdown was.
	draining, shutdown atomic.Bool
	stop               []func()
	stopOnce           sync.Once
}

// New builds a Transport.
func New(cfg Config) *Transport {
	t := &Transport{engine: cfg.Engine, cfg: cfg, log: cfg.Logger, workers: workerPool{work: make(chan job)}}
	t.calls.idle = make(chan struct{})
	if m, ok := t.engine.Method("tasks/get"); ok && m.Offered {
		t.tasks = true
	}
	t.allow = "POST"
	t.cluster = cfg.Cluster
	t.self = t.cluster.Self()
	t.relay = newRelayTransport()
	t.owners = newOwners(ownersBound(cfg.Sessions))
	if cfg.Sessions != nil {
		t.allow = "GET, POST, DELETE"
		t.sessions = newSessionTable(t, cfg.Sessions)
	}
	t.stop = append(t.stop, t.cluster.Watch(t.notice))
	t.stop = append(t.stop, t.engine.OnChange(t.changed))
	t.handler = controller.New(t, &controller.Options{
		Logger:       t.log,
		WriteTimeout: cfg.WriteTimeout,
		MailboxSize:  256,
	})
	return t
}

// ServeHTTP implements http.Handler. It answers what needs no decoding
// at once: a method it does not serve (405), an Origin or Host it does
// not allow (403), a POST from a caller with too many in flight (429).
// A POST's body must then arrive within Limits.BodyTimeout.
func (t *Transport) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
	case http.MethodGet, http.MethodDelete:
		if t.sessions != nil {
			break
		}
		fallthrough
	default:
		w.Header().Set("Allow", t.allow)
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if t.cfg.Allowed != nil && !t.cfg.Allowed(r) {
		writeError(w, http.StatusForbidden, errForbidden)
		return
	}
	if r.Method == http.MethodPost {
		c := t.callerOf(r)
		if !t.callers.acquire(c, holdCall, t.cfg.Limits.Calls) {
			tooMany(w, 1, errTooManyCalls)
			return
		}
		defer t.callers.release(c, holdCall)
		t.bodyDeadline(w, r)
	}
	if t.cfg.Observer != nil && r.Header.Get(relayHeader) != "" {
		r = r.WithContext(t.cfg.Observer.Relayed(r.Context(), r.Header))
	}
	t.handler.ServeHTTP(w, r)
}

var errForbidden = wire.NewError(wire.InvalidRequest, "Forbidden: Origin or Host not allowed")

// Sessions returns how many sessions are live.
func (t *Transport) Sessions() int {
	if t.sessions == nil {
		return 0
	}
	return t.sessions.count()
}

// changed hears a change of this replica's handler: the cluster tells
// every replica of it, this one included (notice).
func (t *Transport) changed(c protocol.Change) {
	if frame := changeFrame(c); frame != nil {
		uri := ""
		if c.Kind == protocol.ResourceUpdated {
			uri = c.URI
		}
		t.cluster.Announce(cluster.Change{Notification: c.Notification(), URI: uri}, frame)
	}
}

// notice handles what the cluster tells this replica.
func (t *Transport) notice(n cluster.Notice) {
	if n.Kind == cluster.NoticeChange {
		if c, ok := protocol.ChangeOf(n.Change.Notification, n.Change.URI); ok {
			t.changes.fire(c)
		}
	}
	if t.sessions == nil || n.Kind == cluster.NoticeReset && t.closing() {
		// A replica shutting down records nothing again: its
		// sessions are being released.
		return
	}
	t.sessions.notice(n)
}

// changeHub is a set of change listeners.
type changeHub struct {
	mu   sync.Mutex
	next int
	fns  map[int]func(protocol.Change)
}

// add registers fn; the returned function removes it.
func (h *changeHub) add(fn func(protocol.Change)) (remove func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fns == nil {
		h.fns = map[int]func(protocol.Change){}
	}
	id := h.next
	h.next++
	h.fns[id] = fn
	return func() {
		h.mu.Lock()
		delete(h.fns, id)
		h.mu.Unlock()
	}
}

func (h *changeHub) fire(c protocol.Change) {
	h.mu.Lock()
	fns := make([]func(protocol.Change), 0, len(h.fns))
	for _, fn := range h.fns {
		fns = append(fns, fn)
	}
	h.mu.Unlock()
	for _, fn := range fns {
		fn(c)
	}
}

// Handle serves one request that passed ServeHTTP's checks.
func (t *Transport) Handle(r *controller.Request) controller.Reply {
	switch r.Method {
	case http.MethodGet:
		return t.sessions.get(r)
	case http.MethodDelete:
		return t.sessions.delete(r)
	}
	return t.post(r)
}

// errorReply answers with an HTTP status and a JSON-RPC error with a null
// id, which MCP clients know how to read.
func errorReply(status int, e *wire.Error) controller.Reply {
	body := wire.AppendErrorResponse(nil, wire.ID{}, e)
	return controller.BufferedType(status, contentJSON, body)
}

// contentJSON is the Content-Type of a JSON answer (controller.BufferedType).
const contentJSON = "application/json"

func jsonHeader() http.Header {
	return http.Header{"Content-Type": {"application/json"}}
}

// attrs reports attributes of the request ctx belongs to to the log
// hook. It is called on the request's goroutine (or one it waits for),
// before the request's handler returns: the hook, httplog.SetAttrs, is not
// safe for concurrent use.
func (t *Transport) attrs(ctx context.Context, attrs ...slog.Attr) {
	if t.cfg.Attrs != nil {
		t.cfg.Attrs(ctx, attrs...)
	}
}

// errorCode reports a call's JSON-RPC error code, if it failed.
func (t *Transport) errorCode(ctx context.Context, code int) {
	if code != 0 {
		t.attrs(ctx, slog.Int(protocol.AttrErrorCode, code))
	}
}

// SessionInfo is a snapshot of a live session's bookkeeping, which the
// endpoint's tests read.
type SessionInfo struct {
	// Streams maps each stream's id (0 is the GET stream) to whether a
	// connection is attached to it.
	Streams map[int64]bool
	// Holds counts the calls and streams that keep the session from
	// being reaped; Inflight the calls that can be cancelled.
	Holds, Inflight int
	// Waiting counts the stateful callbacks waiting for their turn;
	// Turn is true while one runs.
	Waiting int
	Turn    bool
}

// Session describes live session id; false when there is none.
func (t *Transport) Session(id string) (SessionInfo, bool) {
	if t.sessions == nil {
		return SessionInfo{}, false
	}
	t.sessions.mu.RLock()
	s := t.sessions.m[id]
	t.sessions.mu.RUnlock()
	if s == nil {
		return SessionInfo{}, false
	}
	waiting, turn := s.Turn()
	s.mu.Lock()
	defer s.mu.Unlock()
	info := SessionInfo{Streams: map[int64]bool{}, Holds: s.holds, Waiting: waiting, Turn: turn}
	for id, st := range s.streams {
		info.Streams[id] = st.mb != nil
	}
	return info, true
}
