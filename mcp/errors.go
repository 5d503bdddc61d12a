package mcp

import (
	"errors"

	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
)

// Sentinels. Registration errors wrap them with %w and the offending name,
// so test with errors.Is.
var (
	// ErrNoBackchannel: the transport serving this call cannot reach the
	// client (a call without a session, answered as JSON). Server→client
	// requests fail with it; notifications are dropped silently instead.
	ErrNoBackchannel = protocol.ErrNoBackchannel
	// ErrSessionEnded: a server→client request or a notification whose
	// session ended (reaped, deleted) before it completed, or, over
	// stdio, a server→client request once the client closed its input.
	ErrSessionEnded = protocol.ErrSessionEnded
	// ErrClientCapability: the client did not declare the capability a
	// server→client request needs (sampling, elicitation, roots, or a mode
	// of them); nothing was sent.
	ErrClientCapability = errors.New("mcp: the client did not declare this capability")
	// ErrProgressNotIncreasing: Request.Progress was called with a value
	// not greater than the last one sent; nothing was sent.
	ErrProgressNotIncreasing = errors.New("mcp: progress must increase")

	// ErrUnknownTool: tools/call named no registered tool (-32602).
	ErrUnknownTool = errors.New("mcp: unknown tool")
	// ErrUnknownPrompt: prompts/get named no registered prompt (-32602).
	ErrUnknownPrompt = errors.New("mcp: unknown prompt")
	// ErrResourceNotFound: resources/read of a URI nobody serves (-32002
	// in legacy revisions, -32602 in 2026-07-28, with data {uri} in
	// both). A ResourceFunc may return it.
	ErrResourceNotFound = errors.New("mcp: resource not found")
	// ErrInvalidParams: a handler rejects the request's params (-32602).
	// The wrapping error's text reaches the client.
	ErrInvalidParams = errors.New("mcp: invalid params")

	// ErrToolName: a tool name is not 1–128 of [A-Za-z0-9_.-].
	ErrToolName = errors.New("mcp: invalid tool name")
	// ErrName: an empty or invalid name, URI or argument at registration.
	ErrName = errors.New("mcp: invalid name")
	// ErrDuplicate: a tool, prompt, resource or template is already
	// registered under that name or URI.
	ErrDuplicate = errors.New("mcp: already registered")
	// ErrInvalidSchema: an input or output schema is not a valid JSON
	// Schema, or its root is not an object schema where MCP demands one,
	// or a Go type has no JSON Schema (channels, funcs, complex numbers).
	ErrInvalidSchema = errors.New("mcp: invalid schema")
	// ErrTemplate: a resource template is not a valid RFC 6570 template.
	ErrTemplate = errors.New("mcp: invalid URI template")
	// ErrNilHandler: a registration was given a nil function.
	ErrNilHandler = errors.New("mcp: nil handler")

	errNotFinite   = errors.New("mcp: number is NaN or infinite")
	errInvalidJSON = errors.New("mcp: raw JSON is not valid")
)

var errNoCodec = errors.New("mcp: the handler is no StateCodec")
