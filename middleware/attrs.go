package middleware

import (
	"context"
	"log/slog"
	"sync"

	"github.com/go-chi/httplog/v3"
)

// Log attribute keys for the Model Context Protocol. The mcp package does not
// import this package: it calls a func(context.Context, ...slog.Attr) hook
// that the application sets to [SetAttrs], and it spells these keys as
// string literals. Keep the two in step; the values below are the contract.
//
// [RequestLogger] fills MCPSessionKey, MCPRevisionKey, MCPMethodKey and
// MCPNameKey from the request headers on its own (Mcp-Session-Id,
// MCP-Protocol-Version, Mcp-Method, Mcp-Name, and the response's
// Mcp-Session-Id for an initialize call). A value given to [SetAttrs] under
// the same key wins over the header-derived one.
const (
	// MCPMethodKey is the JSON-RPC method, e.g. "tools/call".
	MCPMethodKey = "mcp.method"
	// MCPIDKey is the JSON-RPC request id with its JSON type: slog.String
	// for a string id, slog.Int64 for a number. Absent for notifications.
	MCPIDKey = "mcp.id"
	// MCPToolKey is the tool name of a tools/call.
	MCPToolKey = "mcp.tool"
	// MCPPromptKey is the prompt name of a prompts/get.
	MCPPromptKey = "mcp.prompt"
	// MCPResourceKey is the resource URI of resources/read, subscribe or
	// unsubscribe. A URI may carry a query string: the caller decides
	// whether it is safe to log.
	MCPResourceKey = "mcp.resource"
	// MCPNameKey is the Mcp-Name header (2026-07-28 revision): a tool or
	// prompt name or a resource URI, possibly =?base64?…?= encoded. The
	// logger redacts the values of a query in it, as for the request URL.
	MCPNameKey = "mcp.name"
	// MCPSessionKey is the Mcp-Session-Id (legacy revisions). A session id is
	// not a credential (sessions are bound to the token's subject), which is
	// why it is logged.
	MCPSessionKey = "mcp.session"
	// MCPRevisionKey is the protocol revision, e.g. "2025-11-25": the
	// MCP-Protocol-Version header, or the negotiated revision when the mcp
	// package sets it.
	MCPRevisionKey = "mcp.revision"
	// MCPErrorCodeKey is the JSON-RPC error code of a failed call, e.g.
	// -32602. Tool failures reported as isError results are not errors here.
	MCPErrorCodeKey = "mcp.error_code"
	// MCPRelayedToKey is the replica a request was relayed to, on the
	// line of the replica that relayed it (the owner's line has the
	// call's details).
	MCPRelayedToKey = "mcp.relayed_to"
)

// Other log attribute keys that [RequestLogger] adds to its lines.
const (
	// RequestIDLogKey carries chi's request id ([github.com/go-chi/chi/v5/middleware.GetReqID])
	// when chi's RequestID middleware runs before the logger. It is a log key,
	// not a context key.
	RequestIDLogKey = "http.request.id"
	// ClientIPLogKey carries the client IP resolved by one of chi's
	// ClientIPFrom* middlewares. The schema's own client IP field is
	// r.RemoteAddr, which is the proxy's address behind a proxy.
	ClientIPLogKey = "client.ip.resolved"
	// StreamLogKey marks the lines of an event stream (a response whose
	// Content-Type is text/event-stream): "start" on the line written when
	// the stream is accepted, "end" on the line written when it ends.
	StreamLogKey = "http.stream"
)

// SetAttrs adds attributes to the log line that [RequestLogger] writes for
// the request that ctx belongs to, after httplog's fields, where httplog
// puts the attributes of its own SetAttrs. It takes the place of
// httplog.SetAttrs, which does nothing under RequestLogger, and unlike it
// is safe to call from any goroutine while the request is being served
// (httplog's appends to a shared slice without a lock: a data race as soon
// as a tool runs on its own goroutine).
//
// A later value for a key replaces an earlier one, so the line never carries
// a key twice, and a value set here replaces the one RequestLogger derives
// from the request under the same key. Attributes set after the handler has
// returned are dropped: the line is written then. Without [RequestLogger]
// in the chain SetAttrs does nothing, so a library may call it
// unconditionally.
//
// SetAttrs has the shape of the mcp package's log hook, an option of type
// func(context.Context, ...slog.Attr): the application sets that option to
// middleware.SetAttrs, and mcp never imports this package.
//
// Never pass secrets (tokens, raw arguments) as attributes: nothing filters
// them here.
func SetAttrs(ctx context.Context, attrs ...slog.Attr) {
	if st := stateFrom(ctx); st != nil {
		st.bag.set(attrs...)
	}
}

// SetError adds err to the log line of the request that ctx belongs to and
// returns err, so that a handler can end with return SetError(ctx, err). It
// takes the place of httplog.SetError, which does nothing under
// [RequestLogger], and writes the same attribute: err under the key
// [httplog.ErrorKey], which the schema's ReplaceAttr, given to the slog
// handler, renames to the schema's error field (error.message in ECS).
// Without that ReplaceAttr the key stays "error".
//
// A nil err adds nothing. Like [SetAttrs] it is safe from any goroutine,
// and a later error replaces an earlier one.
func SetError(ctx context.Context, err error) error {
	if err != nil {
		SetAttrs(ctx, slog.Any(httplog.ErrorKey, err))
	}
	return err
}

// attrBag is the mutex-guarded attribute set behind SetAttrs. Keys are
// unique; insertion order is kept so lines read in the order things happened.
type attrBag struct {
	mu     sync.Mutex
	attrs  []slog.Attr
	closed bool
}

func (b *attrBag) set(attrs ...slog.Attr) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	for _, a := range attrs {
		if a.Key == "" {
			continue
		}
		b.attrs = upsert(b.attrs, a)
	}
}

// snapshot returns a copy of the attributes set so far.
func (b *attrBag) snapshot() []slog.Attr {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]slog.Attr(nil), b.attrs...)
}

// close returns the final attributes and drops any set afterwards.
func (b *attrBag) close() []slog.Attr {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return b.attrs
}

// upsert replaces the attribute with a's key, or appends a.
func upsert(attrs []slog.Attr, a slog.Attr) []slog.Attr {
	for i := range attrs {
		if attrs[i].Key == a.Key {
			attrs[i] = a
			return attrs
		}
	}
	return append(attrs, a)
}

// merge returns base with over laid on top: over wins on equal keys.
func merge(base, over []slog.Attr) []slog.Attr {
	out := append([]slog.Attr(nil), base...)
	for _, a := range over {
		out = upsert(out, a)
	}
	return out
}
