package middleware

import (
	"encoding/json"
	"net/http"

	"github.com/saguaro-go/saguaro/internal/origin"
)

// Errors passed to [OriginOptions].OnDeny. They are wrapped with the
// offending value; match them with [errors.Is].
var (
	// ErrOriginNotAllowed reports a present Origin header that the rule
	// does not allow (or a malformed, empty or repeated one).
	ErrOriginNotAllowed = origin.ErrOriginNotAllowed
	// ErrHostNotAllowed reports a Host header that is not an allowed host:
	// the sign of a DNS-rebinding attack on a loopback server.
	ErrHostNotAllowed = origin.ErrHostNotAllowed
)

// JSON-RPC error codes of the bodies this package writes. The HTTP status
// is what matters; the body is a JSON-RPC error with a null id so that an
// MCP client that reads it finds the shape it expects, and any other client
// finds plain JSON.
const (
	codeInvalidRequest = -32600 // 403, 413: the request itself is refused
	codeServerError    = -32000 // 429, 503: try again later
)

// writeError writes status with a small JSON-RPC error body.
func writeError(w http.ResponseWriter, status, code int, msg string) {
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	body, _ := json.Marshal(struct {
		JSONRPC string   `json:"jsonrpc"`
		ID      any      `json:"id"`
		Error   rpcError `json:"error"`
	}{"2.0", nil, rpcError{code, msg}})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Del("Content-Length")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
