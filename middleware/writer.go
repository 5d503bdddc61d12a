package middleware

import (
	"bufio"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
)

// streamWriter is the writer the handler gets. It records the status and
// the bytes of the response for the line (itself, not through a wrapper of
// its own), copies the body when it is logged, and notices the moment the
// response header is committed: if the response is an event stream, it
// stops the copy and reports the start.
//
// It is transparent: Unwrap reaches the writer below (so
// http.NewResponseController finds deadlines and full duplex), Flush and
// FlushError commit the header first and then flush the writer below, so
// a flush error survives.
type streamWriter struct {
	http.ResponseWriter                                 // the writer below the logger
	starter             interface{ streamStarted(int) } // told when a stream is accepted
	tee                 io.Writer                       // the copy of a logged body, until a stream starts
	code                int                             // the final status, 0 until written
	bytes               int                             // body bytes written
	committed           bool
	wroteHeader         bool
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
	w.tee = nil // never copy a stream into the log buffer
	w.starter.streamStarted(status)
}

// WriteHeader passes an informational status on; the first final one is
// recorded and sent, a later one is dropped (net/http would only complain
// about it).
func (w *streamWriter) WriteHeader(code int) {
	if code >= 100 && code <= 199 && code != http.StatusSwitchingProtocols {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	if w.wroteHeader {
		return
	}
	w.commit(code)
	w.code = code
	w.wroteHeader = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *streamWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(p)
	if w.tee != nil {
		if _, err2 := w.tee.Write(p[:n]); err == nil {
			err = err2
		}
	}
	w.bytes += n
	return n, err
}

// Flush flushes; see FlushError.
func (w *streamWriter) Flush() { _ = w.FlushError() }

// FlushError commits the header (200 unless one was written) and flushes the
// bottom writer, returning its error.
func (w *streamWriter) FlushError() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
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
