package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

type EchoIn struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

type SumIn struct {
	A int   `json:"a"`
	B int   `json:"b"`
	C *int  `json:"c,omitempty"`
	L []int `json:"l,omitempty"`
}

type SumOut struct {
	Sum int `json:"sum"`
}

func newTestServer(t *testing.T) (*Server, *engine) {
	t.Helper()
	s := NewServer(Implementation{Name: "test", Version: "1"}, &ServerOptions{Instructions: "hi"})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(AddTool(s, &Tool{Name: "echo", Description: "echoes"}, func(ctx context.Context, req *CallToolRequest, in EchoIn) (*CallToolResult, error) {
		return &CallToolResult{Content: []Content{Text(in.Text)}}, nil
	}))
	must(AddTool(s, &Tool{Name: "sum", Description: "adds"}, func(ctx context.Context, req *CallToolRequest, in SumIn) (SumOut, error) {
		return SumOut{Sum: in.A + in.B}, nil
	}))
	must(AddTool(s, &Tool{Name: "lie", Description: "wrong output", OutputSchema: json.RawMessage(`{"type":"object","properties":{"sum":{"type":"string"}}}`)},
		func(ctx context.Context, req *CallToolRequest, in struct{}) (SumOut, error) {
			return SumOut{Sum: 1}, nil
		}))
	must(AddTool(s, &Tool{Name: "fail", Description: "fails"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		return "", errors.New("This tool intentionally returns an error for testing")
	}))
	must(AddTool(s, &Tool{Name: "boom", Description: "panics"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		panic("kaboom")
	}))
	must(AddTool(s, &Tool{Name: "mojibake", Description: "bad utf8"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		return "caf\xe9", nil
	}))
	must(AddTool(s, &Tool{Name: "mojibake_structured", Description: "bad utf8"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (map[string]string, error) {
		return map[string]string{"k": "\xff"}, nil
	}))
	must(s.AddToolRaw(&Tool{Name: "json_schema_2020_12_tool", Description: "raw", InputSchema: json.RawMessage(schema202012)},
		func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
			return &CallToolResult{Content: []Content{Text(string(req.Arguments))}}, nil
		}))
	must(s.AddToolRaw(&Tool{Name: "noargs", Description: "no schema"}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{Content: []Content{Text("args=" + string(req.Arguments))}}, nil
	}))
	lg, _ := testLogger()
	return s, newEngine(s, engineOptions{Logger: lg})
}

const schema202012 = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"}},"additionalProperties":false}`

func call(t *testing.T, e *engine, rev Revision, name, args string) string {
	t.Helper()
	params := fmt.Sprintf(`{"name":%q}`, name)
	if args != "" {
		params = fmt.Sprintf(`{"name":%q,"arguments":%s}`, name, args)
	}
	out, _ := roundTrip(t, e, rev, req("1", "tools/call", params), nil)
	return out
}

func TestTypedTools(t *testing.T) {
	_, e := newTestServer(t)
	tests := []struct {
		name, tool, args string
		rev              Revision
		want             string
	}{
		{"echo", "echo", `{"text":"hi"}`, Rev20251125, resultOf("1", `{"content":[{"type":"text","text":"hi"}]}`)},
		{"structured", "sum", `{"a":2,"b":3}`, Rev20250618, resultOf("1", `{"content":[{"type":"text","text":"{\"sum\":5}"}],"structuredContent":{"sum":5}}`)},
		{"optional fields", "sum", `{"a":2,"b":3,"c":4,"l":[1]}`, Rev20251125, ""},
		{"missing required 11", "sum", `{"a":2}`, Rev20251125, resultOf("1", `{"content":[{"type":"text","text":"Invalid arguments for tool sum: /: missing property 'b'"}],"isError":true}`)},
		{"missing required 06", "sum", `{"a":2}`, Rev20250618, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid arguments for tool sum: /: missing property 'b'"}}`},
		{"missing required 03", "sum", `{"a":2}`, Rev20250326, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid arguments for tool sum: /: missing property 'b'"}}`},
		{"wrong type", "echo", `{"text":1}`, Rev20251125, resultOf("1", `{"content":[{"type":"text","text":"Invalid arguments for tool echo: /text: got number, want string"}],"isError":true}`)},
		{"extra property", "echo", `{"text":"x","y":1}`, Rev20251125, resultOf("1", `{"content":[{"type":"text","text":"Invalid arguments for tool echo: /: additional properties 'y' not allowed"}],"isError":true}`)},
		{"case differs", "echo", `{"TEXT":"x"}`, Rev20251125, ""},
		{"no arguments", "echo", ``, Rev20251125, ""},
		{"fraction for int", "sum", `{"a":1.5,"b":1}`, Rev20251125, ""},
		{"tool error", "fail", `{}`, Rev20251125, resultOf("1", `{"content":[{"type":"text","text":"This tool intentionally returns an error for testing"}],"isError":true}`)},
		{"tool error 03", "fail", `{}`, Rev20250326, resultOf("1", `{"content":[{"type":"text","text":"This tool intentionally returns an error for testing"}],"isError":true}`)},
		{"output mismatch", "lie", `{}`, Rev20251125, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error: the tool's output does not match its output schema"}}`},
		{"panic", "boom", `{}`, Rev20251125, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}`},
		{"invalid utf8 text", "mojibake", `{}`, Rev20251125, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error: the result could not be encoded"}}`},
		{"invalid utf8 structured", "mojibake_structured", `{}`, Rev20251125, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error: the result could not be encoded"}}`},
		{"unknown tool", "nope", `{}`, Rev20251125, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: unknown tool: \"nope\""}}`},
		{"raw schema enforced", "json_schema_2020_12_tool", `{"name":"n","address":{"city":5}}`, Rev20251125, ""},
		{"raw schema ok", "json_schema_2020_12_tool", `{"name":"n","address":{"city":"c"}}`, Rev20251125, resultOf("1", `{"content":[{"type":"text","text":"{\"name\":\"n\",\"address\":{\"city\":\"c\"}}"}]}`)},
		{"raw without arguments gets {}", "noargs", ``, Rev20251125, resultOf("1", `{"content":[{"type":"text","text":"args={}"}]}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := call(t, e, tt.rev, tt.tool, tt.args)
			if tt.want != "" && out != tt.want {
				t.Errorf("\n got  %s\n want %s", out, tt.want)
			}
			switch tt.name {
			case "case differs", "no arguments", "fraction for int", "raw schema enforced":
				if !strings.Contains(out, `"isError":true`) || !strings.Contains(out, "Invalid arguments") {
					t.Errorf("want an invalid-arguments result, got %s", out)
				}
			case "optional fields":
				if !strings.Contains(out, `"sum":5`) {
					t.Errorf("got %s", out)
				}
			}
		})
	}
}

func TestToolsListSchemas(t *testing.T) {
	_, e := newTestServer(t)
	out, _ := roundTrip(t, e, Rev20251125, req("1", "tools/list", ""), nil)
	var v struct {
		Result struct {
			Tools []map[string]json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	byName := map[string]map[string]json.RawMessage{}
	var names []string
	for _, tl := range v.Result.Tools {
		var n string
		_ = json.Unmarshal(tl["name"], &n)
		byName[n] = tl
		names = append(names, n)
	}
	if strings.Join(names, ",") != "boom,echo,fail,json_schema_2020_12_tool,lie,mojibake,mojibake_structured,noargs,sum" {
		t.Errorf("not sorted by name: %v", names)
	}
	if got := string(byName["json_schema_2020_12_tool"]["inputSchema"]); got != schema202012 {
		t.Errorf("raw schema not kept verbatim:\n%s", got)
	}
	if got := string(byName["echo"]["inputSchema"]); got != `{"type":"object","properties":{"text":{"description":"what to echo","type":"string"}},"required":["text"],"additionalProperties":false}` {
		t.Errorf("echo schema %s", got)
	}
	if got := string(byName["sum"]["outputSchema"]); got != `{"type":"object","properties":{"sum":{"type":"integer"}},"required":["sum"],"additionalProperties":false}` {
		t.Errorf("sum output schema %s", got)
	}
	if _, ok := byName["echo"]["outputSchema"]; ok {
		t.Error("a *CallToolResult tool has no output schema")
	}
	out03, _ := roundTrip(t, e, Rev20250326, req("1", "tools/list", ""), nil)
	if strings.Contains(out03, "outputSchema") {
		t.Error("2025-03-26 has no outputSchema")
	}
}

func TestToolRegistrationErrors(t *testing.T) {
	s := NewServer(Implementation{Name: "s", Version: "1"}, nil)
	ok := func(ctx context.Context, req *CallToolRequest, in EchoIn) (string, error) { return "", nil }
	raw := func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) { return nil, nil }
	if err := AddTool(s, &Tool{Name: "a"}, ok); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		err  error
		fn   func() error
		name string
	}{
		{ErrToolName, func() error { return AddTool(s, &Tool{Name: ""}, ok) }, "empty"},
		{ErrToolName, func() error { return AddTool(s, &Tool{Name: strings.Repeat("x", 129)}, ok) }, "long"},
		{ErrToolName, func() error { return AddTool(s, &Tool{Name: "has space"}, ok) }, "space"},
		{ErrToolName, func() error { return AddTool(s, &Tool{Name: "slash/x"}, ok) }, "slash"},
		{ErrToolName, func() error { return AddTool(s, &Tool{Name: "é"}, ok) }, "non-ascii"},
		{ErrDuplicate, func() error { return AddTool(s, &Tool{Name: "a"}, ok) }, "duplicate"},
		{ErrInvalidSchema, func() error {
			return s.AddToolRaw(&Tool{Name: "b", InputSchema: json.RawMessage(`{"type":"string"}`)}, raw)
		}, "non-object input"},
		{ErrInvalidSchema, func() error {
			return s.AddToolRaw(&Tool{Name: "b", InputSchema: json.RawMessage(`{"type":"object","required":"x"}`)}, raw)
		}, "invalid schema"},
		{ErrInvalidSchema, func() error {
			return s.AddToolRaw(&Tool{Name: "b", InputSchema: json.RawMessage(`{"type":`)}, raw)
		}, "malformed schema"},
		{ErrInvalidSchema, func() error {
			return AddTool(s, &Tool{Name: "b"}, func(ctx context.Context, req *CallToolRequest, in struct{ C chan int }) (string, error) {
				return "", nil
			})
		}, "chan input"},
		{ErrInvalidSchema, func() error {
			return AddTool(s, &Tool{Name: "b", OutputSchema: json.RawMessage(`{"type":"array"}`)},
				func(ctx context.Context, req *CallToolRequest, in EchoIn) ([]string, error) { return nil, nil })
		}, "non-object output schema"},
		{ErrNilHandler, func() error { return s.AddToolRaw(&Tool{Name: "b"}, nil) }, "nil raw"},
		{ErrNilHandler, func() error { return AddTool[EchoIn, string](s, &Tool{Name: "b"}, nil) }, "nil typed"},
	}
	for _, tt := range tests {
		if err := tt.fn(); !errors.Is(err, tt.err) {
			t.Errorf("%s: got %v, want %v", tt.name, err, tt.err)
		}
	}
	if err := AddTool(s, &Tool{Name: "A-z_0.9"}, ok); err != nil {
		t.Errorf("valid name refused: %v", err)
	}
	if err := AddTool(s, &Tool{Name: strings.Repeat("x", 128)}, ok); err != nil {
		t.Errorf("128 chars refused: %v", err)
	}
}

func TestToolProtocolErrorsStayErrors(t *testing.T) {
	s := NewServer(Implementation{Name: "s", Version: "1"}, nil)
	_ = AddTool(s, &Tool{Name: "rpc"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		return "", wire.NewError(wire.InvalidParams, "bad combination")
	})
	_ = AddTool(s, &Tool{Name: "params"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (string, error) {
		return "", fmt.Errorf("%w: a and b conflict", ErrInvalidParams)
	})
	e := newEngine(s, engineOptions{})
	if out := call(t, e, Rev20251125, "rpc", `{}`); out != `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad combination"}}` {
		t.Error(out)
	}
	if out := call(t, e, Rev20251125, "params", `{}`); out != `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: invalid params: a and b conflict"}}` {
		t.Error(out)
	}
}
