package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/saguaro-go/saguaro/internal/jsonstr"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// Input-required results (2026-07-28 multi round-trip requests).
//
// A handler asks the client for input the same way in both eras:
// Request.Elicit, CreateMessage or ListRoots. In a legacy session the
// request goes out on the call's stream and the handler waits. In a
// 2026-07-28 call of tools/call, prompts/get or resources/read the
// engine's back channel answers from the request's inputResponses when it
// can; otherwise it records the request and returns an
// *InputRequiredError, which the handler returns like any error. The
// engine then answers {resultType:"input_required", inputRequests,
// requestState}: every request the handler made and could not get an
// answer for, and the answers it did use, sealed (see stateSealer).
// The client repeats the call with inputResponses and requestState; the
// handler runs again from the start and this time its requests are
// answered. A handler therefore must not do irreversible work before it
// has all its input, and should ask in the same order each round.
//
// To ask for several inputs at once, make the requests and only then
// return the first error (errors.Join works): each unanswered request
// becomes one entry of inputRequests.

// mrtrMethods are the methods that may answer input_required.
var mrtrMethods = map[string]bool{"tools/call": true, "prompts/get": true, "resources/read": true}

type inputKey struct{}

// WithInputKey returns a context that names the server→client request made
// with it (Request.Elicit, CreateMessage, ListRoots) in a 2026-07-28
// input_required result: the key under which the client answers in
// inputResponses. Without a name, requests are keyed "input-1",
// "input-2", … in the order the handler makes them, which is stable from
// round to round only when the handler always asks in the same order:
// name requests that are made concurrently. Legacy sessions ignore keys.
func WithInputKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, inputKey{}, key)
}

func inputKeyOf(ctx context.Context) string {
	k, _ := ctx.Value(inputKey{}).(string)
	return k
}

// pendingInput is one unanswered server→client request.
type pendingInput struct {
	key    string
	method string
	params json.RawMessage
}

// mrtrOutbound is the back channel of a 2026-07-28 call that may answer
// input_required: notifications go to the transport's back channel, requests
// are answered from the call's inputResponses or recorded.
type mrtrOutbound struct {
	inner   protocol.Outbound
	answers map[string]json.RawMessage

	mu      sync.Mutex
	seq     int
	used    map[string]json.RawMessage
	pending []pendingInput
}

func (o *mrtrOutbound) Notify(ctx context.Context, method string, params json.RawMessage) error {
	if o.inner == nil {
		return nil
	}
	return o.inner.Notify(ctx, method, params)
}

func (o *mrtrOutbound) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	key := inputKeyOf(ctx)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seq++
	if key == "" {
		key = "input-" + strconv.Itoa(o.seq)
	}
	if a, ok := o.answers[key]; ok {
		if o.used == nil {
			o.used = map[string]json.RawMessage{}
		}
		o.used[key] = a
		return a, nil
	}
	for _, p := range o.pending {
		if p.key == key {
			return nil, &InputRequiredError{Key: key, Method: method, Params: params}
		}
	}
	o.pending = append(o.pending, pendingInput{key: key, method: method, params: append(json.RawMessage(nil), params...)})
	return nil, &InputRequiredError{Key: key, Method: method, Params: params}
}

// capabilityError is a server→client request the client did not declare
// the capability for. It is ErrClientCapability for errors.Is; in a
// 2026-07-28 call the engine answers it as MissingRequiredClientCapability
// (-32021) naming the capability.
type capabilityError struct{ path []string }

func capErr(path ...string) error { return &capabilityError{path: path} }

func (e *capabilityError) Error() string {
	s := ""
	for i, p := range e.path {
		if i > 0 {
			s += "."
		}
		s += p
	}
	return s + ": " + ErrClientCapability.Error()
}

func (e *capabilityError) Unwrap() error { return ErrClientCapability }

// rpcError is -32021 with data.requiredCapabilities, a ClientCapabilities
// object: ["sampling","tools"] is {"sampling":{"tools":{}}}.
func (e *capabilityError) rpcError() *wire.Error {
	var caps any = map[string]any{}
	for i := len(e.path) - 1; i >= 0; i-- {
		caps = map[string]any{e.path[i]: caps}
	}
	name := e.Error()
	return &wire.Error{Code: wire.MissingClientCapability,
		Message: "Missing required client capability: " + name[:len(name)-len(ErrClientCapability.Error())-2],
		Data:    map[string]any{"requiredCapabilities": caps}}
}

// prepareModern readies a 2026-07-28 call: for the methods that may
// answer input_required, it opens requestState and gathers the answers.
func (e *engine) prepareModern(call *protocol.Call) *wire.Error {
	if !mrtrMethods[call.Method] {
		return nil
	}
	var responses map[string]json.RawMessage
	var state string
	var hasState bool
	if !call.NoInput {
		var perr *wire.Error
		if responses, state, hasState, perr = parseInputParams(call.Params); perr != nil {
			return perr
		}
	}
	var answers map[string]json.RawMessage // read only: nil when there are none
	if hasState || len(responses) > 0 {
		answers = make(map[string]json.RawMessage, len(responses))
	}
	if hasState {
		prior, jerr := e.state.open(state, call)
		if jerr != nil {
			return jerr
		}
		for k, v := range prior {
			answers[k] = v
		}
	}
	for k, v := range responses {
		answers[k] = v
	}
	o := &mrtrOutbound{inner: call.Outbound, answers: answers}
	call.Outbound = o
	return nil
}

// parseInputParams reads inputResponses (an object of objects) and
// requestState (a string; present even when empty) from a call's params.
func parseInputParams(params json.RawMessage) (map[string]json.RawMessage, string, bool, *wire.Error) {
	var responses map[string]json.RawMessage
	var state string
	hasState := false
	err := protocol.EachParam(params, func(key, val []byte) *wire.Error {
		switch {
		case wire.KeyIs(key, "inputResponses"):
			if val[0] != '{' {
				return protocol.InvalidParams(`"inputResponses" must be an object`)
			}
			responses = map[string]json.RawMessage{}
			var perr *wire.Error
			_ = wire.EachMember(val, func(k, v []byte) error {
				name, ok := wire.Unquote(k)
				if !ok || v[0] != '{' {
					perr = protocol.InvalidParams(`"inputResponses" values must be result objects`)
					return protocol.ErrStop
				}
				responses[name] = append(json.RawMessage(nil), v...)
				return nil
			})
			return perr
		case wire.KeyIs(key, "requestState"):
			s, ok := wire.Unquote(val)
			if !ok {
				return protocol.InvalidParams(`"requestState" must be a string`)
			}
			state, hasState = s, true
		}
		return nil
	})
	return responses, state, hasState, err
}

// finishModern completes the reply of a 2026-07-28 call: the
// input_required result when the handler asked for input, the envelope
// (resultType, serverInfo, caching hints) on every result.
func (e *engine) finishModern(call *protocol.Call, r *protocol.Reply) {
	if _, ok := call.Outbound.(*mrtrOutbound); ok && r.Err == errInputRequired {
		res, jerr := e.inputRequiredResult(call)
		r.Err, r.Result = jerr, nil
		if jerr == nil {
			r.Result, r.ResultType = res, resultInputRequired
			e.wrap(call, r)
		}
		return
	}
	if r.Err != nil || r.Result == nil {
		return
	}
	if r.ResultType == "" {
		r.ResultType = resultComplete
	}
	e.wrap(call, r)
}

// wrap puts a 2026-07-28 result in its envelope, or, for a transport that
// writes the response itself (Call.owned), leaves that to
// appendReply, which writes it straight into the response.
func (e *engine) wrap(call *protocol.Call, r *protocol.Reply) {
	if call.Owned {
		r.Envelope = call.Method
		return
	}
	r.Result = e.envelope(call.Method, r.Result, r.ResultType)
	r.Buffer, r.Head = nil, 0
}

// AppendReply implements protocol.Engine: the JSON-RPC response of a
// reply, with the envelope an owned 2026-07-28 call left out written
// straight into it. It puts the reply's pooled result buffer back:
// r.Result is nil after.
func (e *engine) AppendReply(dst []byte, id wire.ID, r protocol.Reply) []byte {
	if dst == nil && r.Head > 0 && r.Err == nil {
		if out, ok := e.replyInPlace(id, &r); ok {
			return out
		}
	}
	if dst == nil {
		n := len(r.Result) + 64
		if r.Envelope != "" {
			info, _ := e.identity()
			n += len(info) + 96
		}
		dst = make([]byte, 0, n)
	}
	switch {
	case r.Err != nil:
		dst = wire.AppendErrorResponse(dst, id, r.Err)
	case r.Envelope != "":
		dst = wire.AppendResponse(dst, id, nil) // {"jsonrpc":"2.0","id":…,"result":}
		dst = e.appendEnvelope(dst[:len(dst)-1], r.Envelope, r.Result, r.ResultType)
		dst = append(dst, '}')
	case r.Result != nil:
		dst = wire.AppendResponse(dst, id, r.Result)
	}
	if r.Pooled != nil {
		wire.PutBuffer(r.Pooled)
	}
	return dst
}

// replyInPlace writes the response around a big result in its own buffer
// (Reply.Head): the response's start, and a 2026-07-28 envelope's, in the
// free bytes ahead of it, the end after it. False when the start does not
// fit (a long string id) or the envelope must rewrite the result's
// members: the caller then copies.
func (e *engine) replyInPlace(id wire.ID, r *protocol.Reply) ([]byte, bool) {
	var pre [replyHead]byte
	head := wire.AppendResponse(pre[:0], id, nil) // {"jsonrpc":"2.0","id":…,"result":}
	head = head[:len(head)-1]
	buf, res, at := r.Buffer, r.Result, r.Head
	if r.Envelope == "" {
		if len(head) > at {
			return nil, false
		}
		start := at - len(head)
		copy(buf[start:], head)
		return append(buf[:at+len(res)], '}')[start:], true
	}
	if !r.Bare || len(res) < 2 || res[0] != '{' || res[len(res)-1] != '}' {
		return nil, false
	}
	// The envelope's '{' takes the place of the result's: its members
	// follow resultType.
	head = append(head, `{"resultType":`...)
	head = jsonstr.AppendString(head, r.ResultType)
	if !isEmptyObject(res) {
		head = append(head, ',')
	}
	if len(head) > at+1 {
		return nil, false
	}
	start := at + 1 - len(head)
	copy(buf[start:], head)
	out := buf[:at+len(res)-1] // without the result's '}'
	out = e.appendEnvelopeEnd(out, r.Envelope, r.ResultType, nil, false)
	return append(out, '}')[start:], true
}

// isEmptyObject reports whether an encoded object has no members.
func isEmptyObject(obj []byte) bool {
	for _, c := range obj[1 : len(obj)-1] {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// inputRequiredResult encodes {inputRequests, requestState}.
func (e *engine) inputRequiredResult(call *protocol.Call) ([]byte, *wire.Error) {
	o := call.Outbound.(*mrtrOutbound)
	o.mu.Lock()
	pending := append([]pendingInput(nil), o.pending...)
	used := o.used
	o.mu.Unlock()
	state, err := e.state.seal(call, used)
	if err != nil {
		return nil, errInternal
	}
	var b bytes.Buffer
	b.WriteString(`{"inputRequests":{`)
	for i, p := range pending {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonstr.AppendString(nil, p.key))
		b.WriteString(`:{"method":`)
		b.Write(jsonstr.AppendString(nil, p.method))
		b.WriteString(`,"params":`)
		if len(p.params) == 0 {
			b.WriteString("{}")
		} else {
			b.Write(p.params)
		}
		b.WriteByte('}')
	}
	b.WriteString(`},"requestState":`)
	b.Write(jsonstr.AppendString(nil, state))
	b.WriteByte('}')
	return b.Bytes(), nil
}
