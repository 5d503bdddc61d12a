package controller

import (
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"
)

// Controller answers a request with a reply.
type Controller interface {
	Handle(r *Request) Reply
}

// Func adapts an ordinary function to a Controller.
type Func func(r *Request) Reply

// Handle calls f(r).
func (f Func) Handle(r *Request) Reply { return f(r) }

// Options configures the handler [New] builds. The zero value (or nil) uses
// the defaults.
type Options struct {
	// State is route state handed to every request ([Request.State]),
	// like Arizona's route opts.state. It is shared by all requests: treat
	// it as read-only or guard it yourself.
	State any
	// MailboxSize bounds each request's mailbox, and how many messages a
	// loop handles between two flushes; default 64. A fan-out source that
	// drops subscribers whose mailbox is full (sse.Hub) drops a client that
	// falls this many messages behind: size it for the longest burst a
	// client must absorb.
	MailboxSize int
	// Overflow is what a full mailbox does; default [OverflowReject].
	Overflow Overflow
	// WriteTimeout bounds each push or send (write and flush), so a client
	// that stopped reading cannot hold a loop forever; default 10s,
	// negative means none.
	WriteTimeout time.Duration
	// Logger receives panics with their stacks and errors returned by
	// stream functions; default slog.Default().
	Logger *slog.Logger
}

type handler struct {
	c     Controller
	opts  Options
	heads heads
}

// New returns an http.Handler that serves c. The caller's Options are
// copied; changing them afterwards has no effect. A panic in Handle becomes
// a 500 with a short body, and the panic and its stack are logged through
// [Options.Logger]; the process keeps running (a panic in a loop's
// HandleInfo: see [Loop]).
func New(c Controller, opts *Options) http.Handler {
	h := &handler{c: c}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.MailboxSize <= 0 {
		h.opts.MailboxSize = 64
	}
	if h.opts.WriteTimeout == 0 {
		h.opts.WriteTimeout = 10 * time.Second
	}
	if h.opts.Logger == nil {
		h.opts.Logger = slog.Default()
	}
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req := &Request{Request: r, h: h, w: w}
	defer req.release()
	h.handle(req).serve(req)
}

// handle calls the controller and turns a panic, or a nil reply, into a
// 500.
func (h *handler) handle(req *Request) (reply Reply) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			h.logPanic(req.Request, v)
			reply = internalError()
		}
	}()
	reply = h.c.Handle(req)
	if reply == nil {
		h.opts.Logger.ErrorContext(req.Context(), "controller: Handle returned a nil reply",
			slog.String("path", req.URL.Path))
		reply = internalError()
	}
	return reply
}

func (h *handler) logPanic(r *http.Request, v any) {
	h.opts.Logger.ErrorContext(r.Context(), "controller: panic",
		slog.Any("panic", v),
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.String("stack", string(debug.Stack())))
}

func internalError() Reply {
	return Buffered(http.StatusInternalServerError,
		http.Header{"Content-Type": {"text/plain; charset=utf-8"}},
		[]byte("internal server error\n"))
}
