package mcp

import (
	"context"
	"log/slog"
	"strconv"

	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// tooBig is the reply to a call whose result would encode to size bytes,
// over the engine's bound (Limits.MaxAnswerBytes,
// ConnOptions.MaxAnswerBytes): no request makes the server write, or hold
// for writing, more than the bound, whatever its handler returned. A
// tool's answer becomes a tool error, which a model can read and act on
// (ask for less); any other method's becomes -32603. The warning names
// what returned it. Results whose size is known before encoding (content
// blocks, resource contents) are refused before they are encoded; others
// once they are (Dispatch), and their buffers go back to their pools.
func (e *engine) tooBig(ctx context.Context, call *protocol.Call, state any, size int) protocol.Reply {
	attrs := []any{slog.String("method", call.Method), slog.String("id", call.ID.String()),
		slog.Int("bytes", size), slog.Int("limit", e.maxAnswer)}
	target := ""
	switch call.Method {
	case "tools/call":
		target = paramString(call.Params, "name")
		attrs = append(attrs, slog.String("tool", target))
	case "prompts/get":
		target = paramString(call.Params, "name")
		attrs = append(attrs, slog.String("prompt", target))
	case "resources/read":
		attrs = append(attrs, slog.String("resource", paramString(call.Params, "uri")))
	}
	e.log.WarnContext(ctx, "mcp: answer over the size bound, not sent", attrs...)

	what := "the result is at least " + strconv.Itoa(size) + " bytes, over the " + strconv.Itoa(e.maxAnswer) +
		" bytes this server sends in one answer"
	r := protocol.Reply{State: state, Target: target}
	if call.Method == "tools/call" {
		out, err := appendCallTool(nil, &CallToolResult{Content: []Content{Text("The tool's answer was not sent: " + what + ".")}, IsError: true})
		if err == nil {
			r.Result, r.ToolError = out, true
			return r
		}
	}
	r.Err = wire.NewError(wire.InternalError, "Internal error: "+what)
	return r
}

// overBound reports whether a result of at least size bytes is over the
// engine's bound.
func (e *engine) overBound(size int) bool { return e.maxAnswer > 0 && size > e.maxAnswer }

// dropResult gives r's result buffers back to their pools.
func dropResult(r *protocol.Reply) {
	if r.Head > 0 {
		wire.PutBig(r.Buffer)
	}
	if r.Pooled != nil {
		wire.PutBuffer(r.Pooled)
	}
}

// paramString returns the string member key of params, "" when it has
// none.
func paramString(params []byte, key string) string {
	var s string
	_ = wire.EachMember(params, func(k, v []byte) error {
		if wire.KeyIs(k, key) {
			s, _ = wire.Unquote(v)
		}
		return nil
	})
	return s
}
