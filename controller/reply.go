package controller

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Reply is what a controller answers with: build one with [Buffered],
// [JSON], [Status], [MethodNotAllowed], [Stream] or [Loop]. The set is
// closed; other packages cannot add kinds.
type Reply interface {
	serve(c *Request)
}

func (c *Request) writeHead(status int, header http.Header) {
	dst := c.w.Header()
	for k, v := range header {
		dst[k] = v
	}
	c.w.WriteHeader(status)
	c.out |= outWrote
}

// write writes p and flushes it, with the write deadline, and remembers the
// first error: after it every write fails the same way.
func (c *Request) write(p []byte) error {
	if len(p) > 0 && c.push(p) != nil {
		return c.err
	}
	return c.flush()
}

// push writes p without flushing it (an empty p flushes), with the write
// deadline, and remembers the first error.
func (c *Request) push(p []byte) error {
	if c.err != nil {
		return c.err
	}
	if len(p) == 0 {
		return c.flush()
	}
	c.arm()
	if _, err := c.w.Write(p); err != nil {
		c.err = err
		return err
	}
	c.out |= outPending
	return nil
}

// flush sends what was written, with the write deadline.
func (c *Request) flush() error {
	if c.err != nil {
		return c.err
	}
	c.arm()
	c.out &^= outPending
	// Flush errors are not reliable behind wrappers that implement only
	// Flush, such as chi's; the next write reports the failure instead.
	// The response writer's own FlushError, when it has one, is called
	// directly: it saves the ResponseController's frames on the stack of
	// every write, and asking for it each time saves keeping it in every
	// stream's Request.
	var err error
	if fl, ok := c.w.(interface{ FlushError() error }); ok {
		err = fl.FlushError()
	} else {
		err = http.NewResponseController(c.w).Flush()
	}
	if err != nil {
		c.err = err
	}
	return c.err
}

// arm sets the write deadline. Re-arming it costs a syscall-heavy path;
// doing it once a quarter of the timeout keeps the limit between 3/4 and
// all of WriteTimeout for a fraction of the cost.
func (c *Request) arm() {
	if t := c.h.opts.WriteTimeout; t > 0 {
		if now := time.Now(); time.Duration(now.UnixNano()-c.out.armed()) > t/4 {
			_ = http.NewResponseController(c.w).SetWriteDeadline(now.Add(t))
			c.out.setArmed(now.UnixNano())
		}
	}
}

// finish clears the write deadline so a kept-alive connection's next
// response is not cut by it.
func (c *Request) finish() {
	if c.out.armed() != 0 && c.h.opts.WriteTimeout > 0 {
		_ = http.NewResponseController(c.w).SetWriteDeadline(time.Time{})
	}
}

// recoverStream handles a panic in a stream function or a loop handler:
// before the status it becomes a 500; after it, the connection is aborted.
func (c *Request) recoverStream() {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler {
		panic(v)
	}
	c.h.logPanic(c.Request, v)
	if !c.out.wrote() {
		internalError().serve(c)
		return
	}
	c.release()
	// The response is under way: the only honest signal left is to cut
	// the connection, which net/http does quietly for ErrAbortHandler.
	panic(http.ErrAbortHandler)
}

type buffered struct {
	status      int
	header      http.Header
	contentType string
	body        []byte
}

// Buffered replies with a status, headers and a body sent at once, with
// Content-Length set. header may be nil.
func Buffered(status int, header http.Header, body []byte) Reply {
	return &buffered{status: status, header: header, body: body}
}

// BufferedType is [Buffered] with a Content-Type and no other header: it
// saves building a header map for the most common answer.
func BufferedType(status int, contentType string, body []byte) Reply {
	return &buffered{status: status, contentType: contentType, body: body}
}

// Status replies with a status and an empty body.
func Status(status int) Reply { return &buffered{status: status} }

// MethodNotAllowed replies 405 with the Allow header listing the methods
// that would have been accepted.
func MethodNotAllowed(allowed ...string) Reply {
	return &buffered{status: http.StatusMethodNotAllowed,
		header: http.Header{"Allow": {strings.Join(allowed, ", ")}}}
}

func (b *buffered) serve(c *Request) {
	h := c.w.Header()
	for k, v := range b.header {
		h[k] = v
	}
	if b.contentType != "" {
		h["Content-Type"] = headerValue(b.contentType)
	}
	// net/http writes the Content-Length of a body this small itself,
	// without allocating; a bigger one is declared here, so that it is
	// not sent chunked.
	if len(b.body) > smallBody || b.status == http.StatusNoContent || b.status == http.StatusNotModified {
		h.Set("Content-Length", strconv.Itoa(len(b.body)))
	} else if len(b.body) == 0 {
		h["Content-Length"] = zeroLength
	}
	c.w.WriteHeader(b.status)
	c.out |= outWrote
	if len(b.body) > 0 {
		_, _ = c.w.Write(b.body)
	}
}

// smallBody is net/http's bufferBeforeChunkingSize: a response body of
// at most this many bytes, written at once by a handler that then
// returns, gets its Content-Length from net/http.
const smallBody = 2048

// Header values shared by every reply that uses them, so that setting one
// does not allocate. Their capacity is their length: Header.Add copies
// instead of writing into them.
var (
	jsonType   = []string{"application/json"}
	streamType = []string{"text/event-stream"}
	zeroLength = []string{"0"}
)

// headerValue is the one-value header slice for v, shared for the common
// content types.
func headerValue(v string) []string {
	switch v {
	case "application/json":
		return jsonType[:1:1]
	case "text/event-stream":
		return streamType[:1:1]
	}
	return []string{v}
}

type jsonReply struct {
	status int
	v      any
}

// JSON replies with v encoded as JSON (Content-Type application/json). The
// value is encoded when the reply is served; a value that cannot be
// encoded is logged and answered with a 500.
func JSON(status int, v any) Reply { return &jsonReply{status: status, v: v} }

func (j *jsonReply) serve(c *Request) {
	body, err := json.Marshal(j.v)
	if err != nil {
		c.h.opts.Logger.ErrorContext(c.Request.Context(), "controller: JSON reply not encodable",
			slog.String("path", c.Request.URL.Path), slog.Any("error", err))
		internalError().serve(c)
		return
	}
	body = append(body, '\n')
	Buffered(j.status, http.Header{"Content-Type": {"application/json"}}, body).serve(c)
}

type handlerReply struct{ h http.Handler }

// Handler replies by handing the request to an ordinary http.Handler,
// which writes the response itself: for code that already answers that
// way, such as an auth package's refusal.
func Handler(h http.Handler) Reply { return &handlerReply{h: h} }

func (hr *handlerReply) serve(c *Request) {
	c.out |= outWrote
	hr.h.ServeHTTP(c.w, c.Request)
}
