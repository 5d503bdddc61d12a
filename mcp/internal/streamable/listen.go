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

// listenLimits counts open streams.
type listenLimits struct {
	mu    sync.Mutex
	by    map[string]int
	total int
}

func (l *listenLimits) acquire(id string, perIdentity, total int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by == nil {
		l.by = map[string]int{}
	}
	if l.total >= total || l.by[id] >= perIdentity {
		return false
	}
	l.total++
	l.by[id]++
	return true
}

func (l *listenLimits) release(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.by[id]--; l.by[id] <= 0 {
		delete(l.by, id)
	}
}

var errTooManyListeners = wire.NewError(wire.InternalError, "Too many subscriptions: close one first")

type listenWake struct{}

// listen serves subscriptions/listen.
func (t *Transport) listen(r *controller.Request, msg *wire.Message, mc *modernCall) controller.Reply {
	mb := r.Mailbox()
	call := &protocol.Call{Method: msg.Method, ID: msg.ID, Params: msg.Params,
		Revision: protocol.Rev20260728, Client: mc.client, LogLevel: mc.logLevel}
	if t.cfg.Identity != nil {
		call.Identity = t.cfg.Identity(r.Request)
	}
	l, perr := t.engine.Listen(call, func() { _ = mb.Send(listenWake{}) })
	if perr != nil {
		return modernErrorReply(http.StatusBadRequest, msg.ID, perr)
	}
	if !t.listeners.acquire(call.Identity, t.cfg.MaxListenersPerIdentity, t.cfg.MaxListeners) {
		l.Close()
		h := jsonHeader()
		h.Set("Retry-After", "5")
		return controller.Buffered(http.StatusTooManyRequests, h, appendModernError(nil, msg.ID, errTooManyListeners))
	}
	ident := call.Identity
	mb.Defer(func() { t.listeners.release(ident) })
	mb.Defer(l.Close)
	mb.Defer(t.changes.add(l.Changed))
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
	}
	return l, controller.Continue
}
