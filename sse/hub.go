package sse

import (
	"errors"
	"sync"
)

// ErrLagged reports a subscriber that was dropped because its queue was
// full: it fell behind the publishers. It can reconnect with its last event
// id and replay what it missed from the topic's log.
var ErrLagged = errors.New("sse: subscriber fell behind and was dropped")

// ErrHubClosed reports a subscription ended, or refused, by [Hub.Close],
// and a publish to a closed hub.
var ErrHubClosed = errors.New("sse: hub closed")

// HubOptions configures a Hub. Zero fields take the defaults.
type HubOptions struct {
	// QueueSize is each channel subscriber's queue ([Hub.Subscribe]); default
	// 64. A subscriber made with [Hub.SubscribeFunc] has the queue of its
	// delivery function instead (a controller mailbox's bound, say).
	QueueSize int
	// Log bounds each topic's replay log. Default: the [LogOptions]
	// defaults. Every topic that was ever published to keeps its log until
	// the hub is closed, so keep the number of topics bounded.
	Log *LogOptions
}

// Hub fans events out to the subscribers of a topic.
//
// [Hub.Publish] appends the event to the topic's [Log], which gives it its id
// and encodes it once into an [Entry], and hands that same *Entry to every
// subscriber: publishing to a thousand streams encodes the event once and
// copies nothing. Every subscriber receives the topic's entries in publish
// order.
//
// # A subscriber that falls behind is dropped
//
// Publishing never blocks and never waits for a subscriber: each one has
// its own bounded queue (a channel of [HubOptions.QueueSize] entries for
// [Hub.Subscribe]; for [Hub.SubscribeMailbox] and [Hub.SubscribeFunc], the
// mailbox or whatever the delivery function queues into). When a
// subscriber's queue is full as an event is published, that subscriber is
// dropped at once and for good: its Err becomes [ErrLagged], its Done
// channel is closed, its channel (if it has one) is closed after the
// entries already queued, which are still delivered, its mailbox (if it has
// one) gets [Ended] after them, and it receives nothing more. The other
// subscribers are not affected in any way.
//
// No event is ever skipped without a sign: a dropped subscriber received
// exactly the topic's entries up to some id, in order, and nothing after. A
// client that reconnects with that id as Last-Event-ID replays the rest from
// the topic's log with no gap and no duplicate, as long as the log still
// holds them (see [LogOptions]; [Log.Since] reports [ErrEvicted] when not).
// Browsers' EventSource reconnects by itself and sends the id.
//
// Pitfalls: a queue must hold the largest burst a client may have to absorb
// while it is busy writing; a burst longer than the queue drops even a fast
// client (which then reconnects and replays, at a cost). A client that
// stops reading altogether is dropped once the network buffers and its
// queue are full; its stream itself ends when the server's write deadline
// cuts the connection, or as soon as the client reads again.
//
// [Hub.Subscribe], [Hub.SubscribeMailbox] and [Hub.SubscribeFunc] replay the
// entries after a given id and then deliver live ones, with no gap and no
// duplicate between the two; SubscribeMailbox and SubscribeFunc hand the
// whole replay over as one entry, so a replay is never longer than a
// subscriber's queue.
type Hub struct {
	mu     sync.Mutex
	topics map[string]*topic
	closed bool
	opts   HubOptions
}

type topic struct {
	mu   sync.Mutex
	name string
	subs []*Subscription
	log  *Log
}

// Subscription is one subscriber's membership of a topic.
//
// A hub may hold many thousands of them, one per connected client, so a
// subscription is small: its Done channel is made only when asked for,
// and a mailbox subscriber ([Hub.SubscribeMailbox]) never needs one.
type Subscription struct {
	// C delivers the entries, replayed ones first. It is nil for
	// subscriptions made with [Hub.SubscribeMailbox] and
	// [Hub.SubscribeFunc]. It is closed when the subscription ends, after
	// the entries already queued.
	C <-chan *Entry

	to    Mailbox       // where entries go: a mailbox, a delivery function (funcBox) or C's channel (chanBox)
	done  chan struct{} // made by Done; closed when the subscription ends
	topic *topic
	idx   int32 // index in topic.subs; -1 before the subscription joins and once it ended
	err   uint8 // why it ended: endLeft (nil), endLagged or endHubClosed
}

// Why a subscription ended, as Err reports it.
const (
	endLeft      = iota // Close, or still live: nil
	endLagged           // ErrLagged
	endHubClosed        // ErrHubClosed
)

// Mailbox is what [Hub.SubscribeMailbox] delivers to: a controller loop's
// *controller.Mailbox is one.
type Mailbox interface {
	// Send queues a message without blocking, or fails (the mailbox is
	// full, or closed): the hub then drops the subscriber.
	Send(info any) error
	// Notify queues a message past the mailbox's bound: the hub sends
	// [Ended] with it, last.
	Notify(info any) error
	// Defer registers fn to run when the mailbox closes, at once when it
	// is closed already: the hub leaves the topic with it.
	Defer(fn func())
}

// Ended is the last message a [Hub.SubscribeMailbox] subscriber's mailbox
// receives from the hub, when the hub ends the subscription: the
// subscriber fell behind ([ErrLagged]; it can resume from its last event
// id) or the hub closed ([ErrHubClosed]). It comes after every entry the
// subscription delivered. A subscription that ends because its mailbox
// closed gets none.
type Ended struct {
	Topic string
	Err   error
}

// chanBox is a channel subscriber's queue as a Mailbox.
type chanBox chan *Entry

func (c chanBox) Send(info any) error {
	select {
	case c <- info.(*Entry):
		return nil
	default:
		return ErrLagged
	}
}
func (chanBox) Notify(any) error { return nil }
func (chanBox) Defer(func())     {}

// funcBox is a SubscribeFunc delivery function as a Mailbox.
type funcBox func(*Entry) bool

func (f funcBox) Send(info any) error {
	if f(info.(*Entry)) {
		return nil
	}
	return ErrLagged
}
func (funcBox) Notify(any) error { return nil }
func (funcBox) Defer(func())     {}

// NewHub returns an empty Hub.
func NewHub(opts *HubOptions) *Hub {
	h := &Hub{topics: make(map[string]*topic)}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.QueueSize <= 0 {
		h.opts.QueueSize = 64
	}
	return h
}

func (h *Hub) topic(name string) (*topic, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrHubClosed
	}
	t := h.topics[name]
	if t == nil {
		t = &topic{name: name, log: NewLog(h.opts.Log)}
		h.topics[name] = t
	}
	return t, nil
}

// Publish appends the event to the topic's log, which gives it its id (any
// ID the event carries is replaced) and encodes it, and delivers the entry
// to every subscriber, dropping those whose queue is full (see [Hub]). It
// returns the entry; it fails with [ErrInvalidEvent] for an event name that
// cannot be framed and with [ErrHubClosed] on a closed hub, delivering
// nothing. The log keeps e.Data: do not modify it afterwards.
func (h *Hub) Publish(name string, e Event) (*Entry, error) {
	t, err := h.topic(name)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	ent, err := t.log.Append(e)
	if err != nil {
		return nil, err
	}
	for i := 0; i < len(t.subs); {
		s := t.subs[i]
		if s.offer(ent) {
			i++
			continue
		}
		s.endLocked(ErrLagged) // moves the last subscriber to i
	}
	return ent, nil
}

// offer hands e to the subscriber without blocking and reports whether it
// took it.
func (s *Subscription) offer(e *Entry) bool { return s.to.Send(e) == nil }

// Subscribe joins a topic with a channel of [HubOptions.QueueSize] entries
// (plus room for the replay). With a non-empty lastEventID it first queues
// the entries published after it; an id the log does not know replays
// nothing, and an id older than the log replays what is left (check
// [Log.Since] on the topic's log to tell the client about a gap). Read C
// promptly: a subscriber whose channel is full is dropped (see [Hub]).
func (h *Hub) Subscribe(name, lastEventID string) (*Subscription, error) {
	t, err := h.topic(name)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var replay []*Entry
	if lastEventID != "" {
		replay, _ = t.log.Since(lastEventID)
	}
	c := make(chan *Entry, h.opts.QueueSize+len(replay))
	for _, e := range replay {
		c <- e
	}
	s := &Subscription{C: c, to: chanBox(c), topic: t}
	t.add(s)
	return s, nil
}

// SubscribeMailbox joins a topic on behalf of a mailbox, a controller
// loop's: each entry is sent to it as a *Entry (its frame is what the loop
// pushes), and the subscription ends when the mailbox closes. A send the
// mailbox refuses (it is full: the client fell behind) drops the
// subscriber with [ErrLagged], exactly as a full channel would (see [Hub]).
// When the hub ends the subscription (a drop, or [Hub.Close]), the
// mailbox receives [Ended], after the entries already sent, through its
// Notify, which the mailbox's bound does not refuse; the loop writes what
// was queued and then ends the stream (asking the client, say, to come
// back and resume):
//
//	if _, err := hub.SubscribeMailbox(topic, sse.LastEventID(req.Request), req.Mailbox()); err != nil {
//		return controller.Status(http.StatusServiceUnavailable)
//	}
//	...
//	case *sse.Entry:
//		_ = push(m.Frame())
//	case sse.Ended:
//		return state, controller.Stop(sse.AppendRetry(nil, time.Second))
//
// This is the cheapest way to feed a loop: the subscription has no
// channel of its own, and the idle loop waits on its mailbox alone (and
// its request's context), where a [Hub.SubscribeFunc] subscription whose
// Done channel the mailbox monitors costs that channel, and a third
// channel for the loop to wait on.
//
// With a non-empty lastEventID the entries published after it come first,
// as one delivery: a single [Entry] holding all of them ([Entry.Len]), so
// that a client that fell behind by more than its mailbox can still
// resume, however long its replay. An id the log does not know replays
// nothing, an id older than the log replays what is left (check
// [Log.Since] on the topic's log to tell the client about a gap), and a
// replay the mailbox refuses drops the subscriber (with [Ended]) before it
// joins.
//
// The returned Subscription may be ignored: the mailbox's closing ends it.
// The mailbox's methods are called with the topic locked, so they must not
// block and must not call back into the hub (a controller.Mailbox's do
// neither).
func (h *Hub) SubscribeMailbox(name, lastEventID string, mb Mailbox) (*Subscription, error) {
	s, err := h.subscribe(name, lastEventID, mb)
	if err != nil {
		return nil, err
	}
	// Not under the topic's lock: a closed mailbox runs Close at once.
	mb.Defer(s.Close)
	return s, nil
}

// SubscribeFunc joins a topic with a delivery function instead of a
// channel: deliver is called with each entry while the topic is locked, so
// it must not block and must not call back into the hub; it returns false
// when it cannot take the entry (its own queue is full), which drops the
// subscriber with [ErrLagged] exactly as a full channel would (see [Hub]).
// [Subscription.Done] tells of the drop. Replays come as one delivery, as
// for [Hub.SubscribeMailbox]; a replay that deliver refuses drops the
// subscriber before it joins.
//
// To feed a controller loop's mailbox, [Hub.SubscribeMailbox] does all of
// this and more cheaply.
func (h *Hub) SubscribeFunc(name, lastEventID string, deliver func(*Entry) bool) (*Subscription, error) {
	return h.subscribe(name, lastEventID, funcBox(deliver))
}

// subscribe joins a topic for a mailbox or a delivery function, with the
// replay as one entry.
func (h *Hub) subscribe(name, lastEventID string, to Mailbox) (*Subscription, error) {
	t, err := h.topic(name)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &Subscription{to: to, topic: t, idx: -1}
	if lastEventID != "" {
		if replay, _ := t.log.Since(lastEventID); len(replay) > 0 && to.Send(joinEntries(replay)) != nil {
			s.err = endLagged
			_ = to.Notify(Ended{Topic: t.name, Err: ErrLagged})
			return s, nil
		}
	}
	t.add(s)
	return s, nil
}

func (t *topic) add(s *Subscription) {
	s.idx = int32(len(t.subs))
	t.subs = append(t.subs, s)
}

// Log returns the topic's replay log, creating the topic if needed, or nil
// on a closed hub.
func (h *Hub) Log(name string) *Log {
	t, err := h.topic(name)
	if err != nil {
		return nil
	}
	return t.log
}

// Subscribers returns how many subscribers a topic has now.
func (h *Hub) Subscribers(name string) int {
	h.mu.Lock()
	t := h.topics[name]
	h.mu.Unlock()
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.subs)
}

// Close ends every subscription with [ErrHubClosed]; later calls to
// Subscribe and Publish fail with it.
func (h *Hub) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	topics := h.topics
	h.mu.Unlock()
	for _, t := range topics {
		t.mu.Lock()
		for len(t.subs) > 0 {
			t.subs[len(t.subs)-1].endLocked(ErrHubClosed)
		}
		t.mu.Unlock()
	}
}

// Done is closed when the subscription ends, by Close, by the hub's Close,
// or because the subscriber fell behind. The channel is made on the first
// call.
func (s *Subscription) Done() <-chan struct{} {
	s.topic.mu.Lock()
	defer s.topic.mu.Unlock()
	if s.done == nil {
		s.done = make(chan struct{})
		if s.idx < 0 {
			close(s.done)
		}
	}
	return s.done
}

// Err tells why the subscription ended: nil while it is live or after
// Close, [ErrLagged] or [ErrHubClosed] otherwise. Read it after Done is
// closed, C is drained, or [Ended] arrived.
func (s *Subscription) Err() error {
	s.topic.mu.Lock()
	defer s.topic.mu.Unlock()
	switch s.err {
	case endLagged:
		return ErrLagged
	case endHubClosed:
		return ErrHubClosed
	}
	return nil
}

// Close leaves the topic. It is safe to call more than once and after the
// subscription ended by itself.
func (s *Subscription) Close() {
	s.topic.mu.Lock()
	defer s.topic.mu.Unlock()
	s.endLocked(nil)
}

// endLocked removes the subscription from its topic, moving the topic's
// last subscriber into its place, and tells the subscriber why (unless it
// left by itself).
func (s *Subscription) endLocked(err error) {
	if s.idx < 0 {
		return
	}
	subs := s.topic.subs
	last := len(subs) - 1
	subs[s.idx] = subs[last]
	subs[s.idx].idx = s.idx
	subs[last] = nil
	s.topic.subs = subs[:last]
	s.idx = -1
	switch err {
	case ErrLagged:
		s.err = endLagged
	case ErrHubClosed:
		s.err = endHubClosed
	}
	if s.done != nil {
		close(s.done)
	}
	if c, ok := s.to.(chanBox); ok {
		close(c)
	} else if err != nil {
		_ = s.to.Notify(Ended{Topic: s.topic.name, Err: err})
	}
}
