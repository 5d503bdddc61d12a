package controller_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/sse"
)

// smallBuffers is a listener whose connections have small kernel send
// buffers, so that a client that stops reading blocks the server's writes
// after a few dozen events rather than after megabytes.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(8 << 10)
	}
	return c, err
}

// dialSmall dials with a small receive buffer, set before the connection
// exists so that the window it advertises is small from the start.
func dialSmall(ctx context.Context, addr string) (net.Conn, error) {
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	return d.DialContext(ctx, "tcp", addr)
}

// stream is one client's view of the feed: the ids it received, checked
// against the data the test published for them.
type stream struct {
	body io.ReadCloser
	rd   *sse.Reader
}

func openStream(ctx context.Context, addr, lastID string, small bool) (*stream, error) {
	var nc net.Conn
	var err error
	if small {
		nc, err = dialSmall(ctx, addr)
	} else {
		nc, err = (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		// Every read and write of the test ends by then: a stream that
		// stalls fails the test instead of hanging it.
		_ = nc.SetDeadline(dl)
	}
	req := "GET /events HTTP/1.1\r\nHost: " + addr + "\r\nAccept: text/event-stream\r\n"
	if lastID != "" {
		req += "Last-Event-ID: " + lastID + "\r\n"
	}
	if _, err := io.WriteString(nc, req+"\r\n"); err != nil {
		nc.Close()
		return nil, err
	}
	res, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		nc.Close()
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		nc.Close()
		return nil, fmt.Errorf("status %d", res.StatusCode)
	}
	return &stream{body: struct {
		io.Reader
		io.Closer
	}{res.Body, nc}, rd: sse.NewReader(res.Body)}, nil
}

// payload is the data of event id: its number, then padding, so that a
// few dozen events fill the network buffers of a client that stopped
// reading.
func payload(id int) []byte {
	b := strconv.AppendInt(nil, int64(id), 10)
	b = append(b, ':')
	return append(b, bytes.Repeat([]byte{'x'}, 240)...)
}

// next reads the next event and checks it is event want.
func (s *stream) next(want int) error {
	ev, err := s.rd.Next()
	if err != nil {
		return err
	}
	if ev.ID != strconv.Itoa(want) || !bytes.Equal(ev.Data, payload(want)) {
		return fmt.Errorf("want event %d, got id %q data %.12q", want, ev.ID, ev.Data)
	}
	return nil
}

// TestSlowClientsDoNotSlowTheOthers connects 1,000 clients over loopback
// to a hub feed served by controller loops with the default bounds, and
// has 10 of them stop reading. Events are published one at a time, each
// only once every other client has read the one before: a stalled client
// that could hold up the publisher or the others would stop the test. The
// 990 get every event in order; the 10 are dropped by the hub once their
// mailboxes are full (ErrLagged), their streams end, when they read again,
// with what was queued and a retry field, and each resumes from the last id
// it got with exactly the events it missed. Every wait has a generous
// deadline: the test asserts on delivery and order, never on speed.
func TestSlowClientsDoNotSlowTheOthers(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 connections")
	}
	const (
		clients = 1000
		slow    = 10
		events  = 300 // well past what a stalled client's buffers and mailbox hold
		live    = 5   // published after the slow clients resume
	)
	hub := sse.NewHub(nil)
	t.Cleanup(hub.Close)
	var lagged atomic.Int32
	feed := controller.Func(func(req *controller.Request) controller.Reply {
		mb := req.Mailbox()
		sub, err := hub.SubscribeMailbox("t", sse.LastEventID(req.Request), mb)
		if err != nil {
			return controller.Status(http.StatusServiceUnavailable)
		}
		mb.Defer(func() {
			if errors.Is(sub.Err(), sse.ErrLagged) {
				lagged.Add(1)
			}
		})
		return controller.Loop(http.StatusOK, streamHeader, struct{}{}, handleHubEvent)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(controller.New(feed, &controller.Options{
		// Longer than the test: a stalled stream ends because its client
		// reads again, not because the write deadline cut it.
		WriteTimeout: 5 * time.Minute,
	}))
	srv.Listener = smallBuffers{ln}
	srv.Start()
	t.Cleanup(srv.Close)
	addr := ln.Addr().String()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	type client struct {
		s    *stream
		last atomic.Int64
	}
	all := make([]*client, clients)
	for i := range all {
		s, err := openStream(ctx, addr, "", i < slow)
		require.NoError(t, err, "client %d", i)
		all[i] = &client{s: s}
		t.Cleanup(func() { s.body.Close() })
	}
	require.Equal(t, clients, hub.Subscribers("t"))

	// The fast clients read all along; each reports when it has event
	// target.
	var target atomic.Int64
	var left atomic.Int64
	reached := make(chan struct{}, 1)
	failed := make(chan error, clients)
	var readers sync.WaitGroup
	for i, c := range all[slow:] {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for id := 1; id <= events+live; id++ {
				if err := c.s.next(id); err != nil {
					failed <- fmt.Errorf("client %d: %w", slow+i, err)
					return
				}
				c.last.Store(int64(id))
				if int64(id) == target.Load() && left.Add(-1) == 0 {
					reached <- struct{}{}
				}
			}
		}()
	}
	publish := func(id int) {
		t.Helper()
		left.Store(clients - slow)
		target.Store(int64(id))
		e, err := hub.Publish("t", sse.Event{Data: payload(id)})
		require.NoError(t, err)
		require.Equal(t, strconv.Itoa(id), e.ID())
		select {
		case <-reached:
		case err := <-failed:
			t.Fatal(err)
		case <-ctx.Done():
			t.Fatalf("event %d: not every reading client got it", id)
		}
	}

	// The slow clients read the first three events, then stop.
	const readFirst = 3
	for id := 1; id <= events; id++ {
		if id == readFirst+1 {
			for i, c := range all[:slow] {
				for k := 1; k <= readFirst; k++ {
					require.NoError(t, c.s.next(k), "slow client %d", i)
				}
			}
		}
		publish(id)
	}
	assert.Equal(t, clients-slow, hub.Subscribers("t"), "the stalled clients were dropped")

	// They read again: each gets the rest of what its stream held, in
	// order, then the end of the stream; and resumes from its last id.
	for i, c := range all[:slow] {
		last := readFirst
		for {
			err := c.s.next(last + 1)
			if err == io.EOF {
				break
			}
			require.NoError(t, err, "slow client %d after event %d", i, last)
			last++
		}
		require.Less(t, last, events, "slow client %d was dropped before the end", i)
		assert.Equal(t, time.Second, c.s.rd.Retry(), "the stream ended asking the client to come back")
		c.s.body.Close()
		s, err := openStream(ctx, addr, strconv.Itoa(last), false)
		require.NoError(t, err)
		t.Cleanup(func() { s.body.Close() })
		for id := last + 1; id <= events; id++ {
			require.NoError(t, s.next(id), "slow client %d resuming after %d", i, last)
		}
		c.s = s
	}
	assert.EqualValues(t, slow, lagged.Load(), "exactly the stalled clients were dropped for lagging")
	require.Equal(t, clients, hub.Subscribers("t"))

	// Live events reach everyone, the resumed clients included.
	for id := events + 1; id <= events+live; id++ {
		publish(id)
		for i, c := range all[:slow] {
			require.NoError(t, c.s.next(id), "resumed client %d", i)
		}
	}
	readers.Wait()
	for i, c := range all[slow:] {
		assert.EqualValues(t, events+live, c.last.Load(), "client %d", slow+i)
	}
}
