// Package jsonrpc holds the JSON-RPC 2.0 types an MCP server author meets:
// request ids ([ID]), error objects ([Error]) and their codes. A handler
// returns a *Error to answer a request with that exact JSON-RPC error;
// every other error is mapped by package mcp (see its Handler).
//
// The codec itself (decoding bodies once, encoding responses into pooled
// buffers) is internal to saguaro; these names are aliases of its types.
package jsonrpc

import "github.com/saguaro-go/saguaro/mcp/internal/wire"

// ID is a JSON-RPC request id: absent, an integer (int64) or a string. It
// keeps its JSON type, so an id echoed back has the type the client sent.
// The zero ID is "absent": it marks a notification. IDs are comparable with
// ==, so they work as map keys (a string "1" and an integer 1 differ).
// Its String method formats it for logs (strings quoted); IsZero,
// IntValue and StringValue read it.
type ID = wire.ID

// Error is a JSON-RPC error object; it implements error, so a handler can
// return it to answer with exactly this error. Data must be
// JSON-encodable; it is dropped from the response when it is not (or holds
// invalid UTF-8). errors.Is matches two *Error values with the same Code.
//
// Pitfall: Message and Data reach the client verbatim, so never put
// internal details (stack traces, SQL, paths) in them.
type Error = wire.Error

// Error codes used by JSON-RPC 2.0 and MCP. The -32000..-32099 range is
// reserved by MCP 2026-07-28: never invent codes there.
const (
	// ParseError (-32700): the body is not JSON text (or not UTF-8).
	ParseError = wire.ParseError
	// InvalidRequest (-32600): JSON, but not a valid JSON-RPC message.
	InvalidRequest = wire.InvalidRequest
	// MethodNotFound (-32601): unknown method, or one whose capability was
	// not advertised or that the negotiated revision does not have.
	MethodNotFound = wire.MethodNotFound
	// InvalidParams (-32602): params of the wrong shape or type, unknown
	// tool or prompt, bad cursor; in 2026-07-28 also resource not found.
	InvalidParams = wire.InvalidParams
	// InternalError (-32603): a server failure. Never carries internals.
	InternalError = wire.InternalError
	// ResourceNotFound (-32002): resources/read of a missing URI, revisions
	// before 2026-07-28 only (2026-07-28 uses InvalidParams).
	ResourceNotFound = wire.ResourceNotFound
	// URLElicitationRequired (-32042): 2025-11-25 only; data.elicitations
	// lists the URL-mode elicitations the client must complete.
	URLElicitationRequired = wire.URLElicitationRequired
	// HeaderMismatch (-32020): 2026-07-28, an HTTP header disagrees with
	// the body or a required header is missing.
	HeaderMismatch = wire.HeaderMismatch
	// MissingClientCapability (-32021): 2026-07-28, the request needs a
	// client capability it did not declare (data.requiredCapabilities).
	MissingClientCapability = wire.MissingClientCapability
	// UnsupportedProtocolVersion (-32022): 2026-07-28, data lists
	// {supported, requested}.
	UnsupportedProtocolVersion = wire.UnsupportedProtocolVersion
)

// NewError returns an *Error with the given code and message.
func NewError(code int, message string) *Error { return wire.NewError(code, message) }

// Errorf returns an *Error whose message is formatted with fmt.Sprintf.
func Errorf(code int, format string, args ...any) *Error {
	return wire.Errorf(code, format, args...)
}

// Int returns an integer id.
func Int(n int64) ID { return wire.Int(n) }

// StringID returns a string id. Pitfall: to format any id for logs use its
// String method, which quotes string ids.
func StringID(s string) ID { return wire.StringID(s) }
