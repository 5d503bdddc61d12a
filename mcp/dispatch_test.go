package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// fullHandler implements every optional part; its state counts callbacks.
type fullHandler struct{}

func (fullHandler) Initialize(ctx context.Context, req *InitializeRequest, state any) (*InitializeResult, any, error) {
	return &InitializeResult{ServerInfo: Implementation{Name: "full", Version: "1.0"}, Instructions: "be nice"}, 0, nil
}

func next(state any) any {
	n, _ := state.(int)
	return n + 1
}

func (fullHandler) ListTools(ctx context.Context, req *ListRequest, state any) (*ListToolsResult, any, error) {
	return &ListToolsResult{Tools: []*Tool{{Name: "echo", Title: "Echo", Description: "echoes", Icons: []Icon{{Src: "https://x/i.png"}}, OutputSchema: json.RawMessage(`{"type":"object"}`)}}}, next(state), nil
}

func (fullHandler) CallTool(ctx context.Context, req *CallToolRequest, state any) (*CallToolResult, any, error) {
	switch req.Name {
	case "echo":
		return &CallToolResult{Content: []Content{Text(string(req.Arguments))}}, next(state), nil
	case "fail":
		return nil, next(state), errors.New("disk full")
	case "panic":
		panic("boom: secret internals")
	case "badutf8":
		return &CallToolResult{Content: []Content{Text("bad \xff")}}, next(state), nil
	case "rpcerr":
		return nil, next(state), wire.NewError(-1, "custom")
	}
	return nil, state, fmt.Errorf("%w: %s", ErrUnknownTool, req.Name)
}

func (fullHandler) ListResources(ctx context.Context, req *ListRequest, state any) (*ListResourcesResult, any, error) {
	return &ListResourcesResult{Resources: []*Resource{{URI: "test://a", Name: "a", Title: "A"}}, NextCursor: "c2"}, next(state), nil
}

func (fullHandler) ReadResource(ctx context.Context, req *ReadResourceRequest, state any) (*ReadResourceResult, any, error) {
	if req.URI != "test://a" {
		return nil, state, ErrResourceNotFound
	}
	return &ReadResourceResult{Contents: []*ResourceContents{{URI: "test://a", MIMEType: "text/plain", Text: "hi"}}}, next(state), nil
}

func (fullHandler) ListResourceTemplates(ctx context.Context, req *ListRequest, state any) (*ListResourceTemplatesResult, any, error) {
	return &ListResourceTemplatesResult{ResourceTemplates: []*ResourceTemplate{{URITemplate: "test://t/{id}", Name: "t"}}}, next(state), nil
}

func (fullHandler) Subscribe(ctx context.Context, req *SubscribeRequest, state any) (any, error) {
	return next(state), nil
}

func (fullHandler) Unsubscribe(ctx context.Context, req *SubscribeRequest, state any) (any, error) {
	return next(state), nil
}

func (fullHandler) ListPrompts(ctx context.Context, req *ListRequest, state any) (*ListPromptsResult, any, error) {
	return &ListPromptsResult{Prompts: []*Prompt{{Name: "p", Description: "d", Arguments: []*PromptArgument{{Name: "a", Title: "A", Required: true}}}}}, next(state), nil
}

func (fullHandler) GetPrompt(ctx context.Context, req *GetPromptRequest, state any) (*GetPromptResult, any, error) {
	if req.Name != "p" {
		return nil, state, ErrUnknownPrompt
	}
	return &GetPromptResult{Messages: []*PromptMessage{{Role: RoleUser, Content: Text("a=" + req.Arguments["a"])}}}, next(state), nil
}

func (fullHandler) Complete(ctx context.Context, req *CompleteRequest, state any) (*CompleteResult, any, error) {
	var vs []string
	for i := range 150 {
		vs = append(vs, fmt.Sprintf("%s%d", req.ArgumentValue, i))
	}
	return &CompleteResult{Values: vs}, next(state), nil
}

func (fullHandler) SetLogLevel(ctx context.Context, req *SetLogLevelRequest, state any) (any, error) {
	return next(state), nil
}

func (fullHandler) RootsListChanged(ctx context.Context, req *Request, state any) (any, error) {
	return next(state), nil
}

// bareHandler implements only Handler.
type bareHandler struct{}

func (bareHandler) Initialize(ctx context.Context, req *InitializeRequest, state any) (*InitializeResult, any, error) {
	return &InitializeResult{ServerInfo: Implementation{Name: "bare", Version: "0"}}, "s0", nil
}

var legacyRevs = []Revision{Rev20250326, Rev20250618, Rev20251125}

func testLogger() (*slog.Logger, *bytes.Buffer) {
	var b bytes.Buffer
	return slog.New(slog.NewTextHandler(&b, nil)), &b
}

// roundTrip decodes body, dispatches it and encodes the response.
func roundTrip(t *testing.T, e *engine, rev Revision, body string, state any) (string, protocol.Reply) {
	t.Helper()
	m, derr := e.Decoder().Decode([]byte(body))
	if derr != nil {
		return string(wire.AppendErrorResponse(nil, m.ID, derr)), protocol.Reply{State: state}
	}
	call := testCall(&m, rev)
	r := e.Dispatch(context.Background(), &call, state)
	out := e.AppendReply(nil, m.ID, r)
	if m.Kind == wire.KindRequest {
		if len(out) == 0 {
			t.Fatalf("request %s got no response", body)
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON response %q", out)
		}
	} else if len(out) != 0 {
		t.Fatalf("notification %s got a response %s", body, out)
	}
	return string(out), r
}

func req(id, method, params string) string {
	if params == "" {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q}`, id, method)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params)
}

func note(method, params string) string {
	if params == "" {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":%q}`, method)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s}`, method, params)
}

func resultOf(id, result string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":` + result + `}`
}

func errorOf(t *testing.T, out string) int {
	t.Helper()
	var v struct {
		Error *wire.Error `json:"error"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Error == nil {
		return 0
	}
	return v.Error.Code
}

const initParams = `{"protocolVersion":%q,"capabilities":{"sampling":{},"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}`

func TestDispatchEveryMethodEveryRevision(t *testing.T) {
	lg, _ := testLogger()
	full := newEngine(fullHandler{}, engineOptions{Logger: lg})
	bare := newEngine(bareHandler{}, engineOptions{Logger: lg})
	for _, rev := range legacyRevs {
		r06 := rev >= Rev20250618
		r11 := rev >= Rev20251125
		titled := func(s06, s03 string) string {
			if r06 {
				return s06
			}
			return s03
		}
		toolJSON := `{"name":"echo","description":"echoes","inputSchema":{"type":"object"}}`
		if r06 {
			toolJSON = `{"name":"echo","title":"Echo","description":"echoes","inputSchema":{"type":"object"},"outputSchema":{"type":"object"}`
			if r11 {
				toolJSON += `,"icons":[{"src":"https://x/i.png"}]`
			}
			toolJSON += `}`
		}
		tests := []struct {
			name    string
			body    string
			want    string // exact response; "" = check code
			code    int
			state   any // expected state after; nil = unchanged (7)
			bareErr int // response of the bare handler (0 = same as full)
		}{
			{name: "initialize", body: req("1", "initialize", fmt.Sprintf(initParams, rev.String())),
				want: resultOf("1", `{"protocolVersion":"`+rev.String()+`","capabilities":{"tools":{},"resources":{"subscribe":true},"prompts":{},"logging":{},"completions":{}},"serverInfo":{"name":"full","version":"1.0"},"instructions":"be nice"}`), state: 0},
			{name: "ping", body: req(`"p"`, "ping", ""), want: resultOf(`"p"`, `{}`)},
			{name: "ping with meta", body: req("2", "ping", `{"_meta":{"progressToken":1}}`), want: resultOf("2", `{}`)},
			{name: "tools/list", body: req("3", "tools/list", ""), want: resultOf("3", `{"tools":[`+toolJSON+`]}`), state: 8, bareErr: wire.MethodNotFound},
			{name: "tools/call", body: req("4", "tools/call", `{"name":"echo","arguments":{"a":1}}`), want: resultOf("4", `{"content":[{"type":"text","text":"{\"a\":1}"}]}`), state: 8, bareErr: wire.MethodNotFound},
			{name: "tools/call tool error", body: req("4", "tools/call", `{"name":"fail"}`), want: resultOf("4", `{"content":[{"type":"text","text":"disk full"}],"isError":true}`), state: 8, bareErr: wire.MethodNotFound},
			{name: "tools/call unknown", body: req("4", "tools/call", `{"name":"nope"}`), code: wire.InvalidParams, bareErr: wire.MethodNotFound},
			{name: "tools/call rpc error", body: req("4", "tools/call", `{"name":"rpcerr"}`), want: `{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"custom"}}`, state: 8, bareErr: wire.MethodNotFound},
			{name: "tools/call missing name", body: req("4", "tools/call", `{}`), code: wire.InvalidParams, bareErr: wire.MethodNotFound},
			{name: "tools/call name not string", body: req("4", "tools/call", `{"name":5}`), code: wire.InvalidParams, bareErr: wire.MethodNotFound},
			{name: "tools/call NAME case", body: req("4", "tools/call", `{"NAME":"echo"}`), code: wire.InvalidParams, bareErr: wire.MethodNotFound},
			{name: "tools/call args not object", body: req("4", "tools/call", `{"name":"echo","arguments":[1]}`), code: wire.InvalidParams, bareErr: wire.MethodNotFound},
			{name: "tools/call params array", body: req("4", "tools/call", `["echo"]`), code: wire.InvalidParams, bareErr: wire.MethodNotFound},
			{name: "tools/call bad progress token", body: req("4", "tools/call", `{"name":"echo","_meta":{"progressToken":true}}`), code: wire.InvalidParams, bareErr: wire.MethodNotFound},
			{name: "tools/call panic", body: req("4", "tools/call", `{"name":"panic"}`), want: `{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"Internal error"}}`, bareErr: wire.MethodNotFound},
			{name: "tools/call invalid utf8", body: req("4", "tools/call", `{"name":"badutf8"}`), code: wire.InternalError, state: 8, bareErr: wire.MethodNotFound},
			{name: "resources/list", body: req("5", "resources/list", `{"cursor":"x"}`), want: resultOf("5", `{"resources":[{"uri":"test://a","name":"a"`+titled(`,"title":"A"`, "")+`}],"nextCursor":"c2"}`), state: 8, bareErr: wire.MethodNotFound},
			{name: "resources/list cursor not string", body: req("5", "resources/list", `{"cursor":1}`), code: wire.InvalidParams, bareErr: wire.MethodNotFound},
			{name: "resources/templates/list", body: req("6", "resources/templates/list", ""), want: resultOf("6", `{"resourceTemplates":[{"uriTemplate":"test://t/{id}","name":"t"}]}`), state: 8, bareErr: wire.MethodNotFound},
			{name: "resources/read", body: req("7", "resources/read", `{"uri":"test://a"}`), want: resultOf("7", `{"contents":[{"uri":"test://a","mimeType":"text/plain","text":"hi"}]}`), state: 8, bareErr: wire.MethodNotFound},
			{name: "resources/read not found", body: req("7", "resources/read", `{"uri":"test://zz"}`), want: `{"jsonrpc":"2.0","id":7,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"test://zz"}}}`, bareErr: wire.MethodNotFound},
			{name: "resources/read missing uri", body: req("7", "resources/read", `{}`), code: wire.InvalidParams, bareErr: wire.MethodNotFound},
			{name: "resources/subscribe", body: req("8", "resources/subscribe", `{"uri":"test://a"}`), want: resultOf("8", `{}`), state: 8, bareErr: wire.MethodNotFound},
			{name: "resources/unsubscribe", body: req("8", "resources/unsubscribe", `{"uri":"test://a"}`), want: resultOf("8", `{}`), state: 8, bareErr: wire.MethodNotFound},
			{name: "resources/subscribe uri number", body: req("8", "resources/subscribe", `{"uri":1}`), code: wire.InvalidParams, bareErr: wire.MethodNotFound},
			{name: "prompts/list", body: req("9", "prompts/list", ""), want: resultOf("9", `{"prompts":[{"name":"p","description":"d","arguments":[{"name":"a"`+titled(`,"title":"A"`, "")+`,"required":true}]}]}`), state: 8, bareErr: wire.MethodNotFound},
			{name: "prompts/get", body: req("10", "prompts/get", `{"name":"p","arguments":{"a":"x"}}`), want: resultOf("10", `{"messages":[{"role":"user","content":{"type":"text","text":"a=x"}}]}`), state: 8, bareErr: wire.MethodNotFound},
			{name: "prompts/get unknown", body: req("10", "prompts/get", `{"name":"q"}`), code: wire.InvalidParams, bareErr: wire.MethodNotFound},
			{name: "prompts/get args not strings", body: req("10", "prompts/get", `{"name":"p","arguments":{"a":1}}`), code: wire.InvalidParams, bareErr: wire.MethodNotFound},
			{name: "completion/complete", body: req("11", "completion/complete", `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"v"}}`), code: 0, state: 8, bareErr: wire.MethodNotFound},
			{name: "completion/complete bad ref", body: req("11", "completion/complete", `{"ref":{"type":"ref/x"},"argument":{"name":"a","value":"v"}}`), code: wire.InvalidParams, bareErr: wire.MethodNotFound},
			{name: "completion/complete missing argument", body: req("11", "completion/complete", `{"ref":{"type":"ref/resource","uri":"u"}}`), code: wire.InvalidParams, bareErr: wire.MethodNotFound},
			{name: "logging/setLevel", body: req("12", "logging/setLevel", `{"level":"debug"}`), want: resultOf("12", `{}`), state: 8, bareErr: wire.MethodNotFound},
			{name: "logging/setLevel bad", body: req("12", "logging/setLevel", `{"level":"loud"}`), code: wire.InvalidParams, bareErr: wire.MethodNotFound},
			{name: "logging/setLevel missing", body: req("12", "logging/setLevel", `{}`), code: wire.InvalidParams, bareErr: wire.MethodNotFound},
			{name: "unknown method", body: req("13", "tools/destroy", ""), code: wire.MethodNotFound},
			{name: "notification method as request", body: req("13", "notifications/initialized", ""), code: wire.MethodNotFound},
			{name: "26-only method", body: req("13", "server/discover", ""), code: wire.MethodNotFound},
			{name: "tasks/get", body: req("13", "tasks/get", `{"taskId":"t"}`), code: wire.MethodNotFound},
			{name: "notifications/initialized", body: note("notifications/initialized", "")},
			{name: "notifications/cancelled", body: note("notifications/cancelled", `{"requestId":"r1","reason":"x"}`)},
			{name: "notifications/cancelled bad", body: note("notifications/cancelled", `{"requestId":1.5}`)},
			{name: "notifications/progress", body: note("notifications/progress", `{"progressToken":1,"progress":1}`)},
			{name: "notifications/roots/list_changed", body: note("notifications/roots/list_changed", ""), state: 8},
			{name: "unknown notification", body: note("notifications/whatever", "")},
			{name: "request-method as notification", body: note("tools/call", `{"name":"panic"}`)},
		}
		for _, tt := range tests {
			t.Run(rev.String()+"/"+tt.name, func(t *testing.T) {
				for _, which := range []string{"full", "bare"} {
					e, want, code := full, tt.want, tt.code
					var wantState any = 7
					if tt.state != nil {
						wantState = tt.state
					}
					if which == "bare" {
						e = bare
						if tt.bareErr != 0 {
							want, code, wantState = "", tt.bareErr, 7
						}
						if tt.name == "initialize" {
							want = resultOf("1", `{"protocolVersion":"`+rev.String()+`","capabilities":{},"serverInfo":{"name":"bare","version":"0"}}`)
							wantState = "s0"
						}
						if tt.name == "notifications/roots/list_changed" {
							wantState = 7
						}
					}
					out, r := roundTrip(t, e, rev, tt.body, 7)
					if want != "" && out != want {
						t.Errorf("%s:\n got  %s\n want %s", which, out, want)
					}
					if want == "" && code != 0 && errorOf(t, out) != code {
						t.Errorf("%s: got %s, want code %d", which, out, code)
					}
					if want == "" && code == 0 && strings.HasPrefix(tt.body, `{"jsonrpc":"2.0","id"`) && errorOf(t, out) != 0 {
						t.Errorf("%s: unexpected error %s", which, out)
					}
					if r.State != wantState {
						t.Errorf("%s: state %v, want %v", which, r.State, wantState)
					}
				}
			})
		}
	}
}

func TestDispatchIDEchoKeepsType(t *testing.T) {
	e := newEngine(fullHandler{}, engineOptions{})
	for _, id := range []string{`1`, `"1"`, `-5`, `"abc"`, `9007199254740993`} {
		for _, body := range []string{req(id, "ping", ""), req(id, "nope", ""), req(id, "tools/call", `{}`)} {
			out, _ := roundTrip(t, e, Rev20251125, body, nil)
			if !strings.Contains(out, `"id":`+id+`,`) {
				t.Errorf("%s: id not echoed with its type in %s", body, out)
			}
		}
	}
}

func TestDispatchEffects(t *testing.T) {
	e := newEngine(fullHandler{}, engineOptions{})
	ctx := context.Background()
	run := func(body string) protocol.Reply {
		m, err := e.Decoder().Decode([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		c := testCall(&m, Rev20250618)
		return e.Dispatch(ctx, &c, nil)
	}
	r := run(req("1", "initialize", fmt.Sprintf(initParams, "2025-06-18")))
	if r.Effect.Kind != protocol.EffectInitialize || r.Effect.Revision != protocol.Rev20250618 || r.Effect.Client.(*ClientCapabilities).Sampling == nil {
		t.Errorf("initialize effect %+v", r.Effect)
	}
	if r := run(req("1", "logging/setLevel", `{"level":"warning"}`)); r.Effect.Kind != protocol.EffectSetLogLevel || r.Effect.LogLevel != protocol.LogWarning {
		t.Errorf("setLevel effect %+v", r.Effect)
	}
	if r := run(req("1", "resources/subscribe", `{"uri":"u"}`)); r.Effect.Kind != protocol.EffectSubscribe || r.Effect.URI != "u" {
		t.Errorf("subscribe effect %+v", r.Effect)
	}
	if r := run(req("1", "resources/unsubscribe", `{"uri":"u"}`)); r.Effect.Kind != protocol.EffectUnsubscribe || r.Effect.URI != "u" {
		t.Errorf("unsubscribe effect %+v", r.Effect)
	}
	if r := run(note("notifications/cancelled", `{"requestId":"r1","reason":"bored"}`)); r.Effect.Kind != protocol.EffectCancel || r.Effect.RequestID != wire.StringID("r1") {
		t.Errorf("cancel effect %+v", r.Effect)
	}
	if r := run(note("notifications/cancelled", `{"requestId":7}`)); r.Effect.RequestID != wire.Int(7) {
		t.Errorf("cancel effect %+v", r.Effect)
	}
	if r := run(note("notifications/initialized", "")); r.Effect.Kind != protocol.EffectInitialized {
		t.Errorf("initialized effect %+v", r.Effect)
	}
}

func TestInitializeNegotiation(t *testing.T) {
	e := newEngine(bareHandler{}, engineOptions{})
	for requested, want := range map[string]string{
		"2025-03-26": "2025-03-26", "2025-06-18": "2025-06-18", "2025-11-25": "2025-11-25",
		"2024-11-05": "2025-11-25", "2026-07-28": "2025-11-25", "1999-01-01": "2025-11-25", "": "2025-11-25",
	} {
		out, _ := roundTrip(t, e, 0, req("1", "initialize", fmt.Sprintf(initParams, requested)), nil)
		if !strings.Contains(out, `"protocolVersion":"`+want+`"`) {
			t.Errorf("%q: %s", requested, out)
		}
	}
	for _, params := range []string{
		`{}`,
		`{"protocolVersion":"2025-06-18","capabilities":{}}`,
		`{"protocolVersion":1,"capabilities":{},"clientInfo":{"name":"c","version":"1"}}`,
		`{"protocolVersion":"2025-06-18","capabilities":[],"clientInfo":{"name":"c","version":"1"}}`,
		`{"protocolVersion":"2025-06-18","capabilities":{"roots":5},"clientInfo":{"name":"c","version":"1"}}`,
		`{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c"}}`,
		`{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"version":"1"}}`,
	} {
		out, _ := roundTrip(t, e, 0, req("1", "initialize", params), nil)
		if errorOf(t, out) != wire.InvalidParams {
			t.Errorf("%s: %s", params, out)
		}
	}
}

func TestDispatchPanicIsLoggedWithStack(t *testing.T) {
	lg, buf := testLogger()
	e := newEngine(fullHandler{}, engineOptions{Logger: lg})
	out, r := roundTrip(t, e, Rev20251125, req("1", "tools/call", `{"name":"panic"}`), "old")
	if out != `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}` {
		t.Errorf("got %s", out)
	}
	if strings.Contains(out, "boom") {
		t.Error("panic text leaked to the client")
	}
	if r.State != "old" {
		t.Errorf("state %v, want the old state", r.State)
	}
	if !strings.Contains(buf.String(), "boom: secret internals") || !strings.Contains(buf.String(), "goroutine") {
		t.Errorf("panic not logged with its stack: %s", buf.String())
	}
}

func TestDispatchCompletionTruncates(t *testing.T) {
	e := newEngine(fullHandler{}, engineOptions{})
	out, _ := roundTrip(t, e, Rev20251125, req("1", "completion/complete", `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"v"},"context":{"arguments":{"b":"c"}}}`), nil)
	var v struct {
		Result struct {
			Completion struct {
				Values  []string `json:"values"`
				Total   int      `json:"total"`
				HasMore bool     `json:"hasMore"`
			} `json:"completion"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	c := v.Result.Completion
	if len(c.Values) != 100 || c.Total != 150 || !c.HasMore || c.Values[0] != "v0" {
		t.Errorf("got %d values, total %d, hasMore %v", len(c.Values), c.Total, c.HasMore)
	}
}

func TestDispatch2026Envelope(t *testing.T) {
	e := newEngine(fullHandler{}, engineOptions{})
	out, _ := roundTrip(t, e, Rev20260728, req("1", "tools/list", ""), nil)
	for _, want := range []string{`"resultType":"complete"`, `"ttlMs":0`, `"cacheScope":"private"`, `"io.modelcontextprotocol/serverInfo":{"name":"full"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("tools/list lacks %s: %s", want, out)
		}
	}
	out, _ = roundTrip(t, e, Rev20260728, req("2", "ping", ""), nil)
	if errorOf(t, out) != wire.MethodNotFound {
		t.Errorf("ping in 2026-07-28: %s", out)
	}
}

func TestMethodTable(t *testing.T) {
	e := newEngine(fullHandler{}, engineOptions{})
	modes := map[string]protocol.Mode{"ping": protocol.ModeFast, "notifications/cancelled": protocol.ModeFast, "tools/call": protocol.ModeStreaming, "tools/list": protocol.ModeStateful, "initialize": protocol.ModeStateful}
	for name, want := range modes {
		m, ok := e.Method(name)
		if !ok || m.Mode != want {
			t.Errorf("%s: mode %v", name, m.Mode)
		}
	}
	m, _ := e.Method("server/discover")
	if m.In(protocol.Rev20251125) || !m.In(protocol.Rev20260728) {
		t.Error("server/discover revisions")
	}
	m, _ = e.Method("initialize")
	if !m.In(0) || m.In(protocol.Rev20260728) {
		t.Error("initialize revisions")
	}
	if _, ok := e.Method("nope"); ok {
		t.Error("unknown method found")
	}
}
