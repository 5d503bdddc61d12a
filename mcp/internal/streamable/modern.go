package streamable

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
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
	buf, bad := t.readBody(r)
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
		return t.relayTask(replica, body) // another replica's task
	}
	return t.modernMessage(r, &msg)
}

// modernCall holds what the checks learnt about a modern request.
type modernCall struct {
	client   any // shared, read-only
	logLevel protocol.LogLevel
	read     protocol.Modern // what ReadModern read; it aliases the body
	identity string          // Config.Identity's
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
	m, perr := protocol.ReadModern(msg.Tape, msg.Method, msg.Params)
	if perr != nil {
		return modernCall{}, http.StatusBadRequest, perr
	}
	if missing := m.MissingMeta(); missing != nil {
		if rev, ok := protocol.ParseRevision(hv); oneVersion && (!ok || rev != protocol.Rev20260728) && !m.HasVersion {
			return modernCall{}, http.StatusBadRequest, protocol.UnsupportedVersion(hv)
		}
		return modernCall{}, http.StatusBadRequest, missing
	}
	if !oneVersion {
		return modernCall{}, http.StatusBadRequest, headerMismatch("MCP-Protocol-Version is required, once")
	}
	if hv != m.Version {
		return modernCall{}, http.StatusBadRequest, headerMismatch("MCP-Protocol-Version %q does not match _meta protocolVersion", hv)
	}
	if rev, ok := protocol.ParseRevision(m.Version); !ok || rev != protocol.Rev20260728 {
		return modernCall{}, http.StatusBadRequest, protocol.UnsupportedVersion(m.Version)
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

	client, level, jerr := m.Context(t.engine)
	if jerr != nil {
		return modernCall{}, http.StatusBadRequest, jerr
	}
	identity := ""
	if t.cfg.Identity != nil {
		identity = t.cfg.Identity(r)
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
			if specs := t.engine.ParamHeaders(r.Context(), m.Name, identity, client); len(specs) > 0 {
				if jerr := checkParamHeaders(h, specs, m.Args); jerr != nil {
					return modernCall{}, http.StatusBadRequest, jerr
				}
			}
		}
	}

	return modernCall{client: client, logLevel: level, read: m, identity: identity}, 0, nil
}

// methodNotFound is MethodNotFound naming the method.
func methodNotFound(method string) *wire.Error {
	return wire.NewError(wire.MethodNotFound, "Method not found: "+method)
}

// modernCall runs a checked modern request; the connection waits for its
// first output.
func (t *Transport) modernCall(r *controller.Request, msg *wire.Message, mc *modernCall) controller.Reply {
	// One allocation for the Call and what checkModern read of a
	// tools/call's params.
	oc := &ownedCall{Call: protocol.Call{Method: msg.Method, ID: msg.ID, Params: msg.Params, Tape: msg.Tape,
		Revision: protocol.Rev20260728, Client: mc.client, LogLevel: mc.logLevel,
		Owned: true, NoInput: !mc.read.Input}}
	call := &oc.Call
	call.Identity = mc.identity
	if refused := t.stepUp(r.Request, call); refused != nil {
		return refused
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
