package controller

import (
	"context"
	"errors"
	"math/bits"
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
//
// A mailbox holds at most [Options.MailboxSize] messages (default 64).
// Send never blocks. When the mailbox is full, the default policy,
// [OverflowReject], refuses the message: Send returns [ErrMailboxFull] and
// the sender decides (drop it, retry, or end the producer). Under
// [OverflowDisconnect] the loop is ended instead, for streams where a lost
// message is worse than a reconnect. [Mailbox.SendContext] waits for room.
// Monitor and Notify messages and timer ticks do not count against the
// bound.
//
// A fan-out source such as sse.Hub (sse.Hub.SubscribeMailbox) uses the
// non-blocking Send: a client too slow for its mailbox is dropped by the
// hub (the loop learns of it through Notify, after what was queued, and
// ends the stream once it has written that), and it resumes from its
// Last-Event-ID; the others are never held up. Send of a pointer
// allocates nothing, so pass the hub's *sse.Entry as the message rather
// than a copy of an event.
type Mailbox struct {
	// The queue: n messages waiting, the oldest at head, in a ring of a
	// power-of-two length: the mailbox's own slot (qbuf), or big once
	// more are waiting. At most size of them, plus those of Notify and
	// monitors, which pass the bound. It is not a buffered channel, so
	// that a mailbox costs memory for what it holds rather than for its
	// bound, and a larger ring comes from a pool and goes back to it when
	// the queue empties: a stream that receives one message at a time
	// never needs one, a burst borrows one, and an idle stream holds none.
	// ready holds a token whenever a message may be waiting, a tick may be
	// due or the mailbox has just closed: it is the one channel an idle
	// loop, or Receive, waits on besides its request's context.
	//
	// A mailbox lives as long as its stream, so it is kept small: the
	// parts few streams use (monitors, ticks, Done, SendContext's
	// waiting, more than one deferred function) live in more, made on
	// first use.
	mu    sync.Mutex // guards the queue, first and more's fields
	head  int32
	n     int32
	size  int32
	flags atomic.Uint32 // flagClosed, flagKilled, flagDisconnect, flagTick
	big   *ring
	qbuf  [1]any
	ready chan struct{}
	more  atomic.Pointer[mailboxMore]
	first func() // the first function given to Defer
}

// mailboxMore is the part of a mailbox that few streams need.
type mailboxMore struct {
	// mon is the first monitor, watched by the mailbox's reader itself
	// (Receive, then the loop) instead of by a goroutine of its own.
	mon       atomic.Pointer[monitor]
	done      chan struct{} // closed when the mailbox closes
	room      chan struct{} // holds a token whenever a slot may have freed up for SendContext
	roomWait  int           // SendContext calls waiting for room
	deferred  []func()      // Defer's functions after the first
	tick      *time.Timer   // Every's timer
	tickEvery time.Duration
	tickInfo  any
}

// The mailbox's flags.
const (
	flagClosed     = 1 << iota // the loop ended: sends fail
	flagKilled                 // an overflow under OverflowDisconnect ends the loop
	flagDisconnect             // the overflow policy is OverflowDisconnect
	flagTick                   // Every's timer fired and the loop has not had the tick yet
)

// monitor is a watched channel and the message its closing delivers.
type monitor struct {
	done <-chan struct{}
	info any
}

func newMailbox(size int, overflow Overflow) *Mailbox {
	m := &Mailbox{
		size:  int32(min(size, 1<<30)),
		ready: make(chan struct{}, 1),
	}
	if overflow == OverflowDisconnect {
		m.flags.Store(flagDisconnect)
	}
	return m
}

func (m *Mailbox) closed() bool { return m.flags.Load()&flagClosed != 0 }

// extra returns the mailbox's rarely used part, making it on first use.
// The caller holds m.mu.
func (m *Mailbox) extra() *mailboxMore {
	x := m.more.Load()
	if x == nil {
		x = &mailboxMore{}
		m.more.Store(x)
	}
	return x
}

// doneChan returns the channel closed when the mailbox closes, making it
// on first use: most mailboxes never need one.
func (m *Mailbox) doneChan() chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	x := m.extra()
	if x.done == nil {
		x.done = make(chan struct{})
		if m.closed() {
			close(x.done)
		}
	}
	return x.done
}

// enqueue appends info unless the mailbox is full.
func (m *Mailbox) enqueue(info any) bool { return m.put(info, false) }

// put appends info; past the bound only if unbounded (a monitor's message).
func (m *Mailbox) put(info any, unbounded bool) bool {
	m.mu.Lock()
	n := int(m.n)
	if n >= int(m.size) && !unbounded {
		m.mu.Unlock()
		return false
	}
	q := m.ring()
	if n == len(q) {
		q = m.grow(q)
	}
	q[(int(m.head)+n)&(len(q)-1)] = info
	m.n++
	m.mu.Unlock()
	signal(m.ready)
	return true
}

// take removes the oldest message, if any. Only the mailbox's one reader
// (Handle's Receive, then the loop) calls it.
func (m *Mailbox) take() (any, bool) {
	m.mu.Lock()
	if m.n == 0 {
		m.mu.Unlock()
		return nil, false
	}
	q := m.ring()
	head := int(m.head)
	info := q[head]
	q[head] = nil
	if m.n--; m.n == 0 {
		m.head = 0
		if m.big != nil {
			putRing(m.big)
			m.big = nil
		}
	} else {
		m.head = int32((head + 1) & (len(q) - 1))
	}
	var room chan struct{}
	if x := m.more.Load(); x != nil && x.roomWait > 0 {
		room = x.room
	}
	m.mu.Unlock()
	signal(room)
	return info, true
}

// ring returns the queue's ring. The caller holds m.mu.
func (m *Mailbox) ring() []any {
	if m.big != nil {
		return m.big.s
	}
	return m.qbuf[:]
}

// firstRing is the length of the ring a queue takes when it outgrows the
// mailbox's own slot: a burst then needs few steps of growth, each a copy
// and, while the pool is cold, an allocation.
const firstRing = 16

// grow moves the full ring q into a longer one, oldest first, and returns
// it. The caller holds m.mu.
func (m *Mailbox) grow(q []any) []any {
	r := getRing(max(2*len(q), firstRing))
	head := int(m.head)
	k := copy(r.s, q[head:])
	copy(r.s[k:], q[:head])
	clear(q)
	if m.big != nil {
		putRing(m.big)
	}
	m.big, m.head = r, 0
	return r.s
}

// ring is a queue's backing array once it outgrows its mailbox's own
// slots.
type ring struct{ s []any }

// rings pools the rings of emptied queues, by length: rings[k] holds those
// of 2<<k slots. Longer ones are left to the collector.
var rings [20]sync.Pool

// getRing returns an empty ring of n slots, a power of two from 2.
func getRing(n int) *ring {
	if k := bits.Len(uint(n)) - 2; k < len(rings) {
		if r, _ := rings[k].Get().(*ring); r != nil {
			return r
		}
	}
	return &ring{s: make([]any, n)}
}

// putRing pools r, whose slots are all nil.
func putRing(r *ring) {
	if k := bits.Len(uint(len(r.s))) - 2; k < len(rings) {
		rings[k].Put(r)
	}
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
	if m.closed() {
		return ErrClosed
	}
	if m.enqueue(info) {
		// No second look at closed here: a loop may take the message
		// and end at once, and the message was still delivered. A loop
		// that ends first drops what is queued, as documented.
		return nil
	}
	if f := m.flags.Load(); f&flagDisconnect != 0 && f&flagKilled == 0 &&
		m.flags.Or(flagKilled)&flagKilled == 0 {
		signal(m.ready) // the loop wakes, sees it, and ends
	}
	return ErrMailboxFull
}

// Notify queues info past the mailbox's bound: it is never refused for
// room, and fails only with [ErrClosed]. It is for the one message by which
// a producer tells the loop that it has ended, when the mailbox may be
// full precisely because the loop fell behind (a hub that drops a slow
// subscriber says so with it): the loop handles everything queued before,
// then this message. Where the producer's end is a channel closing,
// [Mailbox.Monitor] does the same.
//
// Pitfall: a producer that notifies for every message defeats the bound;
// use [Mailbox.Send] for those.
func (m *Mailbox) Notify(info any) error {
	if m.closed() {
		return ErrClosed
	}
	m.put(info, true)
	return nil
}

// SendContext queues info, waiting for room while the mailbox is full. It
// returns ctx's error if ctx ends first and [ErrClosed] if the loop ends
// first. Use it for a message that must not be dropped, such as a final
// result, from a goroutine that can afford to wait.
func (m *Mailbox) SendContext(ctx context.Context, info any) error {
	if m.closed() {
		return ErrClosed
	}
	if m.enqueue(info) {
		return nil
	}
	m.mu.Lock()
	x := m.extra()
	if x.room == nil {
		x.room = make(chan struct{}, 1)
	}
	room := x.room
	x.roomWait++
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		x.roomWait--
		m.mu.Unlock()
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
// Receive must not be called. Ticks ([Mailbox.Every]) go to the loop only.
//
// It waits on the mailbox's own channel and ctx (and the first monitor,
// if any): closing the mailbox wakes it through the mailbox's channel,
// so a wait makes no Done channel.
func (m *Mailbox) Receive(ctx context.Context) (any, error) {
	for {
		if info, ok := m.take(); ok {
			return info, nil
		}
		if m.closed() {
			return nil, ErrClosed
		}
		mon := m.monitor()
		var monDone <-chan struct{}
		if mon != nil {
			monDone = mon.done
		}
		select {
		case <-m.ready:
		case <-monDone:
			m.fire(mon)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// wait blocks the loop until something happens: a message is sent (or
// may have been), the watched monitor fires, the client goes away (done),
// or a tick is due, which it returns. An idle loop thus waits on two
// channels, the mailbox's and the request context's, or three with a
// monitor; every channel a waiting goroutine selects on holds one of the
// runtime's waiter records for as long as it waits. It is not part of the
// loop's own function so that its select does not weigh on the stack of
// every write.
//
//go:noinline
func (m *Mailbox) wait(done <-chan struct{}) (any, bool) {
	if m.flags.Load()&flagTick != 0 {
		if info, ok := m.tick(); ok {
			return info, true
		}
	}
	mon := m.monitor()
	var monDone <-chan struct{}
	if mon != nil {
		monDone = mon.done
	}
	select {
	case <-m.ready:
	case <-monDone:
		m.fire(mon)
	case <-done:
	}
	return nil, false
}

// tick takes a due tick: Every's message, once however many periods
// passed since the loop last had one.
func (m *Mailbox) tick() (any, bool) {
	if m.flags.And(^uint32(flagTick))&flagTick == 0 {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if x := m.more.Load(); x != nil && x.tick != nil {
		return x.tickInfo, true
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
	if m.flags.Load()&flagKilled != 0 {
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
// closes. A producer that can call a function when it ends, rather than
// close a channel, is cheaper still with [Mailbox.Notify]: the loop then
// waits on one channel fewer.
func (m *Mailbox) Monitor(done <-chan struct{}, info any) {
	if m.closed() {
		return
	}
	m.mu.Lock()
	x := m.extra()
	m.mu.Unlock()
	if x.mon.CompareAndSwap(nil, &monitor{done: done, info: info}) {
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

// monitor returns the monitor the reader watches, if any.
func (m *Mailbox) monitor() *monitor {
	if x := m.more.Load(); x != nil {
		return x.mon.Load()
	}
	return nil
}

// fire queues the message of mon, whose channel closed, once.
func (m *Mailbox) fire(mon *monitor) {
	if m.more.Load().mon.CompareAndSwap(mon, nil) {
		m.put(mon.info, true)
	}
}

// poll fires the reader-watched monitor if its channel closed.
func (m *Mailbox) poll() {
	if mon := m.monitor(); mon != nil {
		select {
		case <-mon.done:
			m.fire(mon)
		default:
		}
	}
}

// Every delivers info to the loop every d, for keep-alives and periodic
// work, until the mailbox closes. A tick that finds the loop busy waits
// for it, and ticks do not pile up: a loop busy for several periods gets
// one. Ticks do not count against the mailbox bound. Calling Every again
// replaces the previous timer; it must be called before the loop starts
// (in Handle). The timer costs the loop no channel of its own: it wakes
// the loop through the mailbox's.
func (m *Mailbox) Every(d time.Duration, info any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed() {
		return
	}
	x := m.extra()
	if x.tick != nil {
		x.tick.Stop()
	}
	x.tickEvery, x.tickInfo = d, info
	x.tick = time.AfterFunc(d, m.tock)
}

// tock is Every's timer firing: it marks a tick due, wakes the loop, and
// sets the timer for the next period.
func (m *Mailbox) tock() {
	m.mu.Lock()
	x := m.more.Load()
	if m.closed() || x.tick == nil {
		m.mu.Unlock()
		return
	}
	x.tick.Reset(x.tickEvery)
	m.mu.Unlock()
	m.flags.Or(flagTick)
	signal(m.ready)
}

// Defer registers fn to run once when the mailbox closes, whatever ended
// the loop (a stop, a disconnect, a panic). Functions run in the reverse
// order of registration on the connection's goroutine. Registering on a
// closed mailbox runs fn at once.
func (m *Mailbox) Defer(fn func()) {
	m.mu.Lock()
	if m.closed() {
		m.mu.Unlock()
		fn()
		return
	}
	if m.first == nil {
		m.first = fn
	} else {
		x := m.extra()
		x.deferred = append(x.deferred, fn)
	}
	m.mu.Unlock()
}

// close ends the mailbox: later sends fail, monitors and the timer stop,
// a waiting Receive returns, deferred functions run.
func (m *Mailbox) close() {
	m.mu.Lock()
	if m.flags.Or(flagClosed)&flagClosed != 0 {
		m.mu.Unlock()
		return
	}
	first := m.first
	m.first = nil
	var deferred []func()
	if x := m.more.Load(); x != nil {
		if x.done != nil {
			close(x.done)
		}
		if x.tick != nil {
			x.tick.Stop()
		}
		deferred = x.deferred
		x.deferred = nil
	}
	m.mu.Unlock()
	signal(m.ready) // a waiting Receive wakes and sees the mailbox closed
	for i := len(deferred) - 1; i >= 0; i-- {
		deferred[i]()
	}
	if first != nil {
		first()
	}
}
