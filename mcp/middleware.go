package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"unicode/utf8"

	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// MethodHandler serves one message a client sent, request or
// notification, and returns the request's result as MCP sends it (the
// encoded result object) or its error. For a notification (req.ID zero)
// both are ignored. It is what ServerOptions.Middleware wraps:
//
//	func audit(next mcp.MethodHandler) mcp.MethodHandler {
//		return func(ctx context.Context, req *mcp.Request) (json.RawMessage, error) {
//			start := time.Now()
//			res, err := next(ctx, req)
//			slog.InfoContext(ctx, "mcp", "method", req.Method, "target", req.Target(),
//				"caller", req.Identity, "took", time.Since(start), "err", err)
//			return res, err
//		}
//	}
//
// A middleware may refuse a request by returning an error without calling
// next: a *jsonrpc.Error is sent as it is, ErrUnknownTool, ErrUnknownPrompt
// and ErrInvalidParams become InvalidParams, ErrResourceNotFound becomes
// ResourceNotFound, and any other error InternalError with a generic
// message (the error is logged, never sent). It may also replace the
// result with other valid JSON, or pass ctx with values of its own on to
// next, where the handler sees them.
//
// Pitfalls: pass next the context you were given, or one derived from
// it (next needs what it carries). The result is valid only until the
// middleware returns (the engine may reuse its buffer): copy it to keep
// it. A 2026-07-28 result
// is wrapped in its envelope (resultType, _meta serverInfo, caching hints)
// after the middleware. req is shared with the method's own handler,
// which parses Params again: read it, never modify it.
type MethodHandler func(ctx context.Context, req *Request) (json.RawMessage, error)

// middlewareCall is what the innermost MethodHandler needs of the call it
// runs, carried by the context so that the chain is built once (and the
// Request of every call, middleware or not, stays small).
type middlewareCall struct {
	req   Request // the middleware's view, allocated with the rest
	m     *methodInfo
	call  *protocol.Call
	rev   Revision
	state any
	reply protocol.Reply
	ran   bool
}

// chain builds the handler that runs the middleware, first outermost,
// around a method's own run.
func (e *engine) chain(mw []func(MethodHandler) MethodHandler) MethodHandler {
	h := MethodHandler(func(ctx context.Context, req *Request) (json.RawMessage, error) {
		mc, _ := ctx.Value(middlewareKey{}).(*middlewareCall)
		if mc == nil || mc.ran {
			// A Request the middleware made itself, or next called twice.
			return nil, errInternal
		}
		mc.ran = true
		mc.reply = mc.m.run(e, ctx, mc.call, mc.rev, mc.state)
		if mc.reply.Err != nil {
			return nil, mc.reply.Err
		}
		return mc.reply.Result, nil
	})
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

// through runs a method's call through the middleware and makes its
// reply of what the chain returned.
func (e *engine) through(ctx context.Context, m *methodInfo, call *protocol.Call, rev Revision, state any) protocol.Reply {
	mc := &middlewareCall{m: m, call: call, rev: rev, state: state}
	req := &mc.req
	meta, _ := parsePlain(call.Params)
	e.fill(req, call, rev, meta)
	res, err := e.handle(context.WithValue(ctx, middlewareKey{}, mc), req)
	if call.ID.IsZero() {
		if !mc.ran {
			return protocol.Reply{State: state}
		}
		return mc.reply
	}
	reply := mc.reply
	if !mc.ran {
		reply = protocol.Reply{State: state}
	}
	switch {
	case err != nil:
		if mc.ran && reply.Err != nil && err == error(reply.Err) {
			return reply // the method's own error
		}
		release(&reply)
		reply.Result, reply.Effect = nil, protocol.Effect{}
		reply.Err = e.handlerError(ctx, call, err)
	case mc.ran && reply.Err == nil && sameBytes(res, reply.Result):
		// The method's own result.
	default:
		release(&reply)
		reply.Err = nil
		if res == nil {
			res = resultEmpty
		}
		if !utf8.Valid(res) || !json.Valid(res) {
			e.log.ErrorContext(ctx, "mcp: middleware returned a result that is not valid JSON", slog.String("method", call.Method))
			reply.Result, reply.Effect = nil, protocol.Effect{}
			reply.Err = errUnencoded
			return reply
		}
		reply.Result = res
	}
	return reply
}

type middlewareKey struct{}

// release lets go of what holds a reply's result (a pooled or big
// buffer) when the result is replaced.
func release(r *protocol.Reply) {
	if r.Pooled != nil {
		wire.PutBuffer(r.Pooled)
		r.Pooled = nil
	}
	r.Buffer, r.Head, r.Bare, r.ToolError = nil, 0, false, false
}

// sameBytes reports whether a and b are the same slice.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
