// Package mcp is saguaro's Model Context Protocol server: the protocol
// engine that every transport shares, the handler contract, and a
// registry (Server) that implements it for the common case.
//
// # Layers
//
//   - mcp/jsonrpc decodes a body once (params stay raw) and encodes replies.
//   - Engine.Dispatch is the one method table: revision and capability
//     gates, params validation, the handler callback under a crash guard,
//     and result encoding. It is a pure function of (Call, state): tests
//     call it without HTTP, and sessions (issue 4) apply the Effect it
//     reports.
//   - Handler and its optional interfaces (ToolHandler, ResourceHandler,
//     …) are the low-level contract: callbacks get the session's state and
//     return the new one. What a handler does not implement is not
//     advertised and answers MethodNotFound.
//   - Server is the high-level registry: typed tools with JSON Schemas
//     inferred once at registration and arguments validated per call,
//     resources, URI templates, prompts, completions, cursors.
//   - Request gives handlers the back channel (Progress, Log,
//     CreateMessage, Elicit, ListRoots) through the Outbound the transport
//     supplies for each call.
//
// # Decisions where the spec leaves room
//
//   - Revisions: 2025-03-26, 2025-06-18 and 2025-11-25. initialize echoes
//     a supported version and otherwise offers 2025-11-25. A call without
//     a revision is served as 2025-03-26. 2026-07-28 answers
//     UnsupportedProtocolVersion until issue 5.
//   - A request to a method that exists only as a notification, and a
//     notification named after a request method, are MethodNotFound and
//     dropped respectively.
//   - Params must be an object (or absent); member names match
//     case-sensitively; unknown members are ignored.
//   - A tool's own error, and invalid arguments from 2025-11-25 on, are a
//     result with isError; in 2025-03-26 and 2025-06-18 invalid arguments
//     are InvalidParams. An unknown tool or prompt is InvalidParams.
//   - A panic is InternalError "Internal error" with no detail; the
//     previous state is kept and the panic is logged with its stack.
//     Other hidden handler errors are logged the same way.
//   - A result holding invalid UTF-8 is InternalError: it is never
//     silently altered.
//   - Until the client sets a log level, Request.Log sends every level.
//   - List pages are ordered by name (URI for resources) and cursors name
//     the last item of the previous page, sealed with an HMAC: a page
//     survives insertions and removals, and a tampered cursor is
//     InvalidParams.
package mcp
