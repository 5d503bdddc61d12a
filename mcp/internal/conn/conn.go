// Package conn is the MCP transport over a connection that carries whole
// JSON-RPC messages in both directions: stdio (newline-delimited JSON on
// stdin and stdout), and the in-process connection of package mcptest. A
// connection is one session: initialize starts it for the revisions before
// 2026-07-28, and 2026-07-28 requests are served on their own, by their
// _meta, on the same connection.
//
// Every request runs on a goroutine of its own (a worker, reused by later
// requests while the session lasts and it has not idled 10 s), so a slow
// tool does not hold up ping or a cancellation; stateful callbacks take the session's turn,
// one at a time, exactly as over HTTP. What a call sends (notifications,
// server→client requests, its response) is written with the call's id as
// the related id, for connections that keep a call's messages together.
// The end of the input (stdin closed) ends the session gently: the calls
// already running finish and their answers are written, within Grace;
// what still runs shortly before Grace ends is cancelled. The end of ctx,
// or a failed read or write, cancels the running calls at once.
package conn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/saguaro-go/saguaro/internal/jsonstr"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/session"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// Conn carries whole JSON-RPC messages between a client and Serve.
type Conn interface {
	// Read returns the next message from the client: one JSON-RPC message
	// or a batch, which Serve keeps (Read must not reuse its buffer). It
	// returns io.EOF when the client is done; any error ends the session.
	Read(ctx context.Context) ([]byte, error)
	// Write sends one message to the client. related is the id of the
	// client's request the message belongs to (its response, or what its
	// call sent), zero for none. Serve calls it one message at a time.
	// An error wrapping io.EOF says the client closed its end.
	Write(ctx context.Context, msg []byte, related wire.ID) error
}

// Config configures Serve.
type Config struct {
	// Engine serves the protocol. Required.
	Engine protocol.Engine
	// Identity is who the client is (stdio takes it from the
	// environment); it binds 2026-07-28 requestState and tasks.
	Identity string
	// Logger receives transport trouble. Required.
	Logger *slog.Logger
	// RequestTimeout bounds each call; not positive means none.
	RequestTimeout time.Duration
	// QueueSize bounds the stateful callbacks waiting for their turn.
	QueueSize int
	// Grace bounds how long Serve takes to return once the input or ctx
	// ended: after the input's end the calls running may finish until
	// shortly before it (a tenth of it, at most a second), then they are
	// cancelled; after ctx's they are cancelled at once. Either way Serve
	// waits for their answers to be written until Grace has passed, then
	// returns ErrCallsRunning. Default 5 seconds.
	Grace time.Duration
	// MaxBatch bounds the messages of a batch (-32600 beyond it); 0 is
	// none.
	MaxBatch int
	// MaxAnswer bounds the bytes of a batch's answer (its requests past
	// the bound are answered with an error, not run); 0 is none.
	MaxAnswer int
}

// ErrCallsRunning is what Serve returns when calls were still running a
// Grace after the input ended: their handlers do not honour their
// context, or a write of theirs waits on a client that stopped reading.
var ErrCallsRunning = errors.New("mcp: calls still running after the connection ended")

// errInputEnded is what a server→client request gets once the client
// closed its input: its answer can no longer arrive.
var errInputEnded = fmt.Errorf("%w: the client closed its input", protocol.ErrSessionEnded)

// server is one connection's session and what runs in it.
type server struct {
	cfg  Config
	eng  protocol.Engine
	c    Conn
	ctx  context.Context
	wctx context.Context    // ctx without its cancellation, for writes
	stop context.CancelFunc // stops reading: the output failed
	log  *slog.Logger

	queued  atomic.Int32   // writers waiting for wmu, the one holding it included
	tasks   chan func()    // hands a call to an idle worker
	quit    chan struct{}  // closed once the calls are done: idle workers exit
	workers sync.WaitGroup // worker goroutines

	wmu sync.Mutex // one Write at a time

	mu        sync.Mutex
	sess      *session.Session    // nil until initialize
	cancelled map[wire.ID]bool    // calls the client cancelled: no response
	listeners map[*listening]bool // open subscriptions/listen
	calls     sync.WaitGroup      // requests running
	modern    *session.Session    // the calls of 2026-07-28 requests, for cancellation
	writeErr  error               // the first Write that failed
	changes   func()              // removes the engine's change hook
	ended     chan struct{}       // closed when the session ended
	endOnce   sync.Once

	input      context.Context // done once the client's input ended
	inputEnded context.CancelFunc
}

// Serve serves one session over c until c's input ends (nil) or fails
// (its error), its output is closed by the client (nil) or fails (its
// error), or ctx ends (nil).
func Serve(ctx context.Context, cfg Config, c Conn) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &server{cfg: cfg, eng: cfg.Engine, c: c, ctx: ctx, wctx: context.WithoutCancel(ctx), stop: cancel, log: cfg.Logger,
		tasks: make(chan func()), quit: make(chan struct{}),
		cancelled: map[wire.ID]bool{}, listeners: map[*listening]bool{},
		modern: session.New(protocol.Rev20260728, nil, nil, 0), ended: make(chan struct{})}
	s.input, s.inputEnded = context.WithCancel(context.Background())
	defer s.inputEnded()
	s.changes = s.eng.OnChange(s.changed)
	// The input is read on a goroutine of its own, so that a write the
	// client does not take (it stopped reading) cannot keep Serve from
	// seeing ctx end: the grace below bounds that write too.
	read := make(chan error, 1)
	go func() { read <- s.read(ctx) }()
	var err error
	drain := false
	select {
	case err = <-read:
		read = nil
		// The input ended by itself, not because ctx did or a write
		// failed: the client said all it had to say, and may still read
		// the answers of what it asked (printf '…' | server -stdio).
		drain = err == nil && ctx.Err() == nil
	case <-ctx.Done():
	}
	grace := cfg.Grace
	if grace <= 0 {
		grace = 5 * time.Second
	}
	deadline := time.Now().Add(grace)
	// done is the reader's error once the reader and every call are over.
	// The reader goes first: it alone starts calls.
	done := make(chan error, 1)
	go func() {
		var rerr error
		if read != nil {
			rerr = <-read
		}
		s.calls.Wait()
		done <- rerr
	}()
	finished := false
	if drain {
		s.endInput()
		// Cancelled a little before the grace ends (as Endpoint.Shutdown
		// does), the calls still running can answer before it does.
		t := time.NewTimer(grace - min(grace/10, time.Second))
		select {
		case <-done:
			finished = true
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	s.end()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	if finished {
		close(s.quit)
		s.workers.Wait() // idle now: they exit at once
	} else {
		select {
		case rerr := <-done:
			if err == nil {
				err = rerr
			}
			close(s.quit)
			s.workers.Wait()
		case <-t.C:
			close(s.quit)
			s.log.Error("mcp: calls still running after the connection ended")
			if err == nil {
				err = ErrCallsRunning
			}
		}
	}
	if err == nil {
		s.mu.Lock()
		err = s.writeErr
		s.mu.Unlock()
		if errors.Is(err, io.EOF) {
			err = nil // the client closed its end: it left, as at the end of input
		}
	}
	return err
}

// read reads and serves the client's messages until the input ends (nil)
// or fails (its error), or ctx ends (nil).
func (s *server) read(ctx context.Context) error {
	for {
		msg, rerr := s.c.Read(ctx)
		if errors.Is(rerr, ErrTooLarge) {
			s.writeError(wire.ID{}, errTooLarge)
			continue
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) && ctx.Err() == nil {
				return rerr
			}
			return nil
		}
		s.handle(msg)
	}
}

// endInput is the end of the client's input: the server→client requests
// waiting for an answer fail, as do new ones, and the subscriptions/listen
// streams end; the calls go on.
func (s *server) endInput() {
	s.inputEnded()
	s.mu.Lock()
	ls := make([]*listening, 0, len(s.listeners))
	for l := range s.listeners {
		ls = append(ls, l)
	}
	s.mu.Unlock()
	for _, l := range ls {
		l.cancel()
	}
}

// end ends the session: every call is cancelled, every subscription ends.
func (s *server) end() {
	s.endOnce.Do(func() {
		close(s.ended)
		s.changes()
		s.mu.Lock()
		sess := s.sess
		s.mu.Unlock()
		if sess != nil {
			sess.End()
		}
		s.modern.End()
	})
}

// workerIdle is how long an idle worker waits for another call.
const workerIdle = 10 * time.Second

// spawn runs task on an idle worker, else on a new one. Workers outlive
// their calls (until workerIdle passes without one, or the session ends)
// to keep their grown stacks: a call's path through the engine is deep,
// and a new goroutine's small stack grew by copying on every call, a
// fifth of a small call's CPU.
func (s *server) spawn(task func()) {
	select {
	case s.tasks <- task:
	default:
		s.workers.Add(1)
		go s.worker(task)
	}
}

func (s *server) worker(task func()) {
	defer s.workers.Done()
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		task()
		task = nil
		idle.Reset(workerIdle)
		select {
		case task = <-s.tasks:
		case <-idle.C:
			return
		case <-s.quit:
			return
		}
	}
}

// heldWriter is a Conn that can hold a message back until the next Write
// (the stdio framing buffers it), so that messages written back to back
// leave together.
type heldWriter interface {
	WriteHeld(ctx context.Context, msg []byte, related wire.ID) error
}

// write sends one message; the first failure ends the session: nothing
// more is read, and the calls running are cancelled. When another writer
// waits for its turn, a connection that can hold messages back holds
// this one: the last writer of a run sends them all.
func (s *server) write(msg []byte, related wire.ID) error {
	s.queued.Add(1)
	s.wmu.Lock()
	var err error
	if hw, ok := s.c.(heldWriter); ok && s.queued.Load() > 1 {
		err = hw.WriteHeld(s.wctx, msg, related)
	} else {
		err = s.c.Write(s.wctx, msg, related)
	}
	s.queued.Add(-1)
	s.wmu.Unlock()
	if err != nil {
		s.mu.Lock()
		if s.writeErr == nil {
			s.writeErr = err
			if !errors.Is(err, io.EOF) {
				s.log.Warn("mcp: the connection refused a message; the session ends", slog.Any("err", err))
			}
		}
		s.mu.Unlock()
		s.stop()
		go s.end()
	}
	return err
}

// writeError answers a request with an error.
func (s *server) writeError(id wire.ID, e *wire.Error) {
	_ = s.write(wire.AppendErrorResponse(nil, id, e), id)
}

// handle serves one message from the client. The message is the
// transport's: what the engine reads may alias it.
func (s *server) handle(body []byte) {
	body = trimSpace(body)
	if len(body) == 0 {
		return
	}
	if wire.IsBatch(body) {
		s.batch(body)
		return
	}
	msg, derr := s.eng.Decoder().Decode(body)
	if derr != nil {
		s.writeError(msg.ID, derr)
		return
	}
	switch msg.Kind {
	case wire.KindResponse, wire.KindErrorResponse:
		if sess := s.session(); sess != nil {
			sess.Deliver(&msg)
		}
		return
	}
	if msg.Method == "notifications/cancelled" {
		s.cancel(&msg)
		return
	}
	if protocol.HasModernMeta(msg.Params) {
		s.modernMessage(&msg)
		return
	}
	s.legacy(&msg)
}

// session is the legacy session, nil before initialize.
func (s *server) session() *session.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sess
}

// cancel serves notifications/cancelled: the call it names, in the
// session or among the 2026-07-28 calls, is cancelled and gets no
// response.
func (s *server) cancel(msg *wire.Message) {
	call := protocol.Call{Method: msg.Method, Params: msg.Params, Revision: protocol.Rev20251125, Tape: msg.Tape, Identity: s.cfg.Identity}
	if sess := s.session(); sess != nil {
		call.Revision = sess.Revision()
	}
	reply := s.eng.Dispatch(s.ctx, &call, nil)
	if reply.Effect.Kind != protocol.EffectCancel {
		return // invalid cancellations are ignored
	}
	id := reply.Effect.RequestID
	s.mu.Lock()
	s.cancelled[id] = true
	sess := s.sess
	s.mu.Unlock()
	if sess != nil {
		sess.Cancel(id)
	}
	s.modern.Cancel(id)
}

// finish writes a request's response unless the client cancelled it.
func (s *server) finish(id wire.ID, reply protocol.Reply) {
	s.mu.Lock()
	cancelled := s.cancelled[id]
	delete(s.cancelled, id)
	s.mu.Unlock()
	if cancelled {
		if reply.Pooled != nil {
			wire.PutBuffer(reply.Pooled)
		}
		return
	}
	_ = s.write(s.eng.AppendReply(nil, id, reply), id)
}

// changed hears a change of the handler's lists or of a resource: the
// session hears it once initialized (a resource update only when it
// subscribed), and every subscriptions/listen stream as it asked.
func (s *server) changed(c protocol.Change) {
	s.mu.Lock()
	sess := s.sess
	ls := make([]*listening, 0, len(s.listeners))
	for l := range s.listeners {
		ls = append(ls, l)
	}
	s.mu.Unlock()
	for _, l := range ls {
		l.l.Changed(c)
	}
	if sess == nil || !sess.Initialized() || c.Kind == protocol.ResourceUpdated && !sess.Subscribed(c.URI) {
		return
	}
	method := c.Notification()
	if method == "" {
		return
	}
	var params []byte
	if c.Kind == protocol.ResourceUpdated {
		params = append(jsonstr.AppendString([]byte(`{"uri":`), c.URI), '}')
	}
	msg, end := s.eng.TraceChange(s.ctx, sess.Revision(), "", wire.AppendNotification(nil, method, params))
	_ = s.write(msg, wire.ID{})
	if end != nil {
		end()
	}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
