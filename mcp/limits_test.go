package mcp

// Slow and greedy clients over real HTTP: a body that trickles is cut
// with 408, a stream outlives the body's deadline, and one caller's
// calls, streams and sessions are bounded with 429 and Retry-After while
// other callers go on.

import (
	"bufio"
	"context"
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

func TestSlowBodyIsCut(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{Limits: &Limits{BodyTimeout: 300 * time.Millisecond}})
	conn, err := net.Dial("tcp", ts.srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{", ts.srv.Listener.Addr())
	require.NoError(t, err)
	// One byte every 50 ms: the body would take 50 s.
	stop := make(chan struct{})
	trickled := make(chan struct{})
	go func() {
		defer close(trickled)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	defer func() { close(stop); <-trickled }()

	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err, "the server answers before the body is done")
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	assert.True(t, resp.Close, "the connection is closed")
	m := readError(t, resp, http.StatusRequestTimeout, -32600)
	assert.Contains(t, m.Error.Message, "Request Timeout")
	// Then the server closes the connection (EOF, or a reset when the
	// trickle left unread bytes behind).
	_, err = br.ReadByte()
	require.Error(t, err)
	var ne net.Error
	assert.False(t, errors.As(err, &ne) && ne.Timeout(), "the connection is closed, not idle: %v", err)
	assert.Contains(t, ts.log.String(), "request body too slow")
	assert.Contains(t, ts.log.String(), "level=WARN")
}

func TestBodyDeadlineEndsWithTheBody(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{Limits: &Limits{BodyTimeout: 200 * time.Millisecond}})
	// A stateless call whose progress streams for 4 × 150 ms, three
	// times the body's deadline: the stream is not cut.
	for range 2 { // the second on the kept-alive connection, after a pause
		resp := ts.post("", toolCallToken("1", "progress", `{"n":4,"delayMs":150}`, `"tok"`))
		require.Equal(t, 200, resp.StatusCode)
		require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
		s := openStream(t, resp)
		msgs := s.rest()
		require.Len(t, msgs, 5, "four progress notifications and the result")
		assert.Equal(t, "done tok", msgs[4].text(t))
		time.Sleep(300 * time.Millisecond)
	}
	assert.NotContains(t, ts.log.String(), "too slow")
}

func withUser(user string) []string { return []string{"X-User", user} }

func TestCallerLimitsCalls(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ts := startServer(t, &Options{
		Handler:  f.srv,
		Identity: func(r *http.Request) string { return r.Header.Get("X-User") },
		Limits:   &Limits{Calls: 2},
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx1, cancel1 := context.WithCancel(ctx)
	done := make(chan struct{}, 2)
	for i, c := range []context.Context{ctx1, ctx} {
		r := ts.newReq(c, http.MethodPost, "", strings.NewReader(toolCall(fmt.Sprint(i), "block", `{}`)), withUser("alice")...)
		go func() {
			defer func() { done <- struct{}{} }()
			if resp, err := ts.hc.Do(r); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	<-f.started
	<-f.started
	resp := ts.post("", toolCall("3", "echo", `{"text":"x"}`), withUser("alice")...)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	m := readError(t, resp, http.StatusTooManyRequests, -32603)
	assert.Contains(t, m.Error.Message, "too many requests in flight")
	// Another caller is not held back.
	assert.Equal(t, "x", readJSON(t, ts.post("", toolCall("4", "echo", `{"text":"x"}`), withUser("bob")...), 200).text(t))
	// One call ends: alice may call again.
	cancel1()
	<-done
	eventually(t, func() bool {
		resp := ts.post("", toolCall("5", "echo", `{"text":"y"}`), withUser("alice")...)
		defer resp.Body.Close()
		return resp.StatusCode == 200
	}, "alice's slot was not freed")
	cancel()
	<-done
}

func TestCallerLimitsStreams(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{
		Sessions: &SessionOptions{},
		Identity: func(r *http.Request) string { return r.Header.Get("X-User") },
		Limits:   &Limits{Streams: 1},
	})
	a1 := ts.open("2025-11-25", "{}", withUser("alice")...)
	a2 := ts.open("2025-11-25", "{}", withUser("alice")...)
	b1 := ts.open("2025-11-25", "{}", withUser("bob")...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := openStream(t, ts.get(ctx, a1, withUser("alice")...))
	first.priming()
	resp := ts.get(context.Background(), a2, withUser("alice")...)
	assert.Equal(t, "5", resp.Header.Get("Retry-After"))
	readError(t, resp, http.StatusTooManyRequests, -32603)
	bob := openStream(t, ts.get(ctx, b1, withUser("bob")...))
	bob.priming()
	bob.close()
	// Alice closes her stream: her other session may open one.
	first.close()
	eventually(t, func() bool {
		resp := ts.get(ctx, a2, withUser("alice")...)
		if resp.StatusCode != 200 {
			resp.Body.Close()
			return false
		}
		s := openStream(t, resp)
		s.priming()
		s.close()
		return true
	}, "alice's stream slot was not freed")
}

func TestCallerLimitsSessions(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{
		Sessions: &SessionOptions{},
		Identity: func(r *http.Request) string { return r.Header.Get("X-User") },
		Limits:   &Limits{Sessions: 2},
	})
	first := ts.open("2025-11-25", "{}", withUser("alice")...)
	ts.open("2025-11-25", "{}", withUser("alice")...)
	resp := ts.post("", initBody("2025-11-25", "{}"), withUser("alice")...)
	assert.Equal(t, "30", resp.Header.Get("Retry-After"))
	assert.Empty(t, resp.Header.Get("Mcp-Session-Id"))
	m := readError(t, resp, http.StatusTooManyRequests, -32603)
	assert.Equal(t, "0", string(m.ID), "the answer carries the initialize's id")
	assert.Equal(t, 2, ts.sessionCount())
	ts.open("2025-11-25", "{}", withUser("bob")...)
	readEmpty(t, ts.del(first, withUser("alice")...), 204)
	ts.open("2025-11-25", "{}", withUser("alice")...)
}

func TestCallerLimitsByAddressAndDefaults(t *testing.T) {
	t.Parallel()
	// Without an identity every client on 127.0.0.1 is one caller; the
	// default bound is 256 sessions.
	ts := startServer(t, &Options{Sessions: &SessionOptions{}})
	for range 256 {
		ts.open("2025-11-25", "{}")
	}
	readError(t, ts.post("", initBody("2025-11-25", "{}")), http.StatusTooManyRequests, -32603)
	// A negative bound is none.
	off := startServer(t, &Options{Sessions: &SessionOptions{}, Limits: &Limits{Sessions: -1}})
	for range 257 {
		off.open("2025-11-25", "{}")
	}
	assert.Equal(t, 257, off.sessionCount())
}
