package mcp

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// Content is one content block of a tool result, prompt message or
// sampling message: *TextContent, *ImageContent, *AudioContent,
// *ResourceLink or *EmbeddedResource. The interface is sealed; build
// blocks with the helpers (Text, Image, …) or the struct literals.
type Content interface {
	json.Marshaler
	appendContent(e *encoder)
}

// Annotations are display hints on content and resources (since 2025-06-18). Priority
// is 0..1; LastModified is an ISO 8601 timestamp.
type Annotations struct {
	Audience     []Role   `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	LastModified string   `json:"lastModified,omitempty"`
}

// Role is who a message or content is for: "user" or "assistant".
type Role string

// The two roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Meta is an open _meta object. Keys should carry a reverse-DNS prefix;
// the io.modelcontextprotocol/ prefix is reserved.
type Meta map[string]any

// TextContent is a text block. Text must be valid UTF-8: an invalid string
// fails the whole response with InternalError rather than being altered.
type TextContent struct {
	Text        string       `json:"text"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ImageContent is an image; Data holds the raw bytes (base64-encoded on
// the wire) and MIMEType must be set (e.g. "image/png").
type ImageContent struct {
	Data        []byte       `json:"data"`
	MIMEType    string       `json:"mimeType"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// AudioContent is audio (since 2025-03-26); as ImageContent.
type AudioContent struct {
	Data        []byte       `json:"data"`
	MIMEType    string       `json:"mimeType"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ResourceLink points at a resource the client may read (since 2025-06-18); the
// resource need not appear in resources/list.
type ResourceLink struct {
	URI         string       `json:"uri"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Size        *int64       `json:"size,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Icons       []Icon       `json:"icons,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// EmbeddedResource carries a resource's contents inline.
type EmbeddedResource struct {
	Resource    *ResourceContents `json:"resource"`
	Annotations *Annotations      `json:"annotations,omitempty"`
	Meta        Meta              `json:"_meta,omitempty"`
}

// Icon is a display icon (since 2025-11-25).
type Icon struct {
	Src      string   `json:"src"`
	MIMEType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"`
}

// ResourceContents is what resources/read returns for one URI: text when
// Blob is nil (Text may be empty), else the blob (base64 on the wire).
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text"`
	Blob     []byte `json:"blob,omitempty"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// Text returns a text content block.
func Text(s string) *TextContent { return &TextContent{Text: s} }

// Image returns an image block from raw bytes.
func Image(data []byte, mimeType string) *ImageContent {
	return &ImageContent{Data: data, MIMEType: mimeType}
}

// Audio returns an audio block from raw bytes.
func Audio(data []byte, mimeType string) *AudioContent {
	return &AudioContent{Data: data, MIMEType: mimeType}
}

// Link returns a resource_link block.
func Link(uri, name string) *ResourceLink { return &ResourceLink{URI: uri, Name: name} }

// EmbeddedText returns an embedded text resource block.
func EmbeddedText(uri, mimeType, text string) *EmbeddedResource {
	return &EmbeddedResource{Resource: &ResourceContents{URI: uri, MIMEType: mimeType, Text: text}}
}

// EmbeddedBlob returns an embedded binary resource block.
func EmbeddedBlob(uri, mimeType string, blob []byte) *EmbeddedResource {
	return &EmbeddedResource{Resource: &ResourceContents{URI: uri, MIMEType: mimeType, Blob: blob}}
}

func (e *encoder) annotations(a *Annotations) {
	if a != nil {
		e.key("annotations")
		e.value(a)
	}
}

func (e *encoder) meta(m Meta) {
	if len(m) > 0 {
		e.key("_meta")
		e.value(map[string]any(m))
	}
}

func (e *encoder) base64Field(k string, data []byte) {
	e.key(k)
	n := base64.StdEncoding.EncodedLen(len(data))
	e.b = append(e.b, '"')
	start := len(e.b)
	e.b = append(e.b, make([]byte, n)...)
	base64.StdEncoding.Encode(e.b[start:], data)
	e.b = append(e.b, '"')
}

func (c *TextContent) appendContent(e *encoder) {
	e.open()
	e.strField("type", "text")
	e.strField("text", c.Text)
	e.annotations(c.Annotations)
	e.meta(c.Meta)
	e.close()
}

func (c *ImageContent) appendContent(e *encoder) {
	e.open()
	e.strField("type", "image")
	e.base64Field("data", c.Data)
	e.strField("mimeType", c.MIMEType)
	e.annotations(c.Annotations)
	e.meta(c.Meta)
	e.close()
}

func (c *AudioContent) appendContent(e *encoder) {
	e.open()
	e.strField("type", "audio")
	e.base64Field("data", c.Data)
	e.strField("mimeType", c.MIMEType)
	e.annotations(c.Annotations)
	e.meta(c.Meta)
	e.close()
}

func (c *ResourceLink) appendContent(e *encoder) {
	e.open()
	e.strField("type", "resource_link")
	e.strField("uri", c.URI)
	e.strField("name", c.Name)
	e.optStr("title", c.Title)
	e.optStr("description", c.Description)
	e.optStr("mimeType", c.MIMEType)
	if c.Size != nil {
		e.key("size")
		e.value(*c.Size)
	}
	e.annotations(c.Annotations)
	if len(c.Icons) > 0 {
		e.key("icons")
		e.value(c.Icons)
	}
	e.meta(c.Meta)
	e.close()
}

func (c *EmbeddedResource) appendContent(e *encoder) {
	e.open()
	e.strField("type", "resource")
	e.key("resource")
	if c.Resource == nil {
		if e.err == nil {
			e.err = errors.New("mcp: embedded resource without contents")
		}
		e.b = append(e.b, "null"...)
	} else {
		c.Resource.appendJSON(e)
	}
	e.annotations(c.Annotations)
	e.meta(c.Meta)
	e.close()
}

func (r *ResourceContents) appendJSON(e *encoder) {
	e.open()
	e.strField("uri", r.URI)
	e.optStr("mimeType", r.MIMEType)
	if r.Blob != nil {
		e.base64Field("blob", r.Blob)
	} else {
		e.strField("text", r.Text)
	}
	e.meta(r.Meta)
	e.close()
}

func marshalWith(f func(*encoder)) ([]byte, error) { return appendWith(nil, f) }

// appendWith is marshalWith appending to dst.
func appendWith(dst []byte, f func(*encoder)) ([]byte, error) {
	e := encoder{b: dst}
	f(&e)
	if e.err != nil {
		return nil, e.err
	}
	return e.b, nil
}

// The blocks' members as their json tags say, without their methods: a
// block's JSON is its "type" followed by them. encoding/json builds it from
// the tags; the engine's encoder (appendContent) writes the same bytes
// faster, and a test holds the two together.
type (
	textJSON     TextContent
	imageJSON    ImageContent
	audioJSON    AudioContent
	linkJSON     ResourceLink
	embeddedJSON EmbeddedResource
)

// MarshalJSON encodes the block as MCP sends it ({"type":"text",…}); it
// fails on invalid UTF-8.
func (c *TextContent) MarshalJSON() ([]byte, error) {
	return wire.Marshal(struct {
		Type string `json:"type"`
		*textJSON
	}{"text", (*textJSON)(c)})
}

// MarshalJSON encodes the block as MCP sends it ({"type":"image",…}).
func (c *ImageContent) MarshalJSON() ([]byte, error) {
	w := *c
	w.Data = orEmpty(w.Data) // "data" is a string, never null
	return wire.Marshal(struct {
		Type string `json:"type"`
		*imageJSON
	}{"image", (*imageJSON)(&w)})
}

// MarshalJSON encodes the block as MCP sends it ({"type":"audio",…}).
func (c *AudioContent) MarshalJSON() ([]byte, error) {
	w := *c
	w.Data = orEmpty(w.Data) // "data" is a string, never null
	return wire.Marshal(struct {
		Type string `json:"type"`
		*audioJSON
	}{"audio", (*audioJSON)(&w)})
}

// MarshalJSON encodes the block as MCP sends it
// ({"type":"resource_link",…}); it fails on invalid UTF-8.
func (c *ResourceLink) MarshalJSON() ([]byte, error) {
	return wire.Marshal(struct {
		Type string `json:"type"`
		*linkJSON
	}{"resource_link", (*linkJSON)(c)})
}

// MarshalJSON encodes the block as MCP sends it ({"type":"resource",…});
// it fails on invalid UTF-8 and when Resource is nil.
func (c *EmbeddedResource) MarshalJSON() ([]byte, error) {
	if c.Resource == nil {
		return nil, errNoContents
	}
	return wire.Marshal(struct {
		Type string `json:"type"`
		*embeddedJSON
	}{"resource", (*embeddedJSON)(c)})
}

var errNoContents = errors.New("mcp: embedded resource without contents")

// MarshalJSON encodes text contents (when Blob is nil) or blob contents;
// it fails on invalid UTF-8.
func (r *ResourceContents) MarshalJSON() ([]byte, error) {
	w := struct {
		URI      string  `json:"uri"`
		MIMEType string  `json:"mimeType,omitempty"`
		Text     *string `json:"text,omitempty"`
		Blob     *[]byte `json:"blob,omitempty"`
		Meta     Meta    `json:"_meta,omitempty"`
	}{URI: r.URI, MIMEType: r.MIMEType, Meta: r.Meta}
	if r.Blob != nil {
		w.Blob = &r.Blob
	} else {
		w.Text = &r.Text
	}
	return wire.Marshal(w)
}

// UnmarshalJSON decodes a text block; another type is an error wrapping
// ErrContentType.
func (c *TextContent) UnmarshalJSON(b []byte) error { return decodeAs(b, "text", c) }

// UnmarshalJSON decodes an image block; another type is an error wrapping
// ErrContentType.
func (c *ImageContent) UnmarshalJSON(b []byte) error { return decodeAs(b, "image", c) }

// UnmarshalJSON decodes an audio block; another type is an error wrapping
// ErrContentType.
func (c *AudioContent) UnmarshalJSON(b []byte) error { return decodeAs(b, "audio", c) }

// UnmarshalJSON decodes a resource_link block; another type is an error
// wrapping ErrContentType.
func (c *ResourceLink) UnmarshalJSON(b []byte) error { return decodeAs(b, "resource_link", c) }

// UnmarshalJSON decodes an embedded resource block; another type is an
// error wrapping ErrContentType.
func (c *EmbeddedResource) UnmarshalJSON(b []byte) error { return decodeAs(b, "resource", c) }

// decodeAs decodes a block that must be of type kind into dst.
func decodeAs(b []byte, kind string, dst Content) error {
	got, err := DecodeContent(b)
	if err != nil {
		return err
	}
	switch d := dst.(type) {
	case *TextContent:
		if g, ok := got.(*TextContent); ok {
			*d = *g
			return nil
		}
	case *ImageContent:
		if g, ok := got.(*ImageContent); ok {
			*d = *g
			return nil
		}
	case *AudioContent:
		if g, ok := got.(*AudioContent); ok {
			*d = *g
			return nil
		}
	case *ResourceLink:
		if g, ok := got.(*ResourceLink); ok {
			*d = *g
			return nil
		}
	case *EmbeddedResource:
		if g, ok := got.(*EmbeddedResource); ok {
			*d = *g
			return nil
		}
	}
	return fmt.Errorf("%w: a %s block where %q was expected", ErrContentType, blockType(got), kind)
}

// blockType is the "type" of a block.
func blockType(c Content) string {
	switch c.(type) {
	case *TextContent:
		return "text"
	case *ImageContent:
		return "image"
	case *AudioContent:
		return "audio"
	case *ResourceLink:
		return "resource_link"
	case *EmbeddedResource:
		return "resource"
	}
	return ""
}

// ErrContentType is returned when decoding a content block of a type this
// package does not know (such as the 2025-11-25 sampling tool_use blocks),
// or of another type than the one asked for.
var ErrContentType = errors.New("mcp: unknown content type")

// DecodeContent decodes one content block from JSON by its "type", as
// found in a client's sampling result.
func DecodeContent(raw json.RawMessage) (Content, error) {
	var head struct {
		Type     string          `json:"type"`
		Text     *string         `json:"text"`
		Resource json.RawMessage `json:"resource"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("mcp: content block: %w", err)
	}
	var c Content
	var into any
	switch head.Type {
	case "text":
		if head.Text == nil {
			return nil, errors.New(`mcp: text content without "text"`)
		}
		t := &TextContent{}
		c, into = t, (*textJSON)(t)
	case "image":
		t := &ImageContent{}
		c, into = t, (*imageJSON)(t)
	case "audio":
		t := &AudioContent{}
		c, into = t, (*audioJSON)(t)
	case "resource_link":
		t := &ResourceLink{}
		c, into = t, (*linkJSON)(t)
	case "resource":
		if len(head.Resource) == 0 || string(head.Resource) == "null" {
			return nil, errors.New(`mcp: resource content without "resource"`)
		}
		t := &EmbeddedResource{}
		c, into = t, (*embeddedJSON)(t)
	default:
		return nil, fmt.Errorf("%w: %q", ErrContentType, head.Type)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return nil, fmt.Errorf("mcp: %s content block: %w", head.Type, err)
	}
	return c, nil
}

// appendContents encodes a content array ([] for nil).
func (e *encoder) contents(cs []Content) {
	e.b = append(e.b, '[')
	for i, c := range cs {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		if c == nil {
			if e.err == nil {
				e.err = errors.New("mcp: nil content block")
			}
			e.b = append(e.b, "null"...)
			continue
		}
		c.appendContent(e)
	}
	e.b = append(e.b, ']')
}
