package mcp

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What the server encodes, a client decodes back to the same values.
func TestResultsRoundTrip(t *testing.T) {
	yes := true
	size := int64(42)
	tools := &ListToolsResult{NextCursor: "c", Tools: []*Tool{{Name: "t", Title: "T", Description: "d",
		InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
		Annotations: &ToolAnnotations{ReadOnlyHint: &yes}, Icons: []Icon{{Src: "https://x/i.png"}}, Meta: Meta{"k": "v"}}}}
	b, err := encodeListTools(Rev20251125, tools)
	require.NoError(t, err)
	var gotTools ListToolsResult
	require.NoError(t, json.Unmarshal(b, &gotTools))
	require.Len(t, gotTools.Tools, 1)
	tl := gotTools.Tools[0]
	assert.Equal(t, "c", gotTools.NextCursor)
	assert.Equal(t, []any{"t", "T", "d", true, "https://x/i.png", "v"},
		[]any{tl.Name, tl.Title, tl.Description, *tl.Annotations.ReadOnlyHint, tl.Icons[0].Src, tl.Meta["k"]})
	assert.JSONEq(t, `{"type":"object"}`, string(tl.InputSchema.(json.RawMessage)))

	call := &CallToolResult{Content: []Content{Text("hi"), Image([]byte{1, 2}, "image/png"), EmbeddedText("u://x", "text/plain", "e")},
		StructuredContent: map[string]any{"n": 1}, IsError: true}
	b, err = encodeCallTool(call)
	require.NoError(t, err)
	var gotCall CallToolResult
	require.NoError(t, json.Unmarshal(b, &gotCall))
	require.Len(t, gotCall.Content, 3)
	assert.Equal(t, "hi", gotCall.Content[0].(*TextContent).Text)
	assert.Equal(t, []byte{1, 2}, gotCall.Content[1].(*ImageContent).Data)
	assert.True(t, gotCall.IsError)
	assert.JSONEq(t, `{"n":1}`, string(gotCall.StructuredContent.(json.RawMessage)))

	read := &ReadResourceResult{Contents: []*ResourceContents{{URI: "u://a", MIMEType: "text/plain", Text: "a"}, {URI: "u://b", Blob: []byte("bin")}}}
	b, err = encodeReadResource(read)
	require.NoError(t, err)
	var gotRead ReadResourceResult
	require.NoError(t, json.Unmarshal(b, &gotRead))
	assert.Equal(t, read.Contents, gotRead.Contents)

	res := &ListResourcesResult{Resources: []*Resource{{URI: "u://a", Name: "a", MIMEType: "text/plain", Size: &size}}}
	b, err = encodeListResources(Rev20251125, res)
	require.NoError(t, err)
	var gotRes ListResourcesResult
	require.NoError(t, json.Unmarshal(b, &gotRes))
	assert.Equal(t, res.Resources, gotRes.Resources)

	tpl := &ListResourceTemplatesResult{ResourceTemplates: []*ResourceTemplate{{URITemplate: "u://{id}", Name: "t"}}}
	b, err = encodeListTemplates(Rev20251125, tpl)
	require.NoError(t, err)
	var gotTpl ListResourceTemplatesResult
	require.NoError(t, json.Unmarshal(b, &gotTpl))
	assert.Equal(t, tpl.ResourceTemplates, gotTpl.ResourceTemplates)

	prompts := &ListPromptsResult{Prompts: []*Prompt{{Name: "p", Arguments: []*PromptArgument{{Name: "a", Required: true}}}}}
	b, err = encodeListPrompts(Rev20251125, prompts)
	require.NoError(t, err)
	var gotPrompts ListPromptsResult
	require.NoError(t, json.Unmarshal(b, &gotPrompts))
	assert.Equal(t, prompts.Prompts, gotPrompts.Prompts)

	prompt := &GetPromptResult{Description: "d", Messages: []*PromptMessage{{Role: RoleUser, Content: Text("q")}}}
	b, err = encodeGetPrompt(prompt)
	require.NoError(t, err)
	var gotPrompt GetPromptResult
	require.NoError(t, json.Unmarshal(b, &gotPrompt))
	assert.Equal(t, "d", gotPrompt.Description)
	assert.Equal(t, "q", gotPrompt.Messages[0].Content.(*TextContent).Text)

	b, err = encodeComplete(&CompleteResult{Values: []string{"x", "y"}, Total: 5, HasMore: true})
	require.NoError(t, err)
	var gotComplete CompleteResult
	require.NoError(t, json.Unmarshal(b, &gotComplete))
	assert.Equal(t, CompleteResult{Values: []string{"x", "y"}, Total: 5, HasMore: true}, gotComplete)

	for _, bad := range []any{&ListToolsResult{}, &CallToolResult{}, &GetPromptResult{}, &CompleteResult{}} {
		assert.Error(t, json.Unmarshal([]byte(`[1]`), bad), "%T of an array", bad)
	}
	assert.Error(t, json.Unmarshal([]byte(`{"content":[{"type":"nope"}]}`), &CallToolResult{}), "an unknown block type")
}
