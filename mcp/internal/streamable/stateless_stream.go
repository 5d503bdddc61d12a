package streamable

import (
	"encoding/json"
	"net/http"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// wantsProgress reports whether a request's params carry
// _meta.progressToken: the caller asked to hear how the call goes.
func wantsProgress(params json.RawMessage) bool {
	found := false
	_ = wire.EachMember(params, func(k, v []byte) error {
		if wire.KeyIs(k, "_meta") && len(v) > 0 && v[0] == '{' {
			_ = wire.EachMember(v, func(k, _ []byte) error {
				if wire.KeyIs(k, "progressToken") {
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
func (t *Transport) statelessStreaming(msg *wire.Message) bool {
	if t.cfg.JSONResponse || msg.Kind != wire.KindRequest {
		return false
	}
	info, ok := t.engine.Method(msg.Method)
	return ok && info.Mode == protocol.ModeStreaming && wantsProgress(msg.Params)
}

// statelessCall runs a stateless legacy call on its own goroutine (see
// oneCallStream): its progress and log notifications stream on the
// response and the result ends it; a call that emits nothing is answered
// as JSON.
func (t *Transport) statelessCall(r *controller.Request, rev protocol.Revision, msg *wire.Message) controller.Reply {
	call := callOf(msg, rev)
	call.Params = append(json.RawMessage(nil), msg.Params...) // the body is reused once Handle returns
	return t.oneCallStream(r, &call, func(id wire.ID, e *wire.Error) ([]byte, int) {
		return wire.AppendErrorResponse(nil, id, e), http.StatusOK
	})
}
