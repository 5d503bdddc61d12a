package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// InputRequiredError is what a 2026-07-28 call's back channel returns for a
// server→client request the client has not answered yet: the engine turns
// it into {resultType:"input_required", inputRequests:{Key: {method,
// params}}}. Handlers just return it. In legacy revisions it never occurs;
// if a handler returns one anyway the call fails with InternalError.
//
// So a handler's Elicit, CreateMessage and ListRoots become an
// input_required result of tools/call, prompts/get or resources/read: the
// client repeats the request with the answers and the requestState
// (sealed with ServerOptions.Keys, valid for ServerOptions.StateTTL), and
// the handler runs again from the start, its answered requests now
// answered. Name requests with [WithInputKey]; return every unanswered
// request's error (errors.Join) to ask for several at once. A request
// the client's capabilities do not cover is -32021.
type InputRequiredError struct {
	Key    string
	Method string
	Params json.RawMessage
}

// Error implements error.
func (e *InputRequiredError) Error() string {
	return "mcp: input required: " + e.Method
}

func (r *Request) outbound() protocol.Outbound {
	if r.out == nil {
		return protocol.Discard{}
	}
	return r.out
}

// notify sends a notification on the call's back channel, in a span of
// its own when telemetry is on.
func (r *Request) notify(ctx context.Context, method string, params json.RawMessage) error {
	tel := r.tracer()
	if tel == nil {
		return r.outbound().Notify(ctx, method, params)
	}
	params, end := tel.send(ctx, method, params)
	err := r.outbound().Notify(ctx, method, params)
	end(err)
	return err
}

// request sends a server→client request on the call's back channel and
// waits for its answer, in a span of its own when telemetry is on.
func (r *Request) request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	tel := r.tracer()
	if tel == nil {
		return r.outbound().Request(ctx, method, params)
	}
	params, end := tel.send(ctx, method, params)
	out, err := r.outbound().Request(ctx, method, params)
	end(err)
	return out, err
}

// Progress sends notifications/progress for this request with the caller's
// progressToken echoed exactly. It does nothing (nil) when the caller gave
// no token. progress must increase from call to call
// (ErrProgressNotIncreasing otherwise, and nothing is sent); total <= 0
// and message "" are omitted. Pitfall: MCP forbids progress after the
// response, so never call it once the callback has returned.
func (r *Request) Progress(ctx context.Context, progress, total float64, message string) error {
	tok := r.Meta.ProgressToken
	if tok.IsZero() {
		return nil
	}
	p := &progress
	for {
		last := r.progress.Load()
		if last != nil && progress <= *last {
			return ErrProgressNotIncreasing
		}
		if r.progress.CompareAndSwap(last, p) {
			break
		}
	}

	var e encoder
	e.open()
	e.key("progressToken")
	e.raw([]byte(tok.raw))
	e.key("progress")
	e.float(progress)
	if total > 0 {
		e.key("total")
		e.float(total)
	}
	if message != "" {
		e.strField("message", message)
	}
	e.close()
	if e.err != nil {
		return fmt.Errorf("mcp: progress: %w", e.err)
	}
	return r.notify(ctx, "notifications/progress", e.b)
}

// Log sends notifications/message when level passes the session's log
// level (every level passes while the client has not set one). In
// 2026-07-28, which has no session, it sends only when the request set
// _meta logLevel, at that level or above. data is any JSON-encodable
// value; logger may be "". Pitfall: MCP forbids secrets, personal data
// and internals useful to attackers in logs sent to clients.
func (r *Request) Log(ctx context.Context, level LogLevel, logger string, data any) error {
	if level < LogDebug || level > LogEmergency {
		return fmt.Errorf("%w: %d", ErrLogLevel, level)
	}
	if !r.logLevel.enabled(level) {
		return nil
	}
	var e encoder
	e.open()
	e.strField("level", level.String())
	e.optStr("logger", logger)
	e.key("data")
	e.value(data)
	e.close()
	if e.err != nil {
		return fmt.Errorf("mcp: log: %w", e.err)
	}
	return r.notify(ctx, "notifications/message", e.b)
}

// roundTrip encodes params, sends the request and decodes the result.
func (r *Request) roundTrip(ctx context.Context, method string, params, result any) error {
	raw, err := wire.Marshal(params)
	if err != nil {
		return fmt.Errorf("mcp: %s: %w", method, err)
	}
	out, err := r.request(ctx, method, raw)
	var je *wire.Error
	if errors.As(err, &je) {
		// The client refused: that is the handler's trouble to report
		// (a tool error the model sees), never this call's own protocol
		// error, so it must not stay a *wire.Error.
		return &ClientError{Method: method, Code: je.Code, Message: je.Message}
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(out, result); err != nil {
		return fmt.Errorf("mcp: %s: malformed result: %w", method, err)
	}
	return nil
}

// CreateMessage asks the client to sample its LLM
// (sampling/createMessage). It fails with ErrClientCapability, sending
// nothing, when the client did not declare sampling, or sampling.tools for
// Tools/ToolChoice, or sampling.context for an IncludeContext other than
// "none".
func (r *Request) CreateMessage(ctx context.Context, p *CreateMessageParams) (*CreateMessageResult, error) {
	c := r.Client
	switch {
	case c == nil || c.Sampling == nil:
		return nil, capErr("sampling")
	case (len(p.Tools) > 0 || len(p.ToolChoice) > 0) && c.Sampling.Tools == nil:
		return nil, capErr("sampling", "tools")
	case p.IncludeContext != "" && p.IncludeContext != "none" && c.Sampling.Context == nil:
		return nil, capErr("sampling", "context")
	}
	var res CreateMessageResult
	if err := r.roundTrip(ctx, "sampling/createMessage", p, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Elicit asks the client's user for input (elicitation/create, since 2025-06-18). Form
// mode needs the elicitation capability; URL mode needs elicitation.url
// (since 2025-11-25). Otherwise it fails with ErrClientCapability and sends nothing.
// Pitfall: never use form mode for passwords, keys, tokens or payment
// data; that is what URL mode is for.
func (r *Request) Elicit(ctx context.Context, p *ElicitParams) (*ElicitResult, error) {
	c := r.Client
	rev := r.Revision.orDefault()
	if c == nil || rev < Rev20250618 {
		return nil, capErr("elicitation")
	}
	switch p.Mode {
	case "url":
		if rev < Rev20251125 || !c.Elicitation.url() {
			return nil, capErr("elicitation", "url")
		}
	case "", "form":
		if !c.Elicitation.form() {
			return nil, capErr("elicitation", "form")
		}
	default:
		return nil, fmt.Errorf("mcp: unknown elicitation mode %q", p.Mode)
	}
	var res ElicitResult
	if err := r.roundTrip(ctx, "elicitation/create", p, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// ListRoots asks the client for its roots (roots/list); ErrClientCapability
// when it did not declare roots.
func (r *Request) ListRoots(ctx context.Context) (*ListRootsResult, error) {
	if r.Client == nil || r.Client.Roots == nil {
		return nil, capErr("roots")
	}
	var res ListRootsResult
	if err := r.roundTrip(ctx, "roots/list", struct{}{}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// CloseStream ends the connection that carries this call's event stream
// without ending the stream, asking the client to reconnect after retry
// (the stream's default when retry is not positive): 2025-11-25's polling.
// The call goes on; what it sends meanwhile is kept, and the client gets
// it by resuming with GET and Last-Event-ID. It reports false, and does
// nothing, when the call is not being answered as an event stream (a JSON
// answer, a stateless call, or nothing emitted yet: emit something first,
// such as a progress notification or a log message), and in sessions of
// revisions before 2025-11-25, whose clients need not resume streams.
func (r *Request) CloseStream(retry time.Duration) bool {
	c, ok := r.outbound().(interface{ CloseStream(time.Duration) bool })
	return ok && c.CloseStream(retry)
}

// ClientError is the client's error answer to a server→client request
// (sampling, elicitation, roots): the user refused, the client failed.
// A tool that returns it gets a tool error result with its text, as for any
// other error; it is not passed on as the call's protocol error.
type ClientError struct {
	Method  string
	Code    int
	Message string
}

// Error implements error.
func (e *ClientError) Error() string {
	return fmt.Sprintf("mcp: the client answered %s with error %d: %s", e.Method, e.Code, e.Message)
}
