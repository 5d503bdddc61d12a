package mcp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Readiness, draining and a bounded shutdown.

// TestDrainKeepsServing: Drain turns Ready to ErrDraining while every
// request is still served, new sessions included.
func TestDrainKeepsServing(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{Sessions: &SessionOptions{}})
	ctx := context.Background()
	require.NoError(t, ts.ep.Ready(ctx))
	before := ts.open("2025-11-25", "{}")

	ts.ep.Drain()
	require.ErrorIs(t, ts.ep.Ready(ctx), ErrDraining)
	assert.Equal(t, "hi", ts.call(before, toolCall("1", "echo", `{"text":"hi"}`)).text(t))
	after := ts.open("2025-11-25", "{}")
	assert.Equal(t, "again", ts.call(after, toolCall("2", "echo", `{"text":"again"}`)).text(t))
	assert.Equal(t, 2, ts.ep.Sessions())
}

// TestShutdownDrainsCalls: a call in flight when Shutdown begins runs to
// its end and its answer goes out, while the session takes no new work
// (503, Retry-After), its GET stream ends, and a new session is refused;
// Shutdown returns nil once the call is done, and the session is gone.
func TestShutdownDrainsCalls(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ts := startServer(t, &Options{Handler: f.srv, Sessions: &SessionOptions{Retry: 50 * time.Millisecond}})
	sid := ts.open("2025-11-25", "{}")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	get := openStream(t, ts.get(ctx, sid))
	get.priming()
	call := openStream(t, ts.post(sid, toolCall("7", "gated", `{}`)))
	call.priming()
	first, _ := call.msg()
	require.Equal(t, "notifications/message", first.Method)

	done := make(chan error, 1)
	go func() { done <- ts.ep.Shutdown(ctx) }()
	eventually(t, func() bool { return errors.Is(ts.ep.Ready(ctx), ErrDraining) }, "Ready does not report draining")
	eventually(t, func() bool {
		resp := ts.post(sid, toolCall("8", "echo", `{"text":"late"}`))
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusServiceUnavailable
	}, "a new call is still taken")

	resp := ts.post(sid, toolCall("9", "echo", `{"text":"late"}`))
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	m := readError(t, resp, http.StatusServiceUnavailable, -32603)
	assert.Equal(t, `9`, string(m.ID))
	assert.Contains(t, m.Error.Message, "shutting down")
	readError(t, ts.post("", initBody("2025-11-25", "{}")), http.StatusServiceUnavailable, -32603)
	readError(t, ts.get(ctx, sid), http.StatusServiceUnavailable, -32603)
	readError(t, ts.del(sid), http.StatusServiceUnavailable, -32603)
	// A notification still reaches the session.
	readEmpty(t, ts.post(sid, note("notifications/cancelled", `{"requestId":999}`)), http.StatusAccepted)

	// The GET stream ends: its client reconnects elsewhere.
	for {
		if _, err := get.r.Next(); err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
	}
	get.close()

	select {
	case err := <-done:
		t.Fatalf("Shutdown returned %v while a call ran", err)
	case <-time.After(100 * time.Millisecond):
	}
	f.gate <- struct{}{}
	rest := call.rest()
	require.NotEmpty(t, rest)
	assert.Equal(t, "gated done", rest[len(rest)-1].text(t))
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown did not return once the call was done")
	}
	assert.Equal(t, 0, ts.ep.Sessions())
	readError(t, ts.post(sid, req("10", "ping", "")), http.StatusNotFound, -32600)
}

// TestShutdownCancelsAtItsDeadline: a call that does not finish before
// ctx ends is cancelled and answered "Request cancelled"; Shutdown
// returns at the deadline with an error that says so.
func TestShutdownCancelsAtItsDeadline(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ts := startServer(t, &Options{Handler: f.srv, Sessions: &SessionOptions{}})
	sid := ts.open("2025-11-25", "{}")
	answered := make(chan rpcMsg, 1)
	go func() { answered <- readJSON(t, ts.post(sid, toolCall("5", "block", `{}`)), http.StatusOK) }()
	<-f.started

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := ts.ep.Shutdown(ctx)
	took := time.Since(start)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "1 calls still running were cancelled")
	assert.Less(t, took, time.Second, "Shutdown outlived its context")
	select {
	case m := <-answered:
		require.NotNil(t, m.Error, "result %s", m.Result)
		assert.Equal(t, -32603, m.Error.Code)
		assert.Equal(t, "Request cancelled", m.Error.Message)
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled call was not answered")
	}
	assert.Equal(t, 0, ts.ep.Sessions())
}

// TestShutdownEndsListenStreams: an open subscriptions/listen stream ends
// at Shutdown, and a new one is refused with 503.
func TestShutdownEndsListenStreams(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{})
	listen := `{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{` +
		`"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{}}}}`
	hdr := []string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen"}
	l := openStream(t, ts.post("", listen, hdr...))
	ack, _ := l.msg()
	require.Equal(t, "notifications/subscriptions/acknowledged", ack.Method)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, ts.ep.Shutdown(ctx))
	l.end()
	resp := ts.post("", listen, hdr...)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	readError(t, resp, http.StatusServiceUnavailable, -32603)
}
