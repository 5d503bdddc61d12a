package wire

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error codes used by JSON-RPC 2.0 and MCP. The -32000..-32099 range is
// reserved by MCP 2026-07-28: never invent codes there.
const (
	// ParseError (-32700): the body is not JSON text (or not UTF-8).
	ParseError = -32700
	// InvalidRequest (-32600): JSON, but not a valid JSON-RPC message.
	InvalidRequest = -32600
	// MethodNotFound (-32601): unknown method, or one whose capability was
	// not advertised or that the negotiated revision does not have.
	MethodNotFound = -32601
	// InvalidParams (-32602): params of the wrong shape or type, unknown
	// tool or prompt, bad cursor; in 2026-07-28 also resource not found.
	InvalidParams = -32602
	// InternalError (-32603): a server failure. Never carries internals.
	InternalError = -32603
	// ResourceNotFound (-32002): resources/read of a missing URI, legacy
	// revisions only (2026-07-28 uses InvalidParams).
	ResourceNotFound = -32002
	// URLElicitationRequired (-32042): 2025-11-25 only; data.elicitations
	// lists the URL-mode elicitations the client must complete.
	URLElicitationRequired = -32042
	// HeaderMismatch (-32020): 2026-07-28, an HTTP header disagrees with
	// the body or a required header is missing.
	HeaderMismatch = -32020
	// MissingClientCapability (-32021): 2026-07-28, the request needs a
	// client capability it did not declare (data.requiredCapabilities).
	MissingClientCapability = -32021
	// UnsupportedProtocolVersion (-32022): 2026-07-28, data lists
	// {supported, requested}.
	UnsupportedProtocolVersion = -32022
)

// Error is a JSON-RPC error object; it implements error so handler code can
// return it. Data must be JSON-encodable; it is dropped from the response if
// it is not (or if it holds invalid UTF-8). Message is made valid UTF-8 on
// encode. Pitfall: Message and Data reach the client verbatim, so never put
// internal details (stack traces, SQL, paths) in them.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// NewError returns an *Error with the given code and message.
func NewError(code int, message string) *Error {
	return &Error{Code: code, Message: message}
}

// Errorf returns an *Error whose message is formatted with fmt.Sprintf.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("jsonrpc: %d %s", e.Code, e.Message)
}

// Is reports whether target is an *Error with the same code, so
// errors.Is(err, jsonrpc.NewError(jsonrpc.InvalidParams, "")) matches any
// invalid-params error.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

func validMessage(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// Pre-built errors for the codec's own answers. They are shared: never
// modify them.
var (
	errParse       = &Error{Code: ParseError, Message: "Parse error"}
	errNotUTF8     = &Error{Code: ParseError, Message: "Parse error: body is not valid UTF-8"}
	errInvalid     = &Error{Code: InvalidRequest, Message: "Invalid Request"}
	errBatch       = &Error{Code: InvalidRequest, Message: "Invalid Request: batches are not accepted here"}
	errEmptyBatch  = &Error{Code: InvalidRequest, Message: "Invalid Request: empty batch"}
	errNotBatch    = &Error{Code: InvalidRequest, Message: "Invalid Request: not a batch"}
	errVersion     = &Error{Code: InvalidRequest, Message: `Invalid Request: "jsonrpc" must be "2.0"`}
	errID          = &Error{Code: InvalidRequest, Message: "Invalid Request: id must be a string or an integer"}
	errMethod      = &Error{Code: InvalidRequest, Message: "Invalid Request: method must be a string"}
	errParams      = &Error{Code: InvalidRequest, Message: "Invalid Request: params must be an object or an array"}
	errDuplicate   = &Error{Code: InvalidRequest, Message: "Invalid Request: duplicate member"}
	errShape       = &Error{Code: InvalidRequest, Message: "Invalid Request: not a request, notification or response"}
	errErrorObject = &Error{Code: InvalidRequest, Message: "Invalid Request: malformed error object"}
)

// BatchTooLarge is the error for a batch of more than max messages.
func BatchTooLarge(max int) *Error {
	return &Error{Code: InvalidRequest, Message: "Invalid Request: a batch holds at most " + strconv.Itoa(max) + " messages"}
}
