package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// SessionOptions configures stateful sessions ([Options.Sessions]). Zero
// fields take the defaults.
type SessionOptions struct {
	// IdleTimeout ends a session that has had no request, call or open
	// stream for this long; default 30 minutes. A session with a call in
	// flight or a stream open is never reaped.
	IdleTimeout time.Duration
	// MaxSessions bounds the live sessions; an initialize beyond it is
	// answered 503 with Retry-After. Default 100,000.
	MaxSessions int
	// QueueSize bounds the stateful callbacks waiting for their turn in one
	// session (they run one at a time); one more is answered with
	// InternalError "Server overloaded". Default 64. Handlers that ignore
	// their state (a *Server) never queue.
	QueueSize int
	// RequestTimeout bounds each call; default 5 minutes, negative means
	// none. It includes the time a server→client request waits for the
	// client (a human answering an elicitation, say).
	RequestTimeout time.Duration
	// KeepAlive is the interval of keep-alive comments on idle event
	// streams; default 25s.
	KeepAlive time.Duration
	// Retry is the reconnection delay event streams ask clients for; it is
	// sent with the priming event that opens each stream. Default 1s.
	Retry time.Duration
	// ResumeGrace is how long a call whose response stream lost its
	// client keeps running, waiting for the client to resume the stream
	// with GET and Last-Event-ID; then its context is cancelled. It is
	// also how long a finished call's result waits for a client that
	// lost its stream before the stream is forgotten. Default 10s.
	ResumeGrace time.Duration
	// StreamEvents bounds the events each stream keeps for replay; default
	// 128 (and 1 MiB). A call whose client is connected but this far
	// behind waits in Progress or Log until the client reads; a client
	// that is away, or behind on the session's GET stream, loses the
	// oldest.
	StreamEvents int
	// OnOpen, when set, is called after initialize created a session,
	// with the request that created it. It runs on the request's
	// goroutine and must not block.
	OnOpen func(r *http.Request, id string)
	// OnClose, when set, is called once when a session ends, with why. It
	// must not block.
	OnClose func(id string, reason CloseReason)
}

// CloseReason says why a session ended.
type CloseReason string

// The reasons a session ends.
const (
	CloseDeleted  CloseReason = "deleted"  // the client sent DELETE
	CloseIdle     CloseReason = "idle"     // reaped after IdleTimeout
	CloseShutdown CloseReason = "shutdown" // Endpoint.Shutdown
	CloseEnded    CloseReason = "ended"    // ended by the server otherwise
	// CloseMoved: another replica of the Cluster took the session over
	// (this one was thought dead); the session goes on there.
	CloseMoved CloseReason = "moved"
)

func (o *SessionOptions) withDefaults() SessionOptions {
	c := *o
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 30 * time.Minute
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = 100_000
	}
	if c.QueueSize <= 0 {
		c.QueueSize = 64
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = 5 * time.Minute
	}
	if c.KeepAlive <= 0 {
		c.KeepAlive = 25 * time.Second
	}
	if c.Retry <= 0 {
		c.Retry = time.Second
	}
	if c.ResumeGrace <= 0 {
		c.ResumeGrace = 10 * time.Second
	}
	if c.StreamEvents <= 0 {
		c.StreamEvents = 128
	}
	return c
}

// sessionTable holds the live sessions of one Controller.
type sessionTable struct {
	t    *transport
	opts SessionOptions
	mu   sync.RWMutex
	m    map[string]*session
	// cluster shares the sessions with other replicas; nil keeps them
	// here (cluster_session.go).
	cluster Cluster
}

func newSessionTable(t *transport, o *SessionOptions) *sessionTable {
	return &sessionTable{t: t, opts: o.withDefaults(), m: map[string]*session{}, cluster: t.opts.Cluster}
}

// session is one client's session. It holds no goroutine while idle: its
// reaper is a timer, its streams are the connections' own goroutines.
type session struct {
	tab      *sessionTable
	id       string
	identity string
	revision Revision
	client   *ClientCapabilities
	done     chan struct{}

	logLevel    atomic.Uint32
	initialized atomic.Bool
	lastActive  atomic.Int64
	// lastKept is when the cluster's record was last kept alive (Create,
	// Save or Touch); keeping is true while a Touch is under way.
	lastKept atomic.Int64
	keeping  atomic.Bool

	mu         sync.Mutex
	ended      bool
	holds      int
	timer      *time.Timer
	subs       map[string]struct{}
	streams    map[int64]*stream
	nextStream int64
	pending    map[int64]chan outcome
	nextReq    int64
	inflight   map[wire.ID]context.CancelFunc

	// The handler's state, for handlers that keep one: stateful
	// callbacks take the slot, one at a time.
	stateMu sync.Mutex
	state   any
	slot    chan struct{}
	waiting atomic.Int32
}

// outcome is a client's answer to a server→client request.
type outcome struct {
	result json.RawMessage
	err    *wire.Error
}

func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// all returns the live sessions.
func (tab *sessionTable) all() []*session {
	tab.mu.RLock()
	defer tab.mu.RUnlock()
	all := make([]*session, 0, len(tab.m))
	for _, s := range tab.m {
		all = append(all, s)
	}
	return all
}

func (tab *sessionTable) count() int {
	tab.mu.RLock()
	defer tab.mu.RUnlock()
	return len(tab.m)
}

// errTableFull: MaxSessions are live.
var errTableFull = errors.New("mcp: too many sessions")

// add creates and registers a session: errTableFull when the table is
// full, or the cluster's error when it could not record the session.
func (tab *sessionTable) add(r *http.Request, rev Revision, client *ClientCapabilities, state any) (*session, error) {
	s := &session{
		tab:      tab,
		id:       newSessionID(),
		revision: rev,
		client:   client,
		done:     make(chan struct{}),
		state:    state,
	}
	if tab.t.opts.Identity != nil {
		s.identity = tab.t.opts.Identity(r)
	}
	s.touch()
	tab.mu.Lock()
	if len(tab.m) >= tab.opts.MaxSessions {
		tab.mu.Unlock()
		return nil, errTableFull
	}
	tab.m[s.id] = s
	tab.mu.Unlock()
	if tab.cluster != nil {
		if err := tab.create(r.Context(), s); err != nil {
			tab.mu.Lock()
			delete(tab.m, s.id)
			tab.mu.Unlock()
			return nil, err
		}
	}
	s.mu.Lock()
	s.timer = time.AfterFunc(tab.opts.IdleTimeout, s.reap)
	s.mu.Unlock()
	if fn := tab.opts.OnOpen; fn != nil {
		fn(r, s.id)
	}
	return s, nil
}

// lookup finds the request's session: (nil, nil) when the request names
// none, a 400 when it names several, a 404 when the session is unknown,
// ended, or bound to another identity.
func (tab *sessionTable) lookup(r *http.Request) (*session, controller.Reply) {
	ids := r.Header.Values("Mcp-Session-Id")
	switch len(ids) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, errorReply(http.StatusBadRequest, wire.NewError(wire.InvalidRequest,
			"Bad Request: more than one Mcp-Session-Id"))
	}
	tab.mu.RLock()
	s := tab.m[ids[0]]
	tab.mu.RUnlock()
	if s == nil && tab.cluster != nil {
		// Another replica's session, or one this replica must take
		// over: cluster_session.go.
		return tab.remote(r, ids[0])
	}
	if s == nil || (tab.t.opts.Identity != nil && tab.t.opts.Identity(r) != s.identity) {
		// Another identity's session is reported exactly like an
		// unknown one: its existence is not revealed.
		return nil, errorReply(http.StatusNotFound, wire.NewError(wire.InvalidRequest,
			"Session not found"))
	}
	s.touch()
	if tab.cluster != nil {
		s.keep()
	}
	return s, nil
}

var errSessionRequired = wire.NewError(wire.InvalidRequest, "Bad Request: Mcp-Session-Id header is required")

// require answers GET and DELETE, which need a session.
func (tab *sessionTable) require(r *http.Request) (*session, controller.Reply) {
	s, reply := tab.lookup(r)
	if reply == nil && s == nil {
		reply = errorReply(http.StatusBadRequest, errSessionRequired)
	}
	return s, reply
}

// delete ends the request's session: 204.
func (tab *sessionTable) delete(r *controller.Request) controller.Reply {
	s, reply := tab.require(r.Request)
	if reply != nil {
		return reply
	}
	s.endBecause(CloseDeleted)
	return controller.Status(http.StatusNoContent)
}

func (s *session) touch() { s.lastActive.Store(time.Now().UnixNano()) }

// hold marks the session busy (a call or a stream); release undoes it.
// A held session is never reaped.
func (s *session) hold() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return false
	}
	s.holds++
	return true
}

func (s *session) release() {
	s.touch()
	s.mu.Lock()
	s.holds--
	s.mu.Unlock()
}

// reap runs when the idle timer fires: it ends the session if it has been
// idle for the whole timeout, and re-arms the timer otherwise.
func (s *session) reap() {
	idle := s.tab.opts.IdleTimeout
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	since := time.Since(time.Unix(0, s.lastActive.Load()))
	if s.holds > 0 || since < idle {
		wait := idle - since
		if s.holds > 0 || wait <= 0 {
			wait = idle
		}
		s.timer.Reset(wait)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.endBecause(CloseIdle)
}

// end terminates the session: later requests get 404, its streams end
// (they monitor done), its calls are cancelled and its pending
// server→client requests fail.
func (s *session) end() { s.endBecause(CloseEnded) }

// endBecause is end, telling SessionOptions.OnClose why.
func (s *session) endBecause(reason CloseReason) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	close(s.done)
	if s.timer != nil {
		s.timer.Stop()
	}
	cancels := make([]context.CancelFunc, 0, len(s.inflight))
	for _, c := range s.inflight {
		cancels = append(cancels, c)
	}
	for _, st := range s.streams {
		st.stopGrace()
	}
	s.mu.Unlock()
	for _, c := range cancels {
		c()
	}
	s.tab.mu.Lock()
	if s.tab.m[s.id] == s {
		delete(s.tab.m, s.id)
	}
	s.tab.mu.Unlock()
	if s.tab.cluster != nil {
		s.tab.forget(s, reason)
	}
	if fn := s.tab.opts.OnClose; fn != nil {
		fn(s.id, reason)
	}
}

// track registers a call's cancel function under its request id, so
// notifications/cancelled can reach it; untrack removes it.
func (s *session) track(id wire.ID, cancel context.CancelFunc) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return false
	}
	if s.inflight == nil {
		s.inflight = map[wire.ID]context.CancelFunc{}
	}
	s.inflight[id] = cancel
	s.holds++
	return true
}

func (s *session) untrack(id wire.ID) {
	s.touch()
	s.mu.Lock()
	delete(s.inflight, id)
	s.holds--
	s.mu.Unlock()
}

func (s *session) cancelCall(id wire.ID) {
	s.mu.Lock()
	c := s.inflight[id]
	s.mu.Unlock()
	if c != nil {
		c()
	}
}

// apply records a call's session-level effect.
func (s *session) apply(e *Effect) {
	if s.tab.cluster != nil {
		defer s.saveAfter(e.Kind)
	}
	switch e.Kind {
	case EffectInitialized:
		s.initialized.Store(true)
	case EffectSetLogLevel:
		s.logLevel.Store(uint32(e.LogLevel))
	case EffectSubscribe:
		s.mu.Lock()
		if s.subs == nil {
			s.subs = map[string]struct{}{}
		}
		s.subs[e.URI] = struct{}{}
		s.mu.Unlock()
	case EffectUnsubscribe:
		s.mu.Lock()
		delete(s.subs, e.URI)
		s.mu.Unlock()
	case EffectCancel:
		s.cancelCall(e.RequestID)
	}
}

func (s *session) subscribed(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.subs[uri]
	return ok
}

// changeFrame is the notification of a registry change, nil for a kind
// sessions do not hear of.
func changeFrame(c Change) []byte {
	method := ""
	switch c.Kind {
	case ToolsChanged:
		method = "notifications/tools/list_changed"
	case PromptsChanged:
		method = "notifications/prompts/list_changed"
	case ResourcesChanged:
		method = "notifications/resources/list_changed"
	case ResourceUpdated:
		method = "notifications/resources/updated"
	default:
		return nil
	}
	if c.Kind == ResourceUpdated {
		params := wire.AppendString([]byte(`{"uri":`), c.URI)
		return wire.AppendNotification(nil, method, append(params, '}'))
	}
	return wire.AppendNotification(nil, method, nil)
}

// changed turns a registry change into notifications on the GET stream of
// every live session concerned. In a cluster the change is announced
// instead, and reaches every replica's sessions through their logs.
func (tab *sessionTable) changed(c Change) {
	frame := changeFrame(c)
	if frame == nil {
		return
	}
	if tab.cluster != nil {
		tab.cluster.Announce(c, frame)
		return
	}
	tab.mu.RLock()
	targets := make([]*session, 0, len(tab.m))
	for _, s := range tab.m {
		if !s.initialized.Load() {
			continue
		}
		if c.Kind == ResourceUpdated && !s.subscribed(c.URI) {
			continue
		}
		targets = append(targets, s)
	}
	tab.mu.RUnlock()
	for _, s := range targets {
		s.standalone().emit(frame)
	}
}

// callContext is a call's context: detached from the connection (a
// stream's client may leave and resume), bounded by RequestTimeout, and
// cancelled by notifications/cancelled or the session's end.
func (s *session) callContext(parent context.Context, id wire.ID) (context.Context, context.CancelFunc, bool) {
	ctx := context.WithoutCancel(parent)
	var cancel context.CancelFunc
	if d := s.tab.opts.RequestTimeout; d > 0 {
		ctx, cancel = context.WithTimeout(ctx, d)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	if !id.IsZero() && !s.track(id, cancel) {
		cancel()
		return nil, nil, false
	}
	return ctx, cancel, true
}

func (s *session) sessionHeader(h http.Header) http.Header {
	if h == nil {
		h = http.Header{}
	}
	h.Set("Mcp-Session-Id", s.id)
	return h
}

func formatEventID(stream, seq int64) string {
	return strconv.FormatInt(stream, 10) + "-" + strconv.FormatInt(seq, 10)
}
