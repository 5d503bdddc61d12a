package streamable

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp/cluster"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	core "github.com/saguaro-go/saguaro/mcp/internal/session"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
	"github.com/saguaro-go/saguaro/sse"
)

// The session table's side of the cluster: records kept in the store,
// requests for other replicas' sessions relayed (relay) or taken over
// (adopt), the GET stream's events numbered here and handed to the
// store's log (publish, deliver), registry changes expanded for the
// sessions this replica runs (deliver).

// clusterTimeout bounds each call to the cluster's store: a store that is
// down fails requests fast.
const clusterTimeout = 2 * time.Second

// recordTTL is how long the store keeps an untouched record: a little
// longer than the owner would keep the session idle, so that a session
// whose owner died expires about when it would have been reaped.
func (tab *sessionTable) recordTTL() time.Duration {
	return tab.opts.IdleTimeout + time.Minute
}

func clusterContext(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(parent), clusterTimeout)
}

// create records a new session.
func (tab *sessionTable) create(ctx context.Context, s *session) error {
	ctx, cancel := clusterContext(ctx)
	defer cancel()
	if err := tab.cluster.Create(ctx, s.record(), tab.recordTTL()); err != nil {
		return err
	}
	s.lastKept.Store(time.Now().UnixNano())
	return nil
}

// record is what the cluster keeps of s.
func (s *session) record() *cluster.Record {
	tab := s.tab
	rec := &cluster.Record{
		ID:            s.id,
		Owner:         tab.self.ID,
		Identity:      s.identity,
		Revision:      s.Revision().String(),
		Client:        s.clientJSON(),
		LogLevel:      s.LogLevel().String(),
		Initialized:   s.Initialized(),
		Subscriptions: s.Subscriptions(),
	}
	s.mu.Lock()
	if st := s.streams[0]; st != nil {
		rec.Seq = st.next - 1
	}
	s.mu.Unlock()
	slices.Sort(rec.Subscriptions)
	b, movable, err := tab.t.cfg.Codec.EncodeState(s.Snapshot())
	if err != nil {
		tab.t.log.Error("mcp: session state could not be encoded; the session cannot move",
			slog.String(protocol.AttrSession, s.id), slog.Any("err", err))
		movable = false
	}
	rec.State, rec.Movable = b, movable
	return rec
}

// clientJSON is the client's capabilities as the record keeps them,
// encoded once.
func (s *session) clientJSON() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clientRaw == nil && s.Client() != nil {
		b, err := json.Marshal(s.Client())
		if err != nil {
			b = []byte("null")
		}
		s.clientRaw = b
	}
	return s.clientRaw
}

// save records the session's metadata and state. A store that does not
// answer is logged: the session goes on here, and only a take-over would
// miss the change.
func (s *session) save() {
	ctx, cancel := clusterContext(context.Background())
	defer cancel()
	err := s.tab.cluster.Save(ctx, s.record(), s.tab.recordTTL())
	switch {
	case errors.Is(err, cluster.ErrSessionMoved):
		s.endBecause(CloseMoved)
		return
	case errors.Is(err, cluster.ErrSessionUnknown):
		return // it ended meanwhile
	}
	if err != nil {
		s.tab.t.log.Warn("mcp: the session store did not record a change",
			slog.String(protocol.AttrSession, s.id), slog.Any("err", err))
		return
	}
	s.lastKept.Store(time.Now().UnixNano())
}

// saveAfter saves the session after an effect that changed its record.
func (s *session) saveAfter(k protocol.EffectKind) {
	switch k {
	case protocol.EffectInitialized, protocol.EffectSetLogLevel, protocol.EffectSubscribe, protocol.EffectUnsubscribe:
		s.save()
	}
}

// keep refreshes the record's lifetime in the store, at most every
// quarter of the idle timeout, without holding up the request.
func (s *session) keep() {
	every := s.tab.opts.IdleTimeout / 4
	if time.Since(time.Unix(0, s.lastKept.Load())) < every || !s.keeping.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.keeping.Store(false)
		ctx, cancel := clusterContext(context.Background())
		defer cancel()
		if err := s.tab.cluster.Touch(ctx, s.id, s.tab.recordTTL()); err == nil {
			s.lastKept.Store(time.Now().UnixNano())
		}
	}()
}

// forget tells the cluster that s ended: a session that moved away is
// someone else's now, one shut down is released for another replica to
// take, any other is gone.
func (tab *sessionTable) forget(s *session, reason CloseReason) {
	ctx, cancel := clusterContext(context.Background())
	defer cancel()
	var err error
	switch reason {
	case CloseMoved:
		return
	case CloseShutdown:
		err = tab.cluster.Release(ctx, s.id)
	default:
		err = tab.cluster.End(ctx, s.id)
	}
	if err != nil {
		tab.t.log.Warn("mcp: the session store did not hear that a session ended",
			slog.String(protocol.AttrSession, s.id), slog.String("reason", string(reason)), slog.Any("err", err))
	}
}

// unavailable answers a request the store could not serve: 503, try
// again shortly.
func (tab *sessionTable) unavailable(r *http.Request, err error) controller.Reply {
	tab.t.log.WarnContext(r.Context(), "mcp: session store unavailable", slog.Any("err", err))
	h := jsonHeader()
	h.Set("Retry-After", "1")
	return controller.Buffered(http.StatusServiceUnavailable, h,
		wire.AppendErrorResponse(nil, wire.ID{}, errStoreUnavailable))
}

var errSessionMoving = wire.NewError(wire.InternalError, "Service Unavailable: the session is moving between replicas; try again")

// remote serves the lookup of a session this replica does not hold: 404
// when the cluster does not know it either (or it is another identity's),
// a relay to its owner, or a take-over when its owner is gone.
func (tab *sessionTable) remote(r *http.Request, id string) (*session, controller.Reply) {
	c := tab.cluster
	self := tab.t.self
	relayed := r.Header.Get(relayHeader)
	if relayed != "" && relayed != self.ID {
		// Sent to a replica that used to listen at this address.
		return nil, misdirected(self.ID, wire.NewError(wire.InvalidRequest,
			"Misdirected Request: this replica is not "+relayed))
	}
	if reply := tab.relayCached(r, id); reply != nil {
		return nil, reply
	}
	ctx, cancel := clusterContext(r.Context())
	defer cancel()
	for range 3 {
		rec, err := c.Load(ctx, id)
		if errors.Is(err, cluster.ErrSessionUnknown) {
			return nil, errorReply(http.StatusNotFound, errSessionNotFound)
		}
		if err != nil {
			return nil, tab.unavailable(r, err)
		}
		if tab.t.cfg.Identity != nil && tab.t.cfg.Identity(r) != rec.Identity {
			return nil, errorReply(http.StatusNotFound, errSessionNotFound)
		}
		switch {
		case rec.Owner == self.ID:
			// Recorded as this replica's but not here: taken over
			// a moment ago by a concurrent request.
			return tab.adopt(ctx, r, rec)
		case rec.Owner != "":
			url, err := rec.OwnerURL, error(nil)
			if url == "" {
				url, err = c.Locate(ctx, rec.Owner)
			}
			if err == nil {
				if relayed != "" {
					// Never relay twice: the owner changed
					// while this request travelled, or the
					// relaying replica remembered an old one.
					return nil, misdirected(self.ID, errNotHere)
				}
				return nil, tab.relay(rec, url)
			}
			if !errors.Is(err, cluster.ErrReplicaGone) {
				return nil, tab.unavailable(r, err)
			}
		}
		won, err := c.Claim(ctx, id, rec.Owner)
		if err != nil {
			return nil, tab.unavailable(r, err)
		}
		if won {
			rec.Owner = self.ID
			return tab.adopt(ctx, r, rec)
		}
		// Another replica claimed it first: look again.
	}
	return nil, moving()
}

func moving() controller.Reply {
	h := jsonHeader()
	h.Set("Retry-After", "1")
	return controller.Buffered(http.StatusServiceUnavailable, h,
		wire.AppendErrorResponse(nil, wire.ID{}, errSessionMoving))
}

// adopt rebuilds a session this replica now owns from its record and its
// GET stream's log.
func (tab *sessionTable) adopt(ctx context.Context, r *http.Request, rec *cluster.Record) (*session, controller.Reply) {
	tab.mu.RLock()
	s := tab.m[rec.ID]
	tab.mu.RUnlock()
	if s != nil {
		return s, nil
	}
	var state any
	if !rec.Movable {
		tab.t.log.InfoContext(r.Context(), "mcp: a session whose state cannot move lost its replica; it ends",
			slog.String(protocol.AttrSession, rec.ID))
		_ = tab.cluster.End(ctx, rec.ID)
		return nil, errorReply(http.StatusNotFound, errSessionNotFound)
	}
	rev, ok := protocol.ParseRevision(rec.Revision)
	if !ok {
		tab.t.log.ErrorContext(r.Context(), "mcp: a moved session's revision is unknown; it ends",
			slog.String(protocol.AttrSession, rec.ID), slog.String("revision", rec.Revision))
		_ = tab.cluster.End(ctx, rec.ID)
		return nil, errorReply(http.StatusNotFound, errSessionNotFound)
	}
	if rec.State != nil {
		var err error
		state, err = tab.t.cfg.Codec.DecodeState(rec.State)
		if err != nil {
			tab.t.log.ErrorContext(r.Context(), "mcp: a moved session's state could not be decoded; it ends",
				slog.String(protocol.AttrSession, rec.ID), slog.Any("err", err))
			_ = tab.cluster.End(ctx, rec.ID)
			return nil, errorReply(http.StatusNotFound, errSessionNotFound)
		}
	}
	events, err := tab.cluster.Events(ctx, rec.ID, 0)
	if err != nil {
		return nil, tab.unavailable(r, err)
	}
	var client any
	var clientRaw json.RawMessage
	if len(rec.Client) > 0 && string(rec.Client) != "null" {
		client, clientRaw = tab.t.engine.Client(rec.Client), rec.Client
	}
	s = &session{
		Session:   core.New(rev, client, state, tab.opts.QueueSize),
		tab:       tab,
		id:        rec.ID,
		identity:  rec.Identity,
		clientRaw: clientRaw,
	}
	level, _ := protocol.ParseLogLevel(rec.LogLevel)
	// Ids this session's previous owner handed out (server→client
	// requests, response streams) must not be reused: an answer to a
	// request that died with it, or a Last-Event-ID of one of its
	// streams, must not reach a new one.
	base := freshBase()
	s.Restore(rec.Initialized, level, rec.Subscriptions, base)
	s.nextStream = base
	st := s.streamLocked(0)
	for _, ev := range events {
		if ev.Seq >= st.next {
			st.appendLocked(ev.Seq, event{data: ev.Data, change: ev.Change})
		}
	}
	if rec.Seq >= st.next {
		st.next = rec.Seq + 1
	}
	st.delivered = st.next - 1
	// Its client may resume its GET stream here, or have it open
	// already through this replica: log from now on.
	st.persist = true
	s.touch()
	s.lastKept.Store(time.Now().UnixNano())

	tab.mu.Lock()
	if other := tab.m[rec.ID]; other != nil {
		tab.mu.Unlock()
		return other, nil
	}
	if len(tab.m) >= tab.opts.MaxSessions {
		tab.mu.Unlock()
		_ = tab.cluster.Release(ctx, rec.ID)
		return nil, moving()
	}
	tab.m[rec.ID] = s
	tab.mu.Unlock()
	tab.subscribed(s, rec.Subscriptions...)
	s.opened(time.Now())
	// A session taken over counts against its caller like one created
	// here, over the bound if need be: it is not the caller's doing.
	s.caller = tab.t.callerOf(r)
	tab.t.callers.acquire(s.caller, holdSession, 0)
	s.mu.Lock()
	s.timer = time.AfterFunc(tab.opts.IdleTimeout, s.reap)
	s.mu.Unlock()
	tab.t.log.WarnContext(r.Context(), "mcp: took over a session from a replica that is gone",
		slog.String(protocol.AttrSession, rec.ID), slog.Int("events", len(events)))
	return s, nil
}

// freshBase is a random starting point for a moved session's request and
// stream ids, far from where its previous owner counted.
func freshBase() int64 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return int64(binary.BigEndian.Uint32(b[:])>>1+1) << 16
}

// publish appends a message to the session's GET stream, numbered here,
// and hands it to the cluster's log. It reports false when the session
// has ended.
func (st *stream) publish(data []byte) bool {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return false
	}
	seq := st.next
	st.appendLocked(seq, event{data: data})
	if st.persist {
		s.tab.cluster.Append(cluster.Event{Session: s.id, Seq: seq, Data: data})
	}
	return true
}

// persistLocked starts handing the GET stream's events to the cluster's
// log: those it holds now, then every new one.
func (st *stream) persistLocked() {
	st.persist = true
	var evs []cluster.Event
	st.log.After(0, func(seq int64, ev event) bool {
		evs = append(evs, cluster.Event{Session: st.s.id, Seq: seq, Data: ev.data, Change: ev.change})
		return true
	})
	if len(evs) > 0 {
		st.s.tab.cluster.Append(evs...)
	}
}

// notice handles what the cluster tells this replica about its sessions.
func (tab *sessionTable) notice(n cluster.Notice) {
	switch n.Kind {
	case cluster.NoticeChange:
		tab.deliver(n)
	case cluster.NoticeMoved:
		tab.t.owners.forget(n.Session)
		tab.mu.RLock()
		s := tab.m[n.Session]
		tab.mu.RUnlock()
		if s != nil {
			s.endBecause(CloseMoved)
		}
	case cluster.NoticeReset:
		if tab.recording.CompareAndSwap(false, true) {
			go tab.recordAll()
		}
	}
}

// deliver appends a registry change's notification to the GET stream of
// every session it concerns that this replica runs: a list change to
// every initialized session, a resource update to the sessions
// subscribed to its URI. Each session's log refers to the change by its
// number; a change a session hears gets its span there, and its own copy
// of the message with the span's trace context (the store keeps the
// message as it was announced).
func (tab *sessionTable) deliver(n cluster.Notice) {
	var to []*session
	if n.Change.URI == "" {
		tab.mu.RLock()
		to = make([]*session, 0, len(tab.m))
		for _, s := range tab.m {
			if s.Initialized() {
				to = append(to, s)
			}
		}
		tab.mu.RUnlock()
	} else {
		tab.subsMu.Lock()
		for s := range tab.subs[n.Change.URI] {
			to = append(to, s)
		}
		tab.subsMu.Unlock()
	}
	for _, s := range to {
		s.mu.Lock()
		if s.ended {
			s.mu.Unlock()
			continue
		}
		st := s.streamLocked(0)
		seq := st.next
		data, end := tab.t.engine.TraceChange(context.Background(), s.Revision(), s.id, n.Data)
		st.appendLocked(seq, event{data: data, change: n.Seq})
		if st.persist {
			tab.cluster.Append(cluster.Event{Session: s.id, Seq: seq, Data: n.Data, Change: n.Seq})
		}
		s.mu.Unlock()
		if end != nil {
			end()
		}
	}
}

// subscribed adds s to the index of the sessions subscribed to each uri,
// which deliver reads.
func (tab *sessionTable) subscribed(s *session, uris ...string) {
	if len(uris) == 0 {
		return
	}
	tab.subsMu.Lock()
	defer tab.subsMu.Unlock()
	// Under subsMu, so that an end that races this removes what it
	// adds.
	s.mu.Lock()
	ended := s.ended
	s.mu.Unlock()
	if ended {
		return
	}
	if tab.subs == nil {
		tab.subs = map[string]map[*session]struct{}{}
	}
	for _, u := range uris {
		set := tab.subs[u]
		if set == nil {
			set = map[*session]struct{}{}
			tab.subs[u] = set
		}
		set[s] = struct{}{}
	}
}

// unsubscribed removes s from the index for each uri.
func (tab *sessionTable) unsubscribed(s *session, uris ...string) {
	tab.subsMu.Lock()
	defer tab.subsMu.Unlock()
	for _, u := range uris {
		if set := tab.subs[u]; set != nil {
			delete(set, s)
			if len(set) == 0 {
				delete(tab.subs, u)
			}
		}
	}
}

// recordAll records every live session again, after the store lost
// them, in batches (cluster.Directory.Recover). Sessions another replica
// holds now end here.
func (tab *sessionTable) recordAll() {
	defer tab.recording.Store(false)
	all := tab.all()
	recs := make([]*cluster.Record, len(all))
	for i, s := range all {
		recs[i] = s.record()
	}
	ctx, cancel := context.WithTimeout(context.Background(), recoverTimeout)
	defer cancel()
	moved, err := tab.cluster.Recover(ctx, recs, tab.recordTTL())
	for _, id := range moved {
		tab.mu.RLock()
		s := tab.m[id]
		tab.mu.RUnlock()
		if s != nil {
			s.endBecause(CloseMoved)
		}
	}
	if err != nil {
		tab.t.log.Warn("mcp: the sessions could not all be recorded again; the store will ask again",
			slog.Int("sessions", len(all)), slog.Any("err", err))
		return
	}
	now := time.Now().UnixNano()
	for _, s := range all {
		s.lastKept.Store(now)
	}
	if len(all) > 0 {
		tab.t.log.Info("mcp: recorded the live sessions again in a store that lost them", slog.Int("sessions", len(all)))
	}
}

// recoverTimeout bounds recording every session again: long enough for
// a million at the store's pace, short enough that a store that went
// away again is noticed.
const recoverTimeout = 2 * time.Minute

var errCallLost = wire.NewError(wire.InternalError, "Internal error: the call was lost with the replica that ran it")

// lostCall answers the resumption of a POST stream that ran on another
// replica, which is gone: the stream died with it. Its event id names the
// replica and the call's request id, so the client gets that call's error
// response, on an event stream that then ends, instead of waiting for a
// result that will never come; the session goes on. nil when the id names
// no call, or names this replica (its stream was forgotten: the client
// gets the GET stream, as for any unknown stream).
func (tab *sessionTable) lostCall(lastEventID string) controller.Reply {
	_, tag, ok := strings.Cut(lastEventID, ".")
	if !ok {
		return nil
	}
	i := strings.LastIndexByte(tag, '.') // base64url has no '.'; a replica id may
	if i < 0 || tag[:i] == tab.self.ID {
		return nil
	}
	tag = tag[i+1:]
	raw, err := base64.RawURLEncoding.DecodeString(tag)
	if err != nil || len(raw) == 0 || len(raw) > 256 {
		return nil
	}
	var id wire.ID
	if err := json.Unmarshal(raw, &id); err != nil || id.IsZero() {
		return nil
	}
	ev := sse.Event{Data: wire.AppendErrorResponse(nil, id, errCallLost)}
	body, _ := ev.AppendTo(nil)
	h := http.Header{}
	sse.Headers(h)
	return controller.Buffered(http.StatusOK, h, body)
}
