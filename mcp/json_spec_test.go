package mcp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every public protocol type decodes what MCP sends (literal JSON in the
// shapes of the 2025-11-25 schema) and encodes back exactly that.
func TestJSONSpecShapesRoundTrip(t *testing.T) {
	const tool = `{"name":"get_weather","title":"Weather","description":"Current weather",` +
		`"inputSchema":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]},` +
		`"outputSchema":{"type":"object","properties":{"t":{"type":"number"}}},` +
		`"annotations":{"title":"W","readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false},` +
		`"icons":[{"src":"https://x.example/i.png","mimeType":"image/png","sizes":["48x48","any"],"theme":"dark"}],` +
		`"_meta":{"example.com/k":{"n":1}}}`
	const resource = `{"uri":"file:///a.txt","name":"a.txt","title":"A","description":"d","mimeType":"text/plain","size":42,` +
		`"annotations":{"audience":["user","assistant"],"priority":0.8,"lastModified":"2025-01-12T15:00:58Z"},` +
		`"icons":[{"src":"data:image/png;base64,AA=="}],"_meta":{"k":"v"}}`
	const template = `{"uriTemplate":"file:///{path}","name":"files","title":"Files","description":"d","mimeType":"text/plain",` +
		`"annotations":{"priority":1},"icons":[{"src":"https://x.example/f.svg"}],"_meta":{"k":true}}`
	const prompt = `{"name":"code_review","title":"Review","description":"Reviews code",` +
		`"arguments":[{"name":"code","title":"Code","description":"the code","required":true},{"name":"style"}],` +
		`"icons":[{"src":"https://x.example/p.png"}],"_meta":{"k":[1,2]}}`
	const blocks = `[{"type":"text","text":"hi <b> & \"q\"","annotations":{"audience":["user"]},"_meta":{"a":1}},` +
		`{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},` +
		`{"type":"audio","data":"UklGRg==","mimeType":"audio/wav","annotations":{"priority":0.5}},` +
		`{"type":"resource_link","uri":"file:///b.rs","name":"b.rs","description":"B","mimeType":"text/x-rust","size":7},` +
		`{"type":"resource","resource":{"uri":"file:///c.txt","mimeType":"text/plain","text":"c"},"annotations":{"lastModified":"2025-01-12T15:00:58Z"}},` +
		`{"type":"resource","resource":{"uri":"file:///d.bin","mimeType":"application/octet-stream","blob":"AAEC","_meta":{"m":1}}}]`
	const meta = `"_meta":{"progressToken":"tok-1","example.com/trace":"t"}`

	tests := []struct {
		name string
		v    any
		js   string
	}{
		{"Tool", &Tool{}, tool},
		{"Tool minimal", &Tool{}, `{"name":"x","inputSchema":{"type":"object"}}`},
		{"ListToolsResult", &ListToolsResult{}, `{"tools":[` + tool + `],"nextCursor":"abc","_meta":{"k":1}}`},
		{"ListToolsResult empty", &ListToolsResult{}, `{"tools":[]}`},
		{"CallToolResult", &CallToolResult{}, `{"content":` + blocks + `,"structuredContent":{"t":22.5,"s":"sunny"},"isError":true,"_meta":{"k":"v"}}`},
		{"CallToolResult empty", &CallToolResult{}, `{"content":[]}`},
		{"Resource", &Resource{}, resource},
		{"ResourceTemplate", &ResourceTemplate{}, template},
		{"ListResourcesResult", &ListResourcesResult{}, `{"resources":[` + resource + `],"nextCursor":"n"}`},
		{"ListResourceTemplatesResult", &ListResourceTemplatesResult{}, `{"resourceTemplates":[` + template + `]}`},
		{"ReadResourceResult", &ReadResourceResult{}, `{"contents":[{"uri":"file:///a.txt","mimeType":"text/plain","text":"a"},` +
			`{"uri":"file:///e.bin","blob":""},{"uri":"file:///f.txt","text":"","_meta":{"k":1}}],"_meta":{"k":2}}`},
		{"ResourceContents text", &ResourceContents{}, `{"uri":"u://t","text":"t"}`},
		{"ResourceContents blob", &ResourceContents{}, `{"uri":"u://b","mimeType":"image/png","blob":"AAEC"}`},
		{"Prompt", &Prompt{}, prompt},
		{"PromptArgument", &PromptArgument{}, `{"name":"a","title":"A","description":"d","required":true}`},
		{"ListPromptsResult", &ListPromptsResult{}, `{"prompts":[` + prompt + `],"nextCursor":"n","_meta":{"k":1}}`},
		{"GetPromptResult", &GetPromptResult{}, `{"description":"d","messages":[{"role":"user","content":{"type":"text","text":"q"}},` +
			`{"role":"assistant","content":{"type":"resource","resource":{"uri":"u://r","text":"r"}}}],"_meta":{"k":1}}`},
		{"PromptMessage", &PromptMessage{}, `{"role":"user","content":{"type":"image","data":"AA==","mimeType":"image/png"}}`},
		{"TextContent", &TextContent{}, `{"type":"text","text":"t","_meta":{"k":1}}`},
		{"ImageContent", &ImageContent{}, `{"type":"image","data":"AAEC","mimeType":"image/jpeg","annotations":{"audience":["assistant"]}}`},
		{"AudioContent", &AudioContent{}, `{"type":"audio","data":"AAEC","mimeType":"audio/mpeg"}`},
		{"ResourceLink", &ResourceLink{}, `{"type":"resource_link","uri":"u://l","name":"l","title":"L","icons":[{"src":"https://x.example/l.png"}],"_meta":{"k":1}}`},
		{"EmbeddedResource", &EmbeddedResource{}, `{"type":"resource","resource":{"uri":"u://e","blob":"AA=="}}`},
		{"CompleteResult", &CompleteResult{}, `{"completion":{"values":["python","pytorch"],"total":10,"hasMore":true},"_meta":{"k":1}}`},
		{"CompletionRef prompt", &CompletionRef{}, `{"type":"ref/prompt","name":"code_review","title":"Review"}`},
		{"CompletionRef resource", &CompletionRef{}, `{"type":"ref/resource","uri":"file:///{path}"}`},
		{"Implementation", &Implementation{}, `{"name":"srv","title":"Server","version":"1.0.0","description":"d","websiteUrl":"https://x.example","icons":[{"src":"https://x.example/i.png","theme":"light"}]}`},
		{"ServerCapabilities", &ServerCapabilities{}, `{"experimental":{"x":{"a":1}},"logging":{},"completions":{},"prompts":{"listChanged":true},` +
			`"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}}`},
		{"ClientCapabilities", &ClientCapabilities{}, `{"experimental":{"x":{}},"roots":{"listChanged":true},"sampling":{"context":{},"tools":{}},` +
			`"elicitation":{"form":{},"url":{}},"tasks":{"list":{},"requests":{"sampling":{"createMessage":{}}}}}`},
		{"ClientCapabilities 2026", &ClientCapabilities{}, `{"roots":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`},
		{"InitializeResult", &InitializeResult{}, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"logging":{}},` +
			`"serverInfo":{"name":"srv","version":"1"},"instructions":"Use it well.","_meta":{"k":1}}`},
		{"CreateMessageParams", &CreateMessageParams{}, `{"messages":[{"role":"user","content":{"type":"text","text":"What is the capital of France?"}},` +
			`{"role":"assistant","content":{"type":"text","text":"Paris"},"_meta":{"k":1}}],` +
			`"modelPreferences":{"hints":[{"name":"claude-3-sonnet"}],"costPriority":0.3,"speedPriority":0.8,"intelligencePriority":0.5},` +
			`"systemPrompt":"You are helpful.","includeContext":"thisServer","temperature":0.1,"maxTokens":100,"stopSequences":["\n\n"],` +
			`"metadata":{"k":"v"},"tools":[{"name":"t","inputSchema":{"type":"object"}}],"toolChoice":{"mode":"auto"},"_meta":{"k":1}}`},
		{"SamplingMessage", &SamplingMessage{}, `{"role":"assistant","content":{"type":"audio","data":"AA==","mimeType":"audio/wav"}}`},
		{"CreateMessageResult", &CreateMessageResult{}, `{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"claude-3-sonnet-20240307","stopReason":"endTurn"}`},
		{"ElicitParams form", &ElicitParams{}, `{"mode":"form","message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`},
		{"ElicitParams url", &ElicitParams{}, `{"mode":"url","message":"Sign in","url":"https://x.example/auth","elicitationId":"e1"}`},
		{"ElicitResult", &ElicitResult{}, `{"action":"accept","content":{"name":"Ada","age":36,"ok":true,"tags":["a"]},"_meta":{"k":1}}`},
		{"ListRootsResult", &ListRootsResult{}, `{"roots":[{"uri":"file:///home/u/p","name":"p","_meta":{"k":1}}]}`},
		{"ListRootsResult empty", &ListRootsResult{}, `{"roots":[]}`},

		// The client's requests, as JSON-RPC messages.
		{"ping", &Request{}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"notifications/initialized", &Request{}, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{"notifications/cancelled", &Request{}, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r1","reason":"x"}}`},
		{"initialize", &InitializeRequest{}, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",` +
			`"capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{}}},"clientInfo":{"name":"c","version":"1.0.0"}}}`},
		{"tools/list", &ListRequest{}, `{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{"cursor":"abc"}}`},
		{"tools/list bare", &ListRequest{}, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`},
		{"tools/call", &CallToolRequest{}, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"New York"},` + meta + `}}`},
		{"resources/read", &ReadResourceRequest{}, `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"file:///a.txt"}}`},
		{"resources/subscribe", &SubscribeRequest{}, `{"jsonrpc":"2.0","id":5,"method":"resources/subscribe","params":{"uri":"file:///a.txt"}}`},
		{"resources/unsubscribe", &SubscribeRequest{}, `{"jsonrpc":"2.0","id":6,"method":"resources/unsubscribe","params":{"uri":"file:///a.txt"}}`},
		{"prompts/get", &GetPromptRequest{}, `{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"code_review","arguments":{"code":"x=1"},"_meta":{"progressToken":9}}}`},
		{"logging/setLevel", &SetLogLevelRequest{}, `{"jsonrpc":"2.0","id":8,"method":"logging/setLevel","params":{"level":"warning"}}`},
		{"completion/complete", &CompleteRequest{}, `{"jsonrpc":"2.0","id":9,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"code_review"},` +
			`"argument":{"name":"language","value":"py"},"context":{"arguments":{"framework":"flask"}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, json.Unmarshal([]byte(tt.js), tt.v))
			out, err := json.Marshal(tt.v)
			require.NoError(t, err)
			assert.JSONEq(t, tt.js, string(out))
		})
	}
}

// What the typed fields say after decoding: the values, not just the
// bytes, come through.
func TestJSONDecodesTypedFields(t *testing.T) {
	var call CallToolRequest
	require.NoError(t, json.Unmarshal([]byte(`{"jsonrpc":"2.0","id":"x","method":"tools/call",`+
		`"params":{"name":"add","arguments":{"a":1},"_meta":{"progressToken":7}}}`), &call))
	assert.Equal(t, "tools/call", call.Method)
	assert.Equal(t, `"x"`, string(call.ID.AppendJSON(nil)))
	assert.Equal(t, "add", call.Name)
	assert.JSONEq(t, `{"a":1}`, string(call.Arguments))
	assert.Equal(t, "7", call.Meta.ProgressToken.String())
	assert.False(t, call.Meta.ProgressToken.IsString())

	var comp CompleteRequest
	require.NoError(t, json.Unmarshal([]byte(`{"jsonrpc":"2.0","id":1,"method":"completion/complete",`+
		`"params":{"ref":{"type":"ref/resource","uri":"u://{x}"},"argument":{"name":"x","value":"a"}}}`), &comp))
	assert.Equal(t, CompletionRef{Type: "ref/resource", URI: "u://{x}"}, comp.Ref)
	assert.Equal(t, []string{"x", "a"}, []string{comp.ArgumentName, comp.ArgumentValue})
	assert.NotNil(t, comp.Context)

	var lvl SetLogLevelRequest
	require.NoError(t, json.Unmarshal([]byte(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"error"}}`), &lvl))
	assert.Equal(t, LogError, lvl.Level)
	assert.Error(t, json.Unmarshal([]byte(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"loud"}}`), &lvl))

	var init InitializeRequest
	require.NoError(t, json.Unmarshal([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",`+
		`"capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}`), &init))
	assert.Equal(t, "2025-06-18", init.Params.ProtocolVersion)
	require.NotNil(t, init.Client)
	assert.NotNil(t, init.Client.Elicitation)
	assert.True(t, init.Client.Elicitation.form())

	var blocks CallToolResult
	require.NoError(t, json.Unmarshal([]byte(`{"content":[{"type":"resource","resource":{"uri":"u://b","blob":"AAEC"}}]}`), &blocks))
	assert.Equal(t, []byte{0, 1, 2}, blocks.Content[0].(*EmbeddedResource).Resource.Blob)

	var text TextContent
	assert.ErrorIs(t, json.Unmarshal([]byte(`{"type":"image","data":"","mimeType":"x"}`), &text), ErrContentType)
	var tok ProgressToken
	assert.Error(t, json.Unmarshal([]byte(`{"a":1}`), &tok), "a progress token is a string or a number")
}

// The fields that are the server's own settings stay out of the JSON, and
// what encoding/json would get wrong without the types' methods is right.
func TestJSONLeavesOutServerSettings(t *testing.T) {
	b, err := json.Marshal(&Tool{Name: "x", TaskSupport: TaskRequired, DeferTask: true})
	require.NoError(t, err)
	assert.Equal(t, `{"name":"x","inputSchema":{"type":"object"}}`, string(b))

	b, err = json.Marshal(&CallToolResult{Content: []Content{Text("hi")}})
	require.NoError(t, err)
	assert.Equal(t, `{"content":[{"type":"text","text":"hi"}]}`, string(b))

	for _, v := range []any{CallToolResult{}, ReadResourceResult{}, GetPromptResult{}, ListToolsResult{}, ListResourcesResult{},
		ListResourceTemplatesResult{}, ListPromptsResult{}, CompleteResult{}, ListRootsResult{}} {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		assert.NotContains(t, string(b), "null", "%T", v)
		assert.NotRegexp(t, `"[A-Z]\w*":`, string(b), "%T has Go field names", v)
	}

	// A result a Server made: the page it encoded.
	srv := NewServer(Implementation{Name: "s", Version: "1"}, nil)
	require.NoError(t, srv.AddToolRaw(&Tool{Name: "t", Description: "d"}, func(context.Context, *CallToolRequest) (*CallToolResult, error) { return nil, nil }))
	page, _, err := srv.ListTools(t.Context(), &ListRequest{Request: Request{Revision: Rev20251125}}, nil)
	require.NoError(t, err)
	b, err = json.Marshal(page)
	require.NoError(t, err)
	assert.Equal(t, `{"tools":[{"name":"t","description":"d","inputSchema":{"type":"object"}}]}`, string(b))

	// A typed tool's structured result.
	type out struct {
		N int `json:"n"`
	}
	require.NoError(t, AddTool(srv, &Tool{Name: "n"}, func(context.Context, *CallToolRequest, struct{}) (out, error) { return out{3}, nil }))
	res, _, err := srv.CallTool(t.Context(), &CallToolRequest{Request: Request{Revision: Rev20251125}, Name: "n"}, nil)
	require.NoError(t, err)
	b, err = json.Marshal(res)
	require.NoError(t, err)
	assert.Equal(t, `{"content":[{"type":"text","text":"{\"n\":3}"}],"structuredContent":{"n":3}}`, string(b))
}
