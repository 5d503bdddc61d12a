package protocol

// Mode tells a transport how to schedule a method.
type Mode uint8

const (
	// ModeFast methods take no turn: they run at once and never queue
	// behind stateful work (ping, notifications/cancelled, and every
	// method of a handler that keeps no state).
	ModeFast Mode = iota + 1
	// ModeStateful methods run a callback that threads the session's
	// state: one at a time per session, in arrival order, and the
	// returned state is kept.
	ModeStateful
	// ModeStreaming methods may emit progress, log messages and
	// server→client requests while they run (tools/call, prompts/get,
	// resources/read): a transport runs them where what they emit can
	// reach the client, on a snapshot of the state whose returned value
	// is discarded.
	ModeStreaming
	// ModeListen is subscriptions/listen (2026-07-28): a transport serves
	// it as a long-lived stream through [Engine.Listen], never Dispatch.
	ModeListen
)

// Method describes one method of the engine's table as it serves it.
type Method struct {
	// Name is the JSON-RPC method.
	Name string
	// Notification is true for client→server notifications, which never
	// get a response.
	Notification bool
	// Mode is how a transport schedules it.
	Mode Mode
	// Revisions are the revisions that have the method.
	Revisions Revisions
	// Offered is false when the handler does not serve the method's
	// capability: the method answers MethodNotFound.
	Offered bool
}

// In reports whether the method exists in revision r.
func (m Method) In(r Revision) bool { return m.Revisions.Has(r) }
