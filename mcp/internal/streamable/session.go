package streamable

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/internal/jsonstr"
	"github.com/saguaro-go/saguaro/mcp/cluster"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	core "github.com/saguaro-go/saguaro/mcp/internal/session"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// SessionConfig configures sessions; package mcp fills in the defaults.
type SessionConfig struct {
	IdleTimeout    time.Duration
	MaxSessions    int
	QueueSize      int
	RequestTimeout time.Duration // negative: none
	Retry          time.Duration
	ResumeGrace    time.Duration
	StreamEvents   int
	OnOpen         func(r *http.Request, id string)
	OnClose        func(id string, reason CloseReason)
}

// CloseReason says why a session ended.
type CloseReason string

// The reasons a session ends.
const (
	CloseDeleted  CloseReason = "deleted"  // the client sent DELETE
	CloseIdle     CloseReason = "idle"     // reaped after IdleTimeout
	CloseShutdown CloseReason = "shutdown" // Transport.Shutdown
	CloseEnded    CloseReason = "ended"    // ended by the server otherwise
	CloseMoved    CloseReason = "moved"    // another replica took it over
)

// sessionTable holds the live sessions of one Transport.
type sessionTable struct {
	t    *Transport
	opts SessionConfig
	mu   sync.RWMutex
	m    map[string]*session
	// cluster records the sessions, for the other replicas (a Memory
	// store with this replica alone when there are none).
	cluster cluster.Cluster
	self    cluster.Replica
	// subs indexes the sessions by the URIs they subscribed to, for
	// deliver.
	subsMu sync.Mutex
	subs   map[string]map[*session]struct{}
	// recording is set while recordAll runs.
	recording atomic.Bool
}

func newSessionTable(t *Transport, o *SessionConfig) *sessionTable {
	return &sessionTable{t: t, opts: *o, m: map[string]*session{}, cluster: t.cfg.Cluster, self: t.cfg.Cluster.Self()}
}

// session is one client's session. It holds no goroutine while idle: its
// reaper is a timer, its streams are the connections' own goroutines.
type session struct {
	// Session is what every transport keeps of a session: revision,
	// client, effects, calls in flight, server→client requests, the
	// handler's state and its turn.
	*core.Session
	tab      *sessionTable
	id       string
	identity string
	// caller is whom the session counts against (Limits.Sessions).
	caller caller

	lastActive atomic.Int64
	// lastKept is when the cluster's record was last kept alive (Create,
	// Save or Touch); keeping is true while a Touch is under way.
	lastKept atomic.Int64
	keeping  atomic.Bool

	// mu guards the transport's part of the session, its streams
	// included.
	mu         sync.Mutex
	clientRaw  json.RawMessage // Client, as the cluster's record keeps it
	grants     string          // the scopes of the last request (regrant)
	ended      bool
	holds      int
	timer      *time.Timer
	streams    map[int64]*stream
	nextStream int64
	// start is when the session started here (Unix ns), for telemetry;
	// 0 when nothing observes it.
	start atomic.Int64
}

// opened tells the observer of a session that started here at now.
func (s *session) opened(now time.Time) {
	if obs := s.tab.t.cfg.Observer; obs != nil {
		s.start.Store(now.UnixNano())
		obs.SessionOpened(s.Revision())
	}
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

var (
	// errTableFull: MaxSessions are live.
	errTableFull = errors.New("mcp: too many sessions")
	// errCallerFull: the caller has Limits.Sessions live.
	errCallerFull = errors.New("mcp: too many sessions for this caller")
)

// add creates and registers a session: errTableFull when the table is
// full, or the cluster's error when it could not record the session.
func (tab *sessionTable) add(r *http.Request, rev protocol.Revision, client any, state any) (*session, error) {
	s := &session{
		Session: core.New(rev, client, state, tab.opts.QueueSize),
		tab:     tab,
		id:      newSessionID(),
	}
	if tab.t.cfg.Identity != nil {
		s.identity = tab.t.cfg.Identity(r)
	}
	if tab.t.cfg.Scopes != nil {
		s.grants = grantsOf(tab.t.cfg.Scopes(r.Context()))
	}
	s.caller = tab.t.callerOf(r)
	if !tab.t.callers.acquire(s.caller, holdSession, tab.t.cfg.Limits.Sessions) {
		return nil, errCallerFull
	}
	s.touch()
	tab.mu.Lock()
	if len(tab.m) >= tab.opts.MaxSessions {
		tab.mu.Unlock()
		tab.t.callers.release(s.caller, holdSession)
		return nil, errTableFull
	}
	tab.m[s.id] = s
	tab.mu.Unlock()
	if err := tab.create(r.Context(), s); err != nil {
		tab.mu.Lock()
		delete(tab.m, s.id)
		tab.mu.Unlock()
		tab.t.callers.release(s.caller, holdSession)
		return nil, err
	}
	s.mu.Lock()
	s.timer = time.AfterFunc(tab.opts.IdleTimeout, s.reap)
	s.mu.Unlock()
	s.opened(time.Now())
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
	if s == nil {
		if tab.t.closing() && !tab.t.cfg.Standalone {
			// A replica shutting down neither takes a session
			// over nor relays: the retry reaches another one.
			return nil, shuttingDown(wire.ID{})
		}
		// Another replica's session, one this replica must take over,
		// or none: remote.
		return tab.remote(r, ids[0])
	}
	if tab.t.cfg.Identity != nil && tab.t.cfg.Identity(r) != s.identity {
		// Another identity's session is reported exactly like an
		// unknown one: its existence is not revealed.
		return nil, errorReply(http.StatusNotFound, wire.NewError(wire.InvalidRequest,
			"Session not found"))
	}
	s.touch()
	s.keep()
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
	s.attrs(r.Request)
	if tab.t.closing() {
		return shuttingDown(wire.ID{})
	}
	s.endBecause(CloseDeleted)
	return controller.Status(http.StatusNoContent)
}

// attrs reports the session and its revision to the log hook, for a
// request (GET, DELETE) that names no method.
func (s *session) attrs(r *http.Request) {
	s.tab.t.attrs(r.Context(), slog.String(protocol.AttrSession, s.id),
		slog.String(protocol.AttrRevision, s.Revision().String()))
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
	if s.ended || s.tab.t.closing() {
		// Shutting down: the session is released, not ended.
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

// endBecause is end, telling SessionConfig.OnClose why, and the
// cluster.
func (s *session) endBecause(reason CloseReason) { s.endWith(reason, true) }

// endLocal ends the session here without a word to the cluster: Shutdown
// released it already.
func (s *session) endLocal(reason CloseReason) { s.endWith(reason, false) }

func (s *session) endWith(reason CloseReason, tell bool) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	if s.timer != nil {
		s.timer.Stop()
	}
	for _, st := range s.streams {
		st.stopGrace()
	}
	s.mu.Unlock()
	s.Session.End()
	s.tab.mu.Lock()
	if s.tab.m[s.id] == s {
		delete(s.tab.m, s.id)
	}
	s.tab.mu.Unlock()
	s.tab.t.callers.release(s.caller, holdSession)
	s.tab.unsubscribed(s, s.Subscriptions()...)
	if obs := s.tab.t.cfg.Observer; obs != nil {
		if start := s.start.Load(); start != 0 {
			obs.SessionClosed(s.Revision(), time.Duration(time.Now().UnixNano()-start), reason)
		}
	}
	if tell {
		s.tab.forget(s, reason)
	}
	if fn := s.tab.opts.OnClose; fn != nil {
		fn(s.id, reason)
	}
}

// untrack ends a call's registration and its hold.
func (s *session) untrack(id wire.ID) {
	s.Untrack(id)
	s.release()
	s.tab.t.calls.done()
}

// apply records a call's effect, and saves the session's record when the
// effect changed it.
func (s *session) apply(e *protocol.Effect) {
	s.Apply(e)
	s.applied(e)
}

// applied follows an effect the session recorded: the index of
// subscriptions, and the record when the effect changed it.
func (s *session) applied(e *protocol.Effect) {
	switch e.Kind {
	case protocol.EffectSubscribe:
		s.tab.subscribed(s, e.URI)
	case protocol.EffectUnsubscribe:
		s.tab.unsubscribed(s, e.URI)
	}
	s.saveAfter(e.Kind)
}

// changeFrame is the notification of a registry change, nil for a kind
// sessions do not hear of.
func changeFrame(c protocol.Change) []byte {
	method := c.Notification()
	switch {
	case method == "":
		return nil
	case c.Kind == protocol.ResourceUpdated:
		params := jsonstr.AppendString([]byte(`{"uri":`), c.URI)
		return wire.AppendNotification(nil, method, append(params, '}'))
	}
	return wire.AppendNotification(nil, method, nil)
}

// callContext is a call's context: detached from the connection (a
// stream's client may leave and resume), bounded by RequestTimeout, and
// cancelled by notifications/cancelled or the session's end. The call
// holds the session until untrack.
func (s *session) callContext(parent context.Context, id wire.ID) (context.Context, context.CancelFunc, bool) {
	if !s.hold() {
		return nil, nil, false
	}
	ctx, cancel, ok := s.CallContext(parent, id, s.tab.opts.RequestTimeout)
	if !ok {
		s.release()
		return ctx, cancel, ok
	}
	s.tab.t.calls.add()
	return ctx, cancel, ok
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
