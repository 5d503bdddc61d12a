package mcp

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCodecMatchesEncodingJSON holds the engine's encoder to encoding/json
// of the public types: for the same value, what the engine sends a
// 2025-11-25 (or later) client and what json.Marshal gives are the same
// bytes, or, where encoding/json escapes < > & or uses \b and \f where the
// engine writes \u0008 and \u000c, the same JSON. Both refuse invalid
// UTF-8.
func FuzzCodecMatchesEncodingJSON(f *testing.F) {
	f.Add("get_weather", "Weather", "Current weather", "abc", int64(42), 0.5, uint16(0xffff), []byte{1, 2, 3})
	f.Add("", "", "", "", int64(0), 0.0, uint16(0), []byte(nil))
	f.Add("a<b>&c", "\b\f\n\t\"\\", "é😀\u2028\u2029\x7f", "x", int64(-1), 1e21, uint16(0x5555), []byte{})
	f.Add("bad \xff", "t", "d", "c", int64(1), 1e-7, uint16(0xaaaa), []byte{0xff})
	f.Fuzz(func(t *testing.T, a, b, c, d string, n int64, x float64, bits uint16, data []byte) {
		on := func(i uint) bool { return bits&(1<<i) != 0 }
		var ann *Annotations
		if on(0) {
			ann = &Annotations{Audience: []Role{Role(a)}, LastModified: d}
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				ann.Priority = &x
			}
		}
		var meta Meta
		if on(1) {
			meta = Meta{a: b, "n": n, "list": []any{c, true, nil}}
		}
		var icons []Icon
		if on(2) {
			icons = []Icon{{Src: a, MIMEType: b, Sizes: []string{c}, Theme: d}}
		}
		var size *int64
		if on(3) {
			size = &n
		}
		blob := data
		if on(4) && blob == nil {
			blob = []byte{}
		}
		contents := []*ResourceContents{{URI: a, MIMEType: b, Text: c, Meta: meta}, {URI: d, Blob: blob}}
		if !on(4) {
			contents[1].Blob = nil
		}
		blocks := []Content{
			&TextContent{Text: a, Annotations: ann, Meta: meta},
			&ImageContent{Data: data, MIMEType: b, Annotations: ann},
			&AudioContent{Data: data, MIMEType: c, Meta: meta},
			&ResourceLink{URI: a, Name: b, Title: c, Description: d, MIMEType: a, Size: size, Annotations: ann, Icons: icons, Meta: meta},
			&EmbeddedResource{Resource: contents[0], Annotations: ann, Meta: meta},
			&EmbeddedResource{Resource: contents[1]},
		}
		var schema any
		if on(5) {
			schema, _ = json.Marshal(map[string]any{"type": "object", "description": d, "properties": map[string]any{a: map[string]any{"type": "string"}}})
			schema = json.RawMessage(schema.([]byte))
		}
		var out any
		if on(6) {
			out = map[string]any{"type": "object", "title": c}
		}
		var toolAnn *ToolAnnotations
		if on(7) {
			yes := on(8)
			toolAnn = &ToolAnnotations{Title: d, ReadOnlyHint: &yes, OpenWorldHint: &yes}
		}
		tool := &Tool{Name: a, Title: b, Description: c, InputSchema: schema, OutputSchema: out, Annotations: toolAnn,
			Icons: icons, Meta: meta, TaskSupport: TaskSupport(bits % 3), DeferTask: on(9)}
		resource := &Resource{URI: a, Name: b, Title: c, Description: d, MIMEType: a, Size: size, Annotations: ann, Icons: icons, Meta: meta}
		tmpl := &ResourceTemplate{URITemplate: a, Name: b, Title: c, Description: d, MIMEType: b, Annotations: ann, Icons: icons, Meta: meta}
		prompt := &Prompt{Name: a, Title: b, Description: c, Icons: icons, Meta: meta}
		if on(10) {
			prompt.Arguments = []*PromptArgument{{Name: b, Title: c, Description: d, Required: on(11)}, {Name: d}}
		}
		next := ""
		if on(12) {
			next = d
		}
		var structured any
		if on(13) {
			structured = map[string]any{a: n, "s": b}
		}
		values := []string{a, b, c, d}
		if on(14) {
			values = nil
		}

		cases := []struct {
			name  string
			v     any
			codec func() ([]byte, error)
		}{
			{"Tool", tool, func() ([]byte, error) {
				return marshalWith(func(e *encoder) { e.tool(Rev20251125, tool, nil, nil) })
			}},
			{"ListToolsResult", &ListToolsResult{Tools: []*Tool{tool, {Name: d}}, NextCursor: next, Meta: meta}, nil},
			{"ListResourcesResult", &ListResourcesResult{Resources: []*Resource{resource}, NextCursor: next, Meta: meta}, nil},
			{"ListResourceTemplatesResult", &ListResourceTemplatesResult{ResourceTemplates: []*ResourceTemplate{tmpl}, NextCursor: next}, nil},
			{"ListPromptsResult", &ListPromptsResult{Prompts: []*Prompt{prompt}, NextCursor: next, Meta: meta}, nil},
			{"CallToolResult", &CallToolResult{Content: blocks, StructuredContent: structured, IsError: on(15), Meta: meta}, nil},
			{"ReadResourceResult", &ReadResourceResult{Contents: contents, Meta: meta}, nil},
			{"GetPromptResult", &GetPromptResult{Description: d, Messages: []*PromptMessage{{Role: RoleUser, Content: blocks[0]}, {Role: Role(b), Content: blocks[4]}}, Meta: meta}, nil},
			{"CompleteResult", ptr(completeSent(&CompleteResult{Values: values, Total: int(n % 1000), HasMore: on(15), Meta: meta})), nil},
		}
		for i, blk := range blocks {
			cases = append(cases, struct {
				name  string
				v     any
				codec func() ([]byte, error)
			}{"block " + string(rune('0'+i)), blk, func() ([]byte, error) { return marshalWith(blk.appendContent) }})
		}
		for _, cs := range cases {
			codec := cs.codec
			if codec == nil {
				codec = func() ([]byte, error) { return engineEncode(cs.v) }
			}
			got, cerr := codec()
			want, jerr := json.Marshal(cs.v)
			if (cerr != nil) != (jerr != nil) {
				t.Fatalf("%s: engine error %v, encoding/json error %v", cs.name, cerr, jerr)
			}
			if cerr != nil {
				if utf8.ValidString(a) && utf8.ValidString(b) && utf8.ValidString(c) && utf8.ValidString(d) {
					t.Fatalf("%s: valid input refused: %v", cs.name, cerr)
				}
				continue
			}
			if bytes.Equal(got, want) {
				continue
			}
			if !strings.ContainsAny(a+b+c+d, "<>&\b\f") {
				t.Fatalf("%s: bytes differ\nengine:        %s\nencoding/json: %s", cs.name, got, want)
			}
			var gv, wv any
			if err := unmarshalNumbers(got, &gv); err != nil {
				t.Fatalf("%s: engine wrote invalid JSON %s: %v", cs.name, got, err)
			}
			if err := unmarshalNumbers(want, &wv); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gv, wv) {
				t.Fatalf("%s: JSON differs\nengine:        %s\nencoding/json: %s", cs.name, got, want)
			}
		}
	})
}

// engineEncode is what the engine sends a 2025-11-25 client for a result.
func engineEncode(v any) ([]byte, error) {
	switch r := v.(type) {
	case *ListToolsResult:
		return encodeListTools(Rev20251125, r)
	case *ListResourcesResult:
		return encodeListResources(Rev20251125, r)
	case *ListResourceTemplatesResult:
		return encodeListTemplates(Rev20251125, r)
	case *ListPromptsResult:
		return encodeListPrompts(Rev20251125, r)
	case *CallToolResult:
		return encodeCallTool(r)
	case *ReadResourceResult:
		return encodeReadResource(r)
	case *GetPromptResult:
		return encodeGetPrompt(r)
	case *CompleteResult:
		return encodeComplete(r)
	}
	panic("no engine encoding for " + reflect.TypeOf(v).String())
}

func ptr[T any](v T) *T { return &v }

func unmarshalNumbers(b []byte, v *any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}
