package mcp

import (
	"encoding/json"
	"sync/atomic"

	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
	"github.com/saguaro-go/saguaro/mcp/jsonrpc"
)

// Request is what every handler callback receives, embedded in the
// method's own request type (CallToolRequest, ListRequest, …). Besides the
// call's identity it offers the back channel: Progress, Log, CreateMessage,
// Elicit and ListRoots.
//
// Pitfalls: Params and Meta.Raw alias the request body; they are valid
// until the callback returns, so copy them to keep them longer. A Request
// may be used from goroutines the callback starts, but not after it
// returns.
type Request struct {
	// Method is the JSON-RPC method, e.g. "tools/call".
	Method string
	// ID is the JSON-RPC id (zero for notifications).
	ID jsonrpc.ID
	// Revision is the revision the call is served under.
	Revision Revision
	logLevel LogLevel // beside Revision, in the same word
	// Client is what the client declared; nil when unknown (a stateless
	// call without session). It is shared with other calls (of the same
	// session, or of 2026-07-28 clients that declared the same object):
	// read it, never modify it.
	Client *ClientCapabilities
	// Meta is the request's _meta.
	Meta RequestMeta
	// Params is the raw params object (nil when absent).
	Params json.RawMessage
	// Identity is who is calling, as Options.Identity (or
	// ConnOptions.Identity) says; "" for anonymous.
	Identity string
	// Session is the id of the session the call belongs to; "" without
	// one (stateless calls, 2026-07-28 requests, stdio).
	Session string

	// The rest is small on purpose: every call allocates its request,
	// and a CallToolRequest fits the 256-byte size class.
	out      protocol.Outbound
	eng      *engine                 // nil for a Request made by hand
	progress atomic.Pointer[float64] // the last progress sent
}

// telemetry is what records the call's spans; nil for none.
func (r *Request) tracer() *telemetry {
	if r.eng == nil {
		return nil
	}
	return r.eng.tel
}

// Target returns what the request is about: the tool of tools/call, the
// prompt of prompts/get, the resource URI of resources/read,
// resources/subscribe and resources/unsubscribe; "" for other methods.
// It reads Params, for middleware, which sees every method alike.
func (r *Request) Target() string {
	member := ""
	switch r.Method {
	case "tools/call", "prompts/get":
		member = "name"
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		member = "uri"
	default:
		return ""
	}
	target := ""
	_ = wire.EachMember(r.Params, func(k, v []byte) error {
		if wire.KeyIs(k, member) {
			target, _ = wire.Unquote(v)
		}
		return nil
	})
	return target
}

// RequestMeta is a request's parsed _meta.
type RequestMeta struct {
	// ProgressToken is _meta.progressToken; zero when the caller did not
	// ask for progress.
	ProgressToken ProgressToken
	// Raw is the whole _meta object, nil when absent.
	Raw json.RawMessage
}

// ProgressToken is a caller's progress token: a JSON string or number,
// kept as written so it is echoed with its JSON type. The zero value means
// "no token". Tokens are comparable.
type ProgressToken struct{ raw string }

// IsZero reports whether there is no token.
func (t ProgressToken) IsZero() bool { return t.raw == "" }

// JSON returns the token's JSON encoding ("null" for the zero token).
func (t ProgressToken) JSON() json.RawMessage {
	if t.raw == "" {
		return json.RawMessage("null")
	}
	return json.RawMessage(t.raw)
}

// IsString reports whether the token is a JSON string.
func (t ProgressToken) IsString() bool { return t.raw != "" && t.raw[0] == '"' }

// String returns the token as text: a string token's value, a numeric
// token as written.
func (t ProgressToken) String() string {
	if t.IsString() {
		s, _ := wire.Unquote([]byte(t.raw))
		return s
	}
	return t.raw
}

// MarshalJSON encodes the token with its original JSON type.
func (t ProgressToken) MarshalJSON() ([]byte, error) { return t.JSON(), nil }

// ListRequest is the request of tools/list, resources/list,
// resources/templates/list and prompts/list.
type ListRequest struct {
	Request
	// Cursor is the opaque cursor from the previous page; "" for the first.
	Cursor string
}

// CallToolRequest is the request of tools/call.
type CallToolRequest struct {
	Request
	// Name is the tool's name.
	Name string
	// Arguments is the raw arguments object; nil when absent or null.
	Arguments json.RawMessage

	// tape is the message's: validation reads a long argument off it.
	tape *wire.Tape
	// args is Arguments as the input schema's validation decoded it,
	// for the typed decoding of AddTool's handlers; nil when not
	// validated.
	args any
}

// ReadResourceRequest is the request of resources/read.
type ReadResourceRequest struct {
	Request
	// URI is the resource requested.
	URI string
	// Vars holds the variables of the resource template that matched URI
	// (Server only; nil for static resources).
	Vars map[string]string
}

// SubscribeRequest is the request of resources/subscribe and
// resources/unsubscribe.
type SubscribeRequest struct {
	Request
	URI string
}

// GetPromptRequest is the request of prompts/get.
type GetPromptRequest struct {
	Request
	Name string
	// Arguments are the prompt's arguments (never nil).
	Arguments map[string]string
}

// SetLogLevelRequest is the request of logging/setLevel.
type SetLogLevelRequest struct {
	Request
	Level LogLevel
}

// InitializeRequest is the request of initialize.
type InitializeRequest struct {
	Request
	Params InitializeParams
}
