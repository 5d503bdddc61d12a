package controller

import (
	"net/http"
)

// Push writes one frame to the client and flushes it. It returns the write
// error when the client is gone or the write timed out; the loop then
// receives a [Disconnect] after the current message. An empty frame
// flushes only.
type Push func(frame []byte) error

// Action tells a loop whether to go on; see [Continue] and [Stop].
type Action struct {
	stop  bool
	final []byte
}

// Continue keeps the loop running.
var Continue = Action{}

// Stop ends the loop after writing final (nothing when it is nil). The
// response then ends normally.
func Stop(final []byte) Action { return Action{stop: true, final: final} }

// Disconnect is the message a loop receives, exactly once and last, when
// its client goes away, a push fails, or (under [OverflowDisconnect]) the
// mailbox overflows. Whatever HandleInfo returns for it, the loop ends, and
// pushes made while handling it fail.
type Disconnect struct {
	// Err says why: the request context's error, the write error, or
	// [ErrMailboxFull].
	Err error
}

// HandleInfo is a loop's message handler: it gets each message sent to the
// mailbox (and monitor and timer messages), a push function, and the
// current state, and returns the new state and what to do next. It runs on
// the connection's goroutine, one message at a time.
type HandleInfo[S any] func(info any, push Push, state S) (S, Action)

type loopReply[S any] struct {
	status int
	header http.Header
	state  S
	handle HandleInfo[S]
}

// Loop replies with a status and headers, flushed at once, and then turns
// the connection into a loop over its [Mailbox]: each message is passed to
// handle with the state the previous call returned, starting from state.
// See the package documentation for how a loop ends. For an event stream,
// set the headers with sse.Headers and frame pushes with sse.Event.AppendTo.
func Loop[S any](status int, header http.Header, state S, handle HandleInfo[S]) Reply {
	return &loopReply[S]{status: status, header: header, state: state, handle: handle}
}

func (l *loopReply[S]) serve(c *conn) {
	defer c.recoverStream()
	defer c.finish()
	mb := c.req.Mailbox()
	defer mb.close()
	c.writeHead(l.status, l.header)
	state := l.state
	if err := c.write(nil); err != nil {
		l.handle(Disconnect{Err: err}, c.dead, state)
		return
	}
	ctx := c.r.Context()
	tick, tickInfo := mb.ticker()
	push := Push(c.write) // once: a method value per message would allocate
	for {
		info, ok := mb.take()
		if ok {
			// A queued message does not hide a disconnect: check as the
			// channel select used to, without blocking.
			select {
			case <-ctx.Done():
				l.handle(Disconnect{Err: ctx.Err()}, c.dead, state)
				return
			case <-mb.kill:
				l.handle(Disconnect{Err: ErrMailboxFull}, c.dead, state)
				return
			default:
			}
		} else {
			select {
			case <-mb.ready:
				continue
			case <-tick:
				info = tickInfo
			case <-ctx.Done():
				l.handle(Disconnect{Err: ctx.Err()}, c.dead, state)
				return
			case <-mb.kill:
				l.handle(Disconnect{Err: ErrMailboxFull}, c.dead, state)
				return
			}
		}
		var act Action
		state, act = l.handle(info, push, state)
		if c.err != nil {
			l.handle(Disconnect{Err: c.err}, c.dead, state)
			return
		}
		if act.stop {
			if act.final != nil {
				_ = c.write(act.final)
			}
			return
		}
	}
}

// dead is the push a loop gets while handling its Disconnect.
func (c *conn) dead([]byte) error {
	if c.err != nil {
		return c.err
	}
	return ErrClosed
}
