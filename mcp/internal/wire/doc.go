// Package wire is the JSON-RPC 2.0 codec under saguaro's MCP engine: it
// decodes an HTTP body into messages exactly once, with params kept raw until
// the method is known, and encodes responses into caller-owned buffers.
//
// Decisions where JSON-RPC 2.0 or MCP leave room (each has a test):
//
//   - Input must be UTF-8. A body holding an invalid UTF-8 byte anywhere is
//     not JSON text (RFC 8259 §8.1) and is answered with ParseError (-32700,
//     id null): no member of such a body is trusted, not even its id.
//   - Nesting deeper than encoding/json's limit (10000) is a ParseError; the
//     decoder is iterative and never recurses on input depth.
//   - An id is a JSON string or an integer that fits in int64. null, a
//     fraction (1.5), an exponent (1e3, even when integral), a boolean, an
//     object, an array or an integer outside int64 is InvalidRequest
//     (-32600) answered with id null. No real client sends integers beyond
//     2^53, and truncating one silently would misroute its response.
//   - An id keeps its JSON type on the way back: "1" is echoed as "1", 1 as 1.
//   - "jsonrpc" must be the string "2.0". Member names are matched
//     case-sensitively (unlike encoding/json), and a repeated envelope member
//     ("method" twice, …) is InvalidRequest: two parsers must never disagree
//     on what a message means. Unknown members are ignored.
//   - "params" must be an object or an array when present; null is treated
//     as absent. MCP itself only uses objects: the engine rejects arrays with
//     InvalidParams.
//   - An invalid message whose id was readable is answered with that id;
//     otherwise with id null. Every invalid message gets exactly one error
//     response; valid notifications and responses get none.
//   - A JSON array is a batch. Decode refuses it (InvalidRequest) and
//     DecodeBatch accepts it; which one to call is the transport's choice
//     (MCP allows batches only in 2025-03-26). An empty batch is
//     InvalidRequest.
//
// Pitfalls: Message.Params and Message.Result alias the decoded input: keep
// the input alive and unmodified while they are in use. Encoding functions
// append to a caller buffer and trust pre-encoded JSON they are given; use
// Marshal for values produced by handler code, because it refuses invalid
// UTF-8 instead of silently replacing it.
package wire
