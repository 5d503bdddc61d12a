package mcp

import (
	"net/http"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp/jsonrpc"
)

// callName returns the name a request is about: the tool of tools/call,
// the prompt of prompts/get, the URI of resources/read, subscribe and
// unsubscribe; "" otherwise. It scans the raw params without decoding
// them.
func callName(msg *jsonrpc.Message) string {
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
		_ = jsonrpc.EachMember(msg.Params, func(k, v []byte) error {
			if jsonrpc.KeyIs(k, member) {
				name, _ = jsonrpc.Unquote(v)
			}
			return nil
		})
	}
	return name
}

// authorize asks Options.Authorize about a request (never a notification
// or a response): nil lets it through, anything else is the refusal to
// send instead of dispatching it.
func (t *transport) authorize(r *http.Request, msg *jsonrpc.Message) controller.Reply {
	if t.opts.Authorize == nil || msg.Kind != jsonrpc.KindRequest {
		return nil
	}
	if h := t.opts.Authorize(r, msg.Method, callName(msg)); h != nil {
		return controller.Handler(h)
	}
	return nil
}
