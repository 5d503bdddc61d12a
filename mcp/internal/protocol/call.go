package protocol

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// Call is one decoded client→server message with what the transport knows
// of its context.
type Call struct {
	// Method, ID and Params come from the decoded message; a zero ID
	// means a notification. Params may alias the body, which must stay
	// intact until Dispatch returns.
	Method string
	ID     wire.ID
	Params json.RawMessage
	// Revision is the session's negotiated revision, or what the request
	// stated; zero means 2025-03-26. initialize negotiates and ignores it.
	Revision Revision
	// Client is the client's capabilities as the engine decoded them (the
	// initialize Effect's Client, or Engine.Client's value); nil when
	// unknown. It is shared and read-only.
	Client any
	// LogLevel is the threshold of the call's log messages.
	LogLevel LogLevel
	// Outbound is the call's back channel; nil means Discard.
	Outbound Outbound
	// Identity is who is calling ("" for anonymous): handlers and
	// middleware read it, and it binds 2026-07-28 requestState and tasks
	// to their caller.
	Identity string
	// Session is the session's id where the transport has one ("" over
	// stdio and without sessions), for telemetry.
	Session string

	// Owned marks the transport's own Call, given to Dispatch once and
	// whose reply it writes with Engine.AppendReply: Dispatch may change
	// it in place, and leaves a 2026-07-28 result's envelope to
	// AppendReply, which writes it straight into the response.
	Owned bool
	// NoInput says the transport saw that params have neither
	// inputResponses nor requestState.
	NoInput bool
	// Tool holds a tools/call's params when the transport already read
	// them (ReadModern), so that the engine does not read them again.
	Tool *ToolCall
	// Tape is the decoded message's (wire.Message.Tape): walks over
	// Params with it jump over the long values. A copy of Params is not
	// on it, and is read in full.
	Tape *wire.Tape
}

// String formats a Call for logs.
func (c *Call) String() string { return fmt.Sprintf("%s id=%s", c.Method, c.ID) }

// EffectKind says what the session must record after a call.
type EffectKind uint8

// The effects.
const (
	EffectNone         EffectKind = iota
	EffectInitialize              // a session starts: Revision, Client
	EffectInitialized             // notifications/initialized arrived
	EffectSetLogLevel             // LogLevel
	EffectSubscribe               // URI
	EffectUnsubscribe             // URI
	EffectCancel                  // RequestID: cancel that call's context
	EffectRootsChanged            // the client's roots changed
)

// Effect is the session-level consequence of a call, which Dispatch
// reports instead of performing (the engine has no session).
type Effect struct {
	Kind      EffectKind
	Revision  Revision
	Client    any
	LogLevel  LogLevel
	URI       string
	RequestID wire.ID
}

// Reply is the outcome of Dispatch. For a request exactly one of Result
// and Err is set; for a notification neither is. State is the handler's
// new state: the one the callback returned, or the input state when it
// panicked or did not run.
//
// Pitfall: Result may be shared (pre-encoded lists, constants): never
// modify it. Write a reply with Engine.AppendReply, which completes what
// an owned call's Dispatch left out.
type Reply struct {
	Result json.RawMessage
	Err    *wire.Error
	State  any
	Effect Effect

	// Engine-private parts of an owned call's reply, for AppendReply: the
	// result type and method of a 2026-07-28 envelope still to be
	// written, and the pooled buffer that holds Result.
	ResultType string
	Envelope   string
	Pooled     *[]byte
	// Buffer and Head: when Head > 0, Result is Buffer[Head:], a big
	// result encoded after Head free bytes, where AppendReply writes the
	// start of the response instead of copying Result into a new one.
	// Bare says Result has none of the members a 2026-07-28 envelope
	// replaces (resultType, _meta, ttlMs, cacheScope), so that the
	// envelope too can be written around it in place.
	Buffer []byte
	Head   int
	Bare   bool
	// ToolError says a tools/call result has isError set.
	ToolError bool
	// Target is the tool (tools/call) or prompt (prompts/get) the call
	// named, once its params were read; "" otherwise. For telemetry.
	Target string
}

// Outbound is the back channel a transport supplies for one call: how a
// handler's notifications and server→client requests reach the client
// that made this call, and only that call's stream.
//
// Params arrive encoded; the transport adds the envelope. Request blocks
// until the client answers or ctx ends and returns the raw result; a
// client's error answer is returned as a *wire.Error.
type Outbound interface {
	Notify(ctx context.Context, method string, params json.RawMessage) error
	Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// StreamCloser is an Outbound whose call is answered on a stream that can
// be closed and resumed (2025-11-25 polling).
type StreamCloser interface {
	CloseStream(retry time.Duration) bool
}

// Discard is the Outbound of a call with no back channel: notifications
// are dropped, requests fail with ErrNoBackchannel.
type Discard struct{}

// Notify drops the notification.
func (Discard) Notify(context.Context, string, json.RawMessage) error { return nil }

// Request fails with ErrNoBackchannel.
func (Discard) Request(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
	return nil, fmt.Errorf("%s: %w", method, ErrNoBackchannel)
}

// Errors a back channel returns to handlers; package mcp exports them.
var (
	// ErrNoBackchannel: the transport serving this call cannot reach the
	// client.
	ErrNoBackchannel = errors.New("mcp: no channel back to the client for this request")
	// ErrSessionEnded: the session ended (reaped, deleted) before the
	// request or notification completed.
	ErrSessionEnded = errors.New("mcp: session ended")
)

// The JSON-RPC errors both sides answer with. They are shared: never
// modify them.
var (
	// ErrInternal is a failure whose cause is not for the client.
	ErrInternal = wire.NewError(wire.InternalError, "Internal error")
	// ErrCancelled answers a call cancelled before it finished.
	ErrCancelled = wire.NewError(wire.InternalError, "Request cancelled")
	// ErrTimeout answers a call that ran past its deadline.
	ErrTimeout = wire.NewError(wire.InternalError, "Request timed out")
)
