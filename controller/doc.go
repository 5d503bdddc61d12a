// Package controller brings the Arizona web framework's controller model to
// net/http and chi.
//
// A [Controller] answers a [Request] with a [Reply], a value that says what
// to send, instead of writing to an http.ResponseWriter itself:
//
//   - [Buffered], [JSON], [Status] and [MethodNotAllowed]: a status,
//     headers and a body, sent at once. [Handler] hands the request to an
//     ordinary http.Handler instead.
//   - [Stream]: a status and headers, then a function that sends chunks,
//     each flushed to the client as it is sent.
//   - [Loop]: a status, headers and an initial state. The connection's own
//     goroutine then waits for messages in the request's [Mailbox] and
//     hands each one to a handler, HandleInfo(info, push, state), which
//     returns the new state and whether to stop. push writes one frame.
//     Any goroutine may Send to the mailbox: that is how a session, a
//     pub/sub hub or a timer feeds a live stream.
//
// [New] turns a Controller into a plain http.Handler, so chi routes, Mount
// and middleware work as usual; [Options.State] carries route state into
// the controller ([Request.State], [StateOf]).
//
// # Loop lifetime
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
//     connection is aborted (the client sees a cut stream, not a clean end);
//     the process keeps running.
//
// Whatever the way, the mailbox is then closed: later Sends return
// [ErrClosed] at once, monitor goroutines and the timer end, and functions
// registered with [Mailbox.Defer] run. [Mailbox.Monitor] turns another
// thing's end (a closed channel) into a message, which is how a stream
// learns that the session feeding it died; [Mailbox.Notify] is the same
// for a producer that says so itself.
//
// # Batches
//
// A loop handles the messages its mailbox holds back to back and flushes
// the frames they pushed once, before it waits for the next message. A
// message that arrives alone is flushed at once, so the latency of a quiet
// stream is that of a flush per message; a burst that queued up while the
// connection was busy goes out in a few writes instead of one per message.
// A mailbox that never empties is flushed after each [Options.MailboxSize]
// messages. The pitfall: frames wait in the buffer while HandleInfo runs,
// so a handler that blocks after pushing holds them back; an empty push
// flushes at once (see [Push]).
//
// # Mailbox bounds
//
// A mailbox holds at most [Options.MailboxSize] messages (default 64). Send
// never blocks. When the mailbox is full, the default policy,
// [OverflowReject], refuses the message: Send returns [ErrMailboxFull] and
// the sender decides (drop it, retry, or end the producer). Under
// [OverflowDisconnect] the loop is ended instead, for streams where a lost
// message is worse than a reconnect. [Mailbox.SendContext] waits for room.
// Monitor and Notify messages and timer ticks do not count against the
// bound.
//
// A fan-out source such as sse.Hub (sse.Hub.SubscribeMailbox) uses the
// non-blocking Send: a client too slow for its mailbox is dropped by the
// hub (the loop learns of it through Notify, after what was queued, and
// ends the stream once it has written that), and it resumes from its
// Last-Event-ID; the others are never held up. Send of a pointer
// allocates nothing, so pass the hub's *sse.Entry as the message rather
// than a copy of an event.
//
// # Memory
//
// A loop that waits holds, besides its connection's buffers, its Request,
// its mailbox and the waiting records of the channels it waits on: its
// mailbox's and its request context's, plus one for a [Mailbox.Monitor]
// (a [Mailbox.Every] timer wakes it through its mailbox). An idle stream
// fed by an sse.Hub costs a few hundred bytes on top of what net/http
// holds for any connection; a header map built per stream, rather than
// shared (see [Loop]), adds garbage to every connection.
//
// # Panics before the reply
//
// A panic in Handle becomes a 500 with a short body, and the panic and its
// stack are logged through [Options.Logger]; the process keeps running.
package controller
