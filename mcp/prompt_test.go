package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func newPromptServer(t testing.TB) (*Server, *engine) {
	t.Helper()
	s := NewServer(Implementation{Name: "p", Version: "1"}, nil)
	err := errors.Join(
		s.AddPrompt(&Prompt{Name: "test_simple_prompt", Description: "simple"}, func(ctx context.Context, req *GetPromptRequest) (*GetPromptResult, error) {
			return &GetPromptResult{Messages: []*PromptMessage{{Role: RoleUser, Content: Text("This is a simple prompt for testing.")}}}, nil
		}),
		s.AddPrompt(&Prompt{Name: "test_prompt_with_arguments", Description: "args", Arguments: []*PromptArgument{{Name: "arg1", Required: true}, {Name: "arg2", Required: true}, {Name: "opt"}}},
			func(ctx context.Context, req *GetPromptRequest) (*GetPromptResult, error) {
				return &GetPromptResult{Description: "d", Messages: []*PromptMessage{{Role: RoleUser,
					Content: Text(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", req.Arguments["arg1"], req.Arguments["arg2"]))}}}, nil
			}),
		s.AddPrompt(&Prompt{Name: "test_prompt_with_image", Description: "image"}, func(ctx context.Context, req *GetPromptRequest) (*GetPromptResult, error) {
			return &GetPromptResult{Messages: []*PromptMessage{
				{Role: RoleUser, Content: Image([]byte{1, 2, 3}, "image/png")},
				{Role: RoleUser, Content: EmbeddedText("test://example-resource", "text/plain", "Embedded")},
			}}, nil
		}),
		s.AddResourceTemplate(&ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template"}, vars),
		s.AddPromptCompletion("test_prompt_with_arguments", "arg1", func(ctx context.Context, req *CompleteRequest) (*CompleteResult, error) {
			var out []string
			for _, v := range []string{"alpha", "beta", "alps"} {
				if strings.HasPrefix(v, req.ArgumentValue) {
					out = append(out, v)
				}
			}
			return &CompleteResult{Values: out}, nil
		}),
		s.AddTemplateCompletion("test://template/{id}/data", "id", func(ctx context.Context, req *CompleteRequest) (*CompleteResult, error) {
			var out []string
			for i := range 250 {
				out = append(out, fmt.Sprint(i))
			}
			return &CompleteResult{Values: out}, nil
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	return s, newEngine(s, engineOptions{})
}

func TestPrompts(t *testing.T) {
	_, e := newPromptServer(t)
	tests := []struct{ body, want string }{
		{req("1", "prompts/get", `{"name":"test_simple_prompt"}`), resultOf("1", `{"messages":[{"role":"user","content":{"type":"text","text":"This is a simple prompt for testing."}}]}`)},
		{req("1", "prompts/get", `{"name":"test_prompt_with_arguments","arguments":{"arg1":"a","arg2":"b"}}`), resultOf("1", `{"description":"d","messages":[{"role":"user","content":{"type":"text","text":"Prompt with arguments: arg1='a', arg2='b'"}}]}`)},
		{req("1", "prompts/get", `{"name":"test_prompt_with_arguments","arguments":{"arg1":"a"}}`), `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: prompt test_prompt_with_arguments needs argument \"arg2\""}}`},
		{req("1", "prompts/get", `{"name":"nope"}`), `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: unknown prompt: \"nope\""}}`},
		{req("1", "prompts/get", `{"name":"test_prompt_with_image"}`), resultOf("1", `{"messages":[{"role":"user","content":{"type":"image","data":"AQID","mimeType":"image/png"}},{"role":"user","content":{"type":"resource","resource":{"uri":"test://example-resource","mimeType":"text/plain","text":"Embedded"}}}]}`)},
		{req("1", "prompts/list", ""), resultOf("1", `{"prompts":[{"name":"test_prompt_with_arguments","description":"args","arguments":[{"name":"arg1","required":true},{"name":"arg2","required":true},{"name":"opt"}]},{"name":"test_prompt_with_image","description":"image"},{"name":"test_simple_prompt","description":"simple"}]}`)},
	}
	for _, tt := range tests {
		if out, _ := roundTrip(t, e, Rev20251125, tt.body, nil); out != tt.want {
			t.Errorf("%s:\n got  %s\n want %s", tt.body, out, tt.want)
		}
	}
}

func TestCompletion(t *testing.T) {
	_, e := newPromptServer(t)
	tests := []struct{ params, want string }{
		{`{"ref":{"type":"ref/prompt","name":"test_prompt_with_arguments"},"argument":{"name":"arg1","value":"al"}}`, resultOf("1", `{"completion":{"values":["alpha","alps"],"total":2,"hasMore":false}}`)},
		{`{"ref":{"type":"ref/prompt","name":"test_prompt_with_arguments"},"argument":{"name":"arg2","value":""}}`, resultOf("1", `{"completion":{"values":[],"total":0,"hasMore":false}}`)},
		{`{"ref":{"type":"ref/prompt","name":"test_prompt_with_arguments"},"argument":{"name":"zzz","value":""}}`, ""},
		{`{"ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"a","value":""}}`, ""},
		{`{"ref":{"type":"ref/resource","uri":"test://nope/{x}"},"argument":{"name":"x","value":""}}`, ""},
		{`{"ref":{"type":"ref/resource","uri":"test://template/{id}/data"},"argument":{"name":"other","value":""}}`, ""},
	}
	for _, tt := range tests {
		out, _ := roundTrip(t, e, Rev20251125, req("1", "completion/complete", tt.params), nil)
		if tt.want == "" {
			if errorOf(t, out) != -32602 {
				t.Errorf("%s: %s", tt.params, out)
			}
		} else if out != tt.want {
			t.Errorf("%s:\n got  %s\n want %s", tt.params, out, tt.want)
		}
	}
	out, _ := roundTrip(t, e, Rev20251125, req("1", "completion/complete", `{"ref":{"type":"ref/resource","uri":"test://template/{id}/data"},"argument":{"name":"id","value":""}}`), nil)
	if !strings.HasSuffix(out, `"98","99"],"total":250,"hasMore":true}}}`) {
		t.Errorf("truncation: %s", out[len(out)-60:])
	}
}

func TestPromptRegistrationErrors(t *testing.T) {
	s := NewServer(Implementation{Name: "p", Version: "1"}, nil)
	h := func(ctx context.Context, req *GetPromptRequest) (*GetPromptResult, error) { return nil, nil }
	c := func(ctx context.Context, req *CompleteRequest) (*CompleteResult, error) { return nil, nil }
	_ = s.AddPrompt(&Prompt{Name: "p", Arguments: []*PromptArgument{{Name: "a"}}}, h)
	tests := []struct {
		name     string
		want     error
		got      error
		override bool
	}{
		{name: "empty", want: ErrName, got: s.AddPrompt(&Prompt{}, h)},
		{name: "dup", want: ErrDuplicate, got: s.AddPrompt(&Prompt{Name: "p"}, h)},
		{name: "nil", want: ErrNilHandler, got: s.AddPrompt(&Prompt{Name: "q"}, nil)},
		{name: "repeated arg", want: ErrName, got: s.AddPrompt(&Prompt{Name: "q", Arguments: []*PromptArgument{{Name: "a"}, {Name: "a"}}}, h)},
		{name: "completion of unknown argument", want: ErrName, got: s.AddPromptCompletion("p", "b", c)},
		{name: "completion of unknown prompt", want: ErrName, got: s.AddPromptCompletion("x", "a", c)},
		{name: "completion of unknown template", want: ErrName, got: s.AddTemplateCompletion("x://{a}", "a", c)},
		{name: "nil completion", want: ErrNilHandler, got: s.AddPromptCompletion("p", "a", nil)},
	}
	for _, tt := range tests {
		if !errors.Is(tt.got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	if err := s.AddPromptCompletion("p", "a", c); err != nil {
		t.Fatal(err)
	}
	if err := s.AddPromptCompletion("p", "a", c); !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate completion: %v", err)
	}
	if s.RemovePrompts("p") != 1 || s.RemovePrompts("p") != 0 {
		t.Error("RemovePrompts")
	}
}
