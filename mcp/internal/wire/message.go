package wire

import "encoding/json"

// Kind says what a decoded message is.
type Kind uint8

const (
	// KindInvalid marks a message that failed validation (only seen in a
	// BatchItem whose Err is set, or alongside a non-nil *Error).
	KindInvalid Kind = iota
	// KindRequest has a method and an id and expects exactly one response.
	KindRequest
	// KindNotification has a method and no id; it is never answered.
	KindNotification
	// KindResponse carries a result for an id we sent.
	KindResponse
	// KindErrorResponse carries an error for an id we sent (the id may be
	// absent when the peer could not read ours).
	KindErrorResponse
)

// String names the kind for logs.
func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	case KindResponse:
		return "response"
	case KindErrorResponse:
		return "error response"
	}
	return "invalid"
}

// Message is one decoded JSON-RPC message. Pitfall: Params and Result are
// sub-slices of the decoded input (no copy): keep the input alive and
// unmodified while they are in use, and copy them to retain them longer.
type Message struct {
	Kind   Kind
	ID     ID
	Method string
	// Params is the raw "params" object or array; nil when absent or null.
	Params json.RawMessage
	// Result is the raw "result" of a KindResponse.
	Result json.RawMessage
	// Error is the error object of a KindErrorResponse (Data holds a
	// json.RawMessage).
	Error *Error
	// Tape is where the long tokens of the decoded input end; nil for a
	// short input. Walks over Params with it read a long argument no
	// more than once.
	Tape *Tape
}

// IsCall reports whether the message is a request or a notification.
func (m *Message) IsCall() bool { return m.Kind == KindRequest || m.Kind == KindNotification }

// BatchItem is one element of a batch: a valid message, or the error to
// answer an invalid one with (Msg.ID is set when the element's id was
// readable).
type BatchItem struct {
	Msg Message
	Err *Error
}
