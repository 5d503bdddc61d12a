// Package replay is the bounded buffer behind every event stream a client
// may resume: entries numbered by their sequence, kept within a count and
// a byte budget, the oldest going first. The sse package's Log and the MCP
// endpoint's stream logs are both one; each decides when to drop (a Log
// always drops the oldest, a call's stream keeps what its client has not
// read yet) and holds its own lock.
package replay

// Ring holds entries of type T in the order of their sequence numbers,
// which must grow with each Push. The zero Ring holds nothing and has no
// bounds; NewRing sets them. Its storage grows with use, up to the count
// bound, so that many mostly empty rings cost little.
//
// A Ring is not safe for concurrent use: its owner locks.
type Ring[T any] struct {
	buf      []item[T]
	head     int // index of the oldest entry
	n        int // entries held
	bytes    int
	max      int
	maxBytes int
}

type item[T any] struct {
	seq  int64
	v    T
	size int
}

// NewRing returns an empty ring bounded to max entries and maxBytes bytes
// (the sizes Push is given); a bound of 0 or less is none.
func NewRing[T any](max, maxBytes int) Ring[T] {
	return Ring[T]{max: max, maxBytes: maxBytes}
}

// Push adds v, numbered seq, of size bytes, as the newest entry. It drops
// nothing: Over says when the ring is beyond its bounds, and the owner
// drops what its policy lets go (DropOldest). Storage grows past the
// count bound only while the owner keeps more.
func (r *Ring[T]) Push(seq int64, v T, size int) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)%len(r.buf)] = item[T]{seq: seq, v: v, size: size}
	r.n++
	r.bytes += size
}

// grow doubles the storage (up to the count bound), keeping the order.
func (r *Ring[T]) grow() {
	size := max(4, 2*len(r.buf))
	if r.max > 0 && r.n < r.max {
		size = min(size, r.max)
	}
	buf := make([]item[T], size)
	for i := range r.n {
		buf[i] = r.buf[(r.head+i)%len(r.buf)]
	}
	r.buf, r.head = buf, 0
}

// Over reports whether the ring holds more than its bounds allow, while
// holding more than one entry (the newest is kept, whatever its size).
func (r *Ring[T]) Over() bool {
	return r.n > 1 && (r.max > 0 && r.n > r.max || r.maxBytes > 0 && r.bytes > r.maxBytes)
}

// Full reports whether one more entry would take the ring to or past a
// bound.
func (r *Ring[T]) Full() bool {
	return r.max > 0 && r.n >= r.max || r.maxBytes > 0 && r.bytes >= r.maxBytes
}

// DropOldest forgets the oldest entry; it does nothing on an empty ring.
func (r *Ring[T]) DropOldest() {
	if r.n == 0 {
		return
	}
	r.bytes -= r.buf[r.head].size
	r.buf[r.head] = item[T]{}
	r.head = (r.head + 1) % len(r.buf)
	r.n--
}

// Oldest returns the sequence of the oldest entry; false when empty.
func (r *Ring[T]) Oldest() (int64, bool) {
	if r.n == 0 {
		return 0, false
	}
	return r.buf[r.head].seq, true
}

// Len returns how many entries the ring holds.
func (r *Ring[T]) Len() int { return r.n }

// Bytes returns the total size of the entries the ring holds.
func (r *Ring[T]) Bytes() int { return r.bytes }

// After calls fn with each entry whose sequence is above seq, oldest
// first, until fn returns false.
func (r *Ring[T]) After(seq int64, fn func(seq int64, v T) bool) {
	for i := range r.n {
		it := &r.buf[(r.head+i)%len(r.buf)]
		if it.seq > seq && !fn(it.seq, it.v) {
			return
		}
	}
}
