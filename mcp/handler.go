package mcp

import "context"

// Handler is the low-level handler contract, which [Server] implements
// for the common case; write your own only for what Server cannot do. Its
// one method answers initialize with the server's identity and
// instructions and returns the session's initial state; it is also how a
// call without a session gets a state (a synthetic initialize, once per
// call, unless the handler is a [StatelessHandler]).
//
// Every other part is an optional interface (ToolHandler,
// ResourceHandler, PromptHandler, …): what a handler does not implement
// is not advertised in initialize and its methods answer MethodNotFound.
//
// Each callback receives the request context, the request, and the
// session's handler state, and returns its result and the new state. The
// state is opaque (any): a session store must hold states of any handler,
// and a type parameter would reach every transport for the price of one
// type assertion per call.
//
// State rules: the returned state is kept even when the callback also
// returns an error; when the callback panics the previous state is kept.
// The callbacks of one session run one at a time, except CallTool,
// GetPrompt and ReadResource, which may run concurrently on a snapshot of
// the state: the state they return is discarded.
//
// Errors: a *jsonrpc.Error is sent as is; ErrUnknownTool, ErrUnknownPrompt
// and ErrInvalidParams become InvalidParams; ErrResourceNotFound becomes
// ResourceNotFound (-32002; InvalidParams in 2026-07-28); an
// *InputRequiredError is the 2026-07-28 multi-round-trip signal, returned
// as it came; any other error of CallTool becomes a tool result with
// isError (its text reaches the model), and of any other callback an
// InternalError with a generic message (the error is logged, never
// sent). A panic is logged with its stack and answered InternalError.
type Handler interface {
	Initialize(ctx context.Context, req *InitializeRequest, state any) (*InitializeResult, any, error)
}

// ToolHandler serves tools/list and tools/call (capability "tools").
type ToolHandler interface {
	ListTools(ctx context.Context, req *ListRequest, state any) (*ListToolsResult, any, error)
	CallTool(ctx context.Context, req *CallToolRequest, state any) (*CallToolResult, any, error)
}

// ResourceHandler serves resources/list and resources/read (capability
// "resources"); resources/templates/list answers an empty list unless the
// handler is also a ResourceTemplateHandler.
type ResourceHandler interface {
	ListResources(ctx context.Context, req *ListRequest, state any) (*ListResourcesResult, any, error)
	ReadResource(ctx context.Context, req *ReadResourceRequest, state any) (*ReadResourceResult, any, error)
}

// ResourceTemplateHandler serves resources/templates/list.
type ResourceTemplateHandler interface {
	ListResourceTemplates(ctx context.Context, req *ListRequest, state any) (*ListResourceTemplatesResult, any, error)
}

// SubscriptionHandler accepts resources/subscribe and unsubscribe
// (resources.subscribe). The session layer records the subscription from
// what the engine reports; the callback may veto it with an error.
type SubscriptionHandler interface {
	Subscribe(ctx context.Context, req *SubscribeRequest, state any) (any, error)
	Unsubscribe(ctx context.Context, req *SubscribeRequest, state any) (any, error)
}

// PromptHandler serves prompts/list and prompts/get (capability "prompts").
type PromptHandler interface {
	ListPrompts(ctx context.Context, req *ListRequest, state any) (*ListPromptsResult, any, error)
	GetPrompt(ctx context.Context, req *GetPromptRequest, state any) (*GetPromptResult, any, error)
}

// CompletionHandler serves completion/complete (capability
// "completions"). The engine truncates Values to 100 and fills Total and
// HasMore when the handler leaves them zero.
type CompletionHandler interface {
	Complete(ctx context.Context, req *CompleteRequest, state any) (*CompleteResult, any, error)
}

// LoggingHandler is told of logging/setLevel (capability "logging"). The
// engine already validates the level and reports it to the session,
// which applies it to Request.Log.
type LoggingHandler interface {
	SetLogLevel(ctx context.Context, req *SetLogLevelRequest, state any) (any, error)
}

// RootsHandler is told of notifications/roots/list_changed.
type RootsHandler interface {
	RootsListChanged(ctx context.Context, req *Request, state any) (any, error)
}

// StatelessHandler marks a handler whose callbacks ignore the state (the
// Server does): the session layer may then run every call concurrently
// instead of one stateful callback at a time.
type StatelessHandler interface {
	Stateless() bool
}

// CapabilityReporter lets a handler narrow what it advertises below what
// it implements (the Server advertises tools only once a tool exists).
// The result must not be modified by anyone and may be shared.
type CapabilityReporter interface {
	Capabilities() *ServerCapabilities
}

// ChangeNotifier is a handler whose lists change at run time; OnChange
// registers fn for every change (and returns a function that removes it).
// Implementing it advertises listChanged. fn must not block.
type ChangeNotifier interface {
	OnChange(fn func(Change)) (remove func())
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

// Change is one change event: sessions hear it as
// notifications/tools/list_changed (and friends) or, for ResourceUpdated,
// notifications/resources/updated when they subscribed to URI, and
// subscriptions/listen streams as they asked.
type Change struct {
	Kind ChangeKind
	URI  string
}

// StateCodec is implemented by a Handler whose per-session state can be
// saved, so that its sessions can move to another replica of a cluster
// when theirs dies ([Options.Cluster]). EncodeState runs after every
// stateful callback of a session (keep the state small); DecodeState runs
// on the replica that takes the session over. A *Server keeps no state
// and needs neither.
type StateCodec interface {
	EncodeState(state any) ([]byte, error)
	DecodeState(data []byte) (any, error)
}
