package controller

import (
	"net/http"
)

// Push writes one frame to the client. Frames are flushed in batches: the
// loop flushes what its handler pushed before it waits for the next
// message, so a message that arrives alone reaches the client at once,
// while a burst of queued messages goes out in one write (at most one
// mailbox's worth, [Options.MailboxSize], between two flushes). An empty
// frame flushes at once.
//
// Push returns the write error when the client is gone or the write timed
// out; the loop then receives a [Disconnect] after the current message.
// Because writes are buffered, a failure may also be reported by the next
// push or the batch's flush instead of the push that caused it.
//
// Pitfall: frames stay in the buffer while HandleInfo runs. A handler that
// pushes and then blocks (waits on a lock, a network call) holds back
// everything pushed in the batch so far; push an empty frame first to
// flush it.
type Push func(frame []byte) error

// Action tells a loop whether to go on; see [Continue] and [Stop].
type Action struct {
	stop  bool
	final []byte
}

// Continue keeps the loop running.
var Continue = Action{}

// Stop ends the loop after writing final (nothing when it is nil) and
// flushing what was pushed. The response then ends normally.
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
// the connection's goroutine, one message at a time; it must not block,
// since the connection's writes wait for it (see [Push]).
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
// Messages that are already queued are handled back to back and their
// frames flushed together (see [Push]). For an event stream, set the
// headers with sse.Headers and push an sse.Entry's frame, or frame an
// event with sse.Event.AppendTo.
//
// A loop ends in exactly one of these ways:
//
//   - HandleInfo returns [Stop]: its final frame, if any, is written, then
//     the response ends.
//   - The client goes away (the request's context ends) or a push fails:
//     HandleInfo receives one [Disconnect] message, whatever it returns the
//     loop ends, and nothing more is written.
//   - The mailbox overflows under [OverflowDisconnect]: HandleInfo receives
//     [Disconnect] with [ErrMailboxFull], as for a client that went away.
//   - HandleInfo panics: the panic is logged with its stack and the
//     connection is aborted (the client sees a cut stream, not a clean
//     end); the process keeps running.
//
// Whatever the way, the mailbox is then closed: later Sends return
// [ErrClosed] at once, monitor goroutines and the timer end, and functions
// registered with [Mailbox.Defer] run. [Mailbox.Monitor] turns another
// thing's end (a closed channel) into a message, which is how a stream
// learns that the session feeding it died; [Mailbox.Notify] is the same
// for a producer that says so itself.
//
// A loop that waits holds, besides its connection's buffers, its Request,
// its mailbox and the waiting records of the channels it waits on: its
// mailbox's and its request context's, plus one for a [Mailbox.Monitor]
// (a [Mailbox.Every] timer wakes it through its mailbox). An idle stream
// fed by an sse.Hub costs a few hundred bytes on top of what net/http
// holds for any connection.
//
// header is copied into the response and never modified, so the streams
// of a route can share one map, built once (header may be nil): a map per
// stream is a few hundred bytes of garbage for every client that
// connects.
func Loop[S any](status int, header http.Header, state S, handle HandleInfo[S]) Reply {
	return &loopReply[S]{status: status, header: header, state: state, handle: handle}
}

func (l *loopReply[S]) serve(c *Request) {
	defer c.recoverStream()
	defer c.finish()
	mb := c.Mailbox()
	defer mb.close()
	// From here on the reply itself is not used, so that its header map,
	// copied into the response, is not kept for the loop's whole life.
	handle, state := l.handle, l.state
	gone := c.h.heads.write(c, l.status, l.header)
	ctx := c.Request.Context()
	done := ctx.Done()
	push := Push(c.push) // once: a method value per message would allocate
	batch := 0           // messages handled since the last flush
	for gone == nil {
		info, ok := mb.take()
		if ok {
			// A queued message does not hide a disconnect.
			if gone = mb.ended(ctx, done); gone != nil {
				break
			}
		} else {
			// Nothing queued: the batch is over. Flush it, then wait.
			batch = 0
			if c.out.pending() && c.flush() != nil {
				gone = c.err
				break
			}
			if gone = mb.ended(ctx, done); gone != nil {
				break
			}
			if info, ok = mb.wait(done); !ok {
				continue
			}
		}
		var act Action
		state, act = handle(info, push, state)
		if c.err != nil {
			gone = c.err
			break
		}
		if act.stop {
			if act.final != nil {
				_ = c.write(act.final)
			} else if c.out.pending() {
				_ = c.flush()
			}
			break
		}
		if batch++; batch >= int(mb.size) {
			// A mailbox that never empties still reaches the client in
			// steady steps, and still hears of a monitored end.
			batch = 0
			if c.flush() != nil {
				gone = c.err
				break
			}
			mb.poll()
		}
	}
	if gone != nil {
		handle(Disconnect{Err: gone}, c.dead, state)
	}
}

// dead is the push a loop gets while handling its Disconnect.
func (c *Request) dead([]byte) error {
	if c.err != nil {
		return c.err
	}
	return ErrClosed
}
