package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func newResourceServer(t *testing.T) *engine {
	t.Helper()
	s := NewServer(Implementation{Name: "r", Version: "1"}, nil)
	text := func(body string) ResourceFunc {
		return func(ctx context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
			return &ReadResourceResult{Contents: []*ResourceContents{{URI: req.URI, MIMEType: "text/plain", Text: body}}}, nil
		}
	}
	for _, err := range []error{
		s.AddResource(&Resource{URI: "test://static-text", Name: "static-text", Title: "Static", MIMEType: "text/plain"}, text("This is the content.")),
		s.AddResource(&Resource{URI: "test://static-binary", Name: "static-binary", MIMEType: "image/png"}, func(ctx context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
			return &ReadResourceResult{Contents: []*ResourceContents{{URI: req.URI, MIMEType: "image/png", Blob: []byte{0x89, 'P', 'N', 'G'}}}}, nil
		}),
		s.AddResource(&Resource{URI: "test://gone", Name: "gone"}, func(ctx context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
			return nil, fmt.Errorf("lost it: %w", ErrResourceNotFound)
		}),
		s.AddResource(&Resource{URI: "test://broken", Name: "broken"}, func(ctx context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
			return nil, errors.New("db password wrong for user admin")
		}),
		s.AddResourceTemplate(&ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template", MIMEType: "application/json"}, vars),
		s.AddResourceTemplate(&ResourceTemplate{URITemplate: "file:///{+path}", Name: "files"}, vars),
		s.AddResourceTemplate(&ResourceTemplate{URITemplate: "search://q{?term,limit}", Name: "search"}, vars),
		s.AddResourceTemplate(&ResourceTemplate{URITemplate: "doc://{book}{/chapter}", Name: "doc"}, vars),
		s.AddResourceTemplate(&ResourceTemplate{URITemplate: "frag://page{#section}", Name: "frag"}, vars),
		s.AddResourceTemplate(&ResourceTemplate{URITemplate: "dot://host{.ext}", Name: "dot"}, vars),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	lg, _ := testLogger()
	return newEngine(s, engineOptions{Logger: lg})
}

// vars answers with the template variables it was given, sorted.
func vars(ctx context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
	var parts []string
	for _, k := range []string{"id", "path", "term", "limit", "book", "chapter", "section", "ext"} {
		if v, ok := req.Vars[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	return &ReadResourceResult{Contents: []*ResourceContents{{URI: req.URI, Text: strings.Join(parts, "&")}}}, nil
}

func read(t *testing.T, e *engine, rev Revision, uri string) string {
	t.Helper()
	out, _ := roundTrip(t, e, rev, req("1", "resources/read", fmt.Sprintf(`{"uri":%q}`, uri)), nil)
	return out
}

func TestResourcesReadAndTemplates(t *testing.T) {
	e := newResourceServer(t)
	tests := []struct{ uri, want string }{
		{"test://static-text", resultOf("1", `{"contents":[{"uri":"test://static-text","mimeType":"text/plain","text":"This is the content."}]}`)},
		{"test://static-binary", resultOf("1", `{"contents":[{"uri":"test://static-binary","mimeType":"image/png","blob":"iVBORw=="}]}`)},
		{"test://template/123/data", resultOf("1", `{"contents":[{"uri":"test://template/123/data","text":"id=123"}]}`)},
		{"file:///a/b/c.txt", resultOf("1", `{"contents":[{"uri":"file:///a/b/c.txt","text":"path=a/b/c.txt"}]}`)},
		{"search://q?term=go&limit=5", resultOf("1", `{"contents":[{"uri":"search://q?term=go\u0026limit=5","text":"term=go\u0026limit=5"}]}`)},
		{"doc://moby/12", resultOf("1", `{"contents":[{"uri":"doc://moby/12","text":"book=moby\u0026chapter=12"}]}`)},
		{"frag://page#intro", resultOf("1", `{"contents":[{"uri":"frag://page#intro","text":"section=intro"}]}`)},
		{"dot://host.json", resultOf("1", `{"contents":[{"uri":"dot://host.json","text":"ext=json"}]}`)},
		{"test://nothing", `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"test://nothing"}}}`},
		{"test://gone", `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"test://gone"}}}`},
		{"test://broken", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}`},
	}
	for _, tt := range tests {
		got := read(t, e, Rev20251125, tt.uri)
		// AppendString does not escape &, encoding/json would: compare decoded.
		if normalize(got) != normalize(tt.want) {
			t.Errorf("%s:\n got  %s\n want %s", tt.uri, got, tt.want)
		}
	}
}

func normalize(s string) string { return strings.ReplaceAll(s, `\u0026`, "&") }

func TestResourceLists(t *testing.T) {
	e := newResourceServer(t)
	out, _ := roundTrip(t, e, Rev20250618, req("1", "resources/list", ""), nil)
	want := resultOf("1", `{"resources":[{"uri":"test://broken","name":"broken"},{"uri":"test://gone","name":"gone"},{"uri":"test://static-binary","name":"static-binary","mimeType":"image/png"},{"uri":"test://static-text","name":"static-text","title":"Static","mimeType":"text/plain"}]}`)
	if out != want {
		t.Errorf("\n got  %s\n want %s", out, want)
	}
	out, _ = roundTrip(t, e, Rev20250326, req("1", "resources/list", ""), nil)
	if strings.Contains(out, `"title"`) {
		t.Error("2025-03-26 has no title")
	}
	out, _ = roundTrip(t, e, Rev20250618, req("1", "resources/templates/list", ""), nil)
	if !strings.Contains(out, `{"uriTemplate":"test://template/{id}/data","name":"template","mimeType":"application/json"}`) {
		t.Errorf("templates: %s", out)
	}
	out, _ = roundTrip(t, e, Rev20250618, req("1", "initialize", fmt.Sprintf(initParams, "2025-06-18")), nil)
	if !strings.Contains(out, `"resources":{"subscribe":true,"listChanged":true}`) {
		t.Errorf("capabilities: %s", out)
	}
	for _, m := range []string{"resources/subscribe", "resources/unsubscribe"} {
		if out, _ := roundTrip(t, e, Rev20250618, req("1", m, `{"uri":"test://watched"}`), nil); out != resultOf("1", `{}`) {
			t.Errorf("%s: %s", m, out)
		}
	}
}

func TestResourceRegistrationErrors(t *testing.T) {
	s := NewServer(Implementation{Name: "r", Version: "1"}, nil)
	h := func(ctx context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) { return nil, nil }
	if err := s.AddResource(&Resource{URI: "x://a", Name: "a"}, h); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResourceTemplate(&ResourceTemplate{URITemplate: "x://t/{id}", Name: "t"}, h); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		err  error
		got  error
	}{
		{"relative uri", ErrName, s.AddResource(&Resource{URI: "a/b", Name: "a"}, h)},
		{"empty uri", ErrName, s.AddResource(&Resource{URI: "", Name: "a"}, h)},
		{"no name", ErrName, s.AddResource(&Resource{URI: "x://b"}, h)},
		{"nil handler", ErrNilHandler, s.AddResource(&Resource{URI: "x://b", Name: "b"}, nil)},
		{"duplicate", ErrDuplicate, s.AddResource(&Resource{URI: "x://a", Name: "a"}, h)},
		{"bad template", ErrTemplate, s.AddResourceTemplate(&ResourceTemplate{URITemplate: "x://{unclosed", Name: "t"}, h)},
		{"empty template", ErrTemplate, s.AddResourceTemplate(&ResourceTemplate{Name: "t"}, h)},
		{"template no name", ErrName, s.AddResourceTemplate(&ResourceTemplate{URITemplate: "x://u/{id}"}, h)},
		{"duplicate template", ErrDuplicate, s.AddResourceTemplate(&ResourceTemplate{URITemplate: "x://t/{id}", Name: "t"}, h)},
		{"nil template handler", ErrNilHandler, s.AddResourceTemplate(&ResourceTemplate{URITemplate: "x://v/{id}", Name: "v"}, nil)},
	}
	for _, tt := range tests {
		if !errors.Is(tt.got, tt.err) {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.err)
		}
	}
	if n := s.RemoveResources("x://a", "x://none"); n != 1 {
		t.Errorf("removed %d", n)
	}
	if n := s.RemoveResourceTemplates("x://t/{id}"); n != 1 {
		t.Errorf("removed %d templates", n)
	}
}
