package controller

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flushCounter is middleware whose writer counts the flushes that reach
// it, as a wrapper such as chi's does (Flush, and Unwrap for the rest).
type flushCounter struct {
	http.ResponseWriter
	n *atomic.Int32
}

func (f flushCounter) Flush() {
	f.n.Add(1)
	f.ResponseWriter.(http.Flusher).Flush()
}

func (f flushCounter) Unwrap() http.ResponseWriter { return f.ResponseWriter }

func countFlushes(n *atomic.Int32, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(flushCounter{w, n}, r)
	})
}

// TestLoopFlushesOncePerBatch queues ten messages before the loop starts:
// the loop handles them back to back and flushes them together, once,
// after the response head's own flush.
func TestLoopFlushesOncePerBatch(t *testing.T) {
	t.Parallel()
	var flushes atomic.Int32
	e := newEchoLoop()
	srv := httptest.NewServer(countFlushes(&flushes, New(Func(func(r *Request) Reply {
		mb := r.Mailbox()
		for i := 0; i < 10; i++ {
			require.NoError(t, mb.Send(fmt.Sprint("queued ", i)))
		}
		return e.Handle(r)
	}), nil)))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, br := openLoop(t, ctx, srv.URL)
	defer res.Body.Close()
	mb := <-e.boxes
	for i := 0; i < 10; i++ {
		assert.Equal(t, fmt.Sprint("queued ", i), readLine(t, br))
	}
	assert.EqualValues(t, 2, flushes.Load(), "the head, then one flush for the ten messages")

	// A lone message is flushed at once: the client reads it before the
	// next one is sent.
	for i := 0; i < 3; i++ {
		require.NoError(t, mb.Send(fmt.Sprint("alone ", i)))
		assert.Equal(t, fmt.Sprint("alone ", i), readLine(t, br))
	}
	assert.EqualValues(t, 5, flushes.Load())
	require.NoError(t, mb.Send("stop"))
	assert.Equal(t, "final after 13", readLine(t, br))
	<-e.ended
}

// TestLoopBatchIsBoundedByTheMailbox keeps a loop's mailbox from ever
// emptying: each message's handler sends the next one. The client must
// still see frames while the chain runs, because the loop flushes after
// each mailbox's worth of messages; the handler waits, deep in the chain,
// until the client has read the first frames, so a loop that flushed only
// on an empty mailbox would never get there.
func TestLoopBatchIsBoundedByTheMailbox(t *testing.T) {
	t.Parallel()
	const size = 4
	read := make(chan struct{})
	boxes := make(chan *Mailbox, 1)
	srv := httptest.NewServer(New(Func(func(r *Request) Reply {
		mb := r.Mailbox()
		boxes <- mb
		return Loop(http.StatusOK, nil, 0, func(info any, push Push, n int) (int, Action) {
			i, ok := info.(int)
			if !ok {
				return n, Continue
			}
			_ = push([]byte(fmt.Sprint("m", i, "\n")))
			if i == 3*size {
				select {
				case <-read:
				case <-time.After(20 * time.Second):
					panic("the first frames never reached the client")
				}
			}
			if i == 4*size {
				return n, Stop(nil)
			}
			_ = mb.Send(i + 1)
			return n, Continue
		})
	}), &Options{MailboxSize: size}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, br := openLoop(t, ctx, srv.URL)
	defer res.Body.Close()
	require.NoError(t, (<-boxes).Send(0))
	for i := 0; i < size; i++ {
		require.Equal(t, fmt.Sprint("m", i), readLine(t, br))
	}
	close(read)
	for i := size; i <= 4*size; i++ {
		require.Equal(t, fmt.Sprint("m", i), readLine(t, br))
	}
	_, err := io.ReadAll(br)
	require.NoError(t, err)
}

// TestPushEmptyFrameFlushesNow has a handler push a frame and then wait
// for the client to confirm it read it, which only works because it
// flushes with an empty push first.
func TestPushEmptyFrameFlushesNow(t *testing.T) {
	t.Parallel()
	read := make(chan struct{})
	boxes := make(chan *Mailbox, 1)
	srv := httptest.NewServer(New(Func(func(r *Request) Reply {
		boxes <- r.Mailbox()
		return Loop(http.StatusOK, nil, 0, func(info any, push Push, n int) (int, Action) {
			if info == "stop" {
				return n, Stop(nil)
			}
			if s, ok := info.(string); ok {
				_ = push([]byte(s + "\n"))
				_ = push(nil)
				select {
				case <-read:
				case <-time.After(20 * time.Second):
					panic("the client never saw the pushed frame")
				}
			}
			return n + 1, Continue
		})
	}), nil))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, br := openLoop(t, ctx, srv.URL)
	defer res.Body.Close()
	mb := <-boxes
	// Both queued: without the empty push, the first frame would wait in
	// the batch while its handler waits for the client.
	require.NoError(t, mb.Send("one"))
	require.NoError(t, mb.Send("two"))
	for _, want := range []string{"one", "two"} {
		assert.Equal(t, want, readLine(t, br))
		read <- struct{}{}
	}
	require.NoError(t, mb.Send("stop"))
	_, err := io.ReadAll(br)
	require.NoError(t, err)
}

// TestMonitorMessageFollowsWhatWasSentBefore checks a monitor's place in
// the queue: a producer sends messages and then ends (closes the channel
// the loop monitors); the loop handles all of them, then the monitor's
// message. A second monitor, watched by a goroutine, is delivered too.
func TestMonitorMessageFollowsWhatWasSentBefore(t *testing.T) {
	t.Parallel()
	type down struct{ which string }
	first, second := make(chan struct{}), make(chan struct{})
	boxes := make(chan *Mailbox, 1)
	srv := httptest.NewServer(New(Func(func(r *Request) Reply {
		mb := r.Mailbox()
		mb.Monitor(first, down{"first"})
		mb.Monitor(second, down{"second"})
		boxes <- mb
		return Loop(http.StatusOK, nil, 0, func(info any, push Push, n int) (int, Action) {
			switch v := info.(type) {
			case string:
				_ = push([]byte(v + "\n"))
			case down:
				_ = push([]byte("down " + v.which + "\n"))
				if n == 1 {
					return n, Stop(nil)
				}
				return n + 1, Continue
			}
			return n, Continue
		})
	}), nil))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, br := openLoop(t, ctx, srv.URL)
	defer res.Body.Close()
	mb := <-boxes
	for i := 0; i < 5; i++ {
		require.NoError(t, mb.Send(fmt.Sprint("before ", i)))
	}
	close(first)
	for i := 0; i < 5; i++ {
		assert.Equal(t, fmt.Sprint("before ", i), readLine(t, br))
	}
	assert.Equal(t, "down first", readLine(t, br))
	close(second)
	assert.Equal(t, "down second", readLine(t, br))
	_, err := io.ReadAll(br)
	require.NoError(t, err)
}

// TestReceiveSeesTheMonitor checks that Handle, waiting in Receive,
// learns of a monitored end, whether the monitor was registered before or
// during the wait.
func TestReceiveSeesTheMonitor(t *testing.T) {
	t.Parallel()
	for _, during := range []bool{false, true} {
		mb := newMailbox(4, OverflowReject)
		done := make(chan struct{})
		if !during {
			mb.Monitor(done, "ended")
		}
		got := make(chan any, 1)
		go func() {
			info, err := mb.Receive(context.Background())
			if err != nil {
				info = err
			}
			got <- info
		}()
		if during {
			time.Sleep(10 * time.Millisecond) // usually inside Receive by now; either way must work
			mb.Monitor(done, "ended")
		}
		close(done)
		select {
		case v := <-got:
			assert.Equal(t, "ended", v)
		case <-time.After(10 * time.Second):
			t.Fatal("Receive never saw the monitor")
		}
		mb.close()
	}
}

func TestMailboxSendOfAPointerDoesNotAllocate(t *testing.T) {
	mb := newMailbox(64, OverflowReject)
	defer mb.close()
	type entry struct{ frame []byte }
	e := &entry{frame: []byte("data: x\n\n")}
	// Grow the queue once; after that a send and a take allocate nothing.
	for i := 0; i < 64; i++ {
		require.NoError(t, mb.Send(e))
	}
	for i := 0; i < 64; i++ {
		_, ok := mb.take()
		require.True(t, ok)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		_ = mb.Send(e)
		_ = mb.Send(e)
		_, _ = mb.take()
		_, _ = mb.take()
	})
	assert.Zero(t, allocs)
}

func TestMailboxDoneIsMadeOnUse(t *testing.T) {
	t.Parallel()
	mb := newMailbox(1, OverflowReject)
	done := mb.Done()
	select {
	case <-done:
		t.Fatal("closed too early")
	default:
	}
	mb.close()
	<-done
	late := newMailbox(1, OverflowReject)
	late.close()
	<-late.Done() // asked for only after the close: already closed
	assert.ErrorIs(t, late.SendContext(context.Background(), "x"), ErrClosed)
}

// panicOnFlush is a writer wrapper whose first Flush panics, as a broken
// middleware might.
type panicOnFlush struct {
	http.ResponseWriter
	armed *atomic.Bool
}

func (p panicOnFlush) Flush() {
	if p.armed.CompareAndSwap(true, false) {
		panic("broken flush")
	}
	p.ResponseWriter.(http.Flusher).Flush()
}

// TestLoopHeadPanicIsHandledOnTheConnection checks that a panic while the
// response head is written (on the head writer) is raised on the
// connection's goroutine like any other: logged, the request answered,
// the server still serving.
func TestLoopHeadPanicIsHandledOnTheConnection(t *testing.T) {
	t.Parallel()
	logger, logs := testLogger()
	var armed atomic.Bool
	armed.Store(true)
	e := newEchoLoop()
	h := New(e, &Options{Logger: logger})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(panicOnFlush{w, &armed}, r)
	}))
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err == nil {
		_, _ = io.ReadAll(res.Body)
		res.Body.Close()
	}
	<-e.boxes
	<-e.ended
	assert.Contains(t, logs.String(), "broken flush")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res2, br := openLoop(t, ctx, srv.URL)
	defer res2.Body.Close()
	mb := <-e.boxes
	require.NoError(t, mb.Send("stop"))
	assert.Equal(t, "final after 0", readLine(t, br))
	<-e.ended
}

// TestLoopOverHTTP2 runs a loop over HTTP/2, where the head is written on
// the connection's own goroutine.
func TestLoopOverHTTP2(t *testing.T) {
	t.Parallel()
	e := newEchoLoop()
	srv := httptest.NewUnstartedServer(New(e, nil))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	client := srv.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	res, err := client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, 2, res.ProtoMajor)
	mb := <-e.boxes
	buf := make([]byte, 64)
	for i := 0; i < 3; i++ {
		require.NoError(t, mb.Send(fmt.Sprint("h2 ", i)))
		n, err := io.ReadAtLeast(res.Body, buf, len(fmt.Sprint("h2 ", i, "\n")))
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint("h2 ", i, "\n"), string(buf[:n]))
	}
	require.NoError(t, mb.Send("stop"))
	rest, _ := io.ReadAll(res.Body)
	assert.Equal(t, "final after 3\n", string(rest))
	<-e.ended
}

// TestNotifyPassesTheBoundAndFollowsTheQueue checks Notify: it queues past
// a full mailbox, behind what was sent before, and fails only once the
// mailbox is closed.
func TestNotifyPassesTheBoundAndFollowsTheQueue(t *testing.T) {
	t.Parallel()
	mb := newMailbox(2, OverflowReject)
	require.NoError(t, mb.Send("a"))
	require.NoError(t, mb.Send("b"))
	require.ErrorIs(t, mb.Send("c"), ErrMailboxFull)
	require.NoError(t, mb.Notify("ended"))
	for _, want := range []string{"a", "b", "ended"} {
		info, err := mb.Receive(context.Background())
		require.NoError(t, err)
		assert.Equal(t, want, info)
	}
	mb.close()
	assert.ErrorIs(t, mb.Notify("late"), ErrClosed)
}

// TestMailboxRingKeepsOrderAndIsGivenBack drives the queue's ring through
// growth while it wraps around, checks the order, and checks that an
// emptied mailbox holds no ring beyond its own slots: an idle stream
// keeps nothing of a burst.
func TestMailboxRingKeepsOrderAndIsGivenBack(t *testing.T) {
	t.Parallel()
	mb := newMailbox(1000, OverflowReject)
	defer mb.close()
	sent, next := 0, 0
	for round := 1; round <= 40; round++ {
		for range round * 3 {
			require.NoError(t, mb.Send(sent))
			sent++
		}
		for range round*3 - round { // leave some queued: the next round wraps
			info, ok := mb.take()
			require.True(t, ok)
			require.Equal(t, next, info)
			next++
		}
	}
	for next < sent {
		info, ok := mb.take()
		require.True(t, ok)
		require.Equal(t, next, info)
		next++
	}
	_, ok := mb.take()
	assert.False(t, ok)
	mb.mu.Lock()
	defer mb.mu.Unlock()
	assert.Nil(t, mb.big, "an empty queue gives its ring back")
	assert.Zero(t, mb.n)
}

// TestEveryTicksDoNotPileUp checks that a loop busy for several periods
// gets one tick, not one per period, and that the timer stops with the
// mailbox.
func TestEveryTicksDoNotPileUp(t *testing.T) {
	t.Parallel()
	mb := newMailbox(4, OverflowReject)
	mb.Every(time.Millisecond, "tick")
	time.Sleep(30 * time.Millisecond) // a busy loop: many periods pass
	never := make(chan struct{})
	info, ok := mb.wait(never)
	require.True(t, ok)
	assert.Equal(t, "tick", info)
	_, ok = mb.take()
	assert.False(t, ok, "ticks are not queued")
	mb.close()
	mb.mu.Lock()
	defer mb.mu.Unlock()
	assert.False(t, mb.more.Load().tick.Stop(), "the mailbox's close stopped the timer, for good")
}

// TestStreamStateStaysSmall pins the size of what every idle stream holds
// for its whole life, so that a field added carelessly shows up here
// rather than in the memory per connected client.
func TestStreamStateStaysSmall(t *testing.T) {
	t.Parallel()
	assert.LessOrEqual(t, unsafe.Sizeof(Mailbox{}), uintptr(96), "Mailbox")
	assert.LessOrEqual(t, unsafe.Sizeof(Request{}), uintptr(64), "Request")
}
