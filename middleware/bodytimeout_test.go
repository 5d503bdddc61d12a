package middleware

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// echoOr408 answers its body back, 408 when it came too slowly; with
// ?wait it then waits that long before finishing, to show that a long
// answer outlives the deadline.
func echoOr408(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if errors.Is(err, ErrBodyTimeout) {
		http.Error(w, "request body too slow", http.StatusRequestTimeout)
		return
	}
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	_, _ = w.Write(b)
	w.(http.Flusher).Flush()
	if d, err := time.ParseDuration(r.URL.Query().Get("wait")); err == nil {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return // the test sees the missing tail
		}
	}
	_, _ = w.Write([]byte(" end"))
}

func TestBodyTimeout(t *testing.T) {
	t.Parallel()
	srv, sink := serve(t, nil, func(w http.ResponseWriter, r *http.Request) {
		BodyTimeout(200*time.Millisecond)(http.HandlerFunc(echoOr408)).ServeHTTP(w, r)
	})

	// A body sent at once: answered, and a long answer is not cut.
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/?wait=500ms", strings.NewReader("hello"))
	require.NoError(t, err)
	res, body := do(t, req)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "hello end", body)
	// No body: untouched.
	res, body = do(t, mustRequest(t, http.MethodGet, srv.URL+"/?wait=300ms"))
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, " end", body)

	// A body that trickles: 408, and the connection is closed.
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\na")
	require.NoError(t, err)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				if _, err := conn.Write([]byte("a")); err != nil {
					return
				}
			}
		}
	}()
	defer func() { close(stop); <-done }()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	br := bufio.NewReader(conn)
	res, err = http.ReadResponse(br, nil)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusRequestTimeout, res.StatusCode)
	_, err = io.Copy(io.Discard, br)
	var ne net.Error
	assert.False(t, errors.As(err, &ne) && ne.Timeout(), "the server closed the connection: %v", err)

	// The log line says why.
	var line map[string]any
	for _, l := range sink.waitLines(t, 3) {
		if l["url.path"] == "/slow" {
			line = l
		}
	}
	require.NotNil(t, line)
	assert.EqualValues(t, 408, line["http.response.status_code"])
	assert.Contains(t, line["error.message"], "request body not sent in time")
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	return req
}

func TestBodyTimeoutPanicsOnZero(t *testing.T) {
	assert.Panics(t, func() { BodyTimeout(0) })
}
