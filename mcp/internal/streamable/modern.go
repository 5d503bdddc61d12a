package streamable

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
	"github.com/saguaro-go/saguaro/sse"
)

// The 2026-07-28 POST path. A POST is modern when its MCP-Protocol-Version
// header names a revision that is not a legacy one, or when it has no such
// header but its params carry the modern _meta. It is served statelessly
// (Mcp-Session-Id and Last-Event-ID are ignored), checked in this order,
// each failure answered with the request's id:
//
//	Accept 406, Content-Type 415, body 413 / 400 (-32700, -32600)
//	_meta without protocolVersion or clientCapabilities  400 -32602
//	  (400 -32022 when the header names no servable revision)
//	MCP-Protocol-Version missing, repeated or ≠ _meta    400 -32020
//	a revision other than 2026-07-28                    400 -32022 {supported, requested}
//	Mcp-Method missing or ≠ method                       400 -32020
//	method unknown, legacy-only or not offered          404 -32601
//	Mcp-Name, Mcp-Param-* missing, ≠ body, bad value     400 -32020
//	_meta fields of the wrong type                       400 -32602
//
// Then the engine runs the call. Its answer is JSON, or an event stream
// when the call emits notifications (progress, log messages when the
// request set _meta logLevel) before its result; a client that closes
// either cancels the call's context. Errors the engine returns keep HTTP
// statuses where the revision defines them: -32601 404, -32020/-32021/
// -32022 400, anything else 200.

// modernHeader reports whether a POST's MCP-Protocol-Version header marks
// it as modern: present and not a legacy revision.
func modernHeader(r *http.Request) bool {
	v := r.Header.Values("Mcp-Protocol-Version")
	if len(v) == 0 {
		return false
	}
	for _, s := range v {
		if rev, ok := protocol.ParseRevision(strings.Trim(s, " \t")); ok && rev.Legacy() {
			return false
		}
	}
	return true
}

// hasModernMeta reports whether params._meta names a protocol version,
// the mark of a 2026-07-28 request.
func hasModernMeta(params json.RawMessage) bool {
	found := false
	_ = protocol.EachParam(params, func(key, val []byte) *wire.Error {
		if wire.KeyIs(key, "_meta") && len(val) > 0 && val[0] == '{' {
			_ = wire.EachMember(val, func(k, _ []byte) error {
				if wire.KeyIs(k, protocol.MetaProtocol) {
					found = true
				}
				return nil
			})
		}
		return nil
	})
	return found
}

// modernErrorReply answers with an HTTP status and a JSON-RPC error that
// carries the request's id (no id member when it is not known: the
// 2026-07-28 schema has no null id).
func modernErrorReply(status int, id wire.ID, e *wire.Error) controller.Reply {
	return controller.BufferedType(status, contentJSON, appendModernError(nil, id, e))
}

func appendModernError(dst []byte, id wire.ID, e *wire.Error) []byte {
	if !id.IsZero() {
		return wire.AppendErrorResponse(dst, id, e)
	}
	b, err := json.Marshal(e)
	if err != nil {
		b = []byte(`{"code":-32603,"message":"Internal error"}`)
	}
	dst = append(dst, `{"jsonrpc":"2.0","error":`...)
	dst = append(dst, b...)
	return append(dst, '}')
}

// modernStatus is the HTTP status of a modern error response.
func modernStatus(e *wire.Error) int {
	switch e.Code {
	case wire.MethodNotFound:
		return http.StatusNotFound
	case wire.HeaderMismatch, wire.MissingClientCapability, wire.UnsupportedProtocolVersion:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// modernPost serves a POST whose header marks it modern.
func (t *Transport) modernPost(r *controller.Request) controller.Reply {
	json, stream := accepts(r.Header.Values("Accept"))
	if !json || !stream {
		return modernErrorReply(http.StatusNotAcceptable, wire.ID{}, wire.NewError(wire.InvalidRequest,
			"Not Acceptable: Accept must list application/json and text/event-stream"))
	}
	if !isJSONContent(r.Header.Get("Content-Type")) {
		return modernErrorReply(http.StatusUnsupportedMediaType, wire.ID{}, wire.NewError(wire.InvalidRequest,
			"Unsupported Media Type: Content-Type must be application/json"))
	}
	buf, bad := t.readBody(r.Request)
	if bad != nil {
		return bad
	}
	defer wire.PutBuffer(buf)
	body := *buf
	if wire.IsBatch(body) {
		return modernErrorReply(http.StatusBadRequest, wire.ID{}, wire.NewError(wire.InvalidRequest,
			"Invalid Request: batches are not part of protocol revision 2026-07-28"))
	}
	msg, derr := t.engine.Decoder().Decode(body)
	if derr != nil {
		t.attrs(r.Context(), slog.Int(protocol.AttrErrorCode, derr.Code))
		return modernErrorReply(http.StatusBadRequest, msg.ID, derr)
	}
	if replica := t.taskReplica(r.Request, &msg); replica != "" {
		return t.relayTask(replica, body) // another replica's task: cluster_relay.go
	}
	return t.modernMessage(r, &msg)
}

// isJSONContent reports whether a Content-Type is application/json.
func isJSONContent(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/json")
}

// modernCall holds what the checks learnt about a modern request.
type modernCall struct {
	client   any // shared, read-only
	logLevel protocol.LogLevel
	read     protocol.Modern // what ReadModern read; it aliases the body
}

// modernMessage serves one decoded modern message. The body behind msg
// is valid only until it returns.
func (t *Transport) modernMessage(r *controller.Request, msg *wire.Message) controller.Reply {
	switch msg.Kind {
	case wire.KindResponse, wire.KindErrorResponse:
		return modernErrorReply(http.StatusBadRequest, msg.ID, wire.NewError(wire.InvalidRequest,
			"Invalid Request: 2026-07-28 clients do not send responses"))
	}
	t.callAttrs(r.Request, msg, protocol.Rev20260728)
	mc, status, jerr := t.checkModern(r.Request, msg)
	if jerr != nil {
		t.attrs(r.Context(), slog.Int(protocol.AttrErrorCode, jerr.Code))
		if msg.Kind == wire.KindNotification {
			return controller.BufferedType(status, contentJSON, appendModernError(nil, wire.ID{}, jerr))
		}
		return modernErrorReply(status, msg.ID, jerr)
	}
	if msg.Kind == wire.KindNotification {
		// 2026-07-28 defines no client notification over HTTP (closing
		// a stream is the cancellation).
		return controller.Status(http.StatusAccepted)
	}
	if refused := t.authorize(r.Request, msg); refused != nil {
		return refused
	}
	if msg.Method == "subscriptions/listen" {
		return t.listen(r, msg, &mc)
	}
	return t.modernCall(r, msg, &mc)
}

// checkModern applies the header, _meta, revision and method checks.
func (t *Transport) checkModern(r *http.Request, msg *wire.Message) (modernCall, int, *wire.Error) {
	h := r.Header
	hv, oneVersion := oneHeader(h, "Mcp-Protocol-Version")
	hv = strings.Trim(hv, " \t")

	// One pass over params: _meta (protocolVersion and clientCapabilities
	// are required; logLevel; progressToken), and for the methods Mcp-Name
	// mirrors, that member and the arguments.
	m, perr := protocol.ReadModern(msg.Method, msg.Params)
	if perr != nil {
		return modernCall{}, http.StatusBadRequest, perr
	}
	if !m.HasVersion || m.Caps == nil {
		if rev, ok := protocol.ParseRevision(hv); oneVersion && (!ok || rev != protocol.Rev20260728) && !m.HasVersion {
			return modernCall{}, http.StatusBadRequest, unsupportedVersion(hv)
		}
		field := protocol.MetaProtocol
		if m.HasVersion {
			field = protocol.MetaClientCaps
		}
		return modernCall{}, http.StatusBadRequest, &wire.Error{Code: wire.InvalidParams,
			Message: "Invalid params: _meta must carry " + field, Data: map[string]string{"field": field}}
	}
	if !oneVersion {
		return modernCall{}, http.StatusBadRequest, headerMismatch("MCP-Protocol-Version is required, once")
	}
	if hv != m.Version {
		return modernCall{}, http.StatusBadRequest, headerMismatch("MCP-Protocol-Version %q does not match _meta protocolVersion", hv)
	}
	if rev, ok := protocol.ParseRevision(m.Version); !ok || rev != protocol.Rev20260728 {
		return modernCall{}, http.StatusBadRequest, unsupportedVersion(m.Version)
	}
	if msg.Kind == wire.KindNotification {
		return modernCall{}, 0, nil
	}

	// Mcp-Method, then the method itself.
	mv, ok := oneHeader(h, "Mcp-Method")
	if !ok {
		return modernCall{}, http.StatusBadRequest, headerMismatch("Mcp-Method is required, once")
	}
	if strings.Trim(mv, " \t") != msg.Method {
		return modernCall{}, http.StatusBadRequest, headerMismatch("Mcp-Method %q does not match the method", mv)
	}
	info, known := t.engine.Method(msg.Method)
	if !known || info.Notification || !info.In(protocol.Rev20260728) || !info.Offered {
		return modernCall{}, http.StatusNotFound, methodNotFound(msg.Method)
	}

	// Mcp-Name and Mcp-Param-*.
	if field := protocol.NameField(msg.Method); field != "" && m.HasName {
		nv, ok := oneHeader(h, "Mcp-Name")
		if !ok {
			return modernCall{}, http.StatusBadRequest, headerMismatch("Mcp-Name is required, once")
		}
		v, valid := decodeHeaderValue(nv)
		if !valid {
			return modernCall{}, http.StatusBadRequest, headerMismatch("Mcp-Name has an invalid value")
		}
		if v != m.Name {
			return modernCall{}, http.StatusBadRequest, headerMismatch("Mcp-Name does not match params.%s", field)
		}
		if m.IsTool {
			if specs := t.engine.ParamHeaders(m.Name); len(specs) > 0 {
				if jerr := checkParamHeaders(h, specs, m.Args); jerr != nil {
					return modernCall{}, http.StatusBadRequest, jerr
				}
			}
		}
	}

	mc := modernCall{logLevel: protocol.LogOff, read: m}
	if mc.client = t.engine.Client(m.Caps); mc.client == nil {
		return modernCall{}, http.StatusBadRequest, protocol.InvalidParams("_meta %q must be a ClientCapabilities object", protocol.MetaClientCaps)
	}
	if m.LogLevel != nil && !protocol.IsNull(m.LogLevel) {
		s, _ := wire.Unquote(m.LogLevel)
		l, ok := protocol.ParseLogLevel(s)
		if !ok {
			return modernCall{}, http.StatusBadRequest, protocol.InvalidParams("_meta %q is not a log level", protocol.MetaLogLevel)
		}
		mc.logLevel = l
	}
	return mc, 0, nil
}

// methodNotFound is MethodNotFound naming the method.
func methodNotFound(method string) *wire.Error {
	return wire.NewError(wire.MethodNotFound, "Method not found: "+method)
}

func unsupportedVersion(requested string) *wire.Error {
	supported := make([]string, 0, 4)
	for _, rev := range protocol.AllRevisions() {
		supported = append(supported, rev.String())
	}
	return &wire.Error{Code: wire.UnsupportedProtocolVersion,
		Message: "Unsupported protocol version: " + strconv.Quote(requested),
		Data:    map[string]any{"supported": supported, "requested": requested}}
}

// Messages of a modern call's connection.
type (
	modernStarted struct{}              // the call emitted: answer with an event stream
	modernFrame   struct{ data []byte } // one message on the stream
	modernFinal   struct{ data []byte } // the response, last on the stream
	modernDone    struct {
		body   []byte
		status int
	} // the response, when nothing came first
)

// modernOutbound is the back channel of a modern call: notifications go on
// the call's own response stream, which they start; there are no
// server→client requests (input_required replaces them).
type modernOutbound struct {
	mb      *controller.Mailbox
	mu      sync.Mutex
	started bool
	done    bool
}

func (o *modernOutbound) Notify(_ context.Context, method string, params json.RawMessage) error {
	frame := wire.AppendNotification(nil, method, params)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return nil
	}
	if !o.started {
		if err := o.mb.Send(modernStarted{}); err != nil {
			return err
		}
		o.started = true
	}
	return o.mb.Send(modernFrame{data: frame})
}

func (o *modernOutbound) Request(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
	return protocol.Discard{}.Request(context.Background(), method, nil)
}

// finish hands the response to the connection.
func (o *modernOutbound) finish(body []byte, status int) {
	o.mu.Lock()
	o.done = true
	started := o.started
	o.mu.Unlock()
	if started {
		_ = o.mb.SendContext(context.Background(), modernFinal{data: body})
		return
	}
	_ = o.mb.SendContext(context.Background(), modernDone{body: body, status: status})
}

// modernCall runs a checked modern request; the connection waits for its
// first output.
func (t *Transport) modernCall(r *controller.Request, msg *wire.Message, mc *modernCall) controller.Reply {
	// One allocation for the Call and what checkModern read of a
	// tools/call's params.
	oc := &ownedCall{Call: protocol.Call{Method: msg.Method, ID: msg.ID, Params: msg.Params,
		Revision: protocol.Rev20260728, Client: mc.client, LogLevel: mc.logLevel,
		Owned: true, NoInput: !mc.read.Input}}
	call := &oc.Call
	if t.cfg.Identity != nil {
		call.Identity = t.cfg.Identity(r.Request)
	}
	if mc.logLevel == protocol.LogOff && !mc.read.Progress {
		// Nothing can stream: logs need _meta logLevel and progress a
		// progressToken (server→client requests are input_required
		// results). Answer on the connection's goroutine, the fast path;
		// a client that closes the connection still cancels the call.
		if t.tasks {
			// The body is reused once Handle returns, and a task keeps
			// working in the background: it needs its own params.
			call.Params = append(json.RawMessage(nil), msg.Params...)
		} else if mc.read.IsTool {
			// What checkModern read aliases the body, which stays valid
			// until this synchronous call returns.
			oc.tool = mc.read.Tool
			call.Tool = &oc.tool
		}
		return t.quietCall(r, call, modernError)
	}
	// The call runs on its own goroutine and may outlive the body.
	call.Params = append(json.RawMessage(nil), msg.Params...)
	return t.oneCallStream(r, call, modernError)
}

// modernError encodes a 2026-07-28 error answer and its HTTP status.
func modernError(id wire.ID, e *wire.Error) ([]byte, int) {
	return appendModernError(nil, id, e), modernStatus(e)
}

// ownedCall is a transport's own Call with room for what it read of the
// params.
type ownedCall struct {
	protocol.Call
	tool protocol.ToolCall
}

// quietCall serves a call that cannot emit anything before its result
// synchronously, as JSON.
func (t *Transport) quietCall(r *controller.Request, call *protocol.Call, encodeErr func(wire.ID, *wire.Error) ([]byte, int)) controller.Reply {
	ctx := r.Context()
	call.Outbound = protocol.Discard{}
	reply := t.dispatchAlone(ctx, call)
	if reply.Err != nil {
		t.attrs(ctx, slog.Int(protocol.AttrErrorCode, reply.Err.Code))
		body, status := encodeErr(call.ID, reply.Err)
		return controller.BufferedType(status, contentJSON, body)
	}
	return controller.BufferedType(http.StatusOK, contentJSON, t.engine.AppendReply(nil, call.ID, &reply))
}

// dispatchAlone serves a call that has no session, on a state of its own.
func (t *Transport) dispatchAlone(ctx context.Context, call *protocol.Call) protocol.Reply {
	state, err := t.engine.NewState(ctx, call.Revision)
	if err != nil {
		t.log.ErrorContext(ctx, "mcp: handler could not make a state", slog.Any("err", err))
		return protocol.Reply{Err: protocol.ErrInternal}
	}
	return t.engine.Dispatch(ctx, call, state)
}

// oneCallStream runs call on its own goroutine with a back channel that
// streams on this request's own response: the connection waits for the
// call's first output and answers JSON when the result comes first, or
// turns into an event stream that carries the call's notifications and
// ends with its result. Closing the stream cancels the call (there is no
// session to resume it in). encodeErr writes an error answer and its HTTP
// status (the eras differ there). It serves the 2026-07-28 era and the
// stateless legacy calls that ask for progress.
func (t *Transport) oneCallStream(r *controller.Request, call *protocol.Call, encodeErr func(wire.ID, *wire.Error) ([]byte, int)) controller.Reply {
	ctx, cancel := context.WithCancel(r.Context())
	mb := r.Mailbox()
	out := &modernOutbound{mb: mb}
	call.Outbound = out
	attrsCtx := r.Context()
	t.workers.run(jobFunc(func() {
		defer cancel()
		reply := t.dispatchAlone(ctx, call)
		if reply.Err != nil {
			t.attrs(attrsCtx, slog.Int(protocol.AttrErrorCode, reply.Err.Code))
			out.finish(encodeErr(call.ID, reply.Err))
			return
		}
		out.finish(t.engine.AppendReply(nil, call.ID, &reply), http.StatusOK)
	}))
	first, err := mb.Receive(r.Context())
	if err != nil {
		cancel() // the client left: closing is cancelling
		return controller.Status(http.StatusServiceUnavailable)
	}
	switch m := first.(type) {
	case modernDone:
		return controller.BufferedType(m.status, contentJSON, m.body)
	case modernStarted:
		h := http.Header{}
		sse.Headers(h)
		mb.Every(t.keepAlive(), keepAlive{})
		return controller.Loop(http.StatusOK, h, cancel, handleModernConn)
	}
	cancel()
	return controller.Status(http.StatusInternalServerError)
}

// handleModernConn is the loop of a modern call's event stream.
func handleModernConn(info any, push controller.Push, cancel context.CancelFunc) (context.CancelFunc, controller.Action) {
	switch m := info.(type) {
	case modernFrame:
		ev := sse.Event{Data: m.data}
		frame, _ := ev.AppendTo(nil)
		_ = push(frame)
	case modernFinal:
		ev := sse.Event{Data: m.data}
		frame, _ := ev.AppendTo(nil)
		return cancel, controller.Stop(frame)
	case keepAlive:
		_ = push(sse.AppendComment(nil, ""))
	case controller.Disconnect:
		cancel()
	}
	return cancel, controller.Continue
}

// keepAlive is the keep-alive interval of event streams.
func (t *Transport) keepAlive() time.Duration {
	if t.cfg.KeepAlive > 0 {
		return t.cfg.KeepAlive
	}
	return 25 * time.Second
}
