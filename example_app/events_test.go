package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/sse"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func openFeed(t *testing.T, ctx context.Context, url, lastID string) (*http.Response, *sse.Reader) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/events", nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	return res, sse.NewReader(res.Body)
}

// nextOf reads events until one of the given type arrives.
func nextOf(t *testing.T, rd *sse.Reader, typ string) sse.Event {
	t.Helper()
	for {
		ev, err := rd.Next()
		require.NoError(t, err)
		if ev.Event == typ {
			return ev
		}
	}
}

func broadcast(t *testing.T, url, msg string) string {
	t.Helper()
	res, err := http.Post(url+"/events/broadcast", "text/plain", strings.NewReader(msg))
	require.NoError(t, err)
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	require.Equal(t, http.StatusAccepted, res.StatusCode, string(body))
	return string(body)
}

func TestBroadcastReachesEveryStream(t *testing.T) {
	a := newApp(quietLogger())
	defer a.Close()
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	readers := make([]*sse.Reader, 3)
	for i := range readers {
		res, rd := openFeed(t, ctx, srv.URL, "")
		defer res.Body.Close()
		readers[i] = rd
	}
	require.Eventually(t, func() bool { return a.hub.Subscribers(feedTopic) == 3 }, 5*time.Second, 5*time.Millisecond)
	assert.Contains(t, broadcast(t, srv.URL, "hello\nworld"), `"listeners":3`)
	for _, rd := range readers {
		ev := nextOf(t, rd, "broadcast")
		assert.Equal(t, "hello\nworld", string(ev.Data))
		assert.Equal(t, "1", ev.ID)
	}
	// Ticks arrive on their own.
	tick := nextOf(t, readers[0], "tick")
	assert.Contains(t, string(tick.Data), `"n":`)
}

func TestFeedResumesAfterLastEventID(t *testing.T) {
	a := newApp(quietLogger())
	defer a.Close()
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	for _, m := range []string{"one", "two", "three"} {
		broadcast(t, srv.URL, m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, rd := openFeed(t, ctx, srv.URL, "1")
	defer res.Body.Close()
	assert.Equal(t, "two", string(nextOf(t, rd, "broadcast").Data))
	assert.Equal(t, "three", string(nextOf(t, rd, "broadcast").Data))
	broadcast(t, srv.URL, "four")
	ev := nextOf(t, rd, "broadcast")
	assert.Equal(t, "four", string(ev.Data))
	assert.Equal(t, "4", ev.ID)
}

func TestBroadcastTooLarge(t *testing.T) {
	a := newApp(quietLogger())
	defer a.Close()
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	res, err := http.Post(srv.URL+"/events/broadcast", "text/plain", strings.NewReader(strings.Repeat("x", maxBroadcast+1)))
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)
}

// TestServeShutsDownWithOpenStreams checks that a shutdown ends open
// streams promptly instead of waiting for them.
func TestServeShutsDownWithOpenStreams(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln, quietLogger()) }()
	url := "http://" + ln.Addr().String()

	reqCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, rd := openFeed(t, reqCtx, url, "")
	defer res.Body.Close()
	nextOf(t, rd, "tick")

	stop()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("shutdown waited for the open stream")
	}
	for {
		if _, err := rd.Next(); err != nil {
			break // the stream ended
		}
	}
}
