package streamable

import (
	"log/slog"
	"net/http"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// callName returns the name a request is about: the tool of tools/call,
// the prompt of prompts/get, the URI of resources/read, subscribe and
// unsubscribe; "" otherwise. It scans the raw params without decoding
// them.
func callName(msg *wire.Message) string {
	member := ""
	switch msg.Method {
	case "tools/call", "prompts/get":
		member = "name"
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		member = "uri"
	default:
		return ""
	}
	name := ""
	if len(msg.Params) > 0 {
		_ = wire.EachMember(msg.Params, func(k, v []byte) error {
			if wire.KeyIs(k, member) {
				name, _ = wire.Unquote(v)
			}
			return nil
		})
	}
	return name
}

// stepUp asks the engine whether the caller of a request must add scopes
// to use what it names: then the step-up challenge answers it (Config.StepUp)
// and it is not dispatched.
func (t *Transport) stepUp(r *http.Request, call *protocol.Call) controller.Reply {
	if t.cfg.StepUp == nil || call.ID.IsZero() {
		return nil
	}
	scopes := t.engine.StepUp(r.Context(), call)
	if scopes == nil {
		return nil
	}
	id := call.ID
	return controller.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.attrs(r.Context(), slog.Int(protocol.AttrErrorCode, wire.InvalidRequest))
		t.cfg.StepUp(w, r, id, scopes)
	}))
}

// authorize asks Options.Authorize about a request (never a notification
// or a response): nil lets it through, anything else is the refusal to
// send instead of dispatching it.
func (t *Transport) authorize(r *http.Request, msg *wire.Message) controller.Reply {
	if t.cfg.Authorize == nil || msg.Kind != wire.KindRequest {
		return nil
	}
	if h := t.cfg.Authorize(r, msg.Method, callName(msg)); h != nil {
		return controller.Handler(h)
	}
	return nil
}
