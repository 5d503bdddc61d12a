package middleware

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httplog/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serve starts a real server with RequestID → ClientIPFromRemoteAddr →
// Logging(opts) → h, logging JSON lines under the ECS schema.
func serve(t *testing.T, opts *httplog.Options, h http.HandlerFunc) (*httptest.Server, *logSink) {
	t.Helper()
	logger, sink := newTestLogger()
	return serveWith(t, logger, opts, h), sink
}

func serveWith(t *testing.T, logger *slog.Logger, opts *httplog.Options, h http.Handler) *httptest.Server {
	t.Helper()
	r := chi.NewRouter()
	r.Use(chimw.RequestID)
	r.Use(chimw.ClientIPFromRemoteAddr)
	r.Use(Logging(logger, opts))
	r.Handle("/*", h)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv
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

// schemas are httplog's schemas, each with a logger that writes JSON
// lines under it.
var schemas = []struct {
	name string
	s    *httplog.Schema
}{
	{"ECS", httplog.SchemaECS},
	{"OTEL", httplog.SchemaOTEL},
	{"GCP", httplog.SchemaGCP},
	{"concise", httplog.SchemaECS.Concise(true)},
}

func schemaLogger(s *httplog.Schema) (*slog.Logger, *logSink) {
	sink := &logSink{}
	return slog.New(slog.NewJSONHandler(sink, &slog.HandlerOptions{ReplaceAttr: s.ReplaceAttr})), sink
}

// field returns the value of a schema field in a decoded line, reading
// through the group a GroupDelimiter names ("httpRequest:status"), and
// whether the line has it.
func field(s *httplog.Schema, line map[string]any, key string) (any, bool) {
	if s.GroupDelimiter != "" {
		if g, k, ok := strings.Cut(key, s.GroupDelimiter); ok {
			group, _ := line[g].(map[string]any)
			v, ok := group[k]
			return v, ok
		}
	}
	v, ok := line[key]
	return v, ok
}

// or is key, or def where the schema leaves the key out (slog's own
// names for time, level and message under a concise schema).
func or(key, def string) string {
	if key == "" {
		return def
	}
	return key
}

// The line of an ordinary request is httplog's, under every schema, with
// the request id and the resolved client IP, and nothing of a stream.
func TestLogging_OrdinaryRequest(t *testing.T) {
	t.Parallel()
	for _, sc := range schemas {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			s := sc.s
			logger, sink := schemaLogger(s)
			opts := &httplog.Options{Schema: s, LogRequestHeaders: []string{"Content-Type"}}
			srv := serveWith(t, logger, opts, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusCreated)
				_, _ = io.WriteString(w, `{"ok":true}`)
			}))
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/tasks?page=2", strings.NewReader(`{"title":"x"}`))
			req.Header.Set("Content-Type", "application/json")
			res, body := do(t, req)
			require.Equal(t, http.StatusCreated, res.StatusCode)
			require.Equal(t, `{"ok":true}`, body)

			lines := sink.waitLines(t, 1)
			require.Len(t, lines, 1)
			l := lines[0]
			assert.Equal(t, "INFO", l[or(s.Level, slog.LevelKey)])
			assert.Regexp(t, `^POST /tasks\?page=2 => HTTP 201 \(.+\)$`, l[or(s.Message, slog.MessageKey)])
			assert.Regexp(t, `^.+/.+-[0-9]+$`, l[RequestIDLogKey], "chi's request id")
			assert.Equal(t, "127.0.0.1", l[ClientIPLogKey])
			assert.NotContains(t, l, StreamLogKey)
			want := map[string]any{
				s.RequestMethod:  "POST",
				s.RequestPath:    "/tasks",
				s.RequestURL:     srv.URL + "/tasks?page=2",
				s.ResponseStatus: float64(201),
				s.ResponseBytes:  float64(len(`{"ok":true}`)),
				s.RequestBytes:   float64(len(`{"title":"x"}`)),
			}
			for k, v := range want {
				if k == "" {
					continue // the concise schema leaves the field out
				}
				got, ok := field(s, l, k)
				if assert.True(t, ok, "field %q in %v", k, l) {
					assert.Equal(t, v, got, k)
				}
			}
			if s.RequestMethod == "" {
				var keys []string
				for k := range l {
					keys = append(keys, k)
				}
				assert.ElementsMatch(t, []string{"time", "level", "msg", "http.request.headers",
					RequestIDLogKey, ClientIPLogKey}, keys)
			}
			hdrs, _ := field(s, l, s.RequestHeaders)
			assert.Equal(t, map[string]any{"Content-Type": "application/json"}, hdrs)
		})
	}
}

// httplog.SetError puts the handler's error on the line under the
// schema's error field; the level follows the status.
func TestLogging_Errors(t *testing.T) {
	t.Parallel()
	srv, sink := serve(t, nil, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			_ = httplog.SetError(r.Context(), fmt.Errorf("no task %q", "7"))
			http.Error(w, "not found", http.StatusNotFound)
		case "/broken":
			_ = httplog.SetError(r.Context(), errors.New("database unreachable"))
			http.Error(w, "sorry", http.StatusInternalServerError)
		case "/slow":
			w.WriteHeader(http.StatusTooManyRequests)
		}
	})
	for _, p := range []string{"/missing", "/broken", "/slow"} {
		do(t, mustGet(t, srv.URL+p))
	}
	lines := sink.waitLines(t, 3)
	byPath := map[string]map[string]any{}
	for _, l := range lines {
		byPath[l["url.path"].(string)] = l
	}
	assert.Equal(t, "WARN", byPath["/missing"]["log.level"])
	assert.Equal(t, `no task "7"`, byPath["/missing"]["error.message"])
	assert.Equal(t, "ERROR", byPath["/broken"]["log.level"])
	assert.Equal(t, "database unreachable", byPath["/broken"]["error.message"])
	assert.Equal(t, "INFO", byPath["/slow"]["log.level"], "httplog logs 429 at Info")
	assert.NotContains(t, byPath["/slow"], "error.message")
}

// A panic is recovered by httplog under the preset (500, logged with its
// message and stack); with chi's Recoverer inside, Recoverer answers and
// the line shows the 500 without the panic.
func TestLogging_Panics(t *testing.T) {
	t.Parallel()
	boom := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })

	t.Run("preset", func(t *testing.T) {
		t.Parallel()
		srv, sink := serve(t, nil, boom)
		res, _ := do(t, mustGet(t, srv.URL+"/x"))
		assert.Equal(t, http.StatusInternalServerError, res.StatusCode)
		l := sink.waitLines(t, 1)[0]
		assert.Equal(t, "ERROR", l["log.level"])
		assert.EqualValues(t, 500, l["http.response.status_code"])
		assert.Equal(t, "panic: boom", l["error.message"])
		stack, _ := l["error.stack_trace"].([]any)
		require.NotEmpty(t, stack)
		assert.Contains(t, stack[0], "logging_test.go", "the first frame is the one that panicked")
	})

	t.Run("chi Recoverer", func(t *testing.T) {
		t.Parallel()
		logger, sink := newTestLogger()
		r := chi.NewRouter()
		r.Use(chimw.RequestID, Logging(logger, nil), chimw.Recoverer)
		r.Get("/x", boom)
		srv := quietServer(t, r)
		res, _ := do(t, mustGet(t, srv.URL+"/x"))
		assert.Equal(t, http.StatusInternalServerError, res.StatusCode)
		l := sink.waitLines(t, 1)[0]
		assert.Equal(t, "ERROR", l["log.level"])
		assert.EqualValues(t, 500, l["http.response.status_code"])
		assert.NotContains(t, l, "error.message")
	})

	t.Run("in a stream", func(t *testing.T) {
		t.Parallel()
		srv, sink := serve(t, nil, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "data: 1\n\n")
			w.(http.Flusher).Flush()
			panic("boom")
		})
		res, err := http.Get(srv.URL + "/events")
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		lines := sink.waitLines(t, 2)
		assert.Equal(t, "start", lines[0][StreamLogKey])
		assert.Equal(t, "end", lines[1][StreamLogKey])
		assert.Equal(t, "panic: boom", lines[1]["error.message"])
	})
}

// An event stream gets a line when it is accepted, while it is open, and
// httplog's line when it ends; both carry the request id that ties them,
// under every schema.
func TestLogging_StreamStartAndEnd(t *testing.T) {
	t.Parallel()
	for _, sc := range schemas {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			s := sc.s
			logger, sink := schemaLogger(s)
			ack := make(chan struct{})
			srv := serveWith(t, logger, &httplog.Options{Schema: s}, ackStream(2, ack))
			req := mustGet(t, srv.URL+"/events?topic=tasks")
			req.Header.Set("Mcp-Session-Id", "sess-1")
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			br := bufio.NewReader(res.Body)
			assert.Equal(t, "data: 0\n\n", readFrame(t, br))

			open := sink.waitLines(t, 1)
			require.Len(t, open, 1, "the start line is written while the stream is open")
			l := open[0]
			assert.Equal(t, "INFO", l[or(s.Level, slog.LevelKey)])
			assert.Equal(t, "GET /events?topic=tasks => HTTP 200 stream start", l[or(s.Message, slog.MessageKey)])
			assert.Equal(t, "start", l[StreamLogKey])
			assert.Equal(t, "sess-1", l["mcp.session"])
			assert.Equal(t, "2025-11-25", l["mcp.revision"])
			assert.NotContains(t, l, "mcp.method", "no Mcp-Method header")
			assert.Equal(t, "127.0.0.1", l[ClientIPLogKey])
			for k, v := range map[string]any{
				s.RequestMethod:  "GET",
				s.RequestPath:    "/events",
				s.RequestURL:     srv.URL + "/events?topic=tasks",
				s.ResponseStatus: float64(200),
			} {
				if k == "" {
					continue
				}
				got, ok := field(s, l, k)
				if assert.True(t, ok, "field %q in %v", k, l) {
					assert.Equal(t, v, got, k)
				}
			}

			ack <- struct{}{}
			assert.Equal(t, "data: 1\n\n", readFrame(t, br))
			ack <- struct{}{}
			_, err = br.ReadByte()
			assert.ErrorIs(t, err, io.EOF)
			lines := sink.waitLines(t, 2)
			require.Len(t, lines, 2)
			end := lines[1]
			assert.Equal(t, "end", end[StreamLogKey])
			assert.Equal(t, l[RequestIDLogKey], end[RequestIDLogKey])
			assert.NotEmpty(t, end[RequestIDLogKey])
			assert.Regexp(t, `^GET /events\?topic=tasks => HTTP 200 \(.+\)$`, end[or(s.Message, slog.MessageKey)])
			if s.ResponseBytes != "" {
				got, _ := field(s, end, s.ResponseBytes)
				assert.EqualValues(t, 2*len("data: 0\n\n"), got)
			}
		})
	}
}

// The start line obeys the options' Level and Skip, as httplog's does.
func TestLogging_StreamStartObeysLevelAndSkip(t *testing.T) {
	t.Parallel()
	sse := func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
	}
	srv, sink := serve(t, &httplog.Options{Skip: func(r *http.Request, _ int) bool { return r.URL.Path == "/skip" }}, sse)
	do(t, mustGet(t, srv.URL+"/skip"))
	do(t, mustGet(t, srv.URL+"/keep"))
	lines := sink.waitLines(t, 2)
	require.Len(t, lines, 2)
	for _, l := range lines {
		assert.Equal(t, "/keep", l["url.path"])
	}

	srv, sink = serve(t, &httplog.Options{Level: slog.LevelWarn}, sse)
	do(t, mustGet(t, srv.URL+"/quiet"))
	do(t, mustGet(t, srv.URL+"/missing")) // a Warn line, which is written
	lines = sink.waitLines(t, 1)
	require.Len(t, lines, 1, "no Info line, the stream's start included")
	assert.Equal(t, "/missing", lines[0]["url.path"])
}

// Only a 2xx event stream starts: a refused stream (409) and an
// informational status do not, and neither does a hijacked connection.
func TestLogging_OnlySuccessfulStreamsStart(t *testing.T) {
	t.Parallel()
	srv, sink := serve(t, nil, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		switch r.URL.Path {
		case "/refused":
			w.WriteHeader(http.StatusConflict)
		case "/hints":
			w.Header().Set("Link", "</style.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, "data: x\n\n")
		}
	})
	for _, p := range []string{"/refused", "/hints"} {
		do(t, mustGet(t, srv.URL+p))
	}
	lines := sink.waitLines(t, 3)
	require.Len(t, lines, 3)
	var starts []string
	for _, l := range lines {
		if l[StreamLogKey] == "start" {
			starts = append(starts, l["url.path"].(string))
		}
	}
	assert.Equal(t, []string{"/hints"}, starts)
}

// LogResponseBody is not asked about a request that accepts an event
// stream: httplog would keep the whole stream in memory.
func TestLogging_NeverCopiesAStream(t *testing.T) {
	t.Parallel()
	var asked atomic.Int32
	srv, sink := serve(t, &httplog.Options{LogResponseBody: func(*http.Request) bool { asked.Add(1); return true }},
		func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, "data: x\n\n")
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"x":1}`)
		})
	req := mustGet(t, srv.URL+"/events")
	req.Header.Set("Accept", "application/json, text/event-stream")
	do(t, req)
	do(t, mustGet(t, srv.URL+"/json"))
	lines := sink.waitLines(t, 3)
	byPath := map[string]map[string]any{}
	for _, l := range lines {
		if l[StreamLogKey] != "start" {
			byPath[l["url.path"].(string)] = l
		}
	}
	assert.NotContains(t, byPath["/events"], "http.response.body.content")
	assert.Equal(t, `{"x":1}`, byPath["/json"]["http.response.body.content"])
	assert.EqualValues(t, 2, asked.Load(), "httplog asks twice per request, and never for the stream")
}

// Logging copies its options: httplog's RequestLogger writes its defaults
// into the Options it is given.
func TestLogging_DoesNotMutateOptions(t *testing.T) {
	t.Parallel()
	logger, _ := newTestLogger()
	o := &httplog.Options{}
	Logging(logger, o)
	assert.Equal(t, &httplog.Options{}, o)
	assert.Panics(t, func() { Logging(nil, nil) })
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
