package middleware

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync/atomic"

	chimw "github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httplog/v3"
)

// LogOptions configures [RequestLogger]. The zero value (or a nil pointer)
// is a safe production setting: Info level, the ECS schema, Content-Type and
// Origin request headers, no bodies, query values redacted.
//
// RequestLogger copies the struct; changing it afterwards has no effect, and
// RequestLogger never writes to it (httplog's own RequestLogger does both:
// it fills defaults into the caller's Options and gives a non-nil Options no
// defaults at all).
type LogOptions struct {
	// Level is the minimum level of a line. The level of a line comes from
	// its status: 5xx and panics are Error, every 4xx (429 included) is
	// Warn, everything else (OPTIONS included) is Info. Default: Info.
	Level slog.Level

	// Schema names the fields of a line. Default: [httplog.SchemaECS]. Pass
	// Schema.ReplaceAttr as the slog handler's ReplaceAttr so that time,
	// level and message use the schema's names too.
	Schema *httplog.Schema

	// RecoverPanics makes the logger answer 500 to a panic that left no
	// status. Use either this or chi's Recoverer placed after the logger,
	// not both. A panic is logged at Error either way (httplog alone logs an
	// unrecovered panic as "HTTP 200" at Info).
	RecoverPanics bool

	// Skip, if set, suppresses the line of a request. It sees the request as
	// logged (query values redacted) and the status. It is also asked before
	// a stream's start line, with the stream's status.
	Skip func(r *http.Request, status int) bool

	// LogRequestHeaders lists the request headers logged. Default:
	// Content-Type and Origin. The values of Authorization,
	// Proxy-Authorization and Cookie are always logged as [Redacted]
	// (Authorization keeps its scheme: "Bearer REDACTED").
	LogRequestHeaders []string

	// LogResponseHeaders lists the response headers logged. Default: none.
	// Set-Cookie is refused: RequestLogger panics.
	LogResponseHeaders []string

	// LogRequestBody, if set, reports whether to log a request's body. The
	// body is copied into memory as the handler reads it, so put
	// [BodyLimit] before the logger when you turn it on. Bytes the handler
	// did not read are neither read nor logged.
	LogRequestBody func(r *http.Request) bool

	// LogResponseBody, if set, reports whether to log a response's body. An
	// event stream is never copied, whatever this returns: the copy stops
	// when the stream's header is written, before its first byte.
	LogResponseBody func(r *http.Request) bool

	// LogBodyContentTypes lists the Content-Type prefixes whose bodies may
	// be logged; other bodies are logged as a "[body redacted …]" note.
	// Default: application/json. An empty entry is refused (it would match
	// every type, which is httplog's own default).
	LogBodyContentTypes []string

	// LogBodyMaxLen caps a logged body, in bytes. Default: 1024. It trims at
	// log time only; it does not bound the copy (see LogRequestBody).
	LogBodyMaxLen int

	// LogQueryParams lists query parameters whose values are logged as sent.
	// Every other value is logged as [Redacted], and a parameter with an
	// unusual name is redacted whole. Default: none. Never list a
	// parameter that can carry a credential.
	LogQueryParams []string

	// NoStreamStart turns off the line written when an event stream is
	// accepted. The line written when it ends is kept.
	NoStreamStart bool
}

const defaultLogBodyMaxLen = 1024

// RequestLogger returns the logging preset: httplog v3 with the settings an
// MCP endpoint needs. It writes one line per request, after the handler
// returns; for an event stream (a 2xx response whose Content-Type is
// text/event-stream) that is when the stream ends, carrying its duration
// and bytes written, and RequestLogger also writes a start line when the
// stream is accepted, marked with [StreamLogKey].
//
// On top of httplog it:
//   - redacts query values in every place httplog logs the URL (url.full and
//     the message) and in the Referer header, while the handler still sees
//     the original URL;
//   - redacts Authorization, Proxy-Authorization and Cookie values;
//   - sets the level from the status (429 is Warn, where httplog says Info);
//   - never copies an event stream's body, and stops httplog from draining
//     the unread rest of a request body into memory;
//   - adds the attributes of [SetAttrs], which is safe from any goroutine,
//     the MCP request headers (see [MCPSessionKey] and the keys next to it),
//     chi's request id and the resolved client IP.
//
// Place it after chi's RequestID and ClientIPFrom… middleware, so their
// values reach the line, and before everything else. RequestLogger panics
// if logger is nil or opts is invalid.
//
// Do not also call httplog.SetAttrs from goroutines other than the request's
// own: it is not safe for concurrent use. Use [SetAttrs].
func RequestLogger(logger *slog.Logger, opts *LogOptions) func(http.Handler) http.Handler {
	if logger == nil {
		panic("saguaro/middleware: RequestLogger needs a logger")
	}
	o := opts.withDefaults()

	hl := &httplog.Options{
		// Our handler decides levels; httplog's own filter must let all through.
		Level:               slog.Level(-1 << 20),
		Schema:              o.Schema,
		RecoverPanics:       o.RecoverPanics,
		Skip:                o.Skip,
		LogRequestHeaders:   o.LogRequestHeaders,
		LogResponseHeaders:  o.LogResponseHeaders,
		LogRequestBody:      o.LogRequestBody,
		LogResponseBody:     o.LogResponseBody,
		LogBodyContentTypes: o.LogBodyContentTypes,
		LogBodyMaxLen:       o.LogBodyMaxLen,
	}
	lineLogger := slog.New(&levelHandler{next: logger.Handler(), min: o.Level})
	httplogMW := httplog.RequestLogger(lineLogger, hl)
	keep := make(map[string]bool, len(o.LogQueryParams))
	for _, k := range o.LogQueryParams {
		keep[k] = true
	}
	l := &reqLogger{opts: o, logger: logger, keep: keep}

	return func(next http.Handler) http.Handler {
		inner := httplogMW(l.inner(next))
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			l.outer(inner, w, r)
		})
	}
}

// withDefaults returns a validated copy of o with defaults filled in.
func (o *LogOptions) withDefaults() LogOptions {
	var c LogOptions
	if o != nil {
		c = *o
	}
	if c.Schema == nil {
		c.Schema = httplog.SchemaECS
	}
	if c.LogRequestHeaders == nil {
		c.LogRequestHeaders = []string{"Content-Type", "Origin"}
	} else {
		c.LogRequestHeaders = append([]string(nil), c.LogRequestHeaders...)
	}
	c.LogResponseHeaders = append([]string(nil), c.LogResponseHeaders...)
	for _, h := range c.LogResponseHeaders {
		if http.CanonicalHeaderKey(h) == "Set-Cookie" {
			panic("saguaro/middleware: RequestLogger refuses to log the Set-Cookie response header")
		}
	}
	if len(c.LogBodyContentTypes) == 0 {
		c.LogBodyContentTypes = []string{"application/json"}
	} else {
		c.LogBodyContentTypes = append([]string(nil), c.LogBodyContentTypes...)
	}
	for _, ct := range c.LogBodyContentTypes {
		if strings.TrimSpace(ct) == "" {
			panic("saguaro/middleware: LogBodyContentTypes has an empty entry, which would match every body")
		}
	}
	switch {
	case c.LogBodyMaxLen == 0:
		c.LogBodyMaxLen = defaultLogBodyMaxLen
	case c.LogBodyMaxLen < 0:
		panic("saguaro/middleware: LogBodyMaxLen must not be negative")
	}
	c.LogQueryParams = append([]string(nil), c.LogQueryParams...)
	return c
}

// reqLogger holds what the two halves of the preset share.
type reqLogger struct {
	opts   LogOptions
	logger *slog.Logger // the caller's, for stream start lines
	keep   map[string]bool
}

// reqState is the per-request state, reachable from the context by
// SetAttrs, by the inner half and by levelHandler.
type reqState struct {
	bag attrBag

	// Set by outer before httplog runs; read on the request goroutine.
	orig           *http.Request // the request as the handler must see it
	logged         *http.Request // the request as httplog sees it
	rewritten      bool          // logged differs from orig in URL or headers
	reqAttrs       []slog.Attr   // header-derived, set by inner
	ww             chimw.WrapResponseWriter
	stream         atomic.Bool
	panicked       atomic.Bool
	handlerDone    atomic.Bool
	sessionFromReq bool
}

type stateKey struct{}

func (stateKey) String() string { return "saguaro/middleware log state" }

func stateFrom(ctx context.Context) *reqState {
	st, _ := ctx.Value(stateKey{}).(*reqState)
	return st
}

// outer runs before httplog: it hands httplog a copy of the request whose
// URL, RequestURI and sensitive headers are redacted.
func (l *reqLogger) outer(inner http.Handler, w http.ResponseWriter, r *http.Request) {
	st := &reqState{orig: r}
	lr := r.WithContext(context.WithValue(r.Context(), stateKey{}, st))
	if r.URL != nil && r.URL.RawQuery != "" {
		u := *r.URL
		u.RawQuery = redactQuery(r.URL.RawQuery, l.keep)
		lr.URL = &u
		if path, _, ok := strings.Cut(r.RequestURI, "?"); ok {
			lr.RequestURI = path + "?" + u.RawQuery
		}
	}
	var copied bool
	lr.Header, copied = redactHeader(r.Header, l.keep)
	st.rewritten = copied || lr.URL != r.URL
	if l.opts.LogRequestBody != nil && r.Body != nil && r.Body != http.NoBody {
		lr.Body = &drainGuard{rc: r.Body, done: &st.handlerDone}
	}
	st.logged = lr
	inner.ServeHTTP(w, lr)
}

// inner runs inside httplog, right around the handler: it restores the
// original request line and headers, watches for a stream, and folds the
// attribute bag into httplog's line on the request goroutine.
func (l *reqLogger) inner(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := stateFrom(r.Context())
		if st == nil { // cannot happen: outer always runs first
			next.ServeHTTP(w, r)
			return
		}
		st.ww, _ = w.(chimw.WrapResponseWriter)

		hr := r
		if st.rewritten {
			hr = r.WithContext(r.Context())
			hr.URL, hr.RequestURI, hr.Header = st.orig.URL, st.orig.RequestURI, st.orig.Header
		}
		st.reqAttrs = requestAttrs(hr)
		_, st.sessionFromReq = findAttr(st.reqAttrs, MCPSessionKey)

		sw := newStreamWriter(w, st.ww, func(status int) {
			st.stream.Store(true)
			l.streamStart(st, hr, w.Header(), status)
		})

		returned := false
		defer func() {
			if !returned {
				st.panicked.Store(true)
			}
			st.handlerDone.Store(true)
			httplog.SetAttrs(r.Context(), st.final(w.Header())...)
		}()
		next.ServeHTTP(sw, hr)
		returned = true
	})
}

// final returns the attributes folded into the end line.
func (st *reqState) final(respHeader http.Header) []slog.Attr {
	attrs := append([]slog.Attr(nil), st.reqAttrs...)
	attrs = append(attrs, responseAttrs(respHeader, st.sessionFromReq)...)
	if st.stream.Load() {
		attrs = append(attrs, slog.String(StreamLogKey, "end"))
	}
	return merge(attrs, st.bag.close())
}

// streamStart writes the line that says an event stream was accepted.
func (l *reqLogger) streamStart(st *reqState, hr *http.Request, respHeader http.Header, status int) {
	if l.opts.NoStreamStart || slog.LevelInfo < l.opts.Level {
		return
	}
	ctx := hr.Context()
	if !l.logger.Enabled(ctx, slog.LevelInfo) {
		return
	}
	lr := st.logged
	if l.opts.Skip != nil && l.opts.Skip(lr, status) {
		return
	}
	s := l.opts.Schema
	attrs := []slog.Attr{
		slog.String(s.RequestURL, fmt.Sprintf("%s://%s%s", scheme(lr), lr.Host, lr.URL)),
		slog.String(s.RequestMethod, lr.Method),
		slog.String(s.RequestPath, lr.URL.Path),
		slog.String(s.RequestRemoteIP, lr.RemoteAddr),
		slog.Int(s.ResponseStatus, status),
	}
	attrs = append(attrs, st.reqAttrs...)
	attrs = append(attrs, responseAttrs(respHeader, st.sessionFromReq)...)
	attrs = append(attrs, slog.String(StreamLogKey, "start"))
	attrs = merge(attrs, st.bag.snapshot())
	attrs = dropEmptyKeys(attrs)
	if s.GroupDelimiter != "" {
		attrs = groupByDelimiter(attrs, s.GroupDelimiter)
	}
	msg := fmt.Sprintf("%s %s => HTTP %d stream start", lr.Method, lr.URL, status)
	l.logger.LogAttrs(ctx, slog.LevelInfo, msg, attrs...)
}

// Request and response headers that RequestLogger turns into attributes.
const (
	hdrSessionID       = "Mcp-Session-Id"
	hdrProtocolVersion = "Mcp-Protocol-Version"
	hdrMethod          = "Mcp-Method"
	hdrName            = "Mcp-Name"
	maxHeaderAttrLen   = 256
)

// requestAttrs derives attributes from the request: MCP headers, chi's
// request id and the resolved client IP.
func requestAttrs(r *http.Request) []slog.Attr {
	var attrs []slog.Attr
	add := func(key, v string) {
		if v == "" {
			return
		}
		if len(v) > maxHeaderAttrLen {
			v = v[:maxHeaderAttrLen] + "…"
		}
		attrs = append(attrs, slog.String(key, v))
	}
	add(MCPSessionKey, r.Header.Get(hdrSessionID))
	add(MCPRevisionKey, r.Header.Get(hdrProtocolVersion))
	add(MCPMethodKey, r.Header.Get(hdrMethod))
	name := r.Header.Get(hdrName)
	if base, query, ok := strings.Cut(name, "?"); ok { // a resource URI may carry a query
		name = base + "?" + redactQuery(query, nil)
	}
	add(MCPNameKey, name)
	add(RequestIDLogKey, chimw.GetReqID(r.Context()))
	add(ClientIPLogKey, chimw.GetClientIP(r.Context()))
	return attrs
}

// responseAttrs picks the session id an initialize response hands out.
func responseAttrs(h http.Header, sessionFromReq bool) []slog.Attr {
	if sessionFromReq {
		return nil
	}
	v := h.Get(hdrSessionID)
	if v == "" {
		return nil
	}
	if len(v) > maxHeaderAttrLen {
		v = v[:maxHeaderAttrLen] + "…"
	}
	return []slog.Attr{slog.String(MCPSessionKey, v)}
}

func findAttr(attrs []slog.Attr, key string) (slog.Attr, bool) {
	for _, a := range attrs {
		if a.Key == key {
			return a, true
		}
	}
	return slog.Attr{}, false
}

func dropEmptyKeys(attrs []slog.Attr) []slog.Attr {
	out := attrs[:0]
	for _, a := range attrs {
		if a.Key != "" {
			out = append(out, a)
		}
	}
	return out
}

// groupByDelimiter nests "group<d>key" attributes the way httplog does for
// schemas with a GroupDelimiter (GCP), so start and end lines match.
func groupByDelimiter(attrs []slog.Attr, d string) []slog.Attr {
	var out []slog.Attr
	var groups []string
	members := map[string][]slog.Attr{}
	for _, a := range attrs {
		g, k, ok := strings.Cut(a.Key, d)
		if !ok {
			out = append(out, a)
			continue
		}
		if _, seen := members[g]; !seen {
			groups = append(groups, g)
		}
		members[g] = append(members[g], slog.Attr{Key: k, Value: a.Value})
	}
	for _, g := range groups {
		out = append(out, slog.Attr{Key: g, Value: slog.GroupValue(members[g]...)})
	}
	return out
}

func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

func isEventStream(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "text/event-stream"
}

// drainGuard stops httplog from reading the rest of a request body into
// memory after the handler has returned (httplog drains unread bytes into
// its log buffer when body logging is on).
type drainGuard struct {
	rc   io.ReadCloser
	done *atomic.Bool
}

func (g *drainGuard) Read(p []byte) (int, error) {
	if g.done.Load() {
		return 0, io.EOF
	}
	return g.rc.Read(p)
}

func (g *drainGuard) Close() error { return g.rc.Close() }

// levelHandler sets the level of httplog's line from the response status and
// applies the minimum level. Lines without request state pass through.
type levelHandler struct {
	next slog.Handler
	min  slog.Level
}

func (h *levelHandler) level(ctx context.Context, lvl slog.Level) slog.Level {
	st := stateFrom(ctx)
	if st == nil || st.ww == nil {
		return lvl
	}
	if st.panicked.Load() {
		return slog.LevelError
	}
	return levelForStatus(st.ww.Status())
}

// levelForStatus maps a status to a level: 5xx Error, 4xx Warn, else Info.
// Status 0 means the handler wrote nothing, which net/http sends as 200.
func levelForStatus(status int) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case status >= 400:
		return slog.LevelWarn
	default:
		return slog.LevelInfo
	}
}

func (h *levelHandler) Enabled(ctx context.Context, lvl slog.Level) bool {
	lvl = h.level(ctx, lvl)
	return lvl >= h.min && h.next.Enabled(ctx, lvl)
}

func (h *levelHandler) Handle(ctx context.Context, rec slog.Record) error {
	rec.Level = h.level(ctx, rec.Level)
	return h.next.Handle(ctx, rec)
}

func (h *levelHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &levelHandler{next: h.next.WithAttrs(attrs), min: h.min}
}

func (h *levelHandler) WithGroup(name string) slog.Handler {
	return &levelHandler{next: h.next.WithGroup(name), min: h.min}
}
