package mcp

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
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
	Text        string
	Annotations *Annotations
	Meta        Meta
}

// ImageContent is an image; Data holds the raw bytes (base64-encoded on
// the wire) and MIMEType must be set (e.g. "image/png").
type ImageContent struct {
	Data        []byte
	MIMEType    string
	Annotations *Annotations
	Meta        Meta
}

// AudioContent is audio (since 2025-03-26); as ImageContent.
type AudioContent struct {
	Data        []byte
	MIMEType    string
	Annotations *Annotations
	Meta        Meta
}

// ResourceLink points at a resource the client may read (since 2025-06-18); the
// resource need not appear in resources/list.
type ResourceLink struct {
	URI         string
	Name        string
	Title       string
	Description string
	MIMEType    string
	Size        *int64
	Annotations *Annotations
	Icons       []Icon
	Meta        Meta
}

// EmbeddedResource carries a resource's contents inline.
type EmbeddedResource struct {
	Resource    *ResourceContents
	Annotations *Annotations
	Meta        Meta
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
	URI      string
	MIMEType string
	Text     string
	Blob     []byte
	Meta     Meta
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

// MarshalJSON encodes the block; it fails on invalid UTF-8.
func (c *TextContent) MarshalJSON() ([]byte, error) { return marshalWith(c.appendContent) }

// MarshalJSON encodes the block.
func (c *ImageContent) MarshalJSON() ([]byte, error) { return marshalWith(c.appendContent) }

// MarshalJSON encodes the block.
func (c *AudioContent) MarshalJSON() ([]byte, error) { return marshalWith(c.appendContent) }

// MarshalJSON encodes the block; it fails on invalid UTF-8.
func (c *ResourceLink) MarshalJSON() ([]byte, error) { return marshalWith(c.appendContent) }

// MarshalJSON encodes the block; it fails on invalid UTF-8.
func (c *EmbeddedResource) MarshalJSON() ([]byte, error) { return marshalWith(c.appendContent) }

// MarshalJSON encodes text contents or blob contents; it fails on invalid
// UTF-8.
func (r *ResourceContents) MarshalJSON() ([]byte, error) { return marshalWith(r.appendJSON) }

// wireContent is the union of every block's members, for decoding.
type wireContent struct {
	Type        string        `json:"type"`
	Text        *string       `json:"text"`
	Data        []byte        `json:"data"`
	MIMEType    string        `json:"mimeType"`
	URI         string        `json:"uri"`
	Name        string        `json:"name"`
	Title       string        `json:"title"`
	Description string        `json:"description"`
	Size        *int64        `json:"size"`
	Resource    *wireContents `json:"resource"`
	Annotations *Annotations  `json:"annotations"`
	Icons       []Icon        `json:"icons"`
	Meta        Meta          `json:"_meta"`
}

type wireContents struct {
	URI      string  `json:"uri"`
	MIMEType string  `json:"mimeType"`
	Text     *string `json:"text"`
	Blob     []byte  `json:"blob"`
	Meta     Meta    `json:"_meta"`
}

// ErrContentType is returned when decoding a content block of a type this
// package does not know (such as the 2025-11-25 sampling tool_use blocks).
var ErrContentType = errors.New("mcp: unknown content type")

// DecodeContent decodes one content block from JSON, as found in a
// client's sampling result.
func DecodeContent(raw json.RawMessage) (Content, error) {
	var w wireContent
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("mcp: content block: %w", err)
	}
	switch w.Type {
	case "text":
		if w.Text == nil {
			return nil, errors.New(`mcp: text content without "text"`)
		}
		return &TextContent{Text: *w.Text, Annotations: w.Annotations, Meta: w.Meta}, nil
	case "image":
		return &ImageContent{Data: w.Data, MIMEType: w.MIMEType, Annotations: w.Annotations, Meta: w.Meta}, nil
	case "audio":
		return &AudioContent{Data: w.Data, MIMEType: w.MIMEType, Annotations: w.Annotations, Meta: w.Meta}, nil
	case "resource_link":
		return &ResourceLink{URI: w.URI, Name: w.Name, Title: w.Title, Description: w.Description,
			MIMEType: w.MIMEType, Size: w.Size, Annotations: w.Annotations, Icons: w.Icons, Meta: w.Meta}, nil
	case "resource":
		if w.Resource == nil {
			return nil, errors.New(`mcp: resource content without "resource"`)
		}
		rc := &ResourceContents{URI: w.Resource.URI, MIMEType: w.Resource.MIMEType, Blob: w.Resource.Blob, Meta: w.Resource.Meta}
		if w.Resource.Text != nil {
			rc.Text = *w.Resource.Text
		}
		return &EmbeddedResource{Resource: rc, Annotations: w.Annotations, Meta: w.Meta}, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrContentType, w.Type)
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
