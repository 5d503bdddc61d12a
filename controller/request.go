package controller

import (
	"net/http"
	"time"
)

// Request is the request a controller answers. It embeds the
// *http.Request, so r.Context(), r.Header and chi.URLParam(r.Request, …)
// work as usual, and adds the route state and the connection's mailbox.
//
// A Request is valid only while its controller's reply is being served; do
// not keep it. Keep its [Mailbox] instead: sending to it after the reply
// ended fails cleanly.
type Request struct {
	*http.Request
	h  *handler
	w  http.ResponseWriter
	mb *Mailbox

	// The connection's state while the reply is served, in the same
	// allocation: a stream keeps its Request for its whole life. err is
	// the first write error: after it every write fails the same way.
	err error
	out outState
}

// outState is a connection's write state, packed into one word: when the
// write deadline was last set, in Unix nanoseconds rounded down to a
// multiple of 4 (0: never), and in the two bits below, outWrote and
// outPending.
type outState int64

const (
	outWrote   outState = 1 << iota // the status is on the wire: a panic can no longer become a 500
	outPending                      // pushed bytes wait for a flush
	outFlags   = outWrote | outPending
)

func (o outState) wrote() bool   { return o&outWrote != 0 }
func (o outState) pending() bool { return o&outPending != 0 }

// armed returns when the write deadline was last set, in Unix
// nanoseconds; 0 if never.
func (o outState) armed() int64 { return int64(o &^ outFlags) }

// setArmed records that the write deadline was set at now (Unix
// nanoseconds).
func (o *outState) setArmed(now int64) { *o = outState(now)&^outFlags | *o&outFlags }

// SetReadDeadline sets the deadline for reading the rest of the request,
// its body included, as [http.ResponseController] does; the zero time
// lifts it. A controller that bounds how long a client may take to send
// its body sets one before reading and lifts it once the body is read:
// net/http cancels the request's context when a read deadline passes
// while the connection waits for its next request, which would end a
// long reply. It returns an error wrapping [http.ErrNotSupported] when
// the connection cannot take deadlines.
func (r *Request) SetReadDeadline(deadline time.Time) error {
	return http.NewResponseController(r.w).SetReadDeadline(deadline)
}

// State returns the route state ([Options.State]).
func (r *Request) State() any { return r.h.opts.State }

// StateOf returns the route state as a T, or T's zero value when the state
// is not a T.
func StateOf[T any](r *Request) T {
	v, _ := r.h.opts.State.(T)
	return v
}

// Mailbox returns the connection's mailbox, creating it on first use. A
// controller that will reply with a [Loop] hands it to whatever feeds the
// loop, before returning the reply; messages sent before the loop starts
// wait in the mailbox. For any other reply the mailbox is closed when the
// reply has been sent.
func (r *Request) Mailbox() *Mailbox {
	if r.mb == nil {
		r.mb = newMailbox(r.h.opts.MailboxSize, r.h.opts.Overflow)
	}
	return r.mb
}

func (r *Request) release() {
	if r.mb != nil {
		r.mb.close()
	}
}
