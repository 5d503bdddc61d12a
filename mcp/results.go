package mcp

import (
	"encoding/json"

	"github.com/saguaro-go/saguaro/internal/jsonstr"
)

// The wire types of the list and read results and their revision-aware
// encoders: a member a revision does not define (title and outputSchema
// before 2025-06-18, icons before 2025-11-25, …) is left out for clients
// of that revision. For 2025-11-25 and later they write exactly what
// encoding/json makes of the types (json.go).

// Tool describes a tool in tools/list.
type Tool struct {
	// Name is 1–128 of [A-Za-z0-9_.-], unique in the server.
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"` // since 2025-06-18
	Description string `json:"description,omitempty"`
	// InputSchema is the arguments' JSON Schema: anything that encodes to
	// a JSON object schema (json.RawMessage is kept byte for byte, which
	// keeps $schema, $defs, additionalProperties and x- keywords). nil
	// with AddTool means "infer from the Go type"; with AddToolRaw, an
	// object with no constraints. JSON encodes nil as {"type":"object"}.
	InputSchema any `json:"inputSchema"`
	// OutputSchema (since 2025-06-18) is the structuredContent's schema; as InputSchema.
	OutputSchema any              `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
	Icons        []Icon           `json:"icons,omitempty"` // since 2025-11-25
	Meta         Meta             `json:"_meta,omitempty"` // since 2025-06-18

	// TaskSupport lets a 2026-07-28 call of this tool run as a task when
	// the tasks extension is enabled (ServerOptions.Tasks) and the client
	// declares it: the call is answered at once with a task that the
	// client polls with tasks/get. TaskRequired refuses a client without
	// the extension (-32021); TaskOptional runs the tool synchronously
	// for it, as do legacy sessions. It is the server's own setting, not
	// sent to clients.
	TaskSupport TaskSupport `json:"-"`
	// DeferTask makes a task-capable call start synchronously: the
	// handler may gather input first (input_required rounds) and turns
	// the call into a task when it calls CallToolRequest.StartTask. A
	// handler that returns without calling it answers synchronously.
	DeferTask bool `json:"-"`
	// Access says which callers may see and call the tool; nil: all.
	Access *Access `json:"-"`
}

// ToolAnnotations are untrusted hints about a tool's behaviour.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// ListToolsResult is one page of tools/list.
type ListToolsResult struct {
	Tools      []*Tool `json:"tools"`
	NextCursor string  `json:"nextCursor,omitempty"`
	Meta       Meta    `json:"_meta,omitempty"`

	encoded []byte // set by the Server: the page, already encoded
}

// CallToolResult is a tools/call result. A tool's own failure is a result
// with IsError set, not a protocol error, so the model can react to it.
type CallToolResult struct {
	Content []Content `json:"content"`
	// StructuredContent must match the tool's output schema when it has
	// one; any JSON-encodable value.
	StructuredContent any  `json:"structuredContent,omitempty"`
	IsError           bool `json:"isError,omitempty"`
	Meta              Meta `json:"_meta,omitempty"`

	structured json.RawMessage // set by typed tools: encoded and checked
}

// Resource describes a resource in resources/list.
type Resource struct {
	URI         string       `json:"uri"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"` // since 2025-06-18
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Size        *int64       `json:"size,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Icons       []Icon       `json:"icons,omitempty"` // since 2025-11-25
	Meta        Meta         `json:"_meta,omitempty"` // since 2025-06-18
	// Access says which callers may see and read the resource; nil: all.
	Access *Access `json:"-"`
}

// ResourceTemplate describes a family of resources by an RFC 6570 URI
// template in resources/templates/list.
type ResourceTemplate struct {
	URITemplate string       `json:"uriTemplate"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"` // since 2025-06-18
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Icons       []Icon       `json:"icons,omitempty"` // since 2025-11-25
	Meta        Meta         `json:"_meta,omitempty"` // since 2025-06-18
	// Access says which callers may see the template and read what it
	// matches; nil: all. A caller it is hidden from reads through the
	// next template that matches, as if it were not there.
	Access *Access `json:"-"`
}

// ListResourcesResult is one page of resources/list.
type ListResourcesResult struct {
	Resources  []*Resource `json:"resources"`
	NextCursor string      `json:"nextCursor,omitempty"`
	Meta       Meta        `json:"_meta,omitempty"`

	encoded []byte
}

// ListResourceTemplatesResult is one page of resources/templates/list.
type ListResourceTemplatesResult struct {
	ResourceTemplates []*ResourceTemplate `json:"resourceTemplates"`
	NextCursor        string              `json:"nextCursor,omitempty"`
	Meta              Meta                `json:"_meta,omitempty"`

	encoded []byte
}

// ReadResourceResult is a resources/read result. Pitfall: an empty
// Contents is not "not found": return ErrResourceNotFound for that.
type ReadResourceResult struct {
	Contents []*ResourceContents `json:"contents"`
	Meta     Meta                `json:"_meta,omitempty"`
}

// Prompt describes a prompt in prompts/list.
type Prompt struct {
	Name        string            `json:"name"`
	Title       string            `json:"title,omitempty"` // since 2025-06-18
	Description string            `json:"description,omitempty"`
	Arguments   []*PromptArgument `json:"arguments,omitempty"`
	Icons       []Icon            `json:"icons,omitempty"` // since 2025-11-25
	Meta        Meta              `json:"_meta,omitempty"` // since 2025-06-18
	// Access says which callers may see and get the prompt (and complete
	// its arguments); nil: all.
	Access *Access `json:"-"`
}

// PromptArgument is one named string argument of a prompt; a Required one
// missing from prompts/get is InvalidParams before the handler runs.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"` // since 2025-06-18
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// ListPromptsResult is one page of prompts/list.
type ListPromptsResult struct {
	Prompts    []*Prompt `json:"prompts"`
	NextCursor string    `json:"nextCursor,omitempty"`
	Meta       Meta      `json:"_meta,omitempty"`

	encoded []byte
}

// GetPromptResult is a prompts/get result.
type GetPromptResult struct {
	Description string           `json:"description,omitempty"`
	Messages    []*PromptMessage `json:"messages"`
	Meta        Meta             `json:"_meta,omitempty"`
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	Role    Role    `json:"role"`
	Content Content `json:"content"`
}

func (e *encoder) icons(rev Revision, icons []Icon) {
	if len(icons) > 0 && rev >= Rev20251125 {
		e.key("icons")
		e.value(icons)
	}
}

func (e *encoder) metaFrom06(rev Revision, m Meta) {
	if rev >= Rev20250618 {
		e.meta(m)
	}
}

func (e *encoder) schema(k string, raw []byte, v any) {
	e.key(k)
	if raw != nil {
		e.raw(raw)
		return
	}
	if v == nil {
		e.raw([]byte(`{"type":"object"}`))
		return
	}
	e.value(v)
}

// appendTool encodes t for rev; in and out are pre-encoded schemas or nil.
func (e *encoder) tool(rev Revision, t *Tool, in, out []byte) {
	e.open()
	e.strField("name", t.Name)
	if rev >= Rev20250618 {
		e.optStr("title", t.Title)
	}
	e.optStr("description", t.Description)
	e.schema("inputSchema", in, t.InputSchema)
	if rev >= Rev20250618 && (out != nil || t.OutputSchema != nil) {
		e.schema("outputSchema", out, t.OutputSchema)
	}
	if t.Annotations != nil {
		e.key("annotations")
		e.value(t.Annotations)
	}
	e.icons(rev, t.Icons)
	e.metaFrom06(rev, t.Meta)
	e.close()
}

func (e *encoder) resource(rev Revision, r *Resource) {
	e.open()
	e.strField("uri", r.URI)
	e.strField("name", r.Name)
	if rev >= Rev20250618 {
		e.optStr("title", r.Title)
	}
	e.optStr("description", r.Description)
	e.optStr("mimeType", r.MIMEType)
	if r.Size != nil {
		e.key("size")
		e.value(*r.Size)
	}
	e.annotations(r.Annotations)
	e.icons(rev, r.Icons)
	e.metaFrom06(rev, r.Meta)
	e.close()
}

func (e *encoder) resourceTemplate(rev Revision, t *ResourceTemplate) {
	e.open()
	e.strField("uriTemplate", t.URITemplate)
	e.strField("name", t.Name)
	if rev >= Rev20250618 {
		e.optStr("title", t.Title)
	}
	e.optStr("description", t.Description)
	e.optStr("mimeType", t.MIMEType)
	e.annotations(t.Annotations)
	e.icons(rev, t.Icons)
	e.metaFrom06(rev, t.Meta)
	e.close()
}

func (e *encoder) prompt(rev Revision, p *Prompt) {
	e.open()
	e.strField("name", p.Name)
	if rev >= Rev20250618 {
		e.optStr("title", p.Title)
	}
	e.optStr("description", p.Description)
	if len(p.Arguments) > 0 {
		e.key("arguments")
		e.b = append(e.b, '[')
		for i, a := range p.Arguments {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.open()
			e.strField("name", a.Name)
			if rev >= Rev20250618 {
				e.optStr("title", a.Title)
			}
			e.optStr("description", a.Description)
			if a.Required {
				e.boolField("required", true)
			}
			e.close()
		}
		e.b = append(e.b, ']')
	}
	e.icons(rev, p.Icons)
	e.metaFrom06(rev, p.Meta)
	e.close()
}

// page encodes {"<key>":[items…],"nextCursor":…} from pre-encoded items.
func appendPage(dst []byte, key string, items [][]byte, next string) []byte {
	dst = append(dst, `{"`...)
	dst = append(dst, key...)
	dst = append(dst, `":[`...)
	for i, it := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, it...)
	}
	dst = append(dst, ']')
	if next != "" {
		dst = append(dst, `,"nextCursor":`...)
		dst = jsonstr.AppendString(dst, next)
	}
	return append(dst, '}')
}

func (e *encoder) list(key string, n int, next string, meta Meta, item func(i int)) {
	e.open()
	e.key(key)
	e.b = append(e.b, '[')
	for i := 0; i < n; i++ {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		item(i)
	}
	e.b = append(e.b, ']')
	if next != "" {
		e.strField("nextCursor", next)
	}
	e.meta(meta)
	e.close()
}

func encodeListTools(rev Revision, r *ListToolsResult) ([]byte, error) {
	if r.encoded != nil {
		return r.encoded, nil
	}
	return marshalWith(func(e *encoder) {
		e.list("tools", len(r.Tools), r.NextCursor, r.Meta, func(i int) { e.tool(rev, r.Tools[i], nil, nil) })
	})
}

func encodeListResources(rev Revision, r *ListResourcesResult) ([]byte, error) {
	if r.encoded != nil {
		return r.encoded, nil
	}
	return marshalWith(func(e *encoder) {
		e.list("resources", len(r.Resources), r.NextCursor, r.Meta, func(i int) { e.resource(rev, r.Resources[i]) })
	})
}

func encodeListTemplates(rev Revision, r *ListResourceTemplatesResult) ([]byte, error) {
	if r.encoded != nil {
		return r.encoded, nil
	}
	return marshalWith(func(e *encoder) {
		e.list("resourceTemplates", len(r.ResourceTemplates), r.NextCursor, r.Meta, func(i int) { e.resourceTemplate(rev, r.ResourceTemplates[i]) })
	})
}

func encodeListPrompts(rev Revision, r *ListPromptsResult) ([]byte, error) {
	if r.encoded != nil {
		return r.encoded, nil
	}
	return marshalWith(func(e *encoder) {
		e.list("prompts", len(r.Prompts), r.NextCursor, r.Meta, func(i int) { e.prompt(rev, r.Prompts[i]) })
	})
}

func encodeCallTool(r *CallToolResult) ([]byte, error) { return appendCallTool(nil, r) }

// appendCallTool is encodeCallTool appending to dst.
func appendCallTool(dst []byte, r *CallToolResult) ([]byte, error) {
	e := encoder{b: dst}
	func(e *encoder) {
		e.open()
		e.key("content")
		e.contents(r.Content)
		if r.structured != nil {
			e.key("structuredContent")
			e.raw(r.structured)
		} else if r.StructuredContent != nil {
			e.key("structuredContent")
			e.value(r.StructuredContent)
		}
		if r.IsError {
			e.boolField("isError", true)
		}
		e.meta(r.Meta)
		e.close()
	}(&e)
	if e.err != nil {
		return nil, e.err
	}
	return e.b, nil
}

func encodeReadResource(r *ReadResourceResult) ([]byte, error) {
	return appendReadResource(nil, r)
}

// appendReadResource is encodeReadResource appending to dst.
func appendReadResource(dst []byte, r *ReadResourceResult) ([]byte, error) {
	return appendWith(dst, func(e *encoder) {
		e.open()
		e.key("contents")
		e.b = append(e.b, '[')
		for i, c := range r.Contents {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			if c == nil {
				if e.err == nil {
					e.err = errInvalidJSON
				}
				e.b = append(e.b, "null"...)
				continue
			}
			c.appendJSON(e)
		}
		e.b = append(e.b, ']')
		e.meta(r.Meta)
		e.close()
	})
}

func encodeGetPrompt(r *GetPromptResult) ([]byte, error) {
	return marshalWith(func(e *encoder) {
		e.open()
		e.optStr("description", r.Description)
		e.key("messages")
		e.b = append(e.b, '[')
		for i, m := range r.Messages {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.open()
			e.strField("role", string(m.Role))
			e.key("content")
			if m.Content == nil {
				if e.err == nil {
					e.err = errInvalidJSON
				}
				e.b = append(e.b, "null"...)
			} else {
				m.Content.appendContent(e)
			}
			e.close()
		}
		e.b = append(e.b, ']')
		e.meta(r.Meta)
		e.close()
	})
}
