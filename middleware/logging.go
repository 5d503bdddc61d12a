package middleware

import (
	"bufio"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"

	chimw "github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httplog/v3"
)

// Log attribute keys that [Logging] adds to httplog's line.
const (
	// RequestIDLogKey carries chi's request id ([chimw.GetReqID]) when
	// chi's RequestID middleware runs before Logging. It is what ties an
	// event stream's start line to its end line.
	RequestIDLogKey = "http.request.id"
	// ClientIPLogKey carries the client IP resolved by one of chi's
	// ClientIPFrom… middlewares. The schema's own client IP field is
	// r.RemoteAddr, which is the proxy's address behind a proxy.
	ClientIPLogKey = "client.ip.resolved"
	// StreamLogKey marks the lines of an event stream (a 2xx response
	// whose Content-Type is text/event-stream): "start" on the line
	// Logging writes when the stream is accepted, "end" on httplog's line
	// when it ends.
	StreamLogKey = "http.stream"
)

// The MCP keys the start line of a stream takes from the request's
// headers; the same strings as mcp.AttrSession, mcp.AttrRevision and
// mcp.AttrMethod, which the mcp package puts on the end line itself.
const (
	sessionLogKey  = "mcp.session"
	revisionLogKey = "mcp.revision"
	methodLogKey   = "mcp.method"
)

// Logging returns the request logging preset: [httplog.RequestLogger]
// with opts, as httplog takes them (nil means httplog's defaults: Info
// level, [httplog.SchemaECS], panics recovered, the Content-Type and
// Origin request headers and the Content-Type response header), and
// around the handler the little httplog has no place for:
//
//   - a line when an event stream is accepted, at Info, marked
//     StreamLogKey=start, with the request's method, URL, path, client
//     address and status under the schema's names, and the MCP session,
//     revision and method its headers name. httplog writes its line when
//     the handler returns, which for a stream is when it ends, maybe
//     hours later; without this a stream shows nothing while it is open.
//     httplog's line then carries StreamLogKey=end. opts.Level and
//     opts.Skip apply to the start line too;
//   - chi's request id and the resolved client IP ([RequestIDLogKey],
//     [ClientIPLogKey]) on both lines;
//   - opts.LogResponseBody is never asked about a request that accepts
//     text/event-stream: httplog would copy the whole stream into memory.
//
// Everything else is httplog's: the line, its level (5xx Error, 4xx Warn
// except 429, OPTIONS Debug), its panic recovery, its attributes.
// httplog.SetAttrs and httplog.SetError add to the line; set the mcp
// package's Options.Attrs to httplog.SetAttrs for the MCP attributes.
// Pitfalls, all httplog's: SetAttrs is not safe for concurrent use (call
// it on the request's goroutine, as mcp does); url.full and the message
// carry the query string, so keep secrets out of URLs; a stream that the
// client closes ends with error.message "request aborted" (the
// context's cancellation, which is how an event stream normally ends); a
// non-nil opts gets none of the defaults above but the body ones.
//
// Give the slog handler the schema's ReplaceAttr, so that time, level,
// message and error take the schema's names. Place Logging after chi's
// RequestID and ClientIPFrom… middleware and before the rest. It recovers
// panics itself (httplog's RecoverPanics, on by default) and logs them
// with their stack; chi's Recoverer after it also works, and then the line
// shows the 500 without the panic. Logging copies opts (httplog's RequestLogger writes into the Options it is
// given) and panics if logger is nil.
func Logging(logger *slog.Logger, opts *httplog.Options) func(http.Handler) http.Handler {
	if logger == nil {
		panic("saguaro/middleware: Logging needs a logger")
	}
	var o *httplog.Options // nil: httplog's defaults
	l := &streamLog{logger: logger, level: slog.LevelInfo, schema: httplog.SchemaECS}
	if opts != nil {
		o = new(httplog.Options)
		*o = *opts
		if body := o.LogResponseBody; body != nil {
			o.LogResponseBody = func(r *http.Request) bool {
				return !strings.Contains(r.Header.Get("Accept"), "text/event-stream") && body(r)
			}
		}
		l.level, l.skip = o.Level, o.Skip
		if o.Schema != nil {
			l.schema = o.Schema
		}
	}
	outer := httplog.RequestLogger(logger, o)
	return func(next http.Handler) http.Handler {
		return outer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			l.serve(next, w, r)
		}))
	}
}

// streamLog is the part of Logging inside httplog's middleware.
type streamLog struct {
	logger *slog.Logger
	level  slog.Level
	schema *httplog.Schema
	skip   func(r *http.Request, status int) bool
}

func (l *streamLog) serve(next http.Handler, w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if id := chimw.GetReqID(ctx); id != "" {
		httplog.SetAttrs(ctx, slog.String(RequestIDLogKey, id))
	}
	if ip := chimw.GetClientIP(ctx); ip != "" {
		httplog.SetAttrs(ctx, slog.String(ClientIPLogKey, ip))
	}
	sw := &streamWriter{ResponseWriter: w, l: l, r: r}
	defer func() { // deferred: a stream that panics still ends
		if sw.stream {
			httplog.SetAttrs(ctx, slog.String(StreamLogKey, "end"))
		}
	}()
	if _, ok := w.(http.Hijacker); ok {
		next.ServeHTTP(hijackWriter{sw}, r)
		return
	}
	next.ServeHTTP(sw, r)
}

// start writes the line of an event stream accepted with status.
func (l *streamLog) start(r *http.Request, status int, respHeader http.Header) {
	ctx := r.Context()
	if slog.LevelInfo < l.level || !l.logger.Enabled(ctx, slog.LevelInfo) || l.skip != nil && l.skip(r, status) {
		return
	}
	s := l.schema
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	session := r.Header.Get("Mcp-Session-Id")
	if session == "" {
		session = respHeader.Get("Mcp-Session-Id") // an initialize answered as a stream
	}
	attrs := make([]slog.Attr, 0, 12)
	for _, a := range []slog.Attr{
		slog.String(s.RequestURL, scheme+"://"+r.Host+r.URL.String()),
		slog.String(s.RequestMethod, r.Method),
		slog.String(s.RequestPath, r.URL.Path),
		slog.String(s.RequestRemoteIP, r.RemoteAddr),
		slog.Int(s.ResponseStatus, status),
		slog.String(RequestIDLogKey, chimw.GetReqID(ctx)),
		slog.String(ClientIPLogKey, chimw.GetClientIP(ctx)),
		slog.String(sessionLogKey, session),
		slog.String(revisionLogKey, r.Header.Get("Mcp-Protocol-Version")),
		slog.String(methodLogKey, r.Header.Get("Mcp-Method")),
		slog.String(StreamLogKey, "start"),
	} {
		// A schema leaves a field out by naming it ""; a header that is
		// not there is left out too.
		if a.Key != "" && (a.Value.Kind() != slog.KindString || a.Value.String() != "") {
			attrs = append(attrs, a)
		}
	}
	if d := s.GroupDelimiter; d != "" {
		attrs = nest(attrs, d)
	}
	l.logger.LogAttrs(ctx, slog.LevelInfo, r.Method+" "+r.URL.String()+" => HTTP "+strconv.Itoa(status)+" stream start", attrs...)
}

// nest groups "group<d>key" attributes into groups, as httplog does for a
// schema with a GroupDelimiter (GCP's httpRequest object).
func nest(attrs []slog.Attr, d string) []slog.Attr {
	var out []slog.Attr
	at := map[string]int{} // a group's index in out
	for _, a := range attrs {
		g, k, ok := strings.Cut(a.Key, d)
		if !ok {
			out = append(out, a)
			continue
		}
		i, seen := at[g]
		if !seen {
			i = len(out)
			at[g] = i
			out = append(out, slog.Attr{Key: g, Value: slog.GroupValue()})
		}
		out[i].Value = slog.GroupValue(append(out[i].Value.Group(), slog.Attr{Key: k, Value: a.Value})...)
	}
	return out
}

// streamWriter is the writer the handler gets: it notices the moment the
// final header of an event stream leaves. Unwrap reaches the writer below
// (httplog's), so http.ResponseController finds deadlines and flushes.
type streamWriter struct {
	http.ResponseWriter
	l           *streamLog
	r           *http.Request
	wroteHeader bool
	stream      bool
}

// hijackWriter is a streamWriter over a writer that can be hijacked.
type hijackWriter struct{ *streamWriter }

func (w *streamWriter) WriteHeader(code int) {
	if !w.wroteHeader && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.wroteHeader = true
		if code <= 299 && isEventStream(w.Header().Get("Content-Type")) {
			w.stream = true
			w.l.start(w.r, code, w.Header())
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *streamWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

// Flush sends the header first, through WriteHeader, so that a stream
// opened by a bare Flush is seen (and middleware outside, such as chi's
// Compress, sees the header before the first flush).
func (w *streamWriter) Flush() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap returns the writer below, for http.ResponseController.
func (w *streamWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack hands the connection over; no stream starts after that.
func (w hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.wroteHeader = true
	return w.ResponseWriter.(http.Hijacker).Hijack()
}

// isEventStream reports whether a Content-Type is text/event-stream.
func isEventStream(contentType string) bool {
	base, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(base), "text/event-stream")
}
