package protocol

import (
	"strconv"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// BatchAnswer writes the answers of a 2025-03-26 batch as one JSON array
// whose size stays within a budget, the same on every transport. The
// answer that would take the array past it is replaced by an error, and
// the batch is then Over: its remaining requests are answered with
// Refuse, without being run. Every request of the batch thus gets an
// answer, and the bytes a batch sends are bounded by the budget whatever
// its requests return. A transport that can send the array in parts
// takes each part as it is ready (Take), so that a batch holds one
// answer in memory at a time; one that cannot takes the whole at the
// end (End).
type BatchAnswer struct {
	budget int    // 0: no bound
	out    []byte // written, not yet taken
	size   int    // the array's bytes so far
	n      int
	over   bool
}

// NewBatchAnswer returns an empty answer bounded to budget bytes (0 for
// no bound).
func NewBatchAnswer(budget int) *BatchAnswer {
	return &BatchAnswer{budget: budget}
}

// Add appends one response. When it would take the array past the
// budget, an error for id takes its place and the batch is Over.
func (b *BatchAnswer) Add(id wire.ID, response []byte) {
	if b.budget > 0 && b.size+len(response)+2 > b.budget {
		b.over = true
		b.Error(id, b.errDropped())
		return
	}
	b.append(response)
}

// Error appends an error response for id.
func (b *BatchAnswer) Error(id wire.ID, e *wire.Error) {
	b.append(wire.AppendErrorResponse(nil, id, e))
}

// Refuse answers a request that is not run because the batch is Over.
func (b *BatchAnswer) Refuse(id wire.ID) { b.Error(id, b.errNotRun()) }

// Over reports whether the answers reached the budget: the requests that
// remain must be refused, not run.
func (b *BatchAnswer) Over() bool { return b.over }

// Answered reports whether any response was added: a batch without one
// is answered 202 over HTTP, and nothing over stdio.
func (b *BatchAnswer) Answered() bool { return b.n > 0 }

// Take returns what was written since the last Take, to send now; it is
// valid until the next call on b.
func (b *BatchAnswer) Take() []byte {
	p := b.out
	b.out = b.out[:0]
	return p
}

// End closes the array and returns what was not taken; nil when no
// response was added.
func (b *BatchAnswer) End() []byte {
	if b.n == 0 {
		return nil
	}
	return append(b.out, ']')
}

func (b *BatchAnswer) append(response []byte) {
	sep := byte(',')
	if b.n == 0 {
		sep = '['
	}
	b.out = append(append(b.out, sep), response...)
	b.size += len(response) + 1
	b.n++
}

func (b *BatchAnswer) errDropped() *wire.Error {
	return wire.NewError(wire.InternalError, "Internal error: this answer would take the batch's answers past "+
		strconv.Itoa(b.budget)+" bytes, the server's bound; it was dropped (send the request on its own)")
}

func (b *BatchAnswer) errNotRun() *wire.Error {
	return wire.NewError(wire.InternalError, "Internal error: the batch's answers reached "+
		strconv.Itoa(b.budget)+" bytes, the server's bound; this request was not run (send fewer at once)")
}
