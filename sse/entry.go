package sse

// Entry is one event as a [Log] keeps it: the event with the id the log gave
// it, and its wire form, encoded once when it was appended. A [Hub] hands the
// same *Entry to every subscriber of a topic, so an event fanned out to many
// streams is encoded once and never copied: each stream writes
// [Entry.Frame].
//
// One kind of Entry holds several events: the replay a Hub hands a
// [Hub.SubscribeFunc] subscriber in one delivery. Its Frame is all their
// frames in order, its ID and Event are the last event's, and Len says how
// many events it holds. Code that looks at each event (to filter them, say)
// must check Len, and read a replay's events one by one from the topic's
// [Log] with [Log.Since].
//
// An Entry is immutable and shared. The slices its methods return belong to
// every holder of the entry: never modify them (append them to a buffer of
// your own if you need to change the bytes).
type Entry struct {
	ev    Event
	frame []byte
	n     int // events held; 0 means 1
}

// Event returns the event, with the id its log gave it; for an entry that
// holds a replay, the last event. Its Data is shared with every other
// holder of the entry: do not modify it.
func (e *Entry) Event() Event { return e.ev }

// ID returns the id the log gave the event (for a replay, the last one's):
// what a client's Last-Event-ID is once it has read the entry's frame.
func (e *Entry) ID() string { return e.ev.ID }

// Frame returns the event's wire form as [Event.AppendTo] writes it, id
// included, ending with the blank line that dispatches it; for a replay,
// every event's frame in order. It is shared: do not modify it.
func (e *Entry) Frame() []byte { return e.frame }

// Len returns how many events the entry holds: 1, or more for a replay.
func (e *Entry) Len() int { return max(e.n, 1) }

// joinEntries returns one entry holding the events of entries, which are
// consecutive events of one log, oldest first.
func joinEntries(entries []*Entry) *Entry {
	if len(entries) == 1 {
		return entries[0]
	}
	size := 0
	for _, e := range entries {
		size += len(e.frame)
	}
	frame := make([]byte, 0, size)
	for _, e := range entries {
		frame = append(frame, e.frame...)
	}
	return &Entry{ev: entries[len(entries)-1].ev, frame: frame, n: len(entries)}
}
