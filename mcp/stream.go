package mcp

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/saguaro-go/saguaro/controller"
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
// All fields are guarded by the session's mutex.
type stream struct {
	s  *session
	id int64

	log       []streamEvent
	logBytes  int
	next      int64 // seq of the next event; the first is 1
	delivered int64 // highest seq pushed to a connection

	mb      *controller.Mailbox // the attached connection, or nil
	started bool                // a POST stream: its connection turned into an event stream
	final   bool                // a POST stream: its response is in the log
	onIdle  func()              // a POST stream: cancels its call
	grace   *time.Timer
}

type streamEvent struct {
	seq   int64
	frame []byte
}

// Messages a stream connection's loop handles.
type (
	frameMsg struct {
		st    *stream
		seq   int64
		frame []byte
	}
	streamDone  struct{}                      // the stream's last event was sent: end the response
	closeConn   struct{ retry time.Duration } // end this connection, keep the stream (polling)
	sessionGone struct{}
	keepAlive   struct{}
	// streamStarted tells a POST's Handle that its call emitted
	// something: answer with an event stream.
	streamStarted struct{}
	// callDone carries a call's result to a POST's Handle when nothing was
	// emitted first: answer with JSON.
	callDone struct{ body []byte }
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
		st = &stream{s: s, id: id, next: 1}
		s.streams[id] = st
	}
	return st
}

// newCallStream makes the response stream of one POST, attached to the
// POST's connection, not yet started.
func (s *session) newCallStream(mb *controller.Mailbox, onIdle func()) *stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextStream++
	st := s.streamLocked(s.nextStream)
	st.mb = mb
	st.onIdle = onIdle
	return st
}

// eventFrame frames one JSON-RPC message as an event of this stream.
func (st *stream) eventFrame(seq int64, data []byte) []byte {
	ev := sse.Event{ID: formatEventID(st.id, seq), Data: data}
	frame, _ := ev.AppendTo(make([]byte, 0, len(data)+32))
	return frame
}

// primingFrame opens a connection: an event with an id and empty data
// (so the client has a Last-Event-ID to resume from even before the first
// message) and the reconnection delay.
func (st *stream) primingFrame(after int64) []byte {
	ev := sse.Event{ID: formatEventID(st.id, after), Retry: st.s.tab.opts.Retry}
	frame, _ := ev.AppendTo(nil)
	return frame
}

// emit appends one message to the stream and sends it to the attached
// connection, starting a POST's event stream if it has not started. It
// reports false when the session has ended.
func (st *stream) emit(data []byte) bool {
	s := st.s
	s.mu.Lock()
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
		if st.mb != nil {
			_ = st.mb.Send(streamStarted{})
			_ = st.mb.Send(frameMsg{st: st, frame: st.primingFrame(0)})
		}
	}
	seq := st.next
	st.next++
	frame := st.eventFrame(seq, data)
	st.log = append(st.log, streamEvent{seq: seq, frame: frame})
	st.logBytes += len(frame)
	max := st.s.tab.opts.StreamEvents
	for len(st.log) > 1 && (len(st.log) > max || st.logBytes > maxStreamLogBytes) {
		st.logBytes -= len(st.log[0].frame)
		st.log[0] = streamEvent{}
		st.log = st.log[1:]
	}
	if st.mb != nil {
		// Under OverflowDisconnect a full mailbox ends the connection;
		// the event stays in the log for the client's resume.
		_ = st.mb.Send(frameMsg{st: st, seq: seq, frame: frame})
	}
}

// finish records a POST's result: as the stream's last event when the
// stream started, or handed to the waiting Handle as a JSON answer.
func (st *stream) finish(body []byte) {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if !st.started {
		if st.mb != nil {
			_ = st.mb.Send(callDone{body: body})
		}
		st.dropLocked()
		return
	}
	st.emitLocked(body)
	st.final = true
	st.onIdle = nil
	st.stopGrace()
	if st.mb != nil {
		_ = st.mb.Send(streamDone{})
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
	return st.mb.Send(closeConn{retry: retry}) == nil
}

// dropLocked forgets a stream that has nothing more to give.
func (st *stream) dropLocked() {
	if st.id != 0 && st.s.streams[st.id] == st {
		delete(st.s.streams, st.id)
	}
}

// detach is called by a connection's loop when it ends. A POST stream
// whose result is not out yet gives its client ResumeGrace to come back
// before its call is cancelled; a finished POST stream whose result was
// delivered is forgotten.
func (st *stream) detach(mb *controller.Mailbox, delivered bool) {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.mb != mb {
		return
	}
	st.mb = nil
	if st.id == 0 {
		return
	}
	if st.final && delivered {
		st.dropLocked()
		return
	}
	if !st.final && st.onIdle != nil && st.grace == nil && !s.ended {
		st.grace = time.AfterFunc(s.tab.opts.ResumeGrace, st.graceExpired)
	}
}

func (st *stream) graceExpired() {
	s := st.s
	s.mu.Lock()
	if st.mb != nil || st.final {
		st.grace = nil
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
	// lastSeq is the last event pushed; done is set once the stream's
	// last event went out.
	lastSeq int64
	done    bool
}

// handleConn is the loop of every stream connection, POST or GET.
func handleConn(info any, push controller.Push, c *connState) (*connState, controller.Action) {
	switch m := info.(type) {
	case frameMsg:
		if push(m.frame) == nil && m.seq > 0 {
			c.lastSeq = m.seq
			c.st.markDelivered(m.seq)
		}
	case keepAlive:
		_ = push(sse.AppendComment(nil, ""))
	case streamDone:
		c.done = true
		c.st.detach(c.mb, true)
		return c, controller.Stop(nil)
	case closeConn:
		c.st.detach(c.mb, false)
		return c, controller.Stop(sse.AppendRetry(nil, m.retry))
	case sessionGone:
		c.st.detach(c.mb, false)
		return c, controller.Stop(nil)
	case controller.Disconnect:
		c.st.detach(c.mb, c.done)
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
func (st *stream) streamReply(r *controller.Request, header http.Header) controller.Reply {
	s := st.s
	mb := r.Mailbox()
	if s.hold() {
		mb.Defer(s.release)
	}
	mb.Monitor(s.done, sessionGone{})
	mb.Every(s.tab.opts.KeepAlive, keepAlive{})
	if header == nil {
		header = http.Header{}
	}
	sse.Headers(header)
	return controller.Loop(http.StatusOK, header, &connState{st: st, mb: mb}, handleConn)
}

// parseEventID splits "<stream>-<seq>".
func parseEventID(id string) (stream, seq int64, ok bool) {
	a, b, found := strings.Cut(id, "-")
	if !found {
		return 0, 0, false
	}
	stream, err1 := strconv.ParseInt(a, 10, 64)
	seq, err2 := strconv.ParseInt(b, 10, 64)
	return stream, seq, err1 == nil && err2 == nil && stream >= 0 && seq >= 0
}

var errStreamBusy = "Conflict: this stream already has a connection"

// get serves GET: the session's standalone stream, or the resumption of
// any of its streams after Last-Event-ID.
func (tab *sessionTable) get(r *controller.Request) controller.Reply {
	if _, stream := accepts(r.Header.Values("Accept")); !stream {
		return errorReply(http.StatusNotAcceptable, jsonrpcNotAcceptableSSE)
	}
	if _, bad := protocolHeader(r.Request); bad != nil {
		return bad
	}
	s, reply := tab.require(r.Request)
	if reply != nil {
		return reply
	}
	mb := r.Mailbox()
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return errorReply(http.StatusNotFound, errSessionNotFound)
	}
	var st *stream
	var after int64
	resume := false
	if sid, seq, ok := parseEventID(sseLastEventID(r.Request)); ok {
		if found := s.streams[sid]; found != nil || sid == 0 {
			st, after, resume = s.streamLocked(sid), seq, true
		}
	}
	if st == nil {
		st = s.streamLocked(0)
		after = st.delivered
	}
	if st.mb != nil {
		s.mu.Unlock()
		return errorReply(http.StatusConflict, jsonrpcError(errStreamBusy))
	}
	st.mb = mb
	st.stopGrace()
	_ = mb.Send(frameMsg{st: st, frame: st.primingFrame(after)})
	for _, ev := range st.log {
		if ev.seq > after {
			_ = mb.Send(frameMsg{st: st, seq: ev.seq, frame: ev.frame})
		}
	}
	if resume && st.final {
		_ = mb.Send(streamDone{})
	}
	s.mu.Unlock()
	return st.streamReply(r, nil)
}
