package middleware

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/go-chi/httplog/v3"
)

// ErrBodyTimeout is the error a handler's body read returns under
// [BodyTimeout] once the time is up. It wraps the read's own error, so
// errors.Is(err, os.ErrDeadlineExceeded) holds too.
var ErrBodyTimeout = errors.New("saguaro/middleware: request body not sent in time")

// BodyTimeout returns middleware that bounds how long a request's body may
// take to arrive: d from when the middleware sees the request. A client
// that trickles its body (a few bytes every few seconds, to hold a
// connection and a goroutine for as long as it likes) is cut off: the
// handler's read fails with an error wrapping [ErrBodyTimeout], the
// request's log line (under httplog's RequestLogger or [Logging]) carries
// it through httplog.SetError, which, not being safe for concurrent use,
// wants the body read on the request's goroutine, and net/http
// closes the connection after the answer. The handler answers; 408
// Request Timeout is the status that says what happened:
//
//	if errors.Is(err, middleware.ErrBodyTimeout) {
//		http.Error(w, "request body too slow", http.StatusRequestTimeout)
//		return
//	}
//
// Once the body has been read to its end the deadline is lifted, so a
// long answer (an event stream) is not cut. Pitfalls: a handler that
// answers at length without reading its body to the end has its request
// context cancelled when d passes (net/http treats the expired deadline as
// a dead connection), so read the body first; and the deadline needs
// net/http's own ResponseWriter, or wrappers that unwrap to it as chi's
// and httplog's do: with another the body is unbounded, as without the
// middleware. Requests without a body pass untouched. The mcp package
// bounds its own POST bodies (mcp.Limits); this is for the rest of an
// app. BodyTimeout panics if d is not positive.
func BodyTimeout(d time.Duration) func(http.Handler) http.Handler {
	if d <= 0 {
		panic("saguaro/middleware: BodyTimeout expects d > 0")
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
				next.ServeHTTP(w, r)
				return
			}
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(d)) != nil {
				next.ServeHTTP(w, r) // a writer that cannot take deadlines
				return
			}
			r2 := r.WithContext(r.Context()) // a shallow copy; the caller's request stays as it was
			r2.Body = &timedBody{ReadCloser: r.Body, rc: rc, r: r2}
			next.ServeHTTP(w, r2)
		})
	}
}

// timedBody lifts the read deadline at the body's end and names a read
// that hit it.
type timedBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	r    *http.Request
	once sync.Once
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF:
		b.once.Do(func() { _ = b.rc.SetReadDeadline(time.Time{}) })
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = fmt.Errorf("%w: %w", ErrBodyTimeout, err)
		_ = httplog.SetError(b.r.Context(), err)
	}
	return n, err
}
