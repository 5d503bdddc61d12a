// Package sse implements Server-Sent Events as the WHATWG HTML standard
// defines them, with the HTTP details that real deployments get wrong done
// right.
//
// The package has four parts, each usable alone:
//
//   - Framing: [Event.AppendTo] encodes one event (id, event, multi-line
//     data, retry) and [AppendComment] a comment. Ids and event names that
//     could break the framing (CR, LF, and NUL in ids) are rejected with
//     [ErrInvalidID] and [ErrInvalidEvent] instead of being written.
//   - Writing: [NewWriter] commits the stream's headers
//     (Content-Type: text/event-stream, Cache-Control: no-cache,
//     X-Accel-Buffering: no) and the status before the first flush, so chi's
//     Compress middleware and HTTP/2 proxies cannot corrupt or hold the
//     stream; it flushes through [http.ResponseController], so it works
//     behind httplog and any wrapper that implements Unwrap, and it surfaces
//     write errors (a flush error is not reliable behind wrappers; a write
//     error is).
//   - Replay: [Log] numbers the events it is given with monotonic ids,
//     encodes each one once into an immutable [Entry], and keeps the last
//     ones, bounded by count and by bytes; [Log.Since] answers a
//     reconnecting client's Last-Event-ID (read it with [LastEventID]).
//   - Fan-out: [Hub] hands each published entry, the same pointer, to
//     every subscriber of a topic, each through its own bounded queue, so
//     one slow client never stalls the others: it is dropped, and resumes
//     from its last id.
//
// [Reader] parses a stream the way a browser's EventSource does; tests use it
// to read frames one by one.
//
// The package imports only the standard library and knows nothing of the
// controller package: a controller loop's mailbox is a [Mailbox] to
// [Hub.SubscribeMailbox], and the loop pushes an [Entry.Frame], or frames
// its own events with [Event.AppendTo].
package sse
