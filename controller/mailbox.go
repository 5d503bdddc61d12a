package controller

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// ErrClosed reports a send to a mailbox whose loop has ended (or whose
// request was answered without a loop).
var ErrClosed = errors.New("controller: mailbox closed")

// ErrMailboxFull reports a send to a full mailbox. Under
// [OverflowDisconnect] the loop is also ended with a [Disconnect] carrying
// this error.
var ErrMailboxFull = errors.New("controller: mailbox full")

// Overflow is what a full mailbox does with a message that does not fit.
type Overflow int

const (
	// OverflowReject refuses the message: Send returns [ErrMailboxFull] and
	// the loop goes on with what it has. The sender decides what the loss
	// means. This is the default.
	OverflowReject Overflow = iota
	// OverflowDisconnect refuses the message and ends the loop, as if the
	// client had gone away: HandleInfo gets one [Disconnect] with
	// [ErrMailboxFull]. Use it where a client that cannot keep up should
	// reconnect (and replay) rather than silently miss messages.
	OverflowDisconnect
)

// Mailbox is a connection's inbox, the Go form of the Erlang process a
// stream is served by: any goroutine may send it messages, and the
// connection's loop handles them one at a time, in order.
//
// All methods are safe for concurrent use, and none of them blocks except
// [Mailbox.SendContext].
type Mailbox struct {
	// The queue: q[head:] are the messages waiting, at most size of them.
	// It is a slice, not a buffered channel, so that a mailbox costs
	// memory for what it holds rather than for its bound (a request that
	// never queues more than one message pays for one, not for
	// MailboxSize). ready holds a token whenever a message may be waiting;
	// room holds one whenever a slot may have freed up for SendContext.
	//
	// A mailbox lives as long as its stream, so its fields are packed and
	// the channels few of them need are made on first use.
	qmu      sync.Mutex
	q        []any
	head     int
	size     int32
	roomWait int32  // SendContext calls waiting for room
	qbuf     [2]any // q's first backing array: most requests queue one or two messages

	ready chan struct{}
	room  chan struct{} // made by the first SendContext that waits
	done  chan struct{} // made on first use (doneChan), under mu

	killed     atomic.Bool // set by an overflow under OverflowDisconnect
	closed     atomic.Bool
	disconnect bool // the overflow policy is OverflowDisconnect
	// mon is the first monitor, watched by the mailbox's reader itself
	// (Receive, then the loop) instead of by a goroutine of its own.
	mon atomic.Pointer[monitor]

	mu       sync.Mutex
	deferred []func()
	tick     *time.Ticker
	tickInfo any
}

// monitor is a watched channel and the message its closing delivers.
type monitor struct {
	done <-chan struct{}
	info any
}

func newMailbox(size int, overflow Overflow) *Mailbox {
	m := &Mailbox{
		size:       int32(min(size, 1<<30)),
		ready:      make(chan struct{}, 1),
		disconnect: overflow == OverflowDisconnect,
	}
	m.q = m.qbuf[:0]
	return m
}

// doneChan returns the channel closed when the mailbox closes, making it
// on first use: most mailboxes never need one.
func (m *Mailbox) doneChan() chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done == nil {
		m.done = make(chan struct{})
		if m.closed.Load() {
			close(m.done)
		}
	}
	return m.done
}

// enqueue appends info unless the mailbox is full.
func (m *Mailbox) enqueue(info any) bool { return m.put(info, false) }

// put appends info; past the bound only if unbounded (a monitor's message).
func (m *Mailbox) put(info any, unbounded bool) bool {
	m.qmu.Lock()
	n := len(m.q) - m.head
	if n >= int(m.size) && !unbounded {
		m.qmu.Unlock()
		return false
	}
	if m.head > 0 && len(m.q) == cap(m.q) {
		// Slide the waiting messages to the front instead of growing.
		copy(m.q, m.q[m.head:])
		clear(m.q[n:])
		m.q = m.q[:n]
		m.head = 0
	}
	m.q = append(m.q, info)
	m.qmu.Unlock()
	signal(m.ready)
	return true
}

// take removes the oldest message, if any. Only the mailbox's one reader
// (Handle's Receive, then the loop) calls it.
func (m *Mailbox) take() (any, bool) {
	m.qmu.Lock()
	if m.head == len(m.q) {
		m.qmu.Unlock()
		return nil, false
	}
	info := m.q[m.head]
	m.q[m.head] = nil
	m.head++
	if m.head == len(m.q) {
		m.q = m.q[:0]
		m.head = 0
	}
	var room chan struct{}
	if m.roomWait > 0 {
		room = m.room
	}
	m.qmu.Unlock()
	signal(room)
	return info, true
}

// signal leaves a token in ch (capacity 1) unless one is there; a nil ch
// is a no-op.
func signal(ch chan struct{}) {
	if ch == nil {
		return
	}
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Send queues info for the loop. It never blocks: it returns [ErrClosed]
// when the loop has ended and [ErrMailboxFull] when the mailbox is full
// (see [Overflow]). A nil error means the message was queued, not that it
// was handled; a loop that ends first drops what is still queued.
func (m *Mailbox) Send(info any) error {
	if m.closed.Load() {
		return ErrClosed
	}
	if m.enqueue(info) {
		// No second look at closed here: a loop may take the message
		// and end at once, and the message was still delivered. A loop
		// that ends first drops what is queued, as documented.
		return nil
	}
	if m.disconnect && m.killed.CompareAndSwap(false, true) {
		signal(m.ready) // the loop wakes, sees it, and ends
	}
	return ErrMailboxFull
}

// SendContext queues info, waiting for room while the mailbox is full. It
// returns ctx's error if ctx ends first and [ErrClosed] if the loop ends
// first. Use it for a message that must not be dropped, such as a final
// result, from a goroutine that can afford to wait.
func (m *Mailbox) SendContext(ctx context.Context, info any) error {
	if m.closed.Load() {
		return ErrClosed
	}
	if m.enqueue(info) {
		return nil
	}
	m.qmu.Lock()
	if m.room == nil {
		m.room = make(chan struct{}, 1)
	}
	room := m.room
	m.roomWait++
	m.qmu.Unlock()
	defer func() {
		m.qmu.Lock()
		m.roomWait--
		m.qmu.Unlock()
	}()
	done := m.doneChan()
	for {
		if m.enqueue(info) {
			// Pass the wake-up on: another waiter may fit too.
			signal(room)
			return nil
		}
		select {
		case <-room:
		case <-done:
			return ErrClosed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Receive takes the next message from the mailbox, waiting until one
// arrives or ctx ends; it returns [ErrClosed] once the mailbox is closed.
// It is for a controller's Handle, which may wait for a first message
// before it chooses its reply (a quick answer as a buffered reply, or a
// loop for the rest): once a loop runs, the loop owns the mailbox and
// Receive must not be called.
func (m *Mailbox) Receive(ctx context.Context) (any, error) {
	if info, ok := m.take(); ok {
		return info, nil
	}
	done := m.doneChan()
	for {
		if info, ok := m.take(); ok {
			return info, nil
		}
		mon := m.mon.Load()
		var monDone <-chan struct{}
		if mon != nil {
			monDone = mon.done
		}
		select {
		case <-m.ready:
		case <-monDone:
			m.fire(mon)
		case <-done:
			return nil, ErrClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// wait blocks the loop until something happens: a message is sent (or
// may have been), the watched monitor fires, the client goes away (done),
// or a tick is due, which it returns. It is not part of the loop's own
// function so that its select does not weigh on the stack of every write.
//
//go:noinline
func (m *Mailbox) wait(done <-chan struct{}, tick <-chan time.Time, tickInfo any) (any, bool) {
	mon := m.mon.Load()
	var monDone <-chan struct{}
	if mon != nil {
		monDone = mon.done
	}
	select {
	case <-m.ready:
	case <-monDone:
		m.fire(mon)
	case <-done:
	case <-tick:
		return tickInfo, true
	}
	return nil, false
}

// ended reports, without blocking, why the loop must end before its next
// message: the client went away (done is ctx's Done channel), or the
// mailbox overflowed under OverflowDisconnect. A single-channel poll is a
// lock-free check when nothing happened.
func (m *Mailbox) ended(ctx context.Context, done <-chan struct{}) error {
	select {
	case <-done:
		return ctx.Err()
	default:
	}
	if m.killed.Load() {
		return ErrMailboxFull
	}
	return nil
}

// Done is closed when the mailbox closes: its loop ended, or its request
// was answered without a loop.
func (m *Mailbox) Done() <-chan struct{} { return m.doneChan() }

// Monitor delivers info to the loop once done is closed, like an Erlang
// monitor's DOWN message: how a stream learns that the thing feeding it
// (a session, a subscription) has ended. The message does not count
// against the mailbox bound and is never refused. It is queued behind the
// messages sent before done closed, so a loop handles everything its
// producer sent before it ended, then the monitor's message.
//
// The first monitor of a mailbox costs no goroutine: the mailbox's reader
// ([Mailbox.Receive], then the loop) watches it between messages, and
// notices it at the latest after one mailbox's worth of messages. Each
// further monitor costs one goroutine until done closes or the mailbox
// closes.
func (m *Mailbox) Monitor(done <-chan struct{}, info any) {
	if m.closed.Load() {
		return
	}
	if m.mon.CompareAndSwap(nil, &monitor{done: done, info: info}) {
		// Wake a reader waiting now, so that it starts watching done.
		signal(m.ready)
		return
	}
	closed := m.doneChan()
	go func() {
		select {
		case <-done:
			m.put(info, true)
		case <-closed:
		}
	}()
}

// fire queues the message of mon, whose channel closed, once.
func (m *Mailbox) fire(mon *monitor) {
	if m.mon.CompareAndSwap(mon, nil) {
		m.put(mon.info, true)
	}
}

// poll fires the reader-watched monitor if its channel closed.
func (m *Mailbox) poll() {
	if mon := m.mon.Load(); mon != nil {
		select {
		case <-mon.done:
			m.fire(mon)
		default:
		}
	}
}

// Every delivers info to the loop every d, for keep-alives and periodic
// work, until the mailbox closes. A tick that finds the loop busy is
// skipped rather than queued. Calling Every again replaces the previous
// timer; it must be called before the loop starts (in Handle).
func (m *Mailbox) Every(d time.Duration, info any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tick != nil {
		m.tick.Stop()
	}
	m.tick = time.NewTicker(d)
	m.tickInfo = info
}

// Defer registers fn to run once when the mailbox closes, whatever ended
// the loop (a stop, a disconnect, a panic). Functions run in the reverse
// order of registration on the connection's goroutine. Registering on a
// closed mailbox runs fn at once.
func (m *Mailbox) Defer(fn func()) {
	m.mu.Lock()
	if !m.closed.Load() {
		m.deferred = append(m.deferred, fn)
		m.mu.Unlock()
		return
	}
	m.mu.Unlock()
	fn()
}

func (m *Mailbox) ticker() (<-chan time.Time, any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tick == nil {
		return nil, nil
	}
	return m.tick.C, m.tickInfo
}

// close ends the mailbox: later sends fail, monitors and the ticker stop,
// deferred functions run.
func (m *Mailbox) close() {
	m.mu.Lock()
	if m.closed.Swap(true) {
		m.mu.Unlock()
		return
	}
	if m.done != nil {
		close(m.done)
	}
	if m.tick != nil {
		m.tick.Stop()
	}
	deferred := m.deferred
	m.deferred = nil
	m.mu.Unlock()
	for i := len(deferred) - 1; i >= 0; i-- {
		deferred[i]()
	}
}
