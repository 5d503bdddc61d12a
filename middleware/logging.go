package middleware

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-chi/httplog/v3"

	"github.com/saguaro-go/saguaro/internal/reqscope"
)

// LogOptions configures [RequestLogger]. The zero value (or a nil pointer)
// is a safe production setting: Info level, the ECS schema, Content-Type and
// Origin request headers, no bodies, query values redacted.
//
// Its fields up to LogBodyMaxLen are those of httplog.Options, with the
// same meaning except where a field says otherwise. httplog's
// LogExtraAttrs has no counterpart (it makes httplog copy every request
// body): add attributes with [SetAttrs].
//
// RequestLogger copies the struct; changing it afterwards has no effect, and
// RequestLogger never writes to it (httplog's own RequestLogger does both:
// it fills defaults into the caller's Options and gives a non-nil Options no
// defaults at all).
type LogOptions struct {
	// Level is the minimum level of a line. The level of a line comes from
	// its status: 5xx and panics are Error, every 4xx (429 included) and
	// aborted responses are Warn, everything else (OPTIONS included) is
	// Info. Default: Info.
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
	// log time only; it does not bound the copy (see LogRequestBody). A
	// negative value (httplog's "unlimited") is refused.
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
//   - logs a response cut on purpose ([http.ErrAbortHandler], which
//     net/http and httputil.ReverseProxy use to abort a response that
//     cannot be finished) as what it is: "response aborted", at Warn or
//     the status's level if higher, with no stack;
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
// With a logger on [NewJSONHandler], the line is written without a
// slog.Record, byte for byte what slog.JSONHandler would write.
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
	for _, name := range o.LogRequestHeaders {
		l.reqHeaders = append(l.reqHeaders, http.CanonicalHeaderKey(name))
	}

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
	// reqHeaders is LogRequestHeaders in canonical form, found once
	// rather than per request; the line names them as the options do.
	reqHeaders []string
	// needLogged: a caller's hook (Skip, LogRequestBody, LogResponseBody)
	// gets the request as logged, a redacted copy, which is then built.
	needLogged bool
	// pc is the source of the request lines (a handler with AddSource
	// shows it): finish, found on the first line rather than per line.
	pc atomic.Uintptr
}

// reqState is the per-request state, reachable from the context by
// SetAttrs. It is one allocation: the attribute buffers it starts with
// cover a typical MCP call.
type reqState struct {
	bag attrBag

	orig     *http.Request // the request as the handler sees it
	logged   *http.Request // the redacted copy for the caller's hooks, or nil
	url      *url.URL      // the URL as logged (query values redacted)
	l        *reqLogger
	hr       *http.Request
	stream   atomic.Bool
	req      http.Request  // hr's storage: the handler's request lives in this allocation
	reqBody  *bytes.Buffer // the copy of a logged request body
	respBody *bytes.Buffer // the copy of a logged response body
	sw       streamWriter
	ctx      logCtx         // the handler's context
	scope    reqscope.Scope // what the layers below hand down

	bagBuf [6]slog.Attr
	hdrBuf [2]slog.Attr
}

type stateKey struct{}

func (stateKey) String() string { return "saguaro/middleware log state" }

// logCtx is the logger's node in the request's context, part of the
// request's reqState (no allocation of its own). It answers for the state
// (SetAttrs), for the per-request scope later layers fill instead of
// wrapping the context again, and for what they stored there.
type logCtx struct {
	context.Context
	st *reqState
}

func (c *logCtx) Value(key any) any {
	switch key.(type) {
	case stateKey:
		return c.st
	case reqscope.ScopeKey:
		return &c.st.scope
	case reqscope.AuthKey:
		if v := c.st.scope.Auth(); v != nil {
			return v
		}
	}
	return c.Context.Value(key)
}

func (c *logCtx) String() string {
	if s, ok := c.Context.(fmt.Stringer); ok {
		return s.String() + ".WithValue(saguaro/middleware log state)"
	}
	return "context.WithValue(saguaro/middleware log state)"
}

func stateFrom(ctx context.Context) *reqState {
	st, _ := ctx.Value(stateKey{}).(*reqState)
	return st
}

// serve runs the handler and writes the request's line when it returns.
func (l *reqLogger) serve(next http.Handler, w http.ResponseWriter, r *http.Request) {
	st := &reqState{orig: r, url: r.URL, l: l}
	st.bag.attrs = st.bagBuf[:0]
	st.ctx = logCtx{Context: r.Context(), st: st}
	ctx := context.Context(&st.ctx)
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
	st.sw = streamWriter{ResponseWriter: w, starter: st}
	if logRespBody {
		st.respBody = new(bytes.Buffer)
		st.sw.tee = st.respBody
	}
	start := time.Now()

	var sw http.ResponseWriter = &st.sw
	if _, ok := w.(http.Hijacker); ok {
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

// finish writes the line of a request whose handler returned or panicked
// (rec is what it panicked with; a runtime.Goexit leaves it nil).
func (l *reqLogger) finish(st *reqState, ctx context.Context, start time.Time, panicked bool, rec any, logReqBody, logRespBody bool) {
	o := &l.opts
	ww := &st.sw
	bag := st.bag.close()
	// The line is built on the stack (it grows to the heap past 40
	// attributes); the record copies it.
	var lineBuf [40]slog.Attr
	line := lineBuf[:0]
	if rec != nil {
		// 500 if recovering and no status was set.
		if o.RecoverPanics && ww.code == 0 && st.orig.Header.Get("Connection") != "Upgrade" {
			ww.WriteHeader(http.StatusInternalServerError)
		}
		if rec == http.ErrAbortHandler || !o.RecoverPanics {
			// Re-panic http.ErrAbortHandler always, and other values
			// when not recovering, once the line is written.
			defer panic(rec)
		}
		if rec == http.ErrAbortHandler {
			line = appendAttrs(line, slog.String(o.Schema.ErrorMessage, "response aborted"))
		} else {
			stack := make([]uintptr, 10)
			// Skip Callers, finish, the deferred func and gopanic: the
			// first frame is the one that panicked.
			stack = stack[:runtime.Callers(4, stack)]
			line = appendPanic(line, o.Schema, rec, stack)
		}
	}

	// One clock read serves the duration and the line's time: a read costs
	// as much as formatting several fields on some virtual machines.
	end := time.Now()
	duration := end.Sub(start)
	status := ww.code
	if status == 0 {
		status = http.StatusOK // what net/http sends when the handler wrote nothing
	}
	if o.Skip != nil && o.Skip(st.logged, status) {
		return
	}
	lvl := levelForStatus(status)
	switch {
	case rec == http.ErrAbortHandler:
		lvl = max(lvl, slog.LevelWarn)
	case panicked:
		lvl = slog.LevelError
	}
	h := l.logger.Handler()
	if lvl < o.Level || !h.Enabled(ctx, lvl) {
		return
	}

	u := urlString(st.url)
	line = l.appendFields(line, st, u, status, duration, errors.Is(ctx.Err(), context.Canceled), logReqBody, logRespBody)
	line = st.appendOwnAttrs(line, bag)
	if s := o.Schema; s.GroupDelimiter != "" {
		line = groupByDelimiter(line, s.GroupDelimiter)
	}

	var msg [128]byte
	m := appendMessage(msg[:0], st.orig.Method, u, status, duration)
	if jh, ok := h.(*JSONHandler); ok {
		if done, _ := jh.writeLine(end, lvl, m, line); done {
			return
		}
	}
	pc := l.pc.Load()
	if pc == 0 {
		var pcs [1]uintptr
		runtime.Callers(1, pcs[:])
		pc = pcs[0]
		l.pc.Store(pc)
	}
	r := slog.NewRecord(end, lvl, string(m), pc)
	r.AddAttrs(line...)
	_ = h.Handle(ctx, r)
}
