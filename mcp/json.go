package mcp

import (
	"encoding/json"
	"fmt"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// The JSON forms of the public protocol types. Each type's json tags say
// its wire shape, by the newest revision's schema, and encoding/json gives
// exactly what MCP sends: a log line, a stored result or a proxied message
// reads as MCP. The methods here fill in what tags cannot say: arrays the
// schema requires are [] rather than null, a Tool's default input schema,
// a content block's "type", and on decoding, content blocks by their type
// and schemas and structured content kept as json.RawMessage. Members a
// revision does not define are absent from older peers' JSON; unknown
// members are ignored. The engine writes the same bytes with its own
// encoder (encode.go, results.go), without reflection; a test holds the two
// together.
//
// Encoding fails on invalid UTF-8 (wire.ErrInvalidUTF8) instead of
// altering the text, as the engine does.

// MarshalJSON encodes the tool as tools/list lists it; a nil InputSchema is
// {"type":"object"}.
func (t Tool) MarshalJSON() ([]byte, error) {
	type plain Tool
	if t.InputSchema == nil {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	return wire.Marshal(plain(t))
}

// UnmarshalJSON decodes a tool as tools/list describes it; its schemas
// are kept as json.RawMessage.
func (t *Tool) UnmarshalJSON(b []byte) error {
	type plain Tool
	var w struct {
		plain
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: tool: %w", err)
	}
	*t = Tool(w.plain)
	t.InputSchema, t.OutputSchema = nil, nil
	if w.InputSchema != nil {
		t.InputSchema = w.InputSchema
	}
	if w.OutputSchema != nil {
		t.OutputSchema = w.OutputSchema
	}
	return nil
}

// MarshalJSON encodes the page as tools/list answers it. A page a Server
// made holds its encoded form, for the revision of the request it answered.
func (r ListToolsResult) MarshalJSON() ([]byte, error) {
	if r.encoded != nil {
		return r.encoded, nil
	}
	type plain ListToolsResult
	r.Tools = orEmpty(r.Tools)
	return wire.Marshal(plain(r))
}

// UnmarshalJSON decodes a tools/list page.
func (r *ListToolsResult) UnmarshalJSON(b []byte) error {
	type plain ListToolsResult
	var w plain
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: tools/list result: %w", err)
	}
	*r = ListToolsResult(w)
	return nil
}

// MarshalJSON encodes the result as tools/call answers it.
func (r CallToolResult) MarshalJSON() ([]byte, error) {
	type plain CallToolResult
	r.Content = orEmpty(r.Content)
	if r.structured != nil {
		r.StructuredContent = r.structured
	}
	return wire.Marshal(plain(r))
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

// MarshalJSON encodes the page as resources/list answers it; see
// ListToolsResult.MarshalJSON.
func (r ListResourcesResult) MarshalJSON() ([]byte, error) {
	if r.encoded != nil {
		return r.encoded, nil
	}
	type plain ListResourcesResult
	r.Resources = orEmpty(r.Resources)
	return wire.Marshal(plain(r))
}

// UnmarshalJSON decodes a resources/list page.
func (r *ListResourcesResult) UnmarshalJSON(b []byte) error {
	type plain ListResourcesResult
	var w plain
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: resources/list result: %w", err)
	}
	*r = ListResourcesResult(w)
	return nil
}

// MarshalJSON encodes the page as resources/templates/list answers it;
// see ListToolsResult.MarshalJSON.
func (r ListResourceTemplatesResult) MarshalJSON() ([]byte, error) {
	if r.encoded != nil {
		return r.encoded, nil
	}
	type plain ListResourceTemplatesResult
	r.ResourceTemplates = orEmpty(r.ResourceTemplates)
	return wire.Marshal(plain(r))
}

// UnmarshalJSON decodes a resources/templates/list page.
func (r *ListResourceTemplatesResult) UnmarshalJSON(b []byte) error {
	type plain ListResourceTemplatesResult
	var w plain
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: resources/templates/list result: %w", err)
	}
	*r = ListResourceTemplatesResult(w)
	return nil
}

// MarshalJSON encodes the result as resources/read answers it.
func (r ReadResourceResult) MarshalJSON() ([]byte, error) {
	type plain ReadResourceResult
	r.Contents = orEmpty(r.Contents)
	return wire.Marshal(plain(r))
}

// UnmarshalJSON decodes a resources/read result.
func (r *ReadResourceResult) UnmarshalJSON(b []byte) error {
	type plain ReadResourceResult
	var w plain
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: resources/read result: %w", err)
	}
	*r = ReadResourceResult(w)
	return nil
}

// UnmarshalJSON decodes one resource's contents: text, or a base64 blob.
func (c *ResourceContents) UnmarshalJSON(b []byte) error {
	type plain ResourceContents
	var w plain
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: resource contents: %w", err)
	}
	*c = ResourceContents(w)
	return nil
}

// MarshalJSON encodes the page as prompts/list answers it; see
// ListToolsResult.MarshalJSON.
func (r ListPromptsResult) MarshalJSON() ([]byte, error) {
	if r.encoded != nil {
		return r.encoded, nil
	}
	type plain ListPromptsResult
	r.Prompts = orEmpty(r.Prompts)
	return wire.Marshal(plain(r))
}

// UnmarshalJSON decodes a prompts/list page.
func (r *ListPromptsResult) UnmarshalJSON(b []byte) error {
	type plain ListPromptsResult
	var w plain
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: prompts/list result: %w", err)
	}
	*r = ListPromptsResult(w)
	return nil
}

// MarshalJSON encodes the result as prompts/get answers it.
func (r GetPromptResult) MarshalJSON() ([]byte, error) {
	type plain GetPromptResult
	r.Messages = orEmpty(r.Messages)
	return wire.Marshal(plain(r))
}

// UnmarshalJSON decodes a prompts/get result.
func (r *GetPromptResult) UnmarshalJSON(b []byte) error {
	type plain GetPromptResult
	var w plain
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: prompts/get result: %w", err)
	}
	*r = GetPromptResult(w)
	return nil
}

// UnmarshalJSON decodes a prompt message, its content by its type.
func (m *PromptMessage) UnmarshalJSON(b []byte) error {
	var w struct {
		Role    Role            `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: prompt message: %w", err)
	}
	c, err := DecodeContent(w.Content)
	if err != nil {
		return err
	}
	*m = PromptMessage{Role: w.Role, Content: c}
	return nil
}

// completeJSON is CompleteResult's wire shape: the values inside
// "completion".
type completeJSON struct {
	Completion struct {
		Values  []string `json:"values"`
		Total   int      `json:"total"`
		HasMore bool     `json:"hasMore"`
	} `json:"completion"`
	Meta Meta `json:"_meta,omitempty"`
}

// MarshalJSON encodes the result as completion/complete answers it:
// {"completion":{"values":[…],"total":…,"hasMore":…}}, its fields as they
// are (the engine's truncation and defaults apply to what it sends, not
// here).
func (r CompleteResult) MarshalJSON() ([]byte, error) {
	var w completeJSON
	w.Completion.Values, w.Completion.Total, w.Completion.HasMore = orEmpty(r.Values), r.Total, r.HasMore
	w.Meta = r.Meta
	return wire.Marshal(&w)
}

// UnmarshalJSON decodes a completion/complete result.
func (r *CompleteResult) UnmarshalJSON(b []byte) error {
	var w completeJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: completion/complete result: %w", err)
	}
	*r = CompleteResult{Values: w.Completion.Values, Total: w.Completion.Total, HasMore: w.Completion.HasMore, Meta: w.Meta}
	return nil
}

// MarshalJSON encodes the result as a client answers roots/list.
func (r ListRootsResult) MarshalJSON() ([]byte, error) {
	type plain ListRootsResult
	r.Roots = orEmpty(r.Roots)
	return wire.Marshal(plain(r))
}

// UnmarshalJSON decodes a sampling message, its content by its type: one
// block, or an array of one block.
func (m *SamplingMessage) UnmarshalJSON(b []byte) error {
	var w struct {
		Role    Role            `json:"role"`
		Content json.RawMessage `json:"content"`
		Meta    Meta            `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: sampling message: %w", err)
	}
	raw := w.Content
	if len(raw) > 0 && raw[0] == '[' {
		var arr []json.RawMessage
		if err := json.Unmarshal(raw, &arr); err != nil {
			return fmt.Errorf("mcp: sampling message: %w", err)
		}
		if len(arr) != 1 {
			return fmt.Errorf("%w: a sampling message of %d blocks", ErrContentType, len(arr))
		}
		raw = arr[0]
	}
	c, err := DecodeContent(raw)
	if err != nil {
		return err
	}
	*m = SamplingMessage{Role: w.Role, Content: c, Meta: w.Meta}
	return nil
}

// MarshalJSON encodes the result as a client sends it: Raw when it is
// set, else the fields.
func (r *CreateMessageResult) MarshalJSON() ([]byte, error) {
	if len(r.Raw) > 0 {
		return r.Raw, nil
	}
	type plain CreateMessageResult
	return wire.Marshal((*plain)(r))
}

// orEmpty is s, or an empty slice for nil: the arrays MCP requires are
// never null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// A request marshals to the JSON-RPC request a client sends
// ({"jsonrpc":"2.0","id":…,"method":…,"params":{…}}), its params from the
// typed fields and _meta from Meta, and unmarshals from one, as captured
// from a client. What the engine knows besides (Revision, Client, the
// caller) is not part of it.

// rpcRequest is a request's JSON-RPC envelope.
type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      wire.ID         `json:"id,omitzero"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

// marshalRequest encodes r's envelope around params (nil: r.Params);
// method is the method when r has none.
func marshalRequest(r *Request, method string, params any) ([]byte, error) {
	env := rpcRequest{JSONRPC: "2.0", ID: r.ID, Method: r.Method, Params: r.Params}
	if env.Method == "" {
		env.Method = method
	}
	if params != nil {
		p, err := wire.Marshal(params)
		if err != nil {
			return nil, err
		}
		// Params that say nothing are left out, as a client that had
		// none to send would (unless the request came with "params":{}).
		if string(p) != "{}" || r.Params != nil {
			env.Params = p
		}
	}
	return wire.Marshal(&env)
}

// unmarshalRequest decodes a JSON-RPC request into r and its params into
// params (which must have a RequestMeta field tagged _meta, or be nil).
func unmarshalRequest(b []byte, r *Request, params any) error {
	var env rpcRequest
	if err := json.Unmarshal(b, &env); err != nil {
		return fmt.Errorf("mcp: request: %w", err)
	}
	r.Method, r.ID, r.Params = env.Method, env.ID, nil
	r.Meta = RequestMeta{}
	if len(env.Params) == 0 || string(env.Params) == "null" {
		return nil
	}
	r.Params = env.Params
	if params == nil {
		var p struct {
			Meta RequestMeta `json:"_meta"`
		}
		params = &p
		defer func() { r.Meta = p.Meta }()
	}
	if err := json.Unmarshal(env.Params, params); err != nil {
		return fmt.Errorf("mcp: %s params: %w", env.Method, err)
	}
	return nil
}

// MarshalJSON encodes the request as a client sends it; Params is sent as
// it is.
func (r *Request) MarshalJSON() ([]byte, error) { return marshalRequest(r, "", nil) }

// UnmarshalJSON decodes a JSON-RPC request (or notification) as a client
// sends it: Method, ID, Params and Meta.
func (r *Request) UnmarshalJSON(b []byte) error { return unmarshalRequest(b, r, nil) }

type listParams struct {
	Cursor string      `json:"cursor,omitempty"`
	Meta   RequestMeta `json:"_meta,omitzero"`
}

// MarshalJSON encodes the request as a client sends it (Method says which
// list).
func (r *ListRequest) MarshalJSON() ([]byte, error) {
	return marshalRequest(&r.Request, "", &listParams{r.Cursor, r.Meta})
}

// UnmarshalJSON decodes a list request as a client sends it.
func (r *ListRequest) UnmarshalJSON(b []byte) error {
	var p listParams
	err := unmarshalRequest(b, &r.Request, &p)
	r.Cursor, r.Meta = p.Cursor, p.Meta
	return err
}

type callToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Meta      RequestMeta     `json:"_meta,omitzero"`
}

// MarshalJSON encodes the request as a client sends it.
func (r *CallToolRequest) MarshalJSON() ([]byte, error) {
	return marshalRequest(&r.Request, "tools/call", &callToolParams{r.Name, r.Arguments, r.Meta})
}

// UnmarshalJSON decodes a tools/call request as a client sends it.
func (r *CallToolRequest) UnmarshalJSON(b []byte) error {
	var p callToolParams
	err := unmarshalRequest(b, &r.Request, &p)
	r.Name, r.Arguments, r.Meta = p.Name, p.Arguments, p.Meta
	if string(r.Arguments) == "null" {
		r.Arguments = nil
	}
	return err
}

type uriParams struct {
	URI  string      `json:"uri"`
	Meta RequestMeta `json:"_meta,omitzero"`
}

// MarshalJSON encodes the request as a client sends it.
func (r *ReadResourceRequest) MarshalJSON() ([]byte, error) {
	return marshalRequest(&r.Request, "resources/read", &uriParams{r.URI, r.Meta})
}

// UnmarshalJSON decodes a resources/read request as a client sends it.
func (r *ReadResourceRequest) UnmarshalJSON(b []byte) error {
	var p uriParams
	err := unmarshalRequest(b, &r.Request, &p)
	r.URI, r.Meta, r.Vars = p.URI, p.Meta, nil
	return err
}

// MarshalJSON encodes the request as a client sends it
// (resources/subscribe unless Method says resources/unsubscribe).
func (r *SubscribeRequest) MarshalJSON() ([]byte, error) {
	return marshalRequest(&r.Request, "resources/subscribe", &uriParams{r.URI, r.Meta})
}

// UnmarshalJSON decodes a resources/subscribe or resources/unsubscribe
// request as a client sends it.
func (r *SubscribeRequest) UnmarshalJSON(b []byte) error {
	var p uriParams
	err := unmarshalRequest(b, &r.Request, &p)
	r.URI, r.Meta = p.URI, p.Meta
	return err
}

type getPromptParams struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
	Meta      RequestMeta       `json:"_meta,omitzero"`
}

// MarshalJSON encodes the request as a client sends it.
func (r *GetPromptRequest) MarshalJSON() ([]byte, error) {
	return marshalRequest(&r.Request, "prompts/get", &getPromptParams{r.Name, r.Arguments, r.Meta})
}

// UnmarshalJSON decodes a prompts/get request as a client sends it;
// Arguments is never nil.
func (r *GetPromptRequest) UnmarshalJSON(b []byte) error {
	var p getPromptParams
	err := unmarshalRequest(b, &r.Request, &p)
	r.Name, r.Arguments, r.Meta = p.Name, p.Arguments, p.Meta
	if r.Arguments == nil {
		r.Arguments = map[string]string{}
	}
	return err
}

type setLevelParams struct {
	Level LogLevel    `json:"level"`
	Meta  RequestMeta `json:"_meta,omitzero"`
}

// MarshalJSON encodes the request as a client sends it.
func (r *SetLogLevelRequest) MarshalJSON() ([]byte, error) {
	return marshalRequest(&r.Request, "logging/setLevel", &setLevelParams{r.Level, r.Meta})
}

// UnmarshalJSON decodes a logging/setLevel request as a client sends it.
func (r *SetLogLevelRequest) UnmarshalJSON(b []byte) error {
	var p setLevelParams
	err := unmarshalRequest(b, &r.Request, &p)
	r.Level, r.Meta = p.Level, p.Meta
	return err
}

type initializeParams struct {
	InitializeParams
	Meta RequestMeta `json:"_meta,omitzero"`
}

// MarshalJSON encodes the request as a client sends it.
func (r *InitializeRequest) MarshalJSON() ([]byte, error) {
	return marshalRequest(&r.Request, "initialize", &initializeParams{r.Params, r.Meta})
}

// UnmarshalJSON decodes an initialize request as a client sends it;
// Client points at its capabilities.
func (r *InitializeRequest) UnmarshalJSON(b []byte) error {
	var p initializeParams
	err := unmarshalRequest(b, &r.Request, &p)
	r.Params, r.Meta = p.InitializeParams, p.Meta
	r.Client = &r.Params.Capabilities
	return err
}

type completeParams struct {
	Ref      CompletionRef `json:"ref"`
	Argument struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"argument"`
	Context *struct {
		Arguments map[string]string `json:"arguments,omitempty"`
	} `json:"context,omitempty"`
	Meta RequestMeta `json:"_meta,omitzero"`
}

// MarshalJSON encodes the request as a client sends it.
func (r *CompleteRequest) MarshalJSON() ([]byte, error) {
	p := completeParams{Ref: r.Ref, Meta: r.Meta}
	p.Argument.Name, p.Argument.Value = r.ArgumentName, r.ArgumentValue
	if len(r.Context) > 0 {
		p.Context = &struct {
			Arguments map[string]string `json:"arguments,omitempty"`
		}{r.Context}
	}
	return marshalRequest(&r.Request, "completion/complete", &p)
}

// UnmarshalJSON decodes a completion/complete request as a client sends
// it; Context is never nil.
func (r *CompleteRequest) UnmarshalJSON(b []byte) error {
	var p completeParams
	err := unmarshalRequest(b, &r.Request, &p)
	r.Ref, r.ArgumentName, r.ArgumentValue, r.Meta = p.Ref, p.Argument.Name, p.Argument.Value, p.Meta
	r.Context = map[string]string{}
	if p.Context != nil && p.Context.Arguments != nil {
		r.Context = p.Context.Arguments
	}
	return err
}

// MarshalJSON encodes _meta as it came (Raw), or as a progressToken alone.
func (m RequestMeta) MarshalJSON() ([]byte, error) {
	switch {
	case m.Raw != nil:
		return m.Raw, nil
	case !m.ProgressToken.IsZero():
		return []byte(`{"progressToken":` + m.ProgressToken.raw + `}`), nil
	}
	return []byte(`{}`), nil
}

// UnmarshalJSON decodes a _meta object: Raw keeps it, ProgressToken is
// its progressToken.
func (m *RequestMeta) UnmarshalJSON(b []byte) error {
	var w struct {
		ProgressToken ProgressToken `json:"progressToken"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("mcp: _meta: %w", err)
	}
	*m = RequestMeta{ProgressToken: w.ProgressToken, Raw: append(json.RawMessage(nil), b...)}
	return nil
}

// UnmarshalJSON decodes a progress token: a JSON string or number, kept as
// written; null is the zero token.
func (t *ProgressToken) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		*t = ProgressToken{}
		return nil
	case len(b) > 0 && (b[0] == '"' || b[0] == '-' || b[0] >= '0' && b[0] <= '9') && json.Valid(b):
		*t = ProgressToken{raw: string(b)}
		return nil
	}
	return fmt.Errorf("mcp: a progress token must be a string or a number, not %s", b)
}

// UnmarshalJSON decodes a level by its MCP name ("warning").
func (l *LogLevel) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%w: %s", ErrLogLevel, b)
	}
	v, err := ParseLogLevel(s)
	if err != nil {
		return err
	}
	*l = v
	return nil
}
