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
package protocol
