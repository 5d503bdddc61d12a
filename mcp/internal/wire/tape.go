package wire

import (
	"slices"
	"sort"
)

// A Tape is what validation learnt of a body's long tokens: where each
// long string and each large object or array that starts at some offset
// ends. Walks over the body's slices (Tape.EachMember, Tape.EachElement)
// jump over them instead of reading them again, so that a big argument is
// read once to validate it and once to decode it, however many walks pass
// over it. A nil *Tape knows nothing and walks read everything.
//
// A Tape belongs to one body (Message.Tape) and is only consulted for
// slices of that body: a copy, or another body in the same pooled buffer
// later, is recognised as not the body's and read in full.
type Tape struct {
	body  []byte
	spans []span // sorted by start
}

// span is a long token: where it starts and ends, and, for a string of
// a request's params, its decoded value.
type span struct {
	start, end int
	str        string
	decoded    bool
}

// tapeMin is the length from which a token is put on the tape: below it
// reading the token costs less than looking it up.
const tapeMin = 1024

// newTape validates data, recording its long tokens; nil when data is too
// short to hold any.
func newTape(data []byte) (*Tape, bool) {
	if len(data) < tapeMin {
		return nil, valid(data)
	}
	t := &Tape{body: data}
	if !validate(data, t) {
		return nil, false
	}
	if len(t.spans) == 0 {
		return nil, true
	}
	// Strings are recorded where they start, containers where they end.
	slices.SortFunc(t.spans, func(a, b span) int { return a.start - b.start })
	return t, true
}

// skip returns the end of the long token at data[i] when the tape has it.
func (t *Tape) skip(data []byte, i int) (int, bool) {
	sp := t.find(data, i)
	if sp == nil {
		return 0, false
	}
	return sp.end - (cap(t.body) - cap(data)), true
}

// Unquote is the package's Unquote of a string token of the tape's body,
// decoded already when validation decoded it.
func (t *Tape) Unquote(raw []byte) (string, bool) {
	if sp := t.find(raw, 0); sp != nil && sp.decoded {
		return sp.str, true
	}
	return unquote(raw)
}

// find returns the span of the long token at data[i], or nil.
func (t *Tape) find(data []byte, i int) *span {
	if t == nil || i >= len(data) {
		return nil
	}
	// data is a slice of the body iff it shares the body's array: its
	// offset in the body is what its capacity lacks.
	base := cap(t.body) - cap(data)
	if base < 0 || base+i >= len(t.body) || &t.body[base+i] != &data[i] {
		return nil
	}
	at := base + i
	k := sort.Search(len(t.spans), func(k int) bool { return t.spans[k].start >= at })
	if k == len(t.spans) || t.spans[k].start != at || t.spans[k].end-base > len(data) {
		return nil
	}
	return &t.spans[k]
}

// End returns the length of the long token that starts data (a slice of
// the tape's body), when the tape has it.
func (t *Tape) End(data []byte) (int, bool) { return t.skip(data, 0) }
