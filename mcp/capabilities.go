package mcp

import "encoding/json"

// ServerCapabilities is what initialize advertises. The engine builds it
// from what the Handler implements (see Engine); a method whose capability
// is absent answers MethodNotFound.
type ServerCapabilities struct {
	Tools       *ToolsCapability     `json:"tools,omitempty"`
	Resources   *ResourcesCapability `json:"resources,omitempty"`
	Prompts     *PromptsCapability   `json:"prompts,omitempty"`
	Logging     *struct{}            `json:"logging,omitempty"`
	Completions *struct{}            `json:"completions,omitempty"`
	// Tasks is the 2025-11-25 tasks capability, for a client that reads a
	// server's; this package's engine serves tasks as the 2026-07-28
	// extension instead and leaves it empty.
	Tasks        json.RawMessage            `json:"tasks,omitempty"`
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	// Extensions names the extensions the server offers, each with its
	// settings object; the engine fills it from what is enabled: tasks
	// and skills for 2026-07-28 clients only, MCP Apps (ExtUI, once a
	// View is registered) from 2025-06-18 on.
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// ToolsCapability advertises tools/list and tools/call.
type ToolsCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// ResourcesCapability advertises resources/*; Subscribe gates
// resources/subscribe and resources/unsubscribe.
type ResourcesCapability struct {
	Subscribe   bool `json:"subscribe,omitempty"`
	ListChanged bool `json:"listChanged,omitempty"`
}

// PromptsCapability advertises prompts/list and prompts/get.
type PromptsCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// ClientCapabilities is what the client declared in initialize (or, from
// 2026-07-28, in each request's _meta). A nil pointer means "not declared":
// the server must not use that feature. Unknown members are ignored.
type ClientCapabilities struct {
	Roots        *RootsCapability           `json:"roots,omitempty"`
	Sampling     *SamplingCapability        `json:"sampling,omitempty"`
	Elicitation  *ElicitationCapability     `json:"elicitation,omitempty"`
	Tasks        json.RawMessage            `json:"tasks,omitempty"`
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	Extensions   map[string]json.RawMessage `json:"extensions,omitempty"`
}

// RootsCapability: the client answers roots/list.
type RootsCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// SamplingCapability: the client answers sampling/createMessage. Context
// allows includeContext other than "none", Tools allows tools/toolChoice
// (2025-11-25).
type SamplingCapability struct {
	Context *struct{} `json:"context,omitempty"`
	Tools   *struct{} `json:"tools,omitempty"`
}

// ElicitationCapability: the client answers elicitation/create (since 2025-06-18). An
// empty object means form mode only; URL mode needs URL (since 2025-11-25).
type ElicitationCapability struct {
	Form *struct{} `json:"form,omitempty"`
	URL  *struct{} `json:"url,omitempty"`
}

func (c *ElicitationCapability) form() bool {
	return c != nil && (c.Form != nil || c.URL == nil)
}

func (c *ElicitationCapability) url() bool { return c != nil && c.URL != nil }
