package controller

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httplog/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// echoLoop is a loop controller used across these tests: it publishes each
// request's mailbox on a channel, pushes every string it receives as a
// line, stops on "stop", and records the Disconnects it sees.
type echoLoop struct {
	boxes       chan *Mailbox
	disconnects atomic.Int32
	lastErr     atomic.Value
	ended       chan struct{}
}

func newEchoLoop() *echoLoop {
	return &echoLoop{boxes: make(chan *Mailbox, 2000), ended: make(chan struct{}, 2000)}
}

func (e *echoLoop) Handle(r *Request) Reply {
	mb := r.Mailbox()
	mb.Defer(func() { e.ended <- struct{}{} })
	e.boxes <- mb
	return Loop(http.StatusOK, http.Header{"Content-Type": {"text/plain"}}, 0, e.handleInfo)
}

func (e *echoLoop) handleInfo(info any, push Push, n int) (int, Action) {
	switch v := info.(type) {
	case Disconnect:
		e.disconnects.Add(1)
		e.lastErr.Store(fmt.Sprint(v.Err))
		if err := push([]byte("after disconnect\n")); err == nil {
			panic("push after disconnect must fail")
		}
		return n, Continue
	case string:
		switch v {
		case "stop":
			return n + 1, Stop([]byte(fmt.Sprintf("final after %d\n", n)))
		case "panic":
			panic("loop exploded")
		}
		_ = push([]byte(v + "\n"))
		return n + 1, Continue
	}
	return n, Continue
}

func openLoop(t *testing.T, ctx context.Context, url string) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	return res, bufio.NewReader(res.Body)
}

func readLine(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	return strings.TrimSuffix(line, "\n")
}

func TestLoopPushesMessagesFromAnyGoroutineAndStops(t *testing.T) {
	t.Parallel()
	e := newEchoLoop()
	srv := httptest.NewServer(New(e, nil))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, br := openLoop(t, ctx, srv.URL)
	defer res.Body.Close()
	assert.Equal(t, "text/plain", res.Header.Get("Content-Type"), "headers are flushed before the first message")
	mb := <-e.boxes

	// Each frame is read before the next is sent: nothing is buffered.
	for i := 0; i < 3; i++ {
		go func() { require.NoError(t, mb.Send(fmt.Sprint("msg ", i))) }()
		assert.Equal(t, fmt.Sprint("msg ", i), readLine(t, br))
	}
	require.NoError(t, mb.Send("stop"))
	assert.Equal(t, "final after 3", readLine(t, br), "Stop writes its final frame")
	_, err := br.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "then the response ends")
	<-e.ended
	assert.Zero(t, e.disconnects.Load(), "a stop is not a disconnect")
	assert.ErrorIs(t, mb.Send("late"), ErrClosed)
}

func TestLoopDisconnectDeliveredOnce(t *testing.T) {
	t.Parallel()
	e := newEchoLoop()
	srv := httptest.NewServer(New(e, nil))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	res, br := openLoop(t, ctx, srv.URL)
	mb := <-e.boxes
	require.NoError(t, mb.Send("hello"))
	assert.Equal(t, "hello", readLine(t, br))
	cancel()
	res.Body.Close()
	select {
	case <-e.ended:
	case <-time.After(10 * time.Second):
		t.Fatal("loop did not end after the client left")
	}
	assert.EqualValues(t, 1, e.disconnects.Load(), "exactly one Disconnect")
	assert.Contains(t, e.lastErr.Load(), "context canceled")

	// Sending to the finished loop never blocks.
	done := make(chan error, 1)
	go func() { done <- mb.Send("x") }()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, ErrClosed)
	case <-time.After(5 * time.Second):
		t.Fatal("Send blocked on a finished loop")
	}
	assert.ErrorIs(t, mb.SendContext(context.Background(), "y"), ErrClosed)
	select {
	case <-mb.Done():
	default:
		t.Fatal("Done not closed")
	}
}

func TestLoopMonitorFires(t *testing.T) {
	t.Parallel()
	session := make(chan struct{})
	type sessionDown struct{}
	var got atomic.Value
	srv := httptest.NewServer(New(Func(func(r *Request) Reply {
		r.Mailbox().Monitor(session, sessionDown{})
		return Loop(http.StatusOK, nil, "", func(info any, push Push, s string) (string, Action) {
			if _, ok := info.(sessionDown); ok {
				got.Store(true)
				return s, Stop([]byte("session ended\n"))
			}
			return s, Continue
		})
	}), nil))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, br := openLoop(t, ctx, srv.URL)
	defer res.Body.Close()
	close(session)
	assert.Equal(t, "session ended", readLine(t, br))
	assert.Equal(t, true, got.Load())
}

func TestLoopMonitorDoesNotLeakWhenTheLoopEndsFirst(t *testing.T) {
	t.Parallel()
	never := make(chan struct{})
	e := newEchoLoop()
	srv := httptest.NewServer(New(Func(func(r *Request) Reply {
		r.Mailbox().Monitor(never, "never")
		return e.Handle(r)
	}), nil))
	defer srv.Close()
	res, _ := openLoop(t, context.Background(), srv.URL)
	defer res.Body.Close()
	mb := <-e.boxes
	require.NoError(t, mb.Send("stop"))
	<-e.ended
	// goleak in TestMain fails the package if the monitor goroutine stays.
}

func TestLoopOverflowReject(t *testing.T) {
	t.Parallel()
	var full error
	e := newEchoLoop()
	srv := httptest.NewServer(New(Func(func(r *Request) Reply {
		mb := r.Mailbox()
		for i := 0; i < 4; i++ {
			if err := mb.Send(fmt.Sprint(i)); err != nil {
				panic(err)
			}
		}
		full = mb.Send("dropped")
		return e.Handle(r)
	}), &Options{MailboxSize: 4}))
	defer srv.Close()
	res, br := openLoop(t, context.Background(), srv.URL)
	defer res.Body.Close()
	mb := <-e.boxes
	assert.ErrorIs(t, full, ErrMailboxFull)
	for i := 0; i < 4; i++ {
		assert.Equal(t, fmt.Sprint(i), readLine(t, br), "messages queued before the loop started are handled in order")
	}
	require.NoError(t, mb.Send("stop"))
	assert.Equal(t, "final after 4", readLine(t, br), "the rejected message was not delivered and the loop went on")
	<-e.ended
}

func TestLoopOverflowDisconnect(t *testing.T) {
	t.Parallel()
	e := newEchoLoop()
	srv := httptest.NewServer(New(Func(func(r *Request) Reply {
		mb := r.Mailbox()
		for i := 0; i < 3; i++ {
			_ = mb.Send("x")
		}
		return e.Handle(r)
	}), &Options{MailboxSize: 2, Overflow: OverflowDisconnect}))
	defer srv.Close()
	res, _ := openLoop(t, context.Background(), srv.URL)
	defer res.Body.Close()
	<-e.ended
	assert.EqualValues(t, 1, e.disconnects.Load())
	assert.Equal(t, ErrMailboxFull.Error(), e.lastErr.Load())
}

func TestSendContextWaitsForRoom(t *testing.T) {
	t.Parallel()
	mb := newMailbox(1, OverflowReject)
	defer mb.close()
	require.NoError(t, mb.Send("a"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, mb.SendContext(ctx, "b"), context.DeadlineExceeded)
	go func() { _, _ = mb.Receive(context.Background()) }()
	assert.NoError(t, mb.SendContext(context.Background(), "b"))
}

func TestLoopEveryTicks(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(New(Func(func(r *Request) Reply {
		r.Mailbox().Every(5*time.Millisecond, "tick")
		return Loop(http.StatusOK, nil, 0, func(info any, push Push, n int) (int, Action) {
			if info == "tick" {
				n++
				_ = push([]byte(fmt.Sprintf("tick %d\n", n)))
				if n == 3 {
					return n, Stop(nil)
				}
			}
			return n, Continue
		})
	}), nil))
	defer srv.Close()
	res, body := get(t, srv.URL)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "tick 1\ntick 2\ntick 3\n", body)
}

func TestLoopPanicClosesTheStreamAndReleases(t *testing.T) {
	t.Parallel()
	logger, logs := testLogger()
	e := newEchoLoop()
	srv := httptest.NewServer(New(e, &Options{Logger: logger}))
	defer srv.Close()
	res, br := openLoop(t, context.Background(), srv.URL)
	defer res.Body.Close()
	mb := <-e.boxes
	require.NoError(t, mb.Send("before"))
	assert.Equal(t, "before", readLine(t, br))
	require.NoError(t, mb.Send("panic"))
	_, err := io.ReadAll(br)
	assert.Error(t, err, "the client sees a cut stream, not a clean end")
	<-e.ended
	assert.ErrorIs(t, mb.Send("x"), ErrClosed)
	assert.Contains(t, logs.String(), "loop exploded")

	// The server keeps serving.
	res2, br2 := openLoop(t, context.Background(), srv.URL)
	defer res2.Body.Close()
	mb2 := <-e.boxes
	require.NoError(t, mb2.Send("stop"))
	assert.Equal(t, "final after 0", readLine(t, br2))
	<-e.ended
}

// TestLoopBehindChiMiddleware runs a loop behind the stock middleware a
// chi app has (request ids, recovery, compression, httplog) and checks that
// frames still arrive one by one.
func TestLoopBehindChiMiddleware(t *testing.T) {
	t.Parallel()
	e := newEchoLoop()
	r := chi.NewRouter()
	r.Use(middleware.RequestID,
		httplog.RequestLogger(slog.New(slog.NewJSONHandler(io.Discard, nil)), &httplog.Options{RecoverPanics: true}),
		middleware.Recoverer,
		middleware.Compress(5, "text/plain"))
	r.Mount("/live", New(e, nil))
	srv := httptest.NewServer(r)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, br := openLoop(t, ctx, srv.URL+"/live")
	defer res.Body.Close()
	mb := <-e.boxes
	for i := 0; i < 3; i++ {
		require.NoError(t, mb.Send(fmt.Sprint("frame ", i)))
		assert.Equal(t, fmt.Sprint("frame ", i), readLine(t, br))
	}
	require.NoError(t, mb.Send("stop"))
	assert.Equal(t, "final after 3", readLine(t, br))
	<-e.ended
}

// TestThousandConcurrentLoops starts 1,000 loops at once, feeds each a
// message, ends half by stop and half by disconnect, and relies on goleak
// to prove that no goroutine is left.
func TestThousandConcurrentLoops(t *testing.T) {
	const n = 1000
	e := newEchoLoop()
	srv := httptest.NewServer(New(e, nil))
	defer srv.Close()
	tr := &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: n}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	var wg sync.WaitGroup
	var ok atomic.Int32
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			res, err := client.Do(req)
			if err != nil {
				return
			}
			defer res.Body.Close()
			br := bufio.NewReader(res.Body)
			line, err := br.ReadString('\n')
			if err != nil || line != "ping\n" {
				return
			}
			if i%2 == 0 {
				cancel() // disconnect
				return
			}
			line, err = br.ReadString('\n')
			if err == nil && strings.HasPrefix(line, "final") {
				ok.Add(1)
			}
		}()
	}
	boxes := make([]*Mailbox, 0, n)
	for i := 0; i < n; i++ {
		select {
		case mb := <-e.boxes:
			boxes = append(boxes, mb)
			require.NoError(t, mb.Send("ping"))
		case <-time.After(60 * time.Second):
			t.Fatalf("only %d loops started", i)
		}
	}
	// Stop every loop whose client is still there; the others are ending
	// through their Disconnect, and Send to them may already fail.
	for _, mb := range boxes {
		if err := mb.Send("stop"); err != nil && !errors.Is(err, ErrClosed) {
			t.Fatal(err)
		}
	}
	wg.Wait()
	for i := 0; i < n; i++ {
		<-e.ended
	}
	assert.EqualValues(t, n/2, ok.Load(), "every stopped loop delivered its final frame")
	for _, mb := range boxes {
		assert.ErrorIs(t, mb.Send("x"), ErrClosed)
	}
}

// TestHandleReceivesBeforeChoosingTheReply checks the pattern a transport
// uses: Handle waits for the first message and answers a quick result as a
// buffered reply, or turns into a loop that continues with the messages
// after it.
func TestHandleReceivesBeforeChoosingTheReply(t *testing.T) {
	t.Parallel()
	type quick struct{ body string }
	srv := httptest.NewServer(New(Func(func(r *Request) Reply {
		mb := r.Mailbox()
		go func() {
			if r.URL.Query().Has("quick") {
				_ = mb.Send(quick{"done at once"})
				return
			}
			_ = mb.Send("start")
			_ = mb.Send("one")
			_ = mb.Send("stop")
		}()
		first, err := mb.Receive(r.Context())
		if err != nil {
			return Status(http.StatusServiceUnavailable)
		}
		if q, ok := first.(quick); ok {
			return Buffered(http.StatusOK, nil, []byte(q.body))
		}
		return Loop(http.StatusOK, nil, 0, func(info any, push Push, n int) (int, Action) {
			if info == "stop" {
				return n, Stop([]byte("end\n"))
			}
			if s, ok := info.(string); ok {
				_ = push([]byte(s + "\n"))
			}
			return n, Continue
		})
	}), nil))
	defer srv.Close()
	_, body := get(t, srv.URL+"?quick")
	assert.Equal(t, "done at once", body)
	_, body = get(t, srv.URL)
	assert.Equal(t, "one\nend\n", body, "the loop goes on after the message Handle took")

	mb := newMailbox(1, OverflowReject)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := mb.Receive(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	mb.close()
	_, err = mb.Receive(context.Background())
	assert.ErrorIs(t, err, ErrClosed)
}

// TestReceiveWakesOnClose checks that a Receive waiting on an empty
// mailbox returns ErrClosed when the mailbox closes, without having made
// the mailbox's Done channel to wait on.
func TestReceiveWakesOnClose(t *testing.T) {
	t.Parallel()
	mb := newMailbox(1, OverflowReject)
	errs := make(chan error, 1)
	go func() {
		_, err := mb.Receive(context.Background())
		errs <- err
	}()
	time.Sleep(10 * time.Millisecond) // usually waiting by now; either way must work
	mb.close()
	select {
	case err := <-errs:
		assert.ErrorIs(t, err, ErrClosed)
	case <-time.After(5 * time.Second):
		t.Fatal("Receive did not return when the mailbox closed")
	}
	assert.Nil(t, mb.more.Load(), "waiting made the mailbox's rare part")
}

func TestSendContextWaitersAllGetRoom(t *testing.T) {
	t.Parallel()
	mb := newMailbox(1, OverflowReject)
	defer mb.close()
	require.NoError(t, mb.Send(0))
	const waiters = 5
	errs := make(chan error, waiters)
	for i := 1; i <= waiters; i++ {
		go func() { errs <- mb.SendContext(context.Background(), i) }()
	}
	seen := map[any]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for len(seen) < waiters+1 {
		info, err := mb.Receive(ctx)
		require.NoError(t, err)
		seen[info] = true
	}
	for range waiters {
		require.NoError(t, <-errs)
	}
}

func TestMailboxKeepsOrderPastItsFirstSlots(t *testing.T) {
	t.Parallel()
	mb := newMailbox(4, OverflowReject)
	defer mb.close()
	next := 0
	for i := 0; i < 100; i++ {
		for mb.Send(i) == nil {
			i++
		}
		// Full: take two, then go on sending.
		for range 2 {
			info, err := mb.Receive(context.Background())
			require.NoError(t, err)
			require.Equal(t, next, info)
			next++
		}
		i--
	}
}
