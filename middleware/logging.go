package middleware

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

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

// RequestLogger returns the logging preset: httplog v3's request line with
// the settings an MCP endpoint needs. It writes one line per request, after
// the handler returns; for an event stream (a 2xx response whose
// Content-Type is text/event-stream) that is when the stream ends, carrying
// its duration and bytes written, and RequestLogger also writes a start
// line when the stream is accepted, marked with [StreamLogKey].
//
// The line has httplog's fields, named by the schema, in httplog's order.
// On top of httplog it:
//   - redacts query values in every place the URL is logged (url.full and
//     the message) and in the Referer header, while the handler still sees
//     the original URL;
//   - redacts Authorization, Proxy-Authorization and Cookie values;
//   - sets the level from the status alone (429 is Warn and OPTIONS is
//     Info, where httplog says Info and Debug) and logs a panic at Error
//     even when it is not recovered;
//   - never copies an event stream's body, and never drains the unread rest
//     of a request body into memory;
//   - adds the attributes of [SetAttrs] and [SetError], which are safe
//     from any goroutine, the MCP request headers (see [MCPSessionKey] and
//     the keys next to it), chi's request id and the resolved client IP.
//
// Apart from these, the line is httplog's byte for byte (the package's
// tests serve the same requests through both on every schema), but this
// package writes it: httplog's middleware has no hook for the changes
// above, and it allocates about three times as many objects per request.
// The schema still names every field.
//
// httplog.SetAttrs and httplog.SetError do nothing under RequestLogger:
// they store into a context value that only httplog's own middleware
// creates. Call [SetAttrs] and [SetError] of this package instead; they
// take the same arguments and are safe from any goroutine.
//
// Place it after chi's RequestID and ClientIPFrom… middleware, so their
// values reach the line, and before everything else. RequestLogger panics
// if logger is nil or opts is invalid.
func RequestLogger(logger *slog.Logger, opts *LogOptions) func(http.Handler) http.Handler {
	if logger == nil {
		panic("saguaro/middleware: RequestLogger needs a logger")
	}
	o := opts.withDefaults()
	keep := make(map[string]bool, len(o.LogQueryParams))
	for _, k := range o.LogQueryParams {
		keep[k] = true
	}
	l := &reqLogger{opts: o, logger: logger, keep: keep,
		needLogged: o.Skip != nil || o.LogRequestBody != nil || o.LogResponseBody != nil}

	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			l.serve(next, w, r)
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

// reqLogger is the preset, shared by every request.
type reqLogger struct {
	opts   LogOptions
	logger *slog.Logger
	keep   map[string]bool
	// needLogged: a caller's hook (Skip, LogRequestBody, LogResponseBody)
	// gets the request as logged, a redacted copy, which is then built.
	needLogged bool
}

// reqState is the per-request state, reachable from the context by
// SetAttrs. It is one allocation: the attribute buffers it starts with
// cover a typical MCP call.
type reqState struct {
	bag attrBag

	orig           *http.Request // the request as the handler sees it
	logged         *http.Request // the redacted copy for the caller's hooks, or nil
	url            *url.URL      // the URL as logged (query values redacted)
	reqAttrs       []slog.Attr   // header-derived, set before the handler runs
	ww             chimw.WrapResponseWriter
	l              *reqLogger
	hr             *http.Request
	stream         atomic.Bool
	sessionFromReq bool
	req            http.Request  // hr's storage: the handler's request lives in this allocation
	reqBody        *bytes.Buffer // the copy of a logged request body
	respBody       *bytes.Buffer // the copy of a logged response body
	sw             streamWriter

	bagBuf [6]slog.Attr
	reqBuf [6]slog.Attr
	hdrBuf [2]slog.Attr
}

type stateKey struct{}

func (stateKey) String() string { return "saguaro/middleware log state" }

func stateFrom(ctx context.Context) *reqState {
	st, _ := ctx.Value(stateKey{}).(*reqState)
	return st
}

// serve runs the handler and writes the request's line when it returns.
func (l *reqLogger) serve(next http.Handler, w http.ResponseWriter, r *http.Request) {
	st := &reqState{orig: r, url: r.URL, l: l}
	st.bag.attrs = st.bagBuf[:0]
	ctx := context.WithValue(r.Context(), stateKey{}, st)
	st.req = *r.WithContext(ctx) // inlined: the copy is made in st, not on its own
	hr := &st.req
	st.hr = hr
	if r.URL != nil && r.URL.RawQuery != "" {
		u := *r.URL
		u.RawQuery = redactQuery(r.URL.RawQuery, l.keep)
		st.url = &u
	}
	if l.needLogged {
		lr := hr.WithContext(ctx)
		lr.URL = st.url
		if st.url != r.URL {
			if path, _, ok := strings.Cut(r.RequestURI, "?"); ok {
				lr.RequestURI = path + "?" + st.url.RawQuery
			}
		}
		lr.Header, _ = redactHeader(r.Header, l.keep)
		st.logged = lr
	}
	o := &l.opts
	logReqBody := o.LogRequestBody != nil && o.LogRequestBody(st.logged)
	logRespBody := o.LogResponseBody != nil && o.LogResponseBody(st.logged)
	if logReqBody && r.Body != nil {
		// Only what the handler reads is copied (and nothing is drained
		// after it returns); its Close is a no-op, as under httplog.
		st.reqBody = new(bytes.Buffer)
		hr.Body = io.NopCloser(io.TeeReader(r.Body, st.reqBody))
	}
	ww := chimw.NewWrapResponseWriter(w, r.ProtoMajor)
	if logRespBody {
		st.respBody = new(bytes.Buffer)
		ww.Tee(st.respBody)
	}
	st.ww = ww
	start := time.Now()

	st.reqAttrs = requestAttrs(hr, st.reqBuf[:0])
	_, st.sessionFromReq = findAttr(st.reqAttrs, MCPSessionKey)
	st.sw = streamWriter{ResponseWriter: ww, ww: ww, starter: st}
	var sw http.ResponseWriter = &st.sw
	if _, ok := ww.(http.Hijacker); ok {
		sw = hijackStreamWriter{&st.sw}
	}

	returned := false
	defer func() {
		var rec any
		if !returned {
			rec = recover()
		}
		l.finish(st, ctx, start, !returned, rec, logReqBody, logRespBody)
	}()
	next.ServeHTTP(sw, hr)
	returned = true
}

// streamStarted is called by the stream writer when an event stream is
// accepted.
func (st *reqState) streamStarted(status int) {
	st.stream.Store(true)
	st.l.streamStart(st, st.ww.Header(), status)
}

// finish writes the line of a request whose handler returned or panicked
// (rec is what it panicked with; a runtime.Goexit leaves it nil).
func (l *reqLogger) finish(st *reqState, ctx context.Context, start time.Time, panicked bool, rec any, logReqBody, logRespBody bool) {
	o := &l.opts
	s := o.Schema
	r, ww := st.orig, st.ww
	bag := st.bag.close()
	// The line is built on the stack (it grows to the heap past 40
	// attributes); the record copies it.
	var lineBuf [40]slog.Attr
	line := lineBuf[:0]
	if rec != nil {
		// 500 if recovering and no status was set.
		if o.RecoverPanics && ww.Status() == 0 && r.Header.Get("Connection") != "Upgrade" {
			ww.WriteHeader(http.StatusInternalServerError)
		}
		if rec == http.ErrAbortHandler || !o.RecoverPanics {
			// Re-panic http.ErrAbortHandler always, and other values
			// when not recovering, once the line is written.
			defer panic(rec)
		}
		line = appendAttrs(line, slog.String(s.ErrorMessage, fmt.Sprintf("panic: %v", rec)))
		if rec != http.ErrAbortHandler {
			pc := make([]uintptr, 10)
			n := runtime.Callers(4, pc) // skip Callers, finish, the deferred func, gopanic
			frames := runtime.CallersFrames(pc[:n])
			var stack []string
			for frame, more := frames.Next(); more; frame, more = frames.Next() {
				if !strings.Contains(frame.File, "runtime/panic.go") {
					stack = append(stack, fmt.Sprintf("%s:%d", frame.File, frame.Line))
				}
			}
			line = appendAttrs(line, slog.Any(s.ErrorStackTrace, stack))
		}
	}

	duration := time.Since(start)
	status := ww.Status()
	if status == 0 {
		status = http.StatusOK // what net/http sends when the handler wrote nothing
	}
	if o.Skip != nil && o.Skip(st.logged, status) {
		return
	}
	lvl := levelForStatus(status)
	if panicked {
		lvl = slog.LevelError
	}
	h := l.logger.Handler()
	if lvl < o.Level || !h.Enabled(ctx, lvl) {
		return
	}

	u := urlString(st.url)
	ref := r.Header.Get("Referer")
	if strings.ContainsAny(ref, "?#@") {
		ref = redactReferer(ref, l.keep)
	}
	line = appendAttrs(line,
		slog.String(s.RequestURL, scheme(r)+"://"+r.Host+u),
		slog.String(s.RequestMethod, r.Method),
		slog.String(s.RequestPath, r.URL.Path),
		slog.String(s.RequestRemoteIP, r.RemoteAddr),
		slog.String(s.RequestHost, r.Host),
		slog.String(s.RequestScheme, scheme(r)),
		slog.String(s.RequestProto, r.Proto),
		slog.Attr{Key: s.RequestHeaders, Value: slog.GroupValue(l.requestHeaderAttrs(r.Header, st.hdrBuf[:0])...)},
		slog.Int64(s.RequestBytes, r.ContentLength),
		slog.String(s.RequestUserAgent, r.UserAgent()),
		slog.String(s.RequestReferer, ref),
		slog.Attr{Key: s.ResponseHeaders, Value: slog.GroupValue(headerAttrs(ww.Header(), o.LogResponseHeaders)...)},
		slog.Int(s.ResponseStatus, status),
		responseDuration(s.ResponseDuration, duration),
		slog.Int(s.ResponseBytes, ww.BytesWritten()),
	)
	if err := ctx.Err(); errors.Is(err, context.Canceled) {
		line = appendAttrs(line, slog.Any(httplog.ErrorKey, httplog.ErrClientAborted), slog.String(s.ErrorType, "ClientAborted"))
	}
	if logReqBody {
		line = appendAttrs(line, slog.String(s.RequestBody, logBody(st.reqBody, r.Header, o)))
	}
	if logRespBody {
		line = appendAttrs(line, slog.String(s.ResponseBody, logBody(st.respBody, ww.Header(), o)))
	}

	// Ours: the request's attributes, the session id an initialize hands
	// out, the stream's end, then SetAttrs's, which win on equal keys.
	k := len(line)
	line = append(line, st.reqAttrs...)
	line = appendResponseAttrs(line, ww.Header(), st.sessionFromReq)
	if st.stream.Load() {
		line = append(line, slog.String(StreamLogKey, "end"))
	}
	for _, a := range bag {
		line = line[:k+len(upsert(line[k:], a))]
	}
	if s.GroupDelimiter != "" {
		line = groupByDelimiter(line, s.GroupDelimiter)
	}

	var msgBuf [128]byte
	m := append(msgBuf[:0], r.Method...)
	m = append(m, ' ')
	m = append(m, u...)
	m = append(m, " => HTTP "...)
	m = strconv.AppendInt(m, int64(status), 10)
	m = append(m, " ("...)
	m = append(m, duration.String()...)
	m = append(m, ')')
	msg := string(m)
	pc := finishPC.Load()
	if pc == 0 {
		var pcs [1]uintptr
		runtime.Callers(1, pcs[:])
		pc = pcs[0]
		finishPC.Store(pc)
	}
	rec2 := slog.NewRecord(time.Now(), lvl, msg, pc)
	rec2.AddAttrs(line...)
	_ = h.Handle(ctx, rec2)
}

// finishPC is the source of the request lines (a handler with AddSource
// shows it): this file's finish, found once rather than per line.
var finishPC atomic.Uintptr

// appendAttrs appends the attributes that have a key (a schema leaves out
// a field by naming it "").
func appendAttrs(attrs []slog.Attr, more ...slog.Attr) []slog.Attr {
	for _, a := range more {
		if a.Key != "" {
			attrs = append(attrs, a)
		}
	}
	return attrs
}

// requestHeaderAttrs returns the logged request headers, credentials and
// the Referer's secrets redacted as redactHeader does.
func (l *reqLogger) requestHeaderAttrs(h http.Header, buf []slog.Attr) []slog.Attr {
	for _, name := range l.opts.LogRequestHeaders {
		vals := h.Values(name)
		if len(vals) == 0 {
			continue
		}
		switch http.CanonicalHeaderKey(name) {
		case "Authorization", "Proxy-Authorization":
			red := make([]string, len(vals))
			for i, v := range vals {
				red[i] = redactCredential(v)
			}
			vals = red
		case "Cookie":
			red := make([]string, len(vals))
			for i := range red {
				red[i] = Redacted
			}
			vals = red
		case "Referer":
			if ref := vals[0]; strings.ContainsAny(ref, "?#@") {
				vals = []string{redactReferer(ref, l.keep)}
			}
		}
		buf = appendHeaderAttr(buf, name, vals)
	}
	return buf
}

// headerAttrs returns the listed headers of h as attributes.
func headerAttrs(h http.Header, names []string) []slog.Attr {
	if len(names) == 0 {
		return nil
	}
	attrs := make([]slog.Attr, 0, len(names))
	for _, name := range names {
		attrs = appendHeaderAttr(attrs, name, h.Values(name))
	}
	return attrs
}

func appendHeaderAttr(attrs []slog.Attr, name string, vals []string) []slog.Attr {
	switch {
	case len(vals) == 1:
		return append(attrs, slog.String(name, vals[0]))
	case len(vals) > 1:
		return append(attrs, slog.Any(name, vals))
	}
	return attrs
}

// responseDuration is the duration field in the schema's unit.
func responseDuration(key string, d time.Duration) slog.Attr {
	switch key {
	case httplog.ECSResponseDuration:
		return slog.Int64(key, d.Nanoseconds())
	case httplog.OTELResponseDuration:
		return slog.Float64(key, d.Seconds())
	case httplog.GCPResponseDuration:
		return slog.String(key, strconv.FormatFloat(d.Seconds(), 'f', -1, 64)+"s")
	default:
		return slog.Float64(key, float64(d.Milliseconds()))
	}
}

// logBody is a logged body: trimmed to LogBodyMaxLen, or a note when its
// Content-Type is not one of LogBodyContentTypes.
func logBody(body *bytes.Buffer, header http.Header, o *LogOptions) string {
	if body == nil || body.Len() == 0 {
		return ""
	}
	contentType := header.Get("Content-Type")
	for _, allowed := range o.LogBodyContentTypes {
		if strings.HasPrefix(contentType, allowed) {
			if o.LogBodyMaxLen <= 0 || o.LogBodyMaxLen >= body.Len() {
				return body.String()
			}
			return body.String()[:o.LogBodyMaxLen] + "... [trimmed]"
		}
	}
	return fmt.Sprintf("[body redacted for Content-Type: %s]", contentType)
}

// streamStart writes the line that says an event stream was accepted.
func (l *reqLogger) streamStart(st *reqState, respHeader http.Header, status int) {
	if l.opts.NoStreamStart || slog.LevelInfo < l.opts.Level {
		return
	}
	ctx := st.hr.Context()
	if !l.logger.Enabled(ctx, slog.LevelInfo) {
		return
	}
	if l.opts.Skip != nil && l.opts.Skip(st.logged, status) {
		return
	}
	r := st.orig
	s := l.opts.Schema
	u := urlString(st.url)
	attrs := []slog.Attr{
		slog.String(s.RequestURL, scheme(r)+"://"+r.Host+u),
		slog.String(s.RequestMethod, r.Method),
		slog.String(s.RequestPath, r.URL.Path),
		slog.String(s.RequestRemoteIP, r.RemoteAddr),
		slog.Int(s.ResponseStatus, status),
	}
	attrs = append(attrs, st.reqAttrs...)
	attrs = appendResponseAttrs(attrs, respHeader, st.sessionFromReq)
	attrs = append(attrs, slog.String(StreamLogKey, "start"))
	attrs = merge(attrs, st.bag.snapshot())
	attrs = dropEmptyKeys(attrs)
	if s.GroupDelimiter != "" {
		attrs = groupByDelimiter(attrs, s.GroupDelimiter)
	}
	msg := r.Method + " " + u + " => HTTP " + strconv.Itoa(status) + " stream start"
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
func requestAttrs(r *http.Request, attrs []slog.Attr) []slog.Attr {
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

// appendResponseAttrs appends the session id an initialize response hands
// out.
func appendResponseAttrs(attrs []slog.Attr, h http.Header, sessionFromReq bool) []slog.Attr {
	if sessionFromReq {
		return attrs
	}
	v := h.Get(hdrSessionID)
	if v == "" {
		return attrs
	}
	if len(v) > maxHeaderAttrLen {
		v = v[:maxHeaderAttrLen] + "…"
	}
	return append(attrs, slog.String(MCPSessionKey, v))
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

// urlString is u.String() without building a new string for the common
// server request: an absolute path and nothing else (then String is
// EscapedPath, which returns the path itself when nothing needs escaping).
func urlString(u *url.URL) string {
	if u.Scheme == "" && u.Opaque == "" && u.Host == "" && u.User == nil && !u.ForceQuery &&
		u.RawQuery == "" && u.Fragment == "" && strings.HasPrefix(u.Path, "/") {
		return u.EscapedPath()
	}
	return u.String()
}

func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

func isEventStream(contentType string) bool {
	// Parse only what can be an event stream: every response passes here.
	base, _, _ := strings.Cut(contentType, ";")
	if !strings.EqualFold(strings.TrimSpace(base), "text/event-stream") {
		return false
	}
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "text/event-stream"
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
