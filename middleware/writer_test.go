package middleware

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// probeWriter reports what a handler behind the preset can do with its
// writer.
type probeResult struct {
	flusher, hijacker     bool
	deadlineErr, flushErr error
}

func probeHandler(got chan<- probeResult) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var p probeResult
		_, p.flusher = w.(http.Flusher)
		_, p.hijacker = w.(http.Hijacker)
		rc := http.NewResponseController(w)
		p.deadlineErr = rc.SetWriteDeadline(time.Now().Add(time.Minute))
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: x\n\n")
		p.flushErr = rc.Flush()
		got <- p
	}
}

func TestStreamWriter_TransparentOnHTTP1(t *testing.T) {
	t.Parallel()
	logger, _ := newTestLogger()
	got := make(chan probeResult, 1)
	srv := httptest.NewServer(Logging(logger, nil)(probeHandler(got)))
	defer srv.Close()

	res, err := http.Get(srv.URL)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, res.Body) // the whole stream, so the client does not cut it short
	res.Body.Close()
	p := <-got
	assert.True(t, p.flusher)
	assert.True(t, p.hijacker, "HTTP/1.1 connections can be hijacked")
	assert.NoError(t, p.deadlineErr, "ResponseController reaches the connection through Unwrap")
	assert.NoError(t, p.flushErr)
}

func TestStreamWriter_TransparentOnHTTP2(t *testing.T) {
	t.Parallel()
	logger, sink := newTestLogger()
	got := make(chan probeResult, 1)
	srv := httptest.NewUnstartedServer(Logging(logger, nil)(probeHandler(got)))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()

	res, err := srv.Client().Get(srv.URL)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	require.Equal(t, 2, res.ProtoMajor)
	p := <-got
	assert.True(t, p.flusher)
	assert.False(t, p.hijacker, "no Hijacker claimed where the connection cannot be hijacked")
	assert.NoError(t, p.deadlineErr)
	assert.NoError(t, p.flushErr)
	lines := sink.waitLines(t, 2)
	assert.Equal(t, "start", lines[0][StreamLogKey])
	assert.Equal(t, "end", lines[1][StreamLogKey])
}

func TestStreamWriter_HijackThroughPreset(t *testing.T) {
	t.Parallel()
	logger, sink := newTestLogger()
	srv := httptest.NewServer(Logging(logger, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		defer conn.Close()
		_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi")
		_ = buf.Flush()
	})))
	defer srv.Close()

	res, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	assert.Equal(t, "hi", string(body))
	lines := sink.waitLines(t, 1)
	assert.NotContains(t, lines[0], StreamLogKey)
}

func TestStreamWriter_FlushErrorAfterClientLeft(t *testing.T) {
	t.Parallel()
	logger, _ := newTestLogger()
	failed := make(chan error, 1)
	left := make(chan struct{})
	srv := httptest.NewServer(Logging(logger, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, ": ok\n\n")
		rc := http.NewResponseController(w)
		_ = rc.Flush()
		<-left
		<-r.Context().Done()
		var err error
		for range 100 { // the kernel reports the reset after a write or two
			if _, err = io.WriteString(w, "data: x\n\n"); err == nil {
				err = rc.Flush()
			}
			if err != nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		failed <- err
	})))
	defer srv.Close()

	res, err := http.Get(srv.URL)
	require.NoError(t, err)
	_, _ = bufio.NewReader(res.Body).Peek(1) // the stream is open
	res.Body.Close()                         // the client leaves
	close(left)
	err = <-failed
	assert.Error(t, err, "a write or flush after the client left reports it")
	assert.False(t, errors.Is(err, http.ErrNotSupported))
}

// An informational status passes through unrecorded, a second final
// status is dropped, and the line has what the client got.
func TestStreamWriter_RecordsStatusAndBytes(t *testing.T) {
	t.Parallel()
	srv, sink := serve(t, nil, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.WriteHeader(http.StatusCreated)
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, "hello")
		_, _ = io.WriteString(w, ", world")
	})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/x", nil)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, http.StatusCreated, res.StatusCode)
	assert.Equal(t, "hello, world", string(body))
	lines := sink.waitLines(t, 1)
	require.Len(t, lines, 1)
	assert.EqualValues(t, http.StatusCreated, lines[0]["http.response.status_code"])
	assert.EqualValues(t, len("hello, world"), lines[0]["http.response.body.bytes"])
}
