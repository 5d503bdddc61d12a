package middleware

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests back the "Streaming routes" section of the package doc: they
// run chi's stock middleware in front of an event stream over real HTTP.

// quietServer starts h with net/http's own error log discarded (Timeout
// and a flush before the header make it print "superfluous WriteHeader").
func quietServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// ackStream streams n events; after each it waits for an ack (or the end of
// the request). A buffered response would never deliver the first event,
// so the client would wait for it in vain.
func ackStream(n int, ack <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		for i := range n {
			if _, err := fmt.Fprintf(w, "data: %d\n\n", i); err != nil {
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
	}
}

func TestStreaming_ThroughPresetRequestIDAndRecoverer(t *testing.T) {
	t.Parallel()
	logger, sink := newTestLogger()
	ack := make(chan struct{})
	r := chi.NewRouter()
	r.Use(chimw.RequestID)
	r.Use(Logging(logger, nil))
	r.Use(chimw.Recoverer)
	r.Get("/mcp", ackStream(4, ack))
	srv := quietServer(t, r)

	res, err := http.Get(srv.URL + "/mcp")
	require.NoError(t, err)
	defer res.Body.Close()
	br := bufio.NewReader(res.Body)
	for i := range 4 {
		assert.Equal(t, fmt.Sprintf("data: %d\n\n", i), readFrame(t, br), "event %d arrives on its own", i)
		ack <- struct{}{}
	}
	_, err = br.ReadByte()
	assert.ErrorIs(t, err, io.EOF)
	lines := sink.waitLines(t, 2)
	assert.Equal(t, "start", lines[0][StreamLogKey])
	assert.Equal(t, "end", lines[1][StreamLogKey])
}

func TestStreaming_TimeoutCutsTheStream(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	r := chi.NewRouter()
	r.Use(chimw.Timeout(timeout))
	r.Get("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ { // a stream meant to run until the client leaves
			_, _ = fmt.Fprintf(w, "data: %d\n\n", i)
			_ = rc.Flush()
			select {
			case <-tick.C:
			case <-r.Context().Done():
				return // Timeout cancelled the request context
			}
		}
	})
	srv := quietServer(t, r)

	started := time.Now()
	res, err := http.Get(srv.URL + "/mcp")
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	elapsed := time.Since(started)

	assert.Equal(t, http.StatusOK, res.StatusCode, "the 504 comes too late to be sent")
	assert.GreaterOrEqual(t, elapsed, timeout)
	assert.Less(t, elapsed, 10*timeout, "the stream ended because of Timeout")
	assert.Greater(t, strings.Count(string(body), "data:"), 1, "it did stream until then")
}

func TestStreaming_TimeoutHandlerBuffersEverything(t *testing.T) {
	t.Parallel()
	flushErr := make(chan error, 1)
	h := http.TimeoutHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "data: 0\n\n")
		flushErr <- http.NewResponseController(w).Flush()
	}), time.Second, "timeout")
	srv := quietServer(t, h)

	res, err := http.Get(srv.URL)
	require.NoError(t, err)
	res.Body.Close()
	assert.True(t, errors.Is(<-flushErr, http.ErrNotSupported), "no Flush behind http.TimeoutHandler")
}

func TestStreaming_ThrottleHoldsASlotForTheStreamsLife(t *testing.T) {
	t.Parallel()
	ack := make(chan struct{})
	r := chi.NewRouter()
	r.Use(chimw.Throttle(1))
	r.Get("/mcp", ackStream(1, ack))
	r.Get("/ping", func(http.ResponseWriter, *http.Request) {})
	srv := quietServer(t, r)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/mcp", nil)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	readFrame(t, bufio.NewReader(res.Body)) // the stream is open and idle

	ping, err := http.Get(srv.URL + "/ping")
	require.NoError(t, err)
	ping.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, ping.StatusCode, "one open stream exhausts Throttle(1)")
	ack <- struct{}{}
}

func TestStreaming_CompressBreaksAFlushBeforeTheHeader(t *testing.T) {
	t.Parallel()
	handler := func(writeHeaderFirst bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			if writeHeaderFirst {
				w.WriteHeader(http.StatusOK)
			}
			w.(http.Flusher).Flush() // the "open the stream" flush
			_, _ = io.WriteString(w, "data: hello\n\n")
		}
	}
	r := chi.NewRouter()
	r.Use(chimw.Compress(5, "text/event-stream"))
	r.Get("/flush-first", handler(false))
	r.Get("/header-first", handler(true))
	srv := quietServer(t, r)

	res, body := do(t, mustGet(t, srv.URL+"/flush-first"))
	assert.Empty(t, res.Header.Get("Content-Encoding"), "the header left before Compress chose gzip")
	assert.NotEqual(t, "data: hello\n\n", body, "gzip bytes under a plain header: garbage")
	assert.True(t, strings.HasPrefix(body, "\x1f\x8b"), "gzip magic")

	res, body = do(t, mustGet(t, srv.URL+"/header-first"))
	assert.True(t, res.Uncompressed, "gzip was announced, and the client undid it")
	assert.Equal(t, "data: hello\n\n", body)
}

// TestStreaming_PresetCommitsTheHeaderBeforeFlushing shows that behind
// Logging a bare Flush goes through WriteHeader first, so Compress
// placed before (outside) the logger still sees the header.
func TestStreaming_PresetCommitsTheHeaderBeforeFlushing(t *testing.T) {
	t.Parallel()
	logger, _ := newTestLogger()
	r := chi.NewRouter()
	r.Use(chimw.Compress(5, "text/event-stream"))
	r.Use(Logging(logger, nil))
	r.Get("/flush-first", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		_, _ = io.WriteString(w, "data: hello\n\n")
	})
	srv := quietServer(t, r)
	res, body := do(t, mustGet(t, srv.URL+"/flush-first"))
	assert.True(t, res.Uncompressed)
	assert.Equal(t, "data: hello\n\n", body)
}

func mustGet(t *testing.T, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	return req
}
