package mcp

import (
	"context"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// FuzzDispatch drives decoder and Dispatch together against a Server with
// every feature: it must never panic, a request must get exactly one valid
// response, and a notification none.
func FuzzDispatch(f *testing.F) {
	for _, s := range []string{
		req("1", "initialize", `{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"c","version":"1"}}`),
		req("1", "tools/call", `{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":"t"}}`),
		req(`"x"`, "tools/call", `{"name":"sum","arguments":{"a":1,"b":2}}`),
		req("2", "tools/list", `{"cursor":"abc"}`),
		req("3", "resources/read", `{"uri":"test://template/1/data"}`),
		req("4", "prompts/get", `{"name":"test_prompt_with_arguments","arguments":{"arg1":"a"}}`),
		req("5", "completion/complete", `{"ref":{"type":"ref/prompt","name":"test_prompt_with_arguments"},"argument":{"name":"arg1","value":"a"}}`),
		req("6", "logging/setLevel", `{"level":"debug"}`),
		note("notifications/cancelled", `{"requestId":1}`),
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"\ud800"}}}`,
	} {
		f.Add([]byte(s), uint8(3))
	}
	s, _ := newPromptServer(f)
	_ = AddTool(s, &Tool{Name: "echo"}, func(ctx context.Context, r *CallToolRequest, in EchoIn) (string, error) { return in.Text, nil })
	_ = AddTool(s, &Tool{Name: "sum"}, func(ctx context.Context, r *CallToolRequest, in SumIn) (SumOut, error) {
		return SumOut{Sum: in.A + in.B}, nil
	})
	lg, _ := testLogger()
	e := newEngine(s, engineOptions{Logger: lg})
	f.Fuzz(func(t *testing.T, body []byte, rev uint8) {
		m, derr := e.Decoder().Decode(body)
		if derr != nil {
			out := wire.AppendErrorResponse(nil, m.ID, derr)
			if !json.Valid(out) {
				t.Fatalf("invalid error response %q", out)
			}
			return
		}
		if !m.IsCall() {
			return
		}
		c := testCall(&m, Revision(rev%5))
		c.Outbound = &recorder{}
		r := e.Dispatch(context.Background(), &c, nil)
		out := e.AppendReply(nil, m.ID, r)
		if m.Kind == wire.KindNotification {
			if len(out) != 0 {
				t.Fatalf("notification answered: %s", out)
			}
			return
		}
		if (r.Err == nil) == (r.Result == nil) {
			t.Fatalf("request must have exactly one of result and error: %+v", r)
		}
		if !json.Valid(out) || !utf8.Valid(out) {
			t.Fatalf("invalid response %q", out)
		}
	})
}
