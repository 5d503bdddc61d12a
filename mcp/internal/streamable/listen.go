package streamable

import (
	"net/http"
	"sync"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
	"github.com/saguaro-go/saguaro/sse"
)

// subscriptions/listen over HTTP: a POST whose response is a long-lived
// event stream, served as a controller loop. The engine's Listener holds
// what is pending and coalesces it; the loop takes it when woken (one
// wake-up message at a time sits in the mailbox) and writes it as events.
// Keep-alive comments go out while nothing happens; closing the stream
// ends the subscription.

// listenLimits counts the endpoint's open subscription streams, and
// keeps their mailboxes so that Shutdown can end them.
type listenLimits struct {
	mu    sync.Mutex
	total int
	open  map[*controller.Mailbox]struct{}
	ended bool // Shutdown ended them: a stream that opens late ends at once
}

func (l *listenLimits) acquire(total int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total >= total {
		return false
	}
	l.total++
	return true
}

func (l *listenLimits) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
}

// track keeps mb until its loop ends; a stream that opens after endAll
// is told to end at once.
func (l *listenLimits) track(mb *controller.Mailbox) {
	l.mu.Lock()
	if l.open == nil {
		l.open = map[*controller.Mailbox]struct{}{}
	}
	l.open[mb] = struct{}{}
	ended := l.ended
	l.mu.Unlock()
	mb.Defer(func() {
		l.mu.Lock()
		delete(l.open, mb)
		l.mu.Unlock()
	})
	if ended {
		_ = mb.Notify(streamEnd{})
	}
}

var errTooManyListeners = wire.NewError(wire.InternalError, "Too many subscriptions: close one first")

type listenWake struct{}

// listen serves subscriptions/listen.
func (t *Transport) listen(r *controller.Request, msg *wire.Message, mc *modernCall) controller.Reply {
	if t.closing() {
		return shuttingDown(msg.ID)
	}
	mb := r.Mailbox()
	call := &protocol.Call{Method: msg.Method, ID: msg.ID, Params: msg.Params,
		Revision: protocol.Rev20260728, Client: mc.client, LogLevel: mc.logLevel}
	if t.cfg.Identity != nil {
		call.Identity = t.cfg.Identity(r.Request)
	}
	l, perr := t.engine.Listen(r.Context(), call, func() { _ = mb.Send(listenWake{}) })
	if perr != nil {
		return modernErrorReply(http.StatusBadRequest, msg.ID, perr)
	}
	if !t.listeners.acquire(t.cfg.MaxListeners) {
		l.Close()
		return tooManyReply(5, appendModernError(nil, msg.ID, errTooManyListeners))
	}
	c := t.callerOf(r.Request)
	if !t.callers.acquire(c, holdStream, t.cfg.Limits.Streams) {
		t.listeners.release()
		l.Close()
		return tooManyReply(5, appendModernError(nil, msg.ID, errTooManyStreams))
	}
	mb.Defer(func() {
		t.listeners.release()
		t.callers.release(c, holdStream)
	})
	if obs := t.cfg.Observer; obs != nil {
		obs.StreamOpened()
		mb.Defer(obs.StreamClosed)
	}
	mb.Defer(l.Close)
	mb.Defer(t.changes.add(l.Changed))
	t.listeners.track(mb)
	_ = mb.Send(listenWake{}) // the acknowledgement
	mb.Every(t.keepAlive(), keepAlive{})
	h := http.Header{}
	sse.Headers(h)
	return controller.Loop(http.StatusOK, h, l, handleListen)
}

// handleListen is the loop of a subscription stream.
func handleListen(info any, push controller.Push, l protocol.Listener) (protocol.Listener, controller.Action) {
	switch info.(type) {
	case listenWake:
		var chunk []byte
		for _, m := range l.Take(nil) {
			ev := sse.Event{Data: m}
			chunk, _ = ev.AppendTo(chunk)
		}
		if len(chunk) > 0 {
			_ = push(chunk)
		}
	case keepAlive:
		_ = push(sse.AppendComment(nil, ""))
	case streamEnd:
		return l, controller.Stop(nil)
	}
	return l, controller.Continue
}
