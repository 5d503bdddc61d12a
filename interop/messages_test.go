package interop

//lint:file-ignore SA1019 sampling and logging are deprecated by the Go SDK as of 2026-07-28, not gone; these clients speak 2025-11-25

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	smcp "github.com/saguaro-go/saguaro/mcp"
)

// What the official clients send decodes into saguaro's public protocol
// types, and encodes back to the same JSON: a server's log, store or proxy
// of their requests reads as MCP.

// decodeClientMessage decodes one message a client POSTed into the type
// saguaro's handlers receive for its method (the client's answers to
// sampling and elicitation into their result types), encodes it again and
// checks that nothing was lost.
func decodeClientMessage(t *testing.T, body []byte) string {
	t.Helper()
	var env struct {
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
	}
	require.NoError(t, json.Unmarshal(body, &env), "%s", body)
	var v any
	switch env.Method {
	case "initialize":
		v = &smcp.InitializeRequest{}
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list":
		v = &smcp.ListRequest{}
	case "tools/call":
		v = &smcp.CallToolRequest{}
	case "prompts/get":
		v = &smcp.GetPromptRequest{}
	case "resources/read":
		v = &smcp.ReadResourceRequest{}
	case "resources/subscribe", "resources/unsubscribe":
		v = &smcp.SubscribeRequest{}
	case "logging/setLevel":
		v = &smcp.SetLogLevelRequest{}
	case "completion/complete":
		v = &smcp.CompleteRequest{}
	case "":
		// A response: the client's answer to sampling or elicitation.
		var res struct {
			Model  string `json:"model"`
			Action string `json:"action"`
		}
		require.NoError(t, json.Unmarshal(env.Result, &res))
		switch {
		case res.Model != "":
			var r smcp.CreateMessageResult
			require.NoError(t, json.Unmarshal(env.Result, &r))
			assert.Equal(t, smcp.RoleAssistant, r.Role)
			require.IsType(t, &smcp.TextContent{}, r.Content)
			r.Raw = nil // encode the fields, not what was kept
			out, err := json.Marshal(&r)
			require.NoError(t, err)
			assert.JSONEq(t, withoutMembers(t, env.Result, "_meta"), string(out), "sampling result")
			return "sampling result"
		case res.Action != "":
			var r smcp.ElicitResult
			require.NoError(t, json.Unmarshal(env.Result, &r))
			out, err := json.Marshal(&r)
			require.NoError(t, err)
			assert.JSONEq(t, string(env.Result), string(out), "elicitation result")
			return "elicitation result"
		}
		return ""
	default:
		v = &smcp.Request{} // ping and the notifications
	}
	require.NoError(t, json.Unmarshal(body, v), "%s", body)
	out, err := json.Marshal(v)
	require.NoError(t, err)
	assert.Equal(t, normalized(t, body), normalized(t, out), "%s", env.Method)
	return env.Method
}

// normalized is a JSON value with the members whose value is an empty
// object left out of the params (mcp-go sends "context":{} with a
// completion, which means what no context means), for comparison.
func normalized(t *testing.T, raw []byte) any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal(raw, &v))
	if p, ok := v["params"].(map[string]any); ok {
		for k, m := range p {
			if m, ok := m.(map[string]any); ok && len(m) == 0 && k != "capabilities" {
				delete(p, k)
			}
		}
	}
	return v
}

// withoutMembers is an object's JSON without the named members.
func withoutMembers(t *testing.T, raw json.RawMessage, names ...string) string {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &m))
	for _, n := range names {
		delete(m, n)
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}

// decodeAll decodes every captured message and returns the methods seen.
func decodeAll(t *testing.T, bodies [][]byte) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for _, b := range bodies {
		if bytes.HasPrefix(bytes.TrimSpace(b), []byte("[")) {
			continue // a batch: not sent by these clients at 2025-11-25
		}
		seen[decodeClientMessage(t, b)] = true
	}
	return seen
}

var everyRequest = []string{"initialize", "notifications/initialized", "tools/list", "tools/call", "prompts/list",
	"prompts/get", "resources/list", "resources/read", "resources/subscribe", "logging/setLevel", "completion/complete",
	"sampling result"}

func TestClientMessagesGoSDK(t *testing.T) {
	g := connectGoSDK(t, "2025-11-25", goSDKOptions{})
	ctx := ctxFor(t)
	cs := g.cs
	require.NoError(t, cs.Ping(ctx, nil))
	_, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	_, err = cs.CallTool(ctx, &gomcp.CallToolParams{Name: "test_simple_text", Arguments: map[string]any{}})
	require.NoError(t, err)
	p := &gomcp.CallToolParams{Name: "test_tool_with_progress", Arguments: map[string]any{}}
	p.SetProgressToken("gosdk-progress")
	_, err = cs.CallTool(ctx, p)
	require.NoError(t, err)
	_, err = cs.CallTool(ctx, &gomcp.CallToolParams{Name: "test_sampling", Arguments: map[string]any{"prompt": "2+2?"}})
	require.NoError(t, err)
	_, err = cs.CallTool(ctx, &gomcp.CallToolParams{Name: "test_elicitation", Arguments: map[string]any{"message": "Who?"}})
	require.NoError(t, err)
	_, err = cs.ListPrompts(ctx, nil)
	require.NoError(t, err)
	_, err = cs.GetPrompt(ctx, &gomcp.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "a", "arg2": "b"}})
	require.NoError(t, err)
	_, err = cs.ListResources(ctx, nil)
	require.NoError(t, err)
	_, err = cs.ListResourceTemplates(ctx, nil)
	require.NoError(t, err)
	_, err = cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: "test://static-text"})
	require.NoError(t, err)
	require.NoError(t, cs.Subscribe(ctx, &gomcp.SubscribeParams{URI: "test://watched-resource"}))
	require.NoError(t, cs.Unsubscribe(ctx, &gomcp.UnsubscribeParams{URI: "test://watched-resource"}))
	require.NoError(t, cs.SetLoggingLevel(ctx, &gomcp.SetLoggingLevelParams{Level: "warning"}))
	_, err = cs.Complete(ctx, &gomcp.CompleteParams{Ref: &gomcp.CompleteReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"},
		Argument: gomcp.CompleteParamsArgument{Name: "arg1", Value: "pa"}})
	require.NoError(t, err)

	var bodies [][]byte
	for _, ex := range g.rec.exchanges() {
		if ex.Request != nil {
			bodies = append(bodies, ex.Request)
		}
	}
	seen := decodeAll(t, bodies)
	for _, m := range append(everyRequest, "ping", "elicitation result", "resources/unsubscribe") {
		assert.True(t, seen[m], "the go-sdk client sent no %s", m)
	}
}

func TestClientMessagesMCPGo(t *testing.T) {
	g := connectMCPGo(t, "2025-11-25", mcpGoOptions{})
	ctx := ctxFor(t)
	c := g.c
	require.NoError(t, c.Ping(ctx))
	_, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	require.NoError(t, err)
	_, err = callMCPGo(ctx, g, "test_simple_text", map[string]any{})
	require.NoError(t, err)
	var pr mcp.CallToolRequest
	pr.Params.Name, pr.Params.Arguments = "test_tool_with_progress", map[string]any{}
	pr.Params.Meta = &mcp.Meta{ProgressToken: "mcpgo-progress"}
	_, err = c.CallTool(ctx, pr)
	require.NoError(t, err)
	_, err = callMCPGo(ctx, g, "test_sampling", map[string]any{"prompt": "2+2?"})
	require.NoError(t, err)
	_, err = c.ListPrompts(ctx, mcp.ListPromptsRequest{})
	require.NoError(t, err)
	var gp mcp.GetPromptRequest
	gp.Params.Name, gp.Params.Arguments = "test_prompt_with_arguments", map[string]string{"arg1": "a", "arg2": "b"}
	_, err = c.GetPrompt(ctx, gp)
	require.NoError(t, err)
	_, err = c.ListResources(ctx, mcp.ListResourcesRequest{})
	require.NoError(t, err)
	var rr mcp.ReadResourceRequest
	rr.Params.URI = "test://static-text"
	_, err = c.ReadResource(ctx, rr)
	require.NoError(t, err)
	var sub mcp.SubscribeRequest
	sub.Params.URI = "test://watched-resource"
	require.NoError(t, c.Subscribe(ctx, sub))
	var lvl mcp.SetLevelRequest
	lvl.Params.Level = mcp.LoggingLevelWarning
	require.NoError(t, c.SetLevel(ctx, lvl))
	var cr mcp.CompleteRequest
	cr.Params.Ref = mcp.PromptReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"}
	cr.Params.Argument = mcp.CompleteArgument{Name: "arg1", Value: "pa"}
	_, err = c.Complete(ctx, cr)
	require.NoError(t, err)

	var bodies [][]byte
	for _, ex := range g.rec.exchanges() {
		if ex.Request != nil {
			bodies = append(bodies, ex.Request)
		}
	}
	seen := decodeAll(t, bodies)
	for _, m := range append(everyRequest, "ping") {
		assert.True(t, seen[m], "the mcp-go client sent no %s", m)
	}
}

// capture is a reverse proxy in front of the fixture that keeps every
// POSTed message.
type capture struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (c *capture) start(t *testing.T) string {
	t.Helper()
	target, err := url.Parse(fixtureURL)
	require.NoError(t, err)
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.URL.Path = target.Path
			r.Out.Host = target.Host
		},
		FlushInterval: -1, // event streams go through as they come
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			c.mu.Lock()
			c.bodies = append(c.bodies, body)
			c.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL + "/mcp"
}

// The official TypeScript SDK's client (ts/messages.mjs), through a
// capturing proxy.
func TestClientMessagesTypeScript(t *testing.T) {
	tools, err := nodeTools()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	var c capture
	endpoint := c.start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, tools[0], "ts/messages.mjs")
	cmd.Env = append(os.Environ(), "MCP_URL="+endpoint, "SDK_DIR="+tools[1])
	cmd.SysProcAttr = procAttr()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "messages.mjs\nstdout: %s\nstderr: %s", out, stderr.String())
	require.Equal(t, "DONE", strings.TrimSpace(string(out)))

	c.mu.Lock()
	bodies := c.bodies
	c.mu.Unlock()
	seen := decodeAll(t, bodies)
	for _, m := range append(everyRequest, "ping", "elicitation result", "resources/unsubscribe", "resources/templates/list",
		"notifications/roots/list_changed") {
		assert.True(t, seen[m], "the TypeScript client sent no %s", m)
	}
}
