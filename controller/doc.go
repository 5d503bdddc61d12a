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
// the controller ([Request.State], [StateOf]). How a loop ends and what it
// holds: [Loop]; how its frames are batched: [Push]; its mailbox's bound
// and what a full one does: [Mailbox]; a panic: [New].
package controller
