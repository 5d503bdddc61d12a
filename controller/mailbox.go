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
	qmu  sync.Mutex
	q    []any
	head int
	size int
	qbuf [2]any // q's first backing array: most requests queue one or two messages

	ready    chan struct{}
	room     chan struct{} // made by the first SendContext that waits
	roomWait int           // SendContext calls waiting for room

	done     chan struct{}
	kill     chan struct{} // nil unless overflow is OverflowDisconnect
	closed   atomic.Bool
	overflow Overflow

	mu       sync.Mutex
	killed   bool
	deferred []func()
	tick     *time.Ticker
	tickInfo any
}

func newMailbox(size int, overflow Overflow) *Mailbox {
	m := &Mailbox{
		size:     size,
		ready:    make(chan struct{}, 1),
		done:     make(chan struct{}),
		overflow: overflow,
	}
	m.q = m.qbuf[:0]
	if overflow == OverflowDisconnect {
		m.kill = make(chan struct{})
	}
	return m
}

// enqueue appends info unless the mailbox is full.
func (m *Mailbox) enqueue(info any) bool { return m.put(info, false) }

// put appends info; past the bound only if unbounded (a monitor's message).
func (m *Mailbox) put(info any, unbounded bool) bool {
	m.qmu.Lock()
	n := len(m.q) - m.head
	if n >= m.size && !unbounded {
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
	if m.overflow == OverflowDisconnect {
		m.mu.Lock()
		if !m.killed {
			m.killed = true
			close(m.kill)
		}
		m.mu.Unlock()
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
	for {
		if m.enqueue(info) {
			// Pass the wake-up on: another waiter may fit too.
			signal(room)
			return nil
		}
		select {
		case <-room:
		case <-m.done:
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
	for {
		if info, ok := m.take(); ok {
			return info, nil
		}
		select {
		case <-m.ready:
		case <-m.done:
			return nil, ErrClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Done is closed when the mailbox closes: its loop ended, or its request
// was answered without a loop.
func (m *Mailbox) Done() <-chan struct{} { return m.done }

// Monitor delivers info to the loop once done is closed, like an Erlang
// monitor's DOWN message: how a stream learns that the thing feeding it
// (a session, a subscription) has ended. The message does not count
// against the mailbox bound and is never refused. A monitor costs one
// goroutine until done closes or the mailbox closes.
func (m *Mailbox) Monitor(done <-chan struct{}, info any) {
	if m.closed.Load() {
		return
	}
	go func() {
		select {
		case <-done:
			m.put(info, true)
		case <-m.done:
		}
	}()
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
	close(m.done)
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
