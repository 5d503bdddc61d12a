package sse

import (
	"errors"
	"sync"
)

// ErrLagged reports a subscriber that was dropped because its queue was
// full: it fell behind the publishers. It can reconnect with its last event
// id and replay what it missed from the topic's log.
var ErrLagged = errors.New("sse: subscriber fell behind and was dropped")

// ErrHubClosed reports a subscription ended, or refused, by [Hub.Close].
var ErrHubClosed = errors.New("sse: hub closed")

// HubOptions configures a Hub. Zero fields take the defaults.
type HubOptions struct {
	// QueueSize is each channel subscriber's queue; default 64.
	QueueSize int
	// Log bounds each topic's replay log. Default: the [LogOptions]
	// defaults. Every topic that was ever published to keeps its log until
	// the hub is closed, so keep the number of topics bounded.
	Log *LogOptions
}

// Hub fans events out to the subscribers of a topic.
//
// Publishing never blocks: each subscriber has its own bounded queue, so a
// slow client never delays the others. The policy for a subscriber whose
// queue is full is to drop it: its channel is closed after the events
// already queued, its Err becomes [ErrLagged], and the client is expected to
// reconnect with Last-Event-ID, which the topic's [Log] answers. A subscriber
// is never silently skipped, so events are never lost without a sign.
//
// Every topic keeps a replay log; [Hub.Subscribe] replays the events after a
// given id and then delivers live events, with no gap and no duplicate
// between the two.
type Hub struct {
	mu     sync.Mutex
	topics map[string]*topic
	closed bool
	opts   HubOptions
}

type topic struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
	log  *Log
}

// Subscription is one subscriber's membership of a topic.
type Subscription struct {
	// C delivers the events, replayed ones first. It is nil for
	// subscriptions made with [Hub.SubscribeFunc]. It is closed when the
	// subscription ends, after the events already queued.
	C <-chan Event

	c       chan Event
	deliver func(Event) bool
	done    chan struct{}
	err     error
	topic   *topic
	removed bool
}

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
		t = &topic{subs: make(map[*Subscription]struct{}), log: NewLog(h.opts.Log)}
		h.topics[name] = t
	}
	return t, nil
}

// Publish appends the event to the topic's log, which gives it its id, and
// delivers it to every subscriber. It returns the event with its id. On a
// closed hub it returns the event unchanged and delivers nothing.
func (h *Hub) Publish(name string, e Event) Event {
	t, err := h.topic(name)
	if err != nil {
		return e
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	e = t.log.Append(e)
	for s := range t.subs {
		if !s.deliver(e) {
			s.endLocked(ErrLagged)
		}
	}
	return e
}

// Subscribe joins a topic with a channel of [HubOptions.QueueSize] events
// (plus room for the replay). With a non-empty lastEventID it first queues
// the events published after it; an id the log does not know replays
// nothing, and an id older than the log replays what is left (check
// [Log.Since] on the topic's log to tell the client about a gap).
func (h *Hub) Subscribe(name, lastEventID string) (*Subscription, error) {
	t, err := h.topic(name)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var replay []Event
	if lastEventID != "" {
		replay, _ = t.log.Since(lastEventID)
	}
	c := make(chan Event, h.opts.QueueSize+len(replay))
	for _, e := range replay {
		c <- e
	}
	s := &Subscription{C: c, c: c, done: make(chan struct{}), topic: t}
	s.deliver = func(e Event) bool {
		select {
		case c <- e:
			return true
		default:
			return false
		}
	}
	t.subs[s] = struct{}{}
	return s, nil
}

// SubscribeFunc joins a topic with a delivery function instead of a
// channel: deliver is called with each event, replayed ones first, while the
// topic is locked, so it must not block; it returns false when it cannot
// take the event (its own queue is full), which drops the subscriber with
// [ErrLagged] exactly as a full channel would. A controller loop passes its
// mailbox's non-blocking Send here.
func (h *Hub) SubscribeFunc(name, lastEventID string, deliver func(Event) bool) (*Subscription, error) {
	t, err := h.topic(name)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &Subscription{deliver: deliver, done: make(chan struct{}), topic: t}
	if lastEventID != "" {
		replay, _ := t.log.Since(lastEventID)
		for _, e := range replay {
			if !deliver(e) {
				s.err = ErrLagged
				s.removed = true
				close(s.done)
				return s, nil
			}
		}
	}
	t.subs[s] = struct{}{}
	return s, nil
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
// Subscribe fail and Publish delivers nothing.
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
		for s := range t.subs {
			s.endLocked(ErrHubClosed)
		}
		t.mu.Unlock()
	}
}

// Done is closed when the subscription ends, by Close, by the hub's Close,
// or because the subscriber fell behind.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Err tells why the subscription ended: nil while it is live or after
// Close, [ErrLagged] or [ErrHubClosed] otherwise. Read it after Done is
// closed or C is drained.
func (s *Subscription) Err() error {
	s.topic.mu.Lock()
	defer s.topic.mu.Unlock()
	return s.err
}

// Close leaves the topic. It is safe to call more than once and after the
// subscription ended by itself.
func (s *Subscription) Close() {
	s.topic.mu.Lock()
	defer s.topic.mu.Unlock()
	s.endLocked(nil)
}

func (s *Subscription) endLocked(err error) {
	if s.removed {
		return
	}
	s.removed = true
	s.err = err
	delete(s.topic.subs, s)
	close(s.done)
	if s.c != nil {
		close(s.c)
	}
}
