package middleware

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/httplog/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// RequestLogger writes httplog's request line with its own encoder. The
// test below serves each request twice, once through httplog.RequestLogger
// and once through RequestLogger, with the same options and the same
// slog.JSONHandler, and compares the two lines byte for byte.
//
// Both lines go through the same normalisation, so that two runs of one
// request agree: the time, the duration (field and message) and all but
// the first frame of a panic's stack (the frame that panicked; the frames
// below it are the two middlewares' own).
//
// Where the preset differs from httplog by design, the case's byDesign
// edits httplog's line into the line the preset must write. Each edit must
// find what it replaces, so an edit that no longer applies fails the test.
// The differences by design:
//
//   - query values are redacted in url.full and the message, except those
//     of LogQueryParams;
//   - Authorization, Proxy-Authorization and Cookie values are redacted
//     among the logged request headers, and the Referer loses its userinfo
//     and fragment and has its query values redacted;
//   - the level comes from the status alone: 429 is Warn (httplog: Info),
//     OPTIONS is Info (httplog: Debug), and a panic is Error even when it
//     is not recovered (httplog: Info, as "HTTP 200");
//   - the unread rest of a request body is neither read nor logged
//     (httplog drains it into the logged body and adds its size);
//   - an event stream's body is never copied, and its end line is marked
//     with StreamLogKey (its start line is the preset's own);
//   - the preset adds attributes of its own after httplog's: the MCP
//     headers, chi's request id, the resolved client IP;
//   - attributes come from SetAttrs and SetError of this package, where
//     httplog's line takes those of httplog.SetAttrs and httplog.SetError
//     (which do nothing under the preset); a later value replaces an
//     earlier one under the same key, where httplog logs both;
//   - with a GroupDelimiter, the groups come in the order of their first
//     attribute (httplog's order varies from line to line when SetAttrs
//     adds a second group, as it ranges over a map).
func TestRequestLogger_LineMatchesHTTPLog(t *testing.T) {
	t.Parallel()
	schemas := []struct {
		name string
		s    *httplog.Schema
	}{
		{"ECS", httplog.SchemaECS},
		{"OTEL", httplog.SchemaOTEL},
		{"GCP", httplog.SchemaGCP},
		{"ECS-concise", httplog.SchemaECS.Concise(true)},
	}
	for _, sc := range schemas {
		for _, tc := range lineCases {
			t.Run(sc.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				want := lineOf(t, sc.s, tc, true)
				if tc.byDesign != nil {
					e := &lineEdit{t: t, s: sc.s, line: want}
					tc.byDesign(e)
					want = e.line
				}
				got := lineOf(t, sc.s, tc, false)
				assert.Equal(t, want, got)
				if testing.Verbose() {
					t.Logf("httplog: %s", lineOf(t, sc.s, tc, true))
					t.Logf("preset:  %s", got)
				}
			})
		}
	}
}

func TestURLStringMatchesString(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"/mcp", "/a%2Fb", "/a b", "/é", "/x?q=1", "//double", "/p#f", "/a:b/c", "/%7Euser", "*", "http://h/p"} {
		u, err := url.Parse(raw)
		if err != nil {
			continue
		}
		assert.Equal(t, u.String(), urlString(u), raw)
	}
	for _, uri := range []string{"/mcp", "/a%2Fb", "//double/x", "/%7Euser/x"} {
		u, err := url.ParseRequestURI(uri)
		require.NoError(t, err)
		assert.Equal(t, u.String(), urlString(u), uri)
	}
}

// attrFuncs is how a handler adds to the line: httplog's functions under
// httplog, this package's under the preset.
type attrFuncs struct {
	setAttrs func(context.Context, ...slog.Attr)
	setError func(context.Context, error) error
}

var (
	viaHTTPLog = attrFuncs{httplog.SetAttrs, httplog.SetError}
	viaPreset  = attrFuncs{SetAttrs, SetError}
)

type lineCase struct {
	name    string
	opts    LogOptions
	method  string
	target  string            // path and query
	header  map[string]string // request headers; Add for a "\n"-joined value
	body    string
	handler func(f attrFuncs) http.HandlerFunc
	// abort: the client leaves once it has the response header.
	abort bool
	// stream: the response is an event stream (the preset writes a start
	// line before the line compared).
	stream   bool
	byDesign func(e *lineEdit)
}

const pingBody = `{"jsonrpc":"2.0","id":1,"method":"ping"}`

// answer reads the whole request body and writes status with a body of
// the given type.
func answer(status int, contentType, body string) func(attrFuncs) http.HandlerFunc {
	return func(attrFuncs) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			if contentType != "" {
				w.Header().Set("Content-Type", contentType)
			}
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
		}
	}
}

func always(*http.Request) bool { return true }

var jsonHeader = map[string]string{"Content-Type": "application/json", "Origin": "https://app.example"}

var lineCases = []lineCase{
	{
		name: "json answer", method: http.MethodPost, target: "/mcp", header: jsonHeader, body: pingBody,
		handler: answer(http.StatusOK, "application/json", `{"jsonrpc":"2.0","id":1,"result":{}}`),
	},
	{
		name: "nothing written", method: http.MethodGet, target: "/healthz",
		handler: func(attrFuncs) http.HandlerFunc { return func(http.ResponseWriter, *http.Request) {} },
	},
	{
		name: "400", method: http.MethodPost, target: "/mcp", header: jsonHeader, body: "{",
		handler: answer(http.StatusBadRequest, "application/json", `{"error":"parse"}`),
	},
	{
		name: "404", method: http.MethodGet, target: "/nowhere",
		handler: answer(http.StatusNotFound, "text/plain; charset=utf-8", "404 page not found\n"),
	},
	{
		name: "429", method: http.MethodPost, target: "/mcp", header: jsonHeader, body: pingBody,
		handler:  answer(http.StatusTooManyRequests, "application/json", `{"error":"slow down"}`),
		byDesign: func(e *lineEdit) { e.level("INFO", "WARN") },
	},
	{
		name: "500", method: http.MethodPost, target: "/mcp", header: jsonHeader, body: pingBody,
		handler: answer(http.StatusInternalServerError, "application/json", `{"error":"db"}`),
	},
	{
		name: "503", method: http.MethodGet, target: "/mcp",
		handler: answer(http.StatusServiceUnavailable, "", ""),
	},
	{
		name: "panic recovered", method: http.MethodPost, target: "/mcp", header: jsonHeader, body: pingBody,
		opts: LogOptions{RecoverPanics: true},
		handler: func(attrFuncs) http.HandlerFunc {
			return func(http.ResponseWriter, *http.Request) { panic("boom") }
		},
	},
	{
		name: "panic not recovered", method: http.MethodPost, target: "/mcp", header: jsonHeader, body: pingBody,
		handler: func(attrFuncs) http.HandlerFunc {
			return func(http.ResponseWriter, *http.Request) { panic(errors.New("boom")) }
		},
		byDesign: func(e *lineEdit) { e.level("INFO", "ERROR") },
	},
	{
		name: "query string", method: http.MethodGet, target: "/mcp?access_token=SECRET&cursor=page2&flag",
		opts:    LogOptions{LogQueryParams: []string{"cursor"}},
		handler: answer(http.StatusOK, "application/json", `{}`),
		byDesign: func(e *lineEdit) {
			e.replaceAll("access_token=SECRET", "access_token=REDACTED")
			e.replaceAll("&flag", "&REDACTED")
		},
	},
	{
		name: "credentials", method: http.MethodPost, target: "/mcp", body: pingBody,
		header: map[string]string{
			"Content-Type":        "application/json",
			"Authorization":       "Bearer TOKENVALUE",
			"Proxy-Authorization": "Basic UFJPWFk=",
			"Cookie":              "sid=COOKIEVALUE",
			"Referer":             "https://user:REFPASS@app.example/page?code=REFCODE#frag",
		},
		opts:    LogOptions{LogRequestHeaders: []string{"Content-Type", "Authorization", "Proxy-Authorization", "Cookie"}},
		handler: answer(http.StatusOK, "application/json", `{}`),
		byDesign: func(e *lineEdit) {
			e.replaceAll("Bearer TOKENVALUE", "Bearer REDACTED")
			e.replaceAll("Basic UFJPWFk=", "Basic REDACTED")
			e.replaceAll("sid=COOKIEVALUE", "REDACTED")
			if e.s.RequestReferer != "" {
				e.replaceAll("user:REFPASS@", "")
				e.replaceAll("code=REFCODE#frag", "code=REDACTED")
			}
		},
	},
	{
		name: "listed headers", method: http.MethodGet, target: "/mcp",
		header: map[string]string{"Accept": "application/json\ntext/event-stream", "Origin": "https://app.example"},
		opts: LogOptions{
			LogRequestHeaders:  []string{"Accept", "Origin", "X-Absent"},
			LogResponseHeaders: []string{"Content-Type", "Cache-Control", "X-Absent"},
		},
		handler: func(attrFuncs) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Add("Cache-Control", "no-store")
				w.Header().Add("Cache-Control", "private")
				_, _ = io.WriteString(w, "{}")
			}
		},
	},
	{
		name: "bodies", method: http.MethodPost, target: "/mcp", header: jsonHeader, body: pingBody,
		opts:    LogOptions{LogRequestBody: always, LogResponseBody: always},
		handler: answer(http.StatusOK, "application/json", `{"jsonrpc":"2.0","id":1,"result":{}}`),
	},
	{
		name: "bodies trimmed", method: http.MethodPost, target: "/mcp", header: jsonHeader, body: pingBody,
		opts:    LogOptions{LogRequestBody: always, LogResponseBody: always, LogBodyMaxLen: 10},
		handler: answer(http.StatusOK, "application/json", `{"jsonrpc":"2.0","id":1,"result":{}}`),
	},
	{
		name: "body of another type", method: http.MethodPost, target: "/upload",
		header: map[string]string{"Content-Type": "image/png"}, body: "\x89PNG\r\n",
		opts:    LogOptions{LogRequestBody: always, LogResponseBody: always},
		handler: answer(http.StatusCreated, "text/plain", "stored"),
	},
	{
		name: "request body partly read", method: http.MethodPost, target: "/mcp", header: jsonHeader, body: pingBody,
		opts: LogOptions{LogRequestBody: always},
		handler: func(attrFuncs) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.ReadFull(r.Body, make([]byte, 8))
			}
		},
		byDesign: func(e *lineEdit) {
			e.set(e.s.RequestBody, fmt.Sprintf("%q", pingBody), fmt.Sprintf("%q", pingBody[:8]))
			e.remove(e.s.RequestBytesUnread, fmt.Sprint(len(pingBody)-8))
		},
	},
	{
		name: "attributes and error", method: http.MethodPost, target: "/mcp", header: jsonHeader, body: pingBody,
		handler: func(f attrFuncs) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				f.setAttrs(r.Context(), slog.String("app.user", "ann"), slog.Int("app.items", 3))
				_ = f.setError(r.Context(), errors.New("quota exceeded"))
				f.setAttrs(r.Context(), slog.Group("app.quota", slog.Int("limit", 10)))
				w.WriteHeader(http.StatusConflict)
			}
		},
	},
	{
		name: "MCP headers", method: http.MethodPost, target: "/mcp", body: pingBody,
		header: map[string]string{
			"Content-Type": "application/json", "Mcp-Session-Id": "s-1", "MCP-Protocol-Version": "2025-11-25",
		},
		handler:  answer(http.StatusOK, "application/json", `{}`),
		byDesign: func(e *lineEdit) { e.appendAttrs(`"mcp.session":"s-1","mcp.revision":"2025-11-25"`) },
	},
	{
		name: "client aborted", method: http.MethodGet, target: "/mcp", abort: true,
		handler: func(attrFuncs) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusOK)
				_, _ = io.WriteString(w, "{")
				http.NewResponseController(w).Flush()
				<-r.Context().Done()
			}
		},
	},
	{
		name: "event stream", method: http.MethodGet, target: "/mcp", stream: true,
		header: map[string]string{"Accept": "text/event-stream"},
		opts: LogOptions{
			LogResponseBody:     always,
			LogBodyContentTypes: []string{"application/json", "text/event-stream"},
		},
		handler: func(attrFuncs) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				for i := range 2 {
					fmt.Fprintf(w, "data: %d\n\n", i)
					http.NewResponseController(w).Flush()
				}
			}
		},
		byDesign: func(e *lineEdit) {
			e.set(e.s.ResponseBody, `"data: 0\n\ndata: 1\n\n"`, `""`)
			e.appendAttrs(`"http.stream":"end"`)
		},
	},
	{
		name: "OPTIONS", method: http.MethodOptions, target: "/mcp",
		header:   map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "POST"},
		handler:  answer(http.StatusNoContent, "", ""),
		byDesign: func(e *lineEdit) { e.level("DEBUG", "INFO") },
	},
}

// lineOf serves tc once, through httplog's middleware or through the
// preset, and returns the request's line.
func lineOf(t *testing.T, s *httplog.Schema, tc lineCase, viaHTTPLogMiddleware bool) string {
	t.Helper()
	return lineThrough(t, s, tc, viaHTTPLogMiddleware, func(w io.Writer) slog.Handler {
		return slog.NewJSONHandler(w, &slog.HandlerOptions{
			Level:       slog.LevelDebug,
			ReplaceAttr: normaliseLine(s),
		})
	})
}

// lineThrough is lineOf with the slog handler newHandler returns.
func lineThrough(t *testing.T, s *httplog.Schema, tc lineCase, viaHTTPLogMiddleware bool, newHandler func(io.Writer) slog.Handler) string {
	t.Helper()
	sink := &logSink{}
	logger := slog.New(newHandler(sink))
	opts := tc.opts
	opts.Schema = s
	opts.Level = slog.LevelDebug
	var mw func(http.Handler) http.Handler
	f, lines := viaPreset, 1
	if viaHTTPLogMiddleware {
		mw = httplog.RequestLogger(logger, httplogOptions(&opts))
		f = viaHTTPLog
	} else {
		mw = RequestLogger(logger, &opts)
		if tc.stream {
			lines = 2
		}
	}
	h := mw(tc.handler(f))
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The same client address and host on both sides, whatever the
		// connection.
		r.RemoteAddr = "192.0.2.10:4711"
		r.Host = "mcp.example:8443"
		h.ServeHTTP(w, r)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the unrecovered panic
	srv.Start()
	t.Cleanup(srv.Close)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var body io.Reader
	if tc.body != "" {
		body = strings.NewReader(tc.body)
	}
	req, err := http.NewRequestWithContext(ctx, tc.method, srv.URL+tc.target, body)
	require.NoError(t, err)
	req.Header.Set("User-Agent", "line-test/1.0")
	for k, v := range tc.header {
		for _, vv := range strings.Split(v, "\n") {
			req.Header.Add(k, vv)
		}
	}
	res, err := srv.Client().Do(req)
	if err == nil {
		if tc.abort {
			cancel()
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}

	var out []string
	require.Eventually(t, func() bool {
		out = strings.SplitAfter(sink.String(), "\n")
		out = out[:len(out)-1] // after the last "\n"
		return len(out) >= lines
	}, 5*time.Second, time.Millisecond, "want %d lines, have:\n%s", lines, sink.String())
	require.Len(t, out, lines, "lines:\n%s", sink.String())
	return out[lines-1]
}

// httplogOptions are the httplog.Options that match o.
func httplogOptions(o *LogOptions) *httplog.Options {
	c := o.withDefaults()
	return &httplog.Options{
		Level:               c.Level,
		Schema:              c.Schema,
		RecoverPanics:       c.RecoverPanics,
		LogRequestHeaders:   c.LogRequestHeaders,
		LogResponseHeaders:  c.LogResponseHeaders,
		LogRequestBody:      c.LogRequestBody,
		LogResponseBody:     c.LogResponseBody,
		LogBodyContentTypes: c.LogBodyContentTypes,
		LogBodyMaxLen:       c.LogBodyMaxLen,
	}
}

// normaliseLine is s.ReplaceAttr after fixing what differs from one run to
// the next: the time, the duration (in its field and at the end of the
// message) and the frames of a panic's stack below the one that panicked.
func normaliseLine(s *httplog.Schema) func([]string, slog.Attr) slog.Attr {
	return func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 {
			switch a.Key {
			case slog.TimeKey:
				a.Value = slog.TimeValue(time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC))
			case slog.MessageKey:
				msg := a.Value.String()
				if i := strings.LastIndex(msg, " ("); i >= 0 && strings.HasSuffix(msg, ")") {
					a.Value = slog.StringValue(msg[:i] + " (D)")
				}
			}
		}
		key := strings.Join(append(append([]string(nil), groups...), a.Key), s.GroupDelimiter)
		switch {
		case key == "":
		case key == s.ResponseDuration:
			switch a.Value.Kind() {
			case slog.KindInt64:
				a.Value = slog.Int64Value(0)
			case slog.KindFloat64:
				a.Value = slog.Float64Value(0)
			default:
				a.Value = slog.StringValue("0s")
			}
		case key == s.ErrorStackTrace:
			if frames, ok := a.Value.Any().([]string); ok && len(frames) > 1 {
				a.Value = slog.AnyValue(frames[:1])
			}
		}
		return s.ReplaceAttr(groups, a)
	}
}

// lineEdit turns httplog's line into the one the preset writes by design.
type lineEdit struct {
	t    *testing.T
	s    *httplog.Schema
	line string
}

// replaceAll replaces every old with new; there must be one at least.
func (e *lineEdit) replaceAll(old, new string) {
	e.t.Helper()
	require.Contains(e.t, e.line, old, "by design: nothing to replace")
	e.line = strings.ReplaceAll(e.line, old, new)
}

// key is a schema field's key as the line spells it: in a schema with a
// GroupDelimiter, its name inside the group.
func (e *lineEdit) key(field string) string {
	if e.s.GroupDelimiter != "" {
		if _, k, ok := strings.Cut(field, e.s.GroupDelimiter); ok {
			return k
		}
	}
	return field
}

// level changes the line's level.
func (e *lineEdit) level(from, to string) {
	e.t.Helper()
	k := e.s.Level
	if k == "" {
		k = slog.LevelKey
	}
	e.replaceAll(fmt.Sprintf("%q:%q", k, from), fmt.Sprintf("%q:%q", k, to))
}

// set changes the JSON value of a schema field, if the schema names it.
func (e *lineEdit) set(field, from, to string) {
	e.t.Helper()
	if field == "" {
		return
	}
	k := fmt.Sprintf("%q:", e.key(field))
	e.replaceAll(k+from, k+to)
}

// remove deletes a schema field with the given JSON value, if the schema
// names it.
func (e *lineEdit) remove(field, value string) {
	e.t.Helper()
	if field == "" {
		return
	}
	kv := fmt.Sprintf("%q:%s", e.key(field), value)
	if strings.Contains(e.line, ","+kv) {
		e.replaceAll(","+kv, "")
		return
	}
	e.replaceAll(kv+",", "")
}

// appendAttrs adds JSON members after httplog's attributes: at the end of
// the line, or before the group of a schema with a GroupDelimiter.
func (e *lineEdit) appendAttrs(members string) {
	e.t.Helper()
	if e.s.GroupDelimiter != "" {
		group, _, _ := strings.Cut(e.s.RequestURL, e.s.GroupDelimiter)
		at := fmt.Sprintf(",%q:{", group)
		e.replaceAll(at, ","+members+at)
		return
	}
	require.True(e.t, strings.HasSuffix(e.line, "}\n"))
	e.line = strings.TrimSuffix(e.line, "}\n") + "," + members + "}\n"
}
