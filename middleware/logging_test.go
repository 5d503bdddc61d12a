package middleware

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httplog/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serve starts a real server with RequestID → RequestLogger(opts) → h.
func serve(t *testing.T, opts *LogOptions, h http.HandlerFunc) (*httptest.Server, *logSink) {
	t.Helper()
	logger, sink := newTestLogger()
	r := chi.NewRouter()
	r.Use(chimw.RequestID)
	r.Use(chimw.ClientIPFromRemoteAddr)
	r.Use(RequestLogger(logger, opts))
	r.HandleFunc("/*", h)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv, sink
}

func do(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, string(body)
}

func TestRequestLogger_NoSecretsInLines(t *testing.T) {
	t.Parallel()
	var seenQuery, seenAuth string
	srv, sink := serve(t, &LogOptions{
		LogRequestHeaders: []string{"Authorization", "Cookie", "Proxy-Authorization", "Content-Type"},
		LogQueryParams:    []string{"cursor"},
	}, func(w http.ResponseWriter, r *http.Request) {
		seenQuery = r.URL.RawQuery
		seenAuth = r.Header.Get("Authorization")
		_, _ = io.WriteString(w, "ok")
	})

	req, _ := http.NewRequest(http.MethodGet,
		srv.URL+"/mcp?access_token=SECRET&cursor=page2&SECRETBARE&weird%3Dkey=SECRETX", nil)
	req.Header.Set("Authorization", "Bearer TOKENVALUE")
	req.Header.Set("Proxy-Authorization", "Basic UFJPWFlTRUNSRVQ=")
	req.Header.Set("Cookie", "session=COOKIEVALUE")
	req.Header.Set("Referer", "https://user:REFPASS@app.example/page?access_token=REFSECRET#frag")
	res, _ := do(t, req)
	require.Equal(t, http.StatusOK, res.StatusCode)

	// The handler sees the request as sent.
	assert.Equal(t, "access_token=SECRET&cursor=page2&SECRETBARE&weird%3Dkey=SECRETX", seenQuery)
	assert.Equal(t, "Bearer TOKENVALUE", seenAuth)

	lines := sink.waitLines(t, 1)
	require.Len(t, lines, 1, "one line per request")
	out := sink.String()
	for _, secret := range []string{"SECRET", "TOKENVALUE", "UFJPWFlTRUNSRVQ", "COOKIEVALUE", "REFPASS", "frag"} {
		assert.NotContains(t, out, secret)
	}
	l := lines[0]
	assert.Equal(t, fmt.Sprintf("%s/mcp?access_token=REDACTED&cursor=page2&REDACTED&REDACTED", srv.URL), l["url.full"])
	assert.Contains(t, l["message"], "GET /mcp?access_token=REDACTED&cursor=page2")
	hdrs := l["http.request.headers"].(map[string]any)
	assert.Equal(t, "Bearer REDACTED", hdrs["Authorization"])
	assert.Equal(t, "Basic REDACTED", hdrs["Proxy-Authorization"])
	assert.Equal(t, "REDACTED", hdrs["Cookie"])
	assert.Equal(t, "https://app.example/page?access_token=REDACTED", l["http.request.referrer"])
	assert.NotEmpty(t, l[RequestIDLogKey])
	assert.Equal(t, "127.0.0.1", l[ClientIPLogKey])
}

func TestRequestLogger_OneLinePerRequest(t *testing.T) {
	t.Parallel()
	srv, sink := serve(t, nil, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})
	for i := range 5 {
		req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/n/%d", srv.URL, i), strings.NewReader("{}"))
		do(t, req)
	}
	lines := sink.waitLines(t, 5)
	require.Len(t, lines, 5)
	for i, l := range lines {
		assert.Equal(t, fmt.Sprintf("/n/%d", i), l["url.path"])
		assert.NotContains(t, l, StreamLogKey, "not a stream")
	}
}

func TestRequestLogger_LevelByStatus(t *testing.T) {
	t.Parallel()
	cases := map[int]string{200: "INFO", 204: "INFO", 301: "INFO", 400: "WARN", 404: "WARN", 429: "WARN", 500: "ERROR", 503: "ERROR"}
	srv, sink := serve(t, nil, func(w http.ResponseWriter, r *http.Request) {
		var code int
		_, _ = fmt.Sscanf(r.URL.Path, "/%d", &code)
		w.WriteHeader(code)
	})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for code := range cases {
		res, err := client.Get(fmt.Sprintf("%s/%d", srv.URL, code))
		require.NoError(t, err)
		res.Body.Close()
	}
	lines := sink.waitLines(t, len(cases))
	require.Len(t, lines, len(cases))
	for _, l := range lines {
		code := int(l["http.response.status_code"].(float64))
		assert.Equal(t, cases[code], l["log.level"], "status %d", code)
	}
}

func TestRequestLogger_MinimumLevel(t *testing.T) {
	t.Parallel()
	srv, sink := serve(t, &LogOptions{Level: slog.LevelWarn}, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/limited" {
			w.WriteHeader(http.StatusTooManyRequests)
		}
	})
	for _, p := range []string{"/ok", "/limited", "/ok"} {
		res, err := http.Get(srv.URL + p)
		require.NoError(t, err)
		res.Body.Close()
	}
	lines := sink.waitLines(t, 1)
	require.Len(t, lines, 1, "only the 429 reaches Warn")
	assert.Equal(t, "/limited", lines[0]["url.path"])
	assert.Equal(t, "WARN", lines[0]["log.level"])
}

func TestRequestLogger_PanicIsError(t *testing.T) {
	t.Parallel()
	logger, sink := newTestLogger()
	r := chi.NewRouter()
	r.Use(RequestLogger(logger, nil))
	r.Use(chimw.Recoverer) // after the logger: the logger sees the 500
	r.Get("/recovered", func(http.ResponseWriter, *http.Request) { panic("boom") })
	srv := httptest.NewServer(r)
	defer srv.Close()

	res, err := http.Get(srv.URL + "/recovered")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusInternalServerError, res.StatusCode)
	lines := sink.waitLines(t, 1)
	require.Len(t, lines, 1)
	assert.Equal(t, "ERROR", lines[0]["log.level"])
}

func TestRequestLogger_UnrecoveredPanicIsError(t *testing.T) {
	t.Parallel()
	logger, sink := newTestLogger()
	var h http.Handler = http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })
	h = RequestLogger(logger, nil)(h)
	h = chimw.Recoverer(h) // before the logger: httplog alone would log "HTTP 200" at Info
	srv := httptest.NewServer(h)
	defer srv.Close()

	res, err := http.Get(srv.URL)
	require.NoError(t, err)
	res.Body.Close()
	lines := sink.waitLines(t, 1)
	require.Len(t, lines, 1)
	assert.Equal(t, "ERROR", lines[0]["log.level"])
	assert.Contains(t, lines[0]["error.message"], "panic: boom")
}

func TestRequestLogger_RecoverPanicsOption(t *testing.T) {
	t.Parallel()
	srv, sink := serve(t, &LogOptions{RecoverPanics: true}, func(http.ResponseWriter, *http.Request) { panic("boom") })
	res, err := http.Get(srv.URL)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusInternalServerError, res.StatusCode)
	lines := sink.waitLines(t, 1)
	assert.Equal(t, "ERROR", lines[0]["log.level"])
}

func TestRequestLogger_AbortIsAWarning(t *testing.T) {
	t.Parallel()
	// A response cut on purpose (a reverse proxy whose upstream died
	// mid-body) is not a crash: Warn, "response aborted", no stack.
	srv, sink := serve(t, &LogOptions{RecoverPanics: true}, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(": started\n\n"))
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	})
	res, err := http.Get(srv.URL)
	require.NoError(t, err)
	_, err = io.ReadAll(res.Body)
	res.Body.Close()
	require.Error(t, err, "the client sees the response cut")
	lines := sink.waitLines(t, 2) // the stream's start line, then its end
	end := lines[len(lines)-1]
	assert.Equal(t, "WARN", end["log.level"])
	assert.Equal(t, "response aborted", end["error.message"])
	assert.NotContains(t, end, "error.stack_trace")
}

func TestSetAttrs_FromManyGoroutines(t *testing.T) {
	t.Parallel()
	const n = 8
	srv, sink := serve(t, nil, func(w http.ResponseWriter, r *http.Request) {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				for j := range 50 { // many calls each, to give the race detector a chance
					SetAttrs(r.Context(), slog.Int(fmt.Sprintf("g%d", i), j), slog.String(MCPToolKey, "echo"))
				}
			})
		}
		close(start)
		wg.Wait()
		SetAttrs(r.Context(), slog.Int(MCPErrorCodeKey, -32602), slog.Any(MCPIDKey, 7))
	})
	res, err := http.Get(srv.URL + "/mcp")
	require.NoError(t, err)
	res.Body.Close()

	lines := sink.waitLines(t, 1)
	require.Len(t, lines, 1)
	l := lines[0]
	for i := range n {
		assert.Equal(t, float64(49), l[fmt.Sprintf("g%d", i)], "last value wins for g%d", i)
	}
	assert.Equal(t, "echo", l[MCPToolKey])
	assert.Equal(t, float64(-32602), l[MCPErrorCodeKey])
	assert.Equal(t, float64(7), l[MCPIDKey])
	assert.Equal(t, 1, strings.Count(sink.String(), `"mcp.tool"`), "a key appears once")
}

// TestSetAttrs_ManyAttributes sets more attributes than the line's buffer
// holds, so that the line moves to the heap while SetAttrs's are added.
func TestSetAttrs_ManyAttributes(t *testing.T) {
	t.Parallel()
	const n = 60
	srv, sink := serve(t, nil, func(w http.ResponseWriter, r *http.Request) {
		for i := range n {
			SetAttrs(r.Context(), slog.Int(fmt.Sprintf("app.k%02d", i), i))
		}
		SetAttrs(r.Context(), slog.Int("app.k00", -1), slog.String(MCPMethodKey, "tools/call"))
	})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader("{}"))
	req.Header.Set("Mcp-Method", "initialize")
	res, _ := do(t, req)
	require.Equal(t, http.StatusOK, res.StatusCode)
	l := sink.waitLines(t, 1)[0]
	assert.Equal(t, float64(-1), l["app.k00"], "the later value")
	for i := 1; i < n; i++ {
		assert.Equal(t, float64(i), l[fmt.Sprintf("app.k%02d", i)])
	}
	assert.Equal(t, "tools/call", l[MCPMethodKey], "SetAttrs replaces the header's value")
	out := sink.String()
	assert.Equal(t, 1, strings.Count(out, `"app.k00"`))
	assert.Equal(t, 1, strings.Count(out, `"mcp.method"`))
	assert.Equal(t, n, strings.Count(out, `"app.k`), "every key once")
}

func TestSetAttrs_AfterHandlerReturnedIsDropped(t *testing.T) {
	t.Parallel()
	late := make(chan struct{})
	lateDone := make(chan struct{})
	srv, sink := serve(t, nil, func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		go func() {
			defer close(lateDone)
			<-late
			SetAttrs(ctx, slog.String("late", "yes")) // must neither race nor panic
		}()
	})
	res, err := http.Get(srv.URL)
	require.NoError(t, err)
	res.Body.Close()
	lines := sink.waitLines(t, 1)
	close(late)
	<-lateDone
	assert.NotContains(t, lines[0], "late")
}

func TestSetAttrs_WithoutPresetIsNoop(t *testing.T) {
	t.Parallel()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	assert.NotPanics(t, func() { SetAttrs(req.Context(), slog.String("k", "v")) })
}

func TestRequestLogger_MCPHeaderAttrs(t *testing.T) {
	t.Parallel()
	srv, sink := serve(t, nil, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/initialize":
			w.Header().Set("Mcp-Session-Id", "sess-from-response")
		case "/override":
			SetAttrs(r.Context(), slog.String(MCPRevisionKey, "2025-11-25"))
		}
	})

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/call", strings.NewReader("{}"))
	req.Header.Set("Mcp-Session-Id", "sess-1")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "get_weather")
	do(t, req)

	req, _ = http.NewRequest(http.MethodPost, srv.URL+"/initialize", strings.NewReader("{}"))
	do(t, req)

	req, _ = http.NewRequest(http.MethodPost, srv.URL+"/read", strings.NewReader("{}"))
	req.Header.Set("Mcp-Name", "https://files.example/doc?sig=SECRETSIG")
	do(t, req)

	req, _ = http.NewRequest(http.MethodPost, srv.URL+"/override", strings.NewReader("{}"))
	req.Header.Set("MCP-Protocol-Version", "2025-03-26")
	do(t, req)

	byPath := map[string]map[string]any{}
	for _, l := range sink.waitLines(t, 4) {
		byPath[l["url.path"].(string)] = l
	}
	call := byPath["/call"]
	assert.Equal(t, "sess-1", call[MCPSessionKey])
	assert.Equal(t, "2026-07-28", call[MCPRevisionKey])
	assert.Equal(t, "tools/call", call[MCPMethodKey])
	assert.Equal(t, "get_weather", call[MCPNameKey])
	assert.Equal(t, "sess-from-response", byPath["/initialize"][MCPSessionKey])
	assert.Equal(t, "2025-11-25", byPath["/override"][MCPRevisionKey], "SetAttrs wins over the header")
	assert.Equal(t, "https://files.example/doc?sig=REDACTED", byPath["/read"][MCPNameKey])
	assert.NotContains(t, sink.String(), "SECRETSIG")
}

// TestRequestLogger_StreamFlushesAndLogsAtEnd proves that events pass
// through the preset one by one: the server sends the next event only after
// the client has read the previous one, so any buffering would deadlock.
func TestRequestLogger_StreamFlushesAndLogsAtEnd(t *testing.T) {
	t.Parallel()
	const events = 3
	ack := make(chan struct{})
	srv, sink := serve(t, &LogOptions{
		LogResponseBody: func(*http.Request) bool { return true }, // must not copy the stream
	}, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Mcp-Session-Id", "s-42")
		SetAttrs(r.Context(), slog.String(MCPMethodKey, "tools/call"))
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		for i := range events {
			_, err := fmt.Fprintf(w, "id: %d\ndata: {\"n\":%d}\n\n", i, i)
			if err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
			select {
			case <-ack:
			case <-r.Context().Done():
				return
			}
		}
	})

	res, err := http.Get(srv.URL + "/mcp")
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	br := bufio.NewReader(res.Body)
	total := 0
	for i := range events {
		frame := readFrame(t, br)
		total += len(frame)
		assert.Equal(t, fmt.Sprintf("id: %d\ndata: {\"n\":%d}\n\n", i, i), frame)
		if i == 0 {
			// The start line is out while the stream is open.
			start := sink.waitLines(t, 1)
			require.Len(t, start, 1)
			assert.Equal(t, "start", start[0][StreamLogKey])
			assert.Equal(t, "INFO", start[0]["log.level"])
			assert.Equal(t, float64(200), start[0]["http.response.status_code"])
			assert.Equal(t, "s-42", start[0][MCPSessionKey], "session id from the response")
			assert.Equal(t, "tools/call", start[0][MCPMethodKey])
			assert.NotEmpty(t, start[0][RequestIDLogKey])
		}
		time.Sleep(30 * time.Millisecond) // so the stream has a measurable duration
		ack <- struct{}{}
	}
	_, err = br.ReadByte()
	require.ErrorIs(t, err, io.EOF)

	lines := sink.waitLines(t, 2)
	require.Len(t, lines, 2, "a start line and an end line")
	end := lines[1]
	assert.Equal(t, "end", end[StreamLogKey])
	assert.Equal(t, float64(total), end["http.response.body.bytes"])
	assert.Greater(t, end["event.duration"].(float64), float64(60*time.Millisecond))
	assert.Equal(t, "tools/call", end[MCPMethodKey])
	assert.Empty(t, end["http.response.body.content"], "the stream was not copied")
}

// readFrame reads one SSE event (up to the blank line), failing after 5s.
func readFrame(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	type result struct {
		s   string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		var sb strings.Builder
		for {
			line, err := br.ReadString('\n')
			sb.WriteString(line)
			if err != nil || line == "\n" {
				ch <- result{sb.String(), err}
				return
			}
		}
	}()
	select {
	case r := <-ch:
		require.NoError(t, r.err)
		return r.s
	case <-time.After(5 * time.Second):
		t.Fatal("no frame within 5s: the stream is buffered")
		return ""
	}
}

func TestRequestLogger_BodiesLoggedOnlyWhenSafe(t *testing.T) {
	t.Parallel()
	srv, sink := serve(t, &LogOptions{
		LogRequestBody:  func(*http.Request) bool { return true },
		LogResponseBody: func(*http.Request) bool { return true },
	}, func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 16)
		_, _ = io.ReadFull(r.Body, buf) // read part of the body only
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"result":1}`)
	})
	big := `{"x":"` + strings.Repeat("A", 1<<20) + `"}`
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(big))
	req.Header.Set("Content-Type", "application/json")
	do(t, req)

	lines := sink.waitLines(t, 1)
	l := lines[0]
	assert.Equal(t, `{"result":1}`, l["http.response.body.content"])
	assert.Equal(t, big[:16], l["http.request.body.content"], "only what the handler read")
	assert.NotContains(t, l, "http.request.body.unread.bytes", "the rest was not drained into memory")
}

func TestRequestLogger_DoesNotMutateOptions(t *testing.T) {
	t.Parallel()
	opts := &LogOptions{LogRequestHeaders: []string{"Origin"}}
	before := *opts
	logger, _ := newTestLogger()
	RequestLogger(logger, opts)
	assert.Equal(t, before, *opts)
	assert.Nil(t, opts.Schema)
	assert.Nil(t, opts.LogBodyContentTypes)
	assert.Zero(t, opts.LogBodyMaxLen)
}

func TestRequestLogger_PanicsOnBadOptions(t *testing.T) {
	t.Parallel()
	logger, _ := newTestLogger()
	assert.Panics(t, func() { RequestLogger(nil, nil) })
	assert.Panics(t, func() { RequestLogger(logger, &LogOptions{LogBodyContentTypes: []string{""}}) })
	assert.Panics(t, func() { RequestLogger(logger, &LogOptions{LogResponseHeaders: []string{"set-cookie"}}) })
	assert.Panics(t, func() { RequestLogger(logger, &LogOptions{LogBodyMaxLen: -1}) })
}

// TestRequestLogger_HTTPLogSetAttrsDoNothing pins down what httplog's
// SetAttrs and SetError do under the preset: nothing, without a panic. Its
// own SetAttrs and SetError take their place, with the same arguments and
// the same attributes on the line.
func TestRequestLogger_HTTPLogSetAttrsDoNothing(t *testing.T) {
	t.Parallel()
	returned := make(chan error, 1)
	srv, sink := serve(t, nil, func(w http.ResponseWriter, r *http.Request) {
		httplog.SetAttrs(r.Context(), slog.String("httplog.user", "ann"))
		_ = httplog.SetError(r.Context(), errors.New("httplog boom"))
		SetAttrs(r.Context(), slog.String("app.user", "bob"))
		err := errors.New("first")
		returned <- SetError(r.Context(), err)
		_ = SetError(r.Context(), nil)
		_ = SetError(r.Context(), fmt.Errorf("quota: %w", err))
	})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/x", strings.NewReader("{}"))
	do(t, req)
	l := sink.waitLines(t, 1)[0]
	assert.NotContains(t, l, "httplog.user")
	assert.NotContains(t, sink.String(), "httplog boom")
	assert.Equal(t, "bob", l["app.user"])
	assert.Equal(t, "quota: first", l[httplog.SchemaECS.ErrorMessage], "the later error, under the schema's error field")
	assert.EqualError(t, <-returned, "first", "SetError returns its error")
}

func TestSetError_WithoutPresetReturnsTheError(t *testing.T) {
	t.Parallel()
	err := errors.New("boom")
	assert.Same(t, err, SetError(context.Background(), err))
	assert.NoError(t, SetError(context.Background(), nil))
}

func TestRequestLogger_LineHasASource(t *testing.T) {
	t.Parallel()
	sink := &logSink{}
	logger := slog.New(slog.NewJSONHandler(sink, &slog.HandlerOptions{AddSource: true}))
	h := RequestLogger(logger, nil)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for range 2 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	}
	for _, l := range sink.lines(t) {
		src, _ := l[slog.SourceKey].(map[string]any)
		assert.Contains(t, src["file"], "logging.go")
		assert.NotZero(t, src["line"])
	}
}
