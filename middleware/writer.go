package middleware

import (
	"bufio"
	"mime"
	"net"
	"net/http"
	"strings"

	chimw "github.com/go-chi/chi/v5/middleware"
)

// streamWriter sits between the handler and the logger's writer. It
// notices the moment the response header is committed: if the response is
// an event stream, it stops the logger's copy of the body and reports the
// start.
//
// It is transparent: Unwrap reaches the writer below (so
// http.NewResponseController finds deadlines and full duplex), Flush and
// FlushError commit the header first and then flush the writer at the
// bottom, so a flush error survives (chi's wrapper swallows it).
type streamWriter struct {
	http.ResponseWriter
	ww          chimw.WrapResponseWriter // the logger's writer, whose copy of the body stops
	starter     interface{ streamStarted(status int) }
	committed   bool
	wroteHeader bool
}

// hijackStreamWriter is a streamWriter over a writer that can be hijacked;
// only then does it claim http.Hijacker.
type hijackStreamWriter struct {
	*streamWriter
}

// commit runs once, when the final header is about to leave.
func (w *streamWriter) commit(status int) {
	if w.committed {
		return
	}
	w.committed = true
	if status < 200 || status > 299 || !isEventStream(w.Header().Get("Content-Type")) {
		return
	}
	w.ww.Tee(nil) // never copy a stream into the log buffer
	w.starter.streamStarted(status)
}

func (w *streamWriter) WriteHeader(code int) {
	if code >= 200 || code == http.StatusSwitchingProtocols {
		w.commit(code)
		w.wroteHeader = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *streamWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

// Flush flushes; see FlushError.
func (w *streamWriter) Flush() { _ = w.FlushError() }

// FlushError commits the header (200 unless one was written) and flushes the
// bottom writer, returning its error.
func (w *streamWriter) FlushError() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	bottom := w.ResponseWriter
	if u, ok := bottom.(interface{ Unwrap() http.ResponseWriter }); ok {
		bottom = u.Unwrap()
	}
	return http.NewResponseController(bottom).Flush()
}

// Unwrap returns the writer below, for http.NewResponseController.
func (w *streamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack hands over the connection; no stream start is logged after that.
func (w hijackStreamWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.committed = true
	return w.ResponseWriter.(http.Hijacker).Hijack()
}

// isEventStream reports whether a Content-Type is text/event-stream.
func isEventStream(contentType string) bool {
	// Parse only what can be an event stream: every response passes here.
	base, _, _ := strings.Cut(contentType, ";")
	if !strings.EqualFold(strings.TrimSpace(base), "text/event-stream") {
		return false
	}
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "text/event-stream"
}
