package controller

import "net/http"

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
	mb *Mailbox
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
