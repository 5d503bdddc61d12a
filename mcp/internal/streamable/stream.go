package streamable

import (
	"context"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/saguaro-go/saguaro/internal/replay"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
	"github.com/saguaro-go/saguaro/sse"
)

// stream is one logical event stream of a session: the response stream
// of a POST, or the session's standalone GET stream (id 0). It outlives
// its HTTP connections: every event is kept in a bounded log under an id
// "<stream>-<seq>" unique in the session, a connection that drops loses
// nothing, and GET with Last-Event-ID attaches a new connection that
// replays what the old one missed and continues. One connection at a
// time.
//
// The events themselves never travel through the connection's mailbox:
// the log is the only queue. It holds each event's message, framed only
// when a connection takes it, so that a change's notification is one
// slice shared by every session that hears it. A producer appends to it and wakes the
// connection (one wake message at most is pending), and the connection's
// loop takes everything after its cursor in one write. A mailbox can
// therefore never overflow and drop an event, a result or the end of a
// stream, and a fast producer costs one write per batch, not per event.
//
// All fields are guarded by the session's mutex.
type stream struct {
	s  *session
	id int64

	log       replay.Ring[event] // the events, by seq
	next      int64              // seq of the next event; the first is 1
	delivered int64              // highest seq pushed to a connection
	taken     int64              // highest seq the attached connection has taken
	// persist: the GET stream's events go to the cluster's log too
	// (cluster.Log.Append), from the moment a client first attached to
	// it (before that, a client that resumes after a take-over has no
	// event id to resume from).
	persist bool

	mb         *controller.Mailbox // the attached connection, or nil
	woken      bool                // a wake is pending in mb
	room       chan struct{}       // closed when the connection takes events; see emitWait
	closeRetry time.Duration       // > 0: the connection must close (polling)
	started    bool                // a POST stream: its connection turned into an event stream
	final      bool                // a POST stream: its response is in the log
	finalCode  int                 // and that response's JSON-RPC error code
	onIdle     func()              // a POST stream: cancels its call
	grace      *time.Timer         // cancels the call, or forgets the finished stream, of an absent client
	// idTag ends the event ids of a POST stream: the replica that runs
	// its call and the call's request id (callID), so that a replica
	// that takes the session over can tell a client resuming the stream
	// which call was lost. Set when the stream starts.
	idTag  string
	callID wire.ID
}

// event is one message of a stream's log: data, and for the GET stream,
// the number of the registry change it tells of (0: none), which the
// cluster's log refers to instead of keeping a copy.
type event struct {
	data   []byte
	change int64
}

// eventOverhead is what an event's frame adds to its message (id, field
// names, newlines), counted against the log's byte bound.
const eventOverhead = 40

// Messages a stream connection's loop handles.
type (
	// wake tells the loop that its stream has something new: events,
	// its end, or a request to close the connection.
	wake        struct{}
	sessionGone struct{}
	keepAlive   struct{}
	// streamStarted tells a POST's Handle that its call emitted
	// something: answer with an event stream.
	streamStarted struct{}
	// callDone carries a call's answer to a POST's Handle when nothing
	// was emitted first: answer with JSON. It is sent as a pointer to
	// the call's own copy, which a mailbox holds without allocating.
	callDone struct {
		body   []byte
		status int
		// release, when set, is the pooled buffer body lies in, given
		// back once body is written (protocol.Reply.Buffer).
		release []byte
		// code is the answer's JSON-RPC error code (0 for a result),
		// for the log line of the request that delivers it.
		code int
	}
)

const maxStreamLogBytes = 1 << 20

// standalone returns the session's GET stream, creating it on first use.
func (s *session) standalone() *stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.streamLocked(0)
}

func (s *session) streamLocked(id int64) *stream {
	if s.streams == nil {
		s.streams = map[int64]*stream{}
	}
	st := s.streams[id]
	if st == nil {
		st = &stream{}
		s.initStreamLocked(st, id)
	}
	return st
}

// initStreamLocked sets st up as the session's empty stream id and
// records it.
func (s *session) initStreamLocked(st *stream, id int64) {
	*st = stream{s: s, id: id, next: 1, log: replay.NewRing[event](s.tab.opts.StreamEvents, maxStreamLogBytes)}
	s.streams[id] = st
}

// newCallStream sets st up as the response stream of one POST, attached
// to the POST's connection, not yet started. st is the call's own
// (sessionCall.st), so that the stream costs no allocation of its own.
func (s *session) newCallStream(st *stream, mb *controller.Mailbox, onIdle func(), id wire.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.streams == nil {
		s.streams = map[int64]*stream{}
	}
	s.nextStream++
	s.initStreamLocked(st, s.nextStream)
	st.mb = mb
	st.onIdle = onIdle
	st.callID = id
}

// appendFrame appends one JSON-RPC message, framed as event seq of this
// stream, to buf.
func (st *stream) appendFrame(buf []byte, seq int64, data []byte) []byte {
	ev := sse.Event{ID: formatEventID(st.id, seq) + st.idTag, Data: data}
	buf, _ = ev.AppendTo(buf)
	return buf
}

// primingFrame opens a connection: an event with an id and empty data
// (so the client has a Last-Event-ID to resume from even before the first
// message) and the reconnection delay.
func (st *stream) primingFrame(after int64) []byte {
	ev := sse.Event{ID: formatEventID(st.id, after) + st.idTag, Retry: st.s.tab.opts.Retry}
	frame, _ := ev.AppendTo(nil)
	return frame
}

// emit appends one message to the stream and wakes the attached
// connection, starting a POST's event stream if it has not started. It
// never blocks (trimLocked says what the log's bounds drop). It reports
// false when the session has ended.
func (st *stream) emit(data []byte) bool {
	s := st.s
	if st.id == 0 {
		return st.publish(data) // the GET stream is the cluster's log
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return false
	}
	st.emitLocked(data)
	return true
}

// emitWait is emit for a call's own notifications: while a connection is
// attached and the log is full of events it has not taken, it waits for
// the connection to catch up (a client that reads slowly slows the call
// down rather than losing its progress), until ctx ends. Without a
// connection nothing waits and the log keeps the newest events for a
// resume.
func (st *stream) emitWait(ctx context.Context, data []byte) bool {
	s := st.s
	s.mu.Lock()
	for !s.ended && st.fullLocked() && ctx.Err() == nil {
		if st.room == nil {
			st.room = make(chan struct{})
		}
		room := st.room
		s.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
		case <-s.Done():
		}
		s.mu.Lock()
	}
	defer s.mu.Unlock()
	if s.ended {
		return false
	}
	st.emitLocked(data)
	return true
}

func (st *stream) emitLocked(data []byte) {
	if st.id != 0 && !st.started {
		st.started = true
		st.idTag = "." + st.s.tab.self.ID + "." + base64.RawURLEncoding.EncodeToString(st.callID.AppendJSON(nil))
		if st.mb != nil {
			_ = st.mb.Send(streamStarted{})
		}
	}
	st.appendLocked(st.next, event{data: data})
}

// appendLocked adds the event seq (st.next or later) to the log.
func (st *stream) appendLocked(seq int64, ev event) {
	st.next = seq + 1
	st.log.Push(seq, ev, len(ev.data)+eventOverhead)
	st.trimLocked()
	st.wakeLocked()
}

// trimLocked drops the oldest events beyond the log's bounds. A POST
// stream keeps what its attached connection has not taken yet (emitWait
// holds its producers back instead, so only a result or a server→client
// request can go past the bound, once each); the GET stream, fed by
// producers that must not wait, always drops.
func (st *stream) trimLocked() {
	for st.log.Over() {
		if oldest, _ := st.log.Oldest(); st.id != 0 && st.mb != nil && oldest > st.taken {
			return
		}
		st.log.DropOldest()
	}
}

// fullLocked reports whether a POST stream's log is full of events its
// attached connection has not taken.
func (st *stream) fullLocked() bool {
	return st.id != 0 && st.mb != nil && st.next-1 > st.taken && st.log.Full()
}

// wakeLocked tells the attached connection, if any, to look at the
// stream; at most one wake is pending at a time, so the mailbox never
// fills.
func (st *stream) wakeLocked() {
	if st.mb != nil && !st.woken {
		st.woken = st.mb.Send(wake{}) == nil
	}
}

// take hands the connection c everything after its cursor, as one chunk
// that starts with c's priming event if it has not been sent. It reports
// the last seq taken (0 when none), whether the stream's last event is
// now taken, and the retry of a pending request to close the connection.
// Events the log dropped before c took them are skipped: the client
// fell more than StreamEvents behind.
func (st *stream) take(c *connState) (chunk []byte, last int64, done bool, closeRetry time.Duration) {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.mb != c.mb {
		return nil, 0, false, 0
	}
	st.woken = false
	chunk, c.prime = c.prime, nil
	st.log.After(c.cursor, func(seq int64, ev event) bool {
		chunk = st.appendFrame(chunk, seq, ev.data)
		last = seq
		return true
	})
	if last > 0 {
		c.cursor = last
		st.taken = last
	}
	if st.room != nil {
		close(st.room)
		st.room = nil
	}
	closeRetry, st.closeRetry = st.closeRetry, 0
	return chunk, last, st.final && c.cursor >= st.next-1, closeRetry
}

// finish records a POST's result: as the stream's last event when the
// stream started, or handed to the waiting Handle as a JSON answer. The
// Handle reads answer after it receives it, so answer must not change
// after finish.
func (st *stream) finish(answer *callDone) {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if !st.started {
		if st.mb != nil {
			_ = st.mb.Send(answer)
		}
		st.dropLocked()
		return
	}
	st.emitLocked(answer.body)
	st.finalCode = answer.code
	st.final = true
	st.onIdle = nil
	st.stopGrace()
	if st.mb == nil {
		st.forgetLater()
	}
}

// closeConnection ends the stream's current connection without ending the
// stream: the client resumes with GET and Last-Event-ID after the retry
// delay (2025-11-25 polling). It reports whether a connection was
// attached.
func (st *stream) closeConnection(retry time.Duration) bool {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.mb == nil || !st.started {
		return false
	}
	if retry <= 0 {
		retry = s.tab.opts.Retry
	}
	st.closeRetry = retry
	st.wakeLocked()
	return true
}

// dropLocked forgets a stream that has nothing more to give.
func (st *stream) dropLocked() {
	if st.id != 0 && st.s.streams[st.id] == st {
		delete(st.s.streams, st.id)
	}
}

// detach is called by a connection's loop when it ends. A POST stream
// whose result is not out yet gives its client ResumeGrace to come back
// before its call is cancelled; a finished POST stream is forgotten at
// once if its result was delivered, else after ResumeGrace.
func (st *stream) detach(mb *controller.Mailbox, delivered bool) {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.mb != mb {
		return
	}
	st.mb = nil
	st.woken = false
	st.closeRetry = 0
	if st.room != nil {
		// A producer waiting for this connection stops waiting.
		close(st.room)
		st.room = nil
	}
	if st.id == 0 {
		return
	}
	if st.final && delivered {
		st.dropLocked()
		return
	}
	if s.ended || st.grace != nil {
		return
	}
	if st.final {
		st.forgetLater()
	} else if st.onIdle != nil {
		st.grace = time.AfterFunc(s.tab.opts.ResumeGrace, st.graceExpired)
	}
}

// forgetLater drops a finished POST stream that nobody is connected to
// after ResumeGrace, unless a client resumed it by then: a client that
// never comes back does not leave its result in the session for ever.
func (st *stream) forgetLater() {
	st.stopGrace()
	st.grace = time.AfterFunc(st.s.tab.opts.ResumeGrace, func() {
		s := st.s
		s.mu.Lock()
		defer s.mu.Unlock()
		if st.mb == nil {
			st.grace = nil
			st.dropLocked()
		}
	})
}

func (st *stream) graceExpired() {
	s := st.s
	s.mu.Lock()
	if st.mb != nil || st.final {
		s.mu.Unlock()
		return
	}
	cancel := st.onIdle
	st.grace = nil
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (st *stream) stopGrace() {
	if st.grace != nil {
		st.grace.Stop()
		st.grace = nil
	}
}

// connState is the loop state of one stream connection.
type connState struct {
	st *stream
	mb *controller.Mailbox
	// prime is the priming event, sent with the first chunk; cursor is
	// the last seq taken.
	prime  []byte
	cursor int64
	ctx    context.Context // the connection's request's, for its log line
}

// handleConn is the loop of every stream connection, POST or GET.
func handleConn(info any, push controller.Push, c *connState) (*connState, controller.Action) {
	switch info.(type) {
	case wake:
		chunk, last, done, retry := c.st.take(c)
		if len(chunk) > 0 {
			if push(chunk) != nil {
				return c, controller.Continue // a Disconnect follows
			}
			if last > 0 {
				c.st.markDelivered(last)
			}
		}
		if done {
			// finalCode was set before final, under the lock take held.
			c.st.s.tab.t.errorCode(c.ctx, c.st.finalCode)
			c.st.detach(c.mb, true)
			return c, controller.Stop(nil)
		}
		if retry > 0 {
			c.st.detach(c.mb, false)
			return c, controller.Stop(sse.AppendRetry(nil, retry))
		}
	case keepAlive:
		_ = push(sse.AppendComment(nil, ""))
	case sessionGone:
		c.st.detach(c.mb, false)
		return c, controller.Stop(nil)
	case controller.Disconnect:
		c.st.detach(c.mb, false)
	}
	return c, controller.Continue
}

func (st *stream) markDelivered(seq int64) {
	st.s.mu.Lock()
	if seq > st.delivered {
		st.delivered = seq
	}
	st.s.mu.Unlock()
}

// streamReply turns the connection into the stream's loop: held session,
// monitored session end, keep-alives.
func (st *stream) streamReply(r *controller.Request, c *connState) controller.Reply {
	s := st.s
	mb := r.Mailbox()
	if s.hold() {
		mb.Defer(s.release)
	}
	mb.Monitor(s.Done(), sessionGone{})
	mb.Every(s.tab.t.keepAlive(), keepAlive{})
	header := http.Header{}
	sse.Headers(header)
	return controller.Loop(http.StatusOK, header, c, handleConn)
}

// parseEventID splits "<stream>-<seq>", ignoring a request id tag
// (".<tag>", clustered sessions' POST streams).
func parseEventID(id string) (stream, seq int64, ok bool) {
	a, b, found := strings.Cut(id, "-")
	if !found {
		return 0, 0, false
	}
	b, _, _ = strings.Cut(b, ".")
	stream, err1 := strconv.ParseInt(a, 10, 64)
	seq, err2 := strconv.ParseInt(b, 10, 64)
	return stream, seq, err1 == nil && err2 == nil && stream >= 0 && seq >= 0
}

var errStreamBusy = "Conflict: this stream already has a connection"

// maxIDJump bounds how far a Last-Event-ID from the future moves the GET
// stream's numbering on: further than any replica numbers a session's
// events, so only a made-up id goes past it (and replays nothing).
const maxIDJump = 1 << 40

// get serves GET: the session's standalone stream, or the resumption of
// any of its streams after Last-Event-ID.
func (tab *sessionTable) get(r *controller.Request) controller.Reply {
	s, reply := tab.lookup(r.Request)
	if reply != nil {
		return reply
	}
	if _, stream := accepts(r.Header.Values("Accept")); !stream {
		return errorReply(http.StatusNotAcceptable, jsonrpcNotAcceptableSSE)
	}
	if _, bad := protocolHeader(r.Request); bad != nil {
		return bad
	}
	if s == nil {
		return errorReply(http.StatusBadRequest, errSessionRequired)
	}
	s.attrs(r.Request)
	if tab.t.closing() {
		return shuttingDown(wire.ID{})
	}
	who := tab.t.callerOf(r.Request)
	mb := r.Mailbox()
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return errorReply(http.StatusNotFound, errSessionNotFound)
	}
	var st *stream
	var after int64
	if sid, seq, ok := parseEventID(sse.LastEventID(r.Request)); ok {
		if found := s.streams[sid]; found != nil || sid == 0 {
			st, after = s.streamLocked(sid), seq
		}
	}
	if st == nil {
		if lost := tab.lostCall(sse.LastEventID(r.Request)); lost != nil {
			s.mu.Unlock()
			return lost
		}
		st = s.streamLocked(0)
		after = st.delivered
	}
	if st.mb != nil {
		s.mu.Unlock()
		return errorReply(http.StatusConflict, wire.NewError(wire.InvalidRequest, errStreamBusy))
	}
	if !tab.t.callers.acquire(who, holdStream, tab.t.cfg.Limits.Streams) {
		s.mu.Unlock()
		return tooManyReply(5, wire.AppendErrorResponse(nil, wire.ID{}, errTooManyStreams))
	}
	mb.Defer(func() { tab.t.callers.release(who, holdStream) })
	if obs := tab.t.cfg.Observer; obs != nil {
		obs.StreamOpened()
		mb.Defer(obs.StreamClosed)
	}
	if after > st.next-1 {
		if st.id == 0 && after-st.next < maxIDJump {
			// The GET stream's events were numbered further by a
			// replica that ran the session before and did not log
			// them all: number the next ones after what the client
			// saw, so that no id it holds comes back.
			st.next = after + 1
			st.delivered = after
		} else {
			after = st.next - 1 // an id from the future replays nothing
		}
	}
	if st.id == 0 && !st.persist {
		st.persistLocked()
	}
	st.mb = mb
	st.taken = after
	st.stopGrace()
	c := &connState{st: st, mb: mb, prime: st.primingFrame(after), cursor: after, ctx: r.Context()}
	st.woken = false
	st.wakeLocked()
	s.mu.Unlock()
	return st.streamReply(r, c)
}
