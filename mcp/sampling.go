package mcp

import (
	"encoding/json"
	"fmt"
)

// CreateMessageParams are the params of sampling/createMessage.
type CreateMessageParams struct {
	Messages         []*SamplingMessage `json:"messages"`
	ModelPreferences *ModelPreferences  `json:"modelPreferences,omitempty"`
	SystemPrompt     string             `json:"systemPrompt,omitempty"`
	// IncludeContext is "none" (default), "thisServer" or "allServers";
	// the latter two need the client's sampling.context.
	IncludeContext string   `json:"includeContext,omitempty"`
	Temperature    *float64 `json:"temperature,omitempty"`
	MaxTokens      int      `json:"maxTokens"`
	StopSequences  []string `json:"stopSequences,omitempty"`
	Metadata       any      `json:"metadata,omitempty"`
	// Tools and ToolChoice (2025-11-25) need the client's sampling.tools.
	Tools      json.RawMessage `json:"tools,omitempty"`
	ToolChoice json.RawMessage `json:"toolChoice,omitempty"`
	Meta       Meta            `json:"_meta,omitempty"`
}

// SamplingMessage is one message of a sampling conversation.
type SamplingMessage struct {
	Role    Role    `json:"role"`
	Content Content `json:"content"`
	Meta    Meta    `json:"_meta,omitempty"` // since 2025-11-25
}

// ModelPreferences are the server's hints for model choice; priorities are
// 0..1.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitempty"`
	SpeedPriority        *float64    `json:"speedPriority,omitempty"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitempty"`
}

// ModelHint names a model (family) the server would like.
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// CreateMessageResult is the client's sampling answer. Content is the
// first content block of a kind this package knows (nil otherwise, e.g.
// for 2025-11-25 tool_use blocks); Raw keeps the whole result.
type CreateMessageResult struct {
	Role       Role            `json:"role"`
	Content    Content         `json:"content"`
	Model      string          `json:"model"`
	StopReason string          `json:"stopReason,omitempty"`
	Meta       Meta            `json:"_meta,omitempty"`
	Raw        json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes a result whose content is one block or an array.
func (r *CreateMessageResult) UnmarshalJSON(b []byte) error {
	var w struct {
		Role       Role            `json:"role"`
		Content    json.RawMessage `json:"content"`
		Model      string          `json:"model"`
		StopReason string          `json:"stopReason"`
		Meta       Meta            `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = CreateMessageResult{Role: w.Role, Model: w.Model, StopReason: w.StopReason, Meta: w.Meta}
	r.Raw = append(json.RawMessage(nil), b...)
	c := w.Content
	if len(c) > 0 && c[0] == '[' {
		var arr []json.RawMessage
		if err := json.Unmarshal(c, &arr); err != nil {
			return err
		}
		c = nil
		if len(arr) > 0 {
			c = arr[0]
		}
	}
	if len(c) > 0 {
		block, err := DecodeContent(c)
		if err == nil {
			r.Content = block
		}
	}
	if r.Role == "" {
		return fmt.Errorf("mcp: sampling result without role")
	}
	return nil
}

// ElicitParams are the params of elicitation/create. Form mode (Mode "" or
// "form") needs Message and RequestedSchema (an object schema of primitive
// properties); URL mode ("url", since 2025-11-25) needs Message, URL and ElicitationID.
type ElicitParams struct {
	Mode            string `json:"mode,omitempty"`
	Message         string `json:"message"`
	RequestedSchema any    `json:"requestedSchema,omitempty"`
	URL             string `json:"url,omitempty"`
	ElicitationID   string `json:"elicitationId,omitempty"`
	Meta            Meta   `json:"_meta,omitempty"`
}

// ElicitResult is the user's answer: Action is "accept", "decline" or
// "cancel"; Content holds the form values on accept.
type ElicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
	Meta    Meta           `json:"_meta,omitempty"`
}

// ListRootsResult is the client's roots/list answer.
type ListRootsResult struct {
	Roots []Root `json:"roots"`
	Meta  Meta   `json:"_meta,omitempty"`
}

// Root is a filesystem root the client exposes (a file:// URI).
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
	Meta Meta   `json:"_meta,omitempty"`
}
