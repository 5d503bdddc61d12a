package protocol

import (
	"context"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// Engine is the method table as every transport sees it. Package mcp
// implements it; it is safe for concurrent use and holds no per-session
// data, so one Engine serves any number of sessions and transports.
type Engine interface {
	// Decoder returns a decoder that interns the table's method names.
	Decoder() *wire.Decoder
	// Method describes a method as this engine serves it; false when the
	// table does not know it.
	Method(name string) (Method, bool)
	// NewState returns the handler state of a call that has no session:
	// what the handler's Initialize returns for a synthetic request.
	NewState(ctx context.Context, rev Revision) (any, error)
	// Dispatch serves one call: the gates, params validation, the
	// handler callback under a crash guard, and the encoded result. It
	// never panics and blocks on nothing but the handler.
	Dispatch(ctx context.Context, call *Call, state any) Reply
	// AppendReply appends the JSON-RPC response of a request's reply to
	// dst (nil dst: a buffer sized for it) and releases what the reply
	// holds: its Result must not be used afterwards. The reply is taken by
	// value, so that a caller's reply stays on its stack.
	AppendReply(dst []byte, id wire.ID, r Reply) []byte
	// Client decodes a client's declared capabilities (2026-07-28 _meta,
	// or a stored session's); nil when raw is not a capabilities object.
	// Equal inputs may share one read-only value.
	Client(raw []byte) any
	// ParamHeaders returns the x-mcp-header annotations of a tool's
	// arguments (2026-07-28 Mcp-Param-* headers), for a tools/call from
	// identity with client's capabilities; nil for none, and for a tool
	// hidden from that caller.
	ParamHeaders(ctx context.Context, tool, identity string, client any) []ParamHeader
	// StepUp returns the scopes the caller of call (tools/call,
	// prompts/get or resources/read) lacks to use the item it names,
	// which it may see: the transport answers with the step-up challenge
	// instead of dispatching it. nil to dispatch it.
	StepUp(ctx context.Context, call *Call) []string
	// HiddenLists returns the changes that tell a client its lists
	// changed, for the lists that hide items from some callers: when a
	// session's caller holds other scopes than before, what it may see
	// changed.
	HiddenLists() []Change
	// Listen opens a subscriptions/listen subscription for a checked
	// 2026-07-28 call that arrived with ctx (the trace context of what
	// the subscription sends comes from it and from the call's _meta).
	// wake is called, without blocking, when the subscription has
	// notifications to take. Its error is the call's answer.
	Listen(ctx context.Context, call *Call, wake func()) (Listener, *wire.Error)
	// TraceChange prepares msg, a message the server sends a session
	// outside any call, for the client. When msg is a list change or a
	// resource update and tracing is on, it starts the message's span
	// (a child of ctx's, a root when ctx has none) and returns a copy of
	// msg with the span's trace context in params._meta, and the
	// function that ends the span once the message is on its way; else
	// msg itself and nil, allocating nothing. session is the session's
	// id, "" for none.
	TraceChange(ctx context.Context, rev Revision, session string, msg []byte) ([]byte, func())
	// OnChange registers fn for every change of the handler's lists and
	// every resource update; remove unregisters it. fn must not block.
	OnChange(fn func(Change)) (remove func())
}

// Listener is an open subscriptions/listen subscription.
type Listener interface {
	// Changed tells the subscription of a change (of this replica's
	// handler or announced by another replica); it never blocks.
	Changed(Change)
	// Take appends the pending notifications (JSON-RPC messages), oldest
	// first, to dst; the first Take returns the acknowledgement.
	Take(dst [][]byte) [][]byte
	// Close ends the subscription.
	Close()
}

// ChangeKind says what changed.
type ChangeKind uint8

// The kinds of change.
const (
	ToolsChanged ChangeKind = iota + 1
	ResourcesChanged
	PromptsChanged
	ResourceUpdated // one resource's contents; Change.URI says which
)

// Change is one change of a handler's lists, or of one resource.
type Change struct {
	Kind ChangeKind
	URI  string
}

// Notification returns the JSON-RPC method that tells a session of c
// ("notifications/tools/list_changed", …), "" for an unknown kind.
func (c Change) Notification() string {
	switch c.Kind {
	case ToolsChanged:
		return "notifications/tools/list_changed"
	case PromptsChanged:
		return "notifications/prompts/list_changed"
	case ResourcesChanged:
		return "notifications/resources/list_changed"
	case ResourceUpdated:
		return "notifications/resources/updated"
	}
	return ""
}

// ChangeOf is the Change a Notification names, false for another method.
func ChangeOf(method, uri string) (Change, bool) {
	for k := ToolsChanged; k <= ResourceUpdated; k++ {
		if c := (Change{Kind: k}); c.Notification() == method {
			if k == ResourceUpdated {
				c.URI = uri
			}
			return c, true
		}
	}
	return Change{}, false
}

// ParamHeader is one x-mcp-header annotation of a tool's input schema: the
// argument at Path is mirrored in the Mcp-Param-{Name} header.
type ParamHeader struct {
	Name string   // as declared
	Path []string // properties from the arguments object down
	Type string   // "string", "integer" or "boolean"
}
