package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/example_app/board"
	"github.com/saguaro-go/saguaro/sse"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testApp is the real router on a real loopback server, with tokens for
// its audience.
type testApp struct {
	*app
	srv *httptest.Server
}

func newTestApp(t *testing.T) *testApp {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	a, err := newApp(context.Background(), config{BaseURL: base, DevUser: "tester"}, quietLogger())
	require.NoError(t, err)
	srv.Config.Handler = a.Handler()
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		a.Close()
	})
	return &testApp{app: a, srv: srv}
}

// tasks lists the board.
func (ta *testApp) tasks(t *testing.T) []board.Task {
	t.Helper()
	l, err := ta.store.List(context.Background(), nil)
	require.NoError(t, err)
	return l
}

func (ta *testApp) token(t *testing.T, scopes string) string {
	t.Helper()
	tok, err := ta.oauth.DevToken(context.Background(), "tester", scopes, time.Hour)
	require.NoError(t, err)
	return tok
}

func (ta *testApp) do(t *testing.T, method, path, token, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, ta.srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

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

func TestBroadcastReachesEveryStream(t *testing.T) {
	ta := newTestApp(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	readers := make([]*sse.Reader, 3)
	for i := range readers {
		res, rd := openFeed(t, ctx, ta.srv.URL, "")
		defer res.Body.Close()
		snap := nextOf(t, rd, "snapshot")
		assert.JSONEq(t, `{"tasks":[]}`, string(snap.Data), "a new client starts from a snapshot")
		readers[i] = rd
	}
	require.Eventually(t, func() bool { return ta.hub.Subscribers(feedTopic) == 3 }, 5*time.Second, 5*time.Millisecond)

	res, _ := ta.do(t, http.MethodPost, "/events/broadcast", "", "hi")
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "broadcasting needs a token")
	res, _ = ta.do(t, http.MethodPost, "/events/broadcast", ta.token(t, scopeRead), "hi")
	assert.Equal(t, http.StatusForbidden, res.StatusCode, "and the write scope")

	res, body := ta.do(t, http.MethodPost, "/events/broadcast", ta.token(t, scopeWrite), "hello\nworld")
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	assert.Contains(t, body, `"listeners":3`)
	for _, rd := range readers {
		ev := nextOf(t, rd, "broadcast")
		assert.Equal(t, "hello\nworld", string(ev.Data))
		assert.Equal(t, "1", ev.ID)
	}
}

func TestFeedResumesAfterLastEventID(t *testing.T) {
	ta := newTestApp(t)
	tok := ta.token(t, scopeWrite)
	for _, m := range []string{"one", "two", "three"} {
		res, _ := ta.do(t, http.MethodPost, "/events/broadcast", tok, m)
		require.Equal(t, http.StatusAccepted, res.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, rd := openFeed(t, ctx, ta.srv.URL, "1")
	defer res.Body.Close()
	first, err := rd.Next()
	require.NoError(t, err)
	assert.Equal(t, "broadcast", first.Event, "a resuming client gets no snapshot, just what it missed")
	assert.Equal(t, "two", string(first.Data))
	assert.Equal(t, "three", string(nextOf(t, rd, "broadcast").Data))
	ta.do(t, http.MethodPost, "/events/broadcast", tok, "four")
	ev := nextOf(t, rd, "broadcast")
	assert.Equal(t, "four", string(ev.Data))
	assert.Equal(t, "4", ev.ID)
}

func TestFeedShowsTaskChanges(t *testing.T) {
	ta := newTestApp(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, rd := openFeed(t, ctx, ta.srv.URL, "")
	defer res.Body.Close()
	nextOf(t, rd, "snapshot")
	_, body := ta.do(t, http.MethodPost, "/api/tasks", ta.token(t, scopeWrite), `{"title":"Ship it","tags":["Release"]}`)
	var created board.Task
	require.NoError(t, json.Unmarshal([]byte(body), &created))
	ev := nextOf(t, rd, "task")
	var change board.Change
	require.NoError(t, json.Unmarshal(ev.Data, &change))
	assert.Equal(t, board.Created, change.Kind)
	assert.Equal(t, created.ID, change.Task.ID)
	assert.Equal(t, []string{"release"}, change.Task.Tags)
}

func TestBroadcastTooLarge(t *testing.T) {
	ta := newTestApp(t)
	res, _ := ta.do(t, http.MethodPost, "/events/broadcast", ta.token(t, scopeWrite), strings.Repeat("x", maxBroadcast+1))
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)
}

// TestServeShutsDownWithOpenStreams checks that a shutdown ends open
// streams promptly instead of waiting for them.
func TestServeShutsDownWithOpenStreams(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln, config{BaseURL: url}, quietLogger()) }()

	reqCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, rd := openFeed(t, reqCtx, url, "")
	defer res.Body.Close()
	nextOf(t, rd, "snapshot")

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

// TestFeedResumesPastItsMailbox resumes a client that missed more events
// than its stream's mailbox holds (64): the hub hands the whole replay
// over as one message, so it gets every event it missed, in order.
func TestFeedResumesPastItsMailbox(t *testing.T) {
	ta := newTestApp(t)
	const missed = 200
	for i := 1; i <= 50+missed; i++ {
		_, err := ta.hub.Publish(feedTopic, sse.Event{Event: "broadcast", Data: []byte(strconv.Itoa(i))})
		require.NoError(t, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, rd := openFeed(t, ctx, ta.srv.URL, "50")
	defer res.Body.Close()
	for i := 51; i <= 50+missed; i++ {
		ev := nextOf(t, rd, "broadcast")
		require.Equal(t, strconv.Itoa(i), ev.ID)
		require.Equal(t, strconv.Itoa(i), string(ev.Data))
	}
	ta.do(t, http.MethodPost, "/events/broadcast", ta.token(t, scopeWrite), "live")
	ev := nextOf(t, rd, "broadcast")
	assert.Equal(t, "live", string(ev.Data))
	assert.Equal(t, strconv.Itoa(51+missed), ev.ID)
}
