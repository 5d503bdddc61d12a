package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp/jsonrpc"
	"github.com/saguaro-go/saguaro/sse"
)

// wantsProgress reports whether a request's params carry
// _meta.progressToken: the caller asked to hear how the call goes.
func wantsProgress(params json.RawMessage) bool {
	found := false
	_ = jsonrpc.EachMember(params, func(k, v []byte) error {
		if jsonrpc.KeyIs(k, "_meta") && len(v) > 0 && v[0] == '{' {
			_ = jsonrpc.EachMember(v, func(k, _ []byte) error {
				if jsonrpc.KeyIs(k, "progressToken") {
					found = true
				}
				return nil
			})
		}
		return nil
	})
	return found
}

// statelessStreaming reports whether a stateless legacy request is served
// on its own goroutine so that what it emits can stream: a streaming
// method whose caller asked for progress, from a client that accepts an
// event stream, unless JSONResponse is set. Everything else takes the
// synchronous path and is answered as JSON, its notifications dropped:
// without a session a caller has no other way to ask for them, and the
// synchronous path is the fast one.
func (t *transport) statelessStreaming(msg *jsonrpc.Message) bool {
	if t.opts.JSONResponse || msg.Kind != jsonrpc.KindRequest {
		return false
	}
	info, ok := t.engine.Method(msg.Method)
	return ok && info.Mode == ModeStreaming && wantsProgress(msg.Params)
}

// statelessCall runs a stateless legacy call on its own goroutine: its
// progress and log notifications stream on the response (started by the
// first one) and the result ends it; a call that emits nothing is answered
// as JSON. Closing the stream cancels the call (there is no session to
// resume it in). It shares the modern era's stream plumbing, which has the
// same shape: one call, one response stream, no server→client requests.
func (t *transport) statelessCall(r *controller.Request, rev Revision, msg *jsonrpc.Message) controller.Reply {
	ctx, cancel := context.WithCancel(r.Context())
	mb := r.Mailbox()
	out := &modernOutbound{mb: mb}
	id := msg.ID
	call := CallOf(msg, rev)
	call.Params = append(json.RawMessage(nil), msg.Params...) // the body is reused once Handle returns
	call.Outbound = out
	attrsCtx := r.Context()
	go func() {
		defer cancel()
		var reply Reply
		state, err := t.engine.NewState(ctx, rev)
		if err != nil {
			t.log.ErrorContext(ctx, "mcp: handler could not make a state", slog.Any("err", err))
			reply.Err = errInternal
		} else {
			reply = t.engine.Dispatch(ctx, &call, state)
		}
		if reply.Err != nil {
			t.attrs(attrsCtx, slog.Int(AttrErrorCode, reply.Err.Code))
		}
		out.finish(reply.AppendTo(make([]byte, 0, len(reply.Result)+64), id), http.StatusOK)
	}()
	first, err := mb.Receive(r.Context())
	if err != nil {
		cancel()
		return controller.Status(http.StatusServiceUnavailable)
	}
	switch m := first.(type) {
	case modernDone:
		return controller.Buffered(m.status, jsonHeader(), m.body)
	case modernStarted:
		h := http.Header{}
		sse.Headers(h)
		mb.Every(t.keepAlive(), keepAlive{})
		return controller.Loop(http.StatusOK, h, cancel, handleModernConn)
	}
	cancel()
	return controller.Status(http.StatusInternalServerError)
}
