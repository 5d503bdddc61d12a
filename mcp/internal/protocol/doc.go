// Package protocol is the line between saguaro's MCP engine and its
// transports. The engine (package mcp) owns method semantics: the method
// table, the revision and capability gates, the handler callbacks, result
// encoding. A transport (Streamable HTTP, stdio, the in-memory test client)
// owns framing, sessions and streams. A transport reaches the engine only
// through [Engine], with the values of this package: a [Call] in, a
// [Reply] out, an [Outbound] for the call's back channel. Neither side
// reads the other's fields.
//
// The engine is stateless: it holds no session. A call's session-level
// consequence (a session starts, a log level is set, a subscription is
// made, a call is cancelled) comes back as the Reply's [Effect], which the
// transport's session applies.
//
// The package also holds the protocol rules both sides read the same way:
// revisions, log levels, and the member-by-member reading of params
// (names match case-sensitively, types are checked before any handler
// runs).
//
// # How a call travels
//
// A tools/call of a session over Streamable HTTP, hop by hop (the names
// are the files that hold each step; three packages, each entered
// through a named interface):
//
//  1. controller.go (package controller): the endpoint is a controller;
//     the request goes to its Handle (the controller.Controller
//     interface).
//  2. transport.go, post.go (mcp/internal/streamable, the Streamable HTTP
//     transport): the method and the Origin and Host rule, the headers,
//     the body read once into a pooled buffer and decoded once (params
//     stay raw), the session looked up (session.go).
//  3. session_post.go, call.go: tools/call may emit, so it gets a context
//     (cancelled by notifications/cancelled, the session's end, the
//     request timeout), a logical stream, and a worker goroutine; the
//     connection waits for the call's first output.
//  4. engine.go (package mcp): the worker calls the engine through the
//     transports' one interface ([Engine].Dispatch): the method table,
//     the revision and capability gates, the crash guard; callTool builds
//     the CallToolRequest and calls the handler (the ToolHandler
//     interface).
//  5. tool.go: the Server finds the tool, validates the arguments against
//     the schema compiled at registration, decodes them into the input
//     type, runs the function and encodes its result.
//  6. call.go, stream.go: the reply is encoded on the worker; when nothing
//     was emitted first it is answered as JSON on the waiting connection,
//     else it is the last event of the call's stream.
//
// Every transport (Streamable HTTP, the message connection of stdio and
// mcptest) reaches the engine through that one interface and nothing
// else, and keeps its sessions with the same session core. A call without
// a session skips step 2's lookup and, unless it asked for progress, step
// 3's stream and worker.
package protocol
