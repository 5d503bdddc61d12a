package sse

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httplog/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lockstep is a handler that sends an event, then waits for the client to
// confirm it read that event before it sends the next. A stream that is
// buffered anywhere deadlocks here, which the test's deadline turns into a
// failure: the proof that frames arrive as they are pushed.
func lockstep(next <-chan struct{}, n int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sw, err := NewWriter(w, &WriterOptions{Retry: time.Second})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer sw.Close()
		for i := 1; i <= n; i++ {
			if err := sw.Send(&Event{ID: string(rune('0' + i)), Event: "tick", Data: []byte("frame")}); err != nil {
				return
			}
			select {
			case <-next:
			case <-r.Context().Done():
				return
			}
		}
	}
}

func TestWriterFramesArriveAsPushed(t *testing.T) {
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	stacks := map[string][]func(http.Handler) http.Handler{
		"bare":                  nil,
		"RequestID+Recoverer":   {middleware.RequestID, middleware.Recoverer},
		"Compress default":      {middleware.Compress(5)},
		"Compress event-stream": {middleware.Compress(5, "text/event-stream")},
		"httplog":               {httplog.RequestLogger(logger, &httplog.Options{RecoverPanics: true})},
		"all": {middleware.RequestID, httplog.RequestLogger(logger, &httplog.Options{RecoverPanics: true}),
			middleware.Recoverer, middleware.Compress(5, "text/event-stream")},
	}
	for name, stack := range stacks {
		t.Run(name, func(t *testing.T) {
			next := make(chan struct{})
			r := chi.NewRouter()
			r.Use(stack...)
			r.Get("/events", lockstep(next, 3))
			srv := httptest.NewServer(r)
			defer srv.Close()

			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events", nil)
			res, err := srv.Client().Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			assert.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
			assert.Equal(t, "no-cache", res.Header.Get("Cache-Control"))
			assert.Equal(t, "no", res.Header.Get("X-Accel-Buffering"))

			rd := NewReader(res.Body)
			for i := 1; i <= 3; i++ {
				ev, err := rd.Next()
				require.NoError(t, err, "event %d", i)
				assert.Equal(t, "tick", ev.Event)
				assert.Equal(t, string(rune('0'+i)), ev.ID)
				select {
				case next <- struct{}{}:
				case <-ctx.Done():
					t.Fatal("handler gone")
				}
			}
			assert.Equal(t, time.Second, rd.Retry())
			_, err = rd.Next()
			assert.ErrorIs(t, err, io.EOF, "the stream ends when the handler returns")
		})
	}
}

func TestWriterSurfacesWriteErrors(t *testing.T) {
	gone := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw, err := NewWriter(w, nil)
		if err != nil {
			gone <- err
			return
		}
		<-r.Context().Done()
		// The client left: keep writing until the connection reports it.
		var werr error
		for i := 0; i < 1000 && werr == nil; i++ {
			werr = sw.Send(&Event{Data: make([]byte, 4096)})
		}
		if werr != nil {
			// The error sticks.
			if again := sw.Comment("x"); !errors.Is(again, werr) {
				werr = errors.New("error did not stick")
			}
		}
		gone <- werr
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	cancel()
	res.Body.Close()
	select {
	case err := <-gone:
		assert.Error(t, err, "writes to a vanished client must fail")
		assert.NotEqual(t, "error did not stick", errString(err))
	case <-time.After(10 * time.Second):
		t.Fatal("writer never noticed the client left")
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestNewWriterRefusesWritersThatCannotFlush(t *testing.T) {
	h := http.TimeoutHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := NewWriter(w, nil); err != nil {
			http.Error(w, "no streaming here", http.StatusInternalServerError)
		}
	}), time.Second, "timeout")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.NotEqual(t, "text/event-stream", rec.Header().Get("Content-Type"))
}

func TestKeepAlive(t *testing.T) {
	events := make(chan *Entry)
	l := NewLog(nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw, err := NewWriter(w, nil)
		if err != nil {
			return
		}
		_ = sw.KeepAlive(r.Context(), 20*time.Millisecond, events)
	}))
	defer srv.Close()
	res, err := srv.Client().Get(srv.URL)
	require.NoError(t, err)
	defer res.Body.Close()
	rd := NewReader(res.Body)
	go func() {
		time.Sleep(100 * time.Millisecond)
		e, _ := l.Append(Event{Data: []byte("after idle")})
		events <- e
		close(events)
	}()
	ev, err := rd.Next()
	require.NoError(t, err)
	assert.Equal(t, "after idle", string(ev.Data))
	assert.GreaterOrEqual(t, rd.Comments(), 1, "idle time was filled with keep-alive comments")
	_, err = rd.Next()
	assert.ErrorIs(t, err, io.EOF, "a closed channel ends the stream")
}

func TestLastEventID(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	assert.Equal(t, "", LastEventID(r))
	r.Header.Set("Last-Event-ID", "42")
	assert.Equal(t, "42", LastEventID(r))
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = LastEventID(r) }), "every stream asks: it must not allocate")
	r.Header["Last-Event-Id"] = []string{"4\x002"}
	assert.Equal(t, "", LastEventID(r))
}

// TestKeepAliveBatchesWithoutHoldingBack fills the channel past a batch
// before the writer starts, so it must write several batches, then sends
// entries one at a time, each read before the next is sent: a writer that
// waited for a batch to fill would deadlock there.
func TestKeepAliveBatchesWithoutHoldingBack(t *testing.T) {
	const queued = 3*maxBatch + 5
	entries := make(chan *Entry, queued)
	l := NewLog(&LogOptions{MaxEvents: queued + 10})
	for i := 0; i < queued; i++ {
		e, err := l.Append(Event{Data: []byte("queued")})
		require.NoError(t, err)
		entries <- e
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw, err := NewWriter(w, nil)
		if err != nil {
			return
		}
		_ = sw.KeepAlive(r.Context(), 0, entries)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	rd := NewReader(res.Body)
	for i := 1; i <= queued; i++ {
		ev, err := rd.Next()
		require.NoError(t, err)
		require.Equal(t, strconv.Itoa(i), ev.ID, "in order, each once")
	}
	for i := queued + 1; i <= queued+5; i++ {
		e, err := l.Append(Event{Data: []byte("live")})
		require.NoError(t, err)
		entries <- e
		ev, err := rd.Next()
		require.NoError(t, err, "a lone entry is flushed at once")
		require.Equal(t, strconv.Itoa(i), ev.ID)
	}
	close(entries)
	_, err = rd.Next()
	assert.ErrorIs(t, err, io.EOF)
}
