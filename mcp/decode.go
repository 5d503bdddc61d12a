package mcp

import (
	"encoding/json"
	"fmt"
)

// Reading results as a client does (package mcptest, or an app that calls
// another MCP server): each result type decodes its wire form with
// UnmarshalJSON. Members a revision does not define are simply absent;
// unknown members are ignored. Schemas stay json.RawMessage.

// UnmarshalJSON decodes a tools/list page.
func (r *ListToolsResult) UnmarshalJSON(b []byte) error {
	var w struct {
		Tools      []*Tool `json:"tools"`
		NextCursor string  `json:"nextCursor"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: tools/list result: %w", err)
	}
	*r = ListToolsResult{Tools: w.Tools, NextCursor: w.NextCursor}
	return nil
}

// UnmarshalJSON decodes a tool as tools/list describes it; its schemas
// are kept as json.RawMessage.
func (t *Tool) UnmarshalJSON(b []byte) error {
	var w struct {
		Name         string           `json:"name"`
		Title        string           `json:"title"`
		Description  string           `json:"description"`
		InputSchema  json.RawMessage  `json:"inputSchema"`
		OutputSchema json.RawMessage  `json:"outputSchema"`
		Annotations  *ToolAnnotations `json:"annotations"`
		Icons        []Icon           `json:"icons"`
		Meta         Meta             `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: tool: %w", err)
	}
	*t = Tool{Name: w.Name, Title: w.Title, Description: w.Description, Annotations: w.Annotations,
		Icons: w.Icons, Meta: w.Meta}
	if w.InputSchema != nil {
		t.InputSchema = w.InputSchema
	}
	if w.OutputSchema != nil {
		t.OutputSchema = w.OutputSchema
	}
	return nil
}

// UnmarshalJSON decodes a tools/call result: its content blocks by their
// type (DecodeContent), and its structuredContent as json.RawMessage.
func (r *CallToolResult) UnmarshalJSON(b []byte) error {
	var w struct {
		Content           []json.RawMessage `json:"content"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
		IsError           bool              `json:"isError"`
		Meta              Meta              `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: tools/call result: %w", err)
	}
	content, err := decodeBlocks(w.Content)
	if err != nil {
		return err
	}
	*r = CallToolResult{Content: content, IsError: w.IsError, Meta: w.Meta}
	if w.StructuredContent != nil {
		r.StructuredContent = w.StructuredContent
	}
	return nil
}

func decodeBlocks(raw []json.RawMessage) ([]Content, error) {
	out := make([]Content, 0, len(raw))
	for _, c := range raw {
		block, err := DecodeContent(c)
		if err != nil {
			return nil, err
		}
		out = append(out, block)
	}
	return out, nil
}

// UnmarshalJSON decodes a resources/list page.
func (r *ListResourcesResult) UnmarshalJSON(b []byte) error {
	var w struct {
		Resources  []*Resource `json:"resources"`
		NextCursor string      `json:"nextCursor"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: resources/list result: %w", err)
	}
	*r = ListResourcesResult{Resources: w.Resources, NextCursor: w.NextCursor}
	return nil
}

// UnmarshalJSON decodes a resource as resources/list describes it.
func (r *Resource) UnmarshalJSON(b []byte) error {
	var w struct {
		URI         string       `json:"uri"`
		Name        string       `json:"name"`
		Title       string       `json:"title"`
		Description string       `json:"description"`
		MIMEType    string       `json:"mimeType"`
		Size        *int64       `json:"size"`
		Annotations *Annotations `json:"annotations"`
		Icons       []Icon       `json:"icons"`
		Meta        Meta         `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: resource: %w", err)
	}
	*r = Resource(w)
	return nil
}

// UnmarshalJSON decodes a resources/templates/list page.
func (r *ListResourceTemplatesResult) UnmarshalJSON(b []byte) error {
	var w struct {
		ResourceTemplates []*ResourceTemplate `json:"resourceTemplates"`
		NextCursor        string              `json:"nextCursor"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: resources/templates/list result: %w", err)
	}
	*r = ListResourceTemplatesResult{ResourceTemplates: w.ResourceTemplates, NextCursor: w.NextCursor}
	return nil
}

// UnmarshalJSON decodes a resource template.
func (t *ResourceTemplate) UnmarshalJSON(b []byte) error {
	var w struct {
		URITemplate string       `json:"uriTemplate"`
		Name        string       `json:"name"`
		Title       string       `json:"title"`
		Description string       `json:"description"`
		MIMEType    string       `json:"mimeType"`
		Annotations *Annotations `json:"annotations"`
		Icons       []Icon       `json:"icons"`
		Meta        Meta         `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: resource template: %w", err)
	}
	*t = ResourceTemplate(w)
	return nil
}

// UnmarshalJSON decodes a resources/read result.
func (r *ReadResourceResult) UnmarshalJSON(b []byte) error {
	var w struct {
		Contents []*ResourceContents `json:"contents"`
		Meta     Meta                `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: resources/read result: %w", err)
	}
	*r = ReadResourceResult(w)
	return nil
}

// UnmarshalJSON decodes one resource's contents: text, or a base64 blob.
func (c *ResourceContents) UnmarshalJSON(b []byte) error {
	var w struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType"`
		Text     string `json:"text"`
		Blob     []byte `json:"blob"`
		Meta     Meta   `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: resource contents: %w", err)
	}
	*c = ResourceContents(w)
	return nil
}

// UnmarshalJSON decodes a prompts/list page.
func (r *ListPromptsResult) UnmarshalJSON(b []byte) error {
	var w struct {
		Prompts    []*Prompt `json:"prompts"`
		NextCursor string    `json:"nextCursor"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: prompts/list result: %w", err)
	}
	*r = ListPromptsResult{Prompts: w.Prompts, NextCursor: w.NextCursor}
	return nil
}

// UnmarshalJSON decodes a prompt as prompts/list describes it.
func (p *Prompt) UnmarshalJSON(b []byte) error {
	var w struct {
		Name        string `json:"name"`
		Title       string `json:"title"`
		Description string `json:"description"`
		Arguments   []*struct {
			Name        string `json:"name"`
			Title       string `json:"title"`
			Description string `json:"description"`
			Required    bool   `json:"required"`
		} `json:"arguments"`
		Icons []Icon `json:"icons"`
		Meta  Meta   `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: prompt: %w", err)
	}
	*p = Prompt{Name: w.Name, Title: w.Title, Description: w.Description, Icons: w.Icons, Meta: w.Meta}
	for _, a := range w.Arguments {
		p.Arguments = append(p.Arguments, (*PromptArgument)(a))
	}
	return nil
}

// UnmarshalJSON decodes a prompts/get result.
func (r *GetPromptResult) UnmarshalJSON(b []byte) error {
	var w struct {
		Description string `json:"description"`
		Messages    []struct {
			Role    Role            `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Meta Meta `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: prompts/get result: %w", err)
	}
	*r = GetPromptResult{Description: w.Description, Meta: w.Meta}
	for _, m := range w.Messages {
		c, err := DecodeContent(m.Content)
		if err != nil {
			return err
		}
		r.Messages = append(r.Messages, &PromptMessage{Role: m.Role, Content: c})
	}
	return nil
}

// UnmarshalJSON decodes a completion/complete result.
func (r *CompleteResult) UnmarshalJSON(b []byte) error {
	var w struct {
		Completion struct {
			Values  []string `json:"values"`
			Total   int      `json:"total"`
			HasMore bool     `json:"hasMore"`
		} `json:"completion"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: completion/complete result: %w", err)
	}
	*r = CompleteResult(w.Completion)
	return nil
}

// UnmarshalJSON decodes a sampling message, its content by its type.
func (m *SamplingMessage) UnmarshalJSON(b []byte) error {
	var w struct {
		Role    Role            `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: sampling message: %w", err)
	}
	c, err := DecodeContent(w.Content)
	if err != nil {
		return err
	}
	*m = SamplingMessage{Role: w.Role, Content: c}
	return nil
}

// MarshalJSON encodes the result as a client sends it: Raw when it is
// set, else the fields.
func (r *CreateMessageResult) MarshalJSON() ([]byte, error) {
	if len(r.Raw) > 0 {
		return r.Raw, nil
	}
	return json.Marshal(struct {
		Role       Role    `json:"role"`
		Content    Content `json:"content"`
		Model      string  `json:"model"`
		StopReason string  `json:"stopReason,omitempty"`
	}{r.Role, r.Content, r.Model, r.StopReason})
}
