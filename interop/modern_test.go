package interop

//lint:file-ignore SA1019 the 2026-07-28 tests still answer sampling requests (input_required); the Go SDK marks its sampling types deprecated, not gone

import (
	"context"
	"net/http"
	"testing"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGoSDKUnpinned connects the go-sdk client with no protocol version
// to the same fixture the legacy tests use: it probes 2026-07-28 with
// server/discover, the dual-era server accepts it, and every later call is
// a stateless 2026-07-28 POST (no initialize, no session). Handlers written
// once serve it: their server→client requests come back as input_required
// results that the SDK answers and retries.
func TestGoSDKUnpinned(t *testing.T) {
	g := connectUnpinned(t)
	ctx := ctxFor(t)
	log := g.rec.exchanges()
	require.NotEmpty(t, log)
	assert.Equal(t, "server/discover", log[0].RPCMethod)
	assert.Equal(t, "2026-07-28", log[0].Header)
	assert.Equal(t, http.StatusOK, log[0].Status)
	assert.Empty(t, g.rec.find("initialize"), "no initialize in 2026-07-28")
	assert.Equal(t, serverName, g.cs.InitializeResult().ServerInfo.Name)

	res, err := g.cs.CallTool(ctx, &gomcp.CallToolParams{Name: "test_simple_text"})
	require.NoError(t, err)
	assert.Equal(t, simpleText, goSDKText(t, res))

	t.Run("elicitation round trip", func(t *testing.T) {
		res, err := g.cs.CallTool(ctx, &gomcp.CallToolParams{Name: "test_input_required_result_elicitation"})
		require.NoError(t, err)
		assert.Equal(t, "Hello, Alice!", goSDKText(t, res))
		assert.NotEmpty(t, g.elicit.all())
	})
	t.Run("sampling round trip", func(t *testing.T) {
		res, err := g.cs.CallTool(ctx, &gomcp.CallToolParams{Name: "test_input_required_result_sampling"})
		require.NoError(t, err)
		assert.Equal(t, "go-sdk model says 4", goSDKText(t, res))
	})
	t.Run("two rounds", func(t *testing.T) {
		before := len(g.elicit.all())
		res, err := g.cs.CallTool(ctx, &gomcp.CallToolParams{Name: "test_input_required_result_multi_round"})
		require.NoError(t, err)
		assert.Equal(t, "Alice likes blue", goSDKText(t, res))
		assert.Equal(t, before+2, len(g.elicit.all()))
	})
	t.Run("prompt round trip", func(t *testing.T) {
		res, err := g.cs.GetPrompt(ctx, &gomcp.GetPromptParams{Name: "test_input_required_result_prompt"})
		require.NoError(t, err)
		require.Len(t, res.Messages, 1)
		assert.Equal(t, "Use this context: blue", res.Messages[0].Content.(*gomcp.TextContent).Text)
	})
	t.Run("resource not found is -32602", func(t *testing.T) {
		_, err := g.cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: "test://no-such-resource"})
		require.Error(t, err)
		assert.Equal(t, int64(-32602), goSDKCode(err))
	})

	for _, ex := range g.rec.exchanges() {
		if ex.HTTPMethod == http.MethodPost {
			assert.Equal(t, "2026-07-28", ex.Header, "%s", ex.RPCMethod)
			assert.Empty(t, ex.Session, "%s carried a session id", ex.RPCMethod)
		}
	}
}

// connectUnpinned connects a go-sdk client without a pinned version whose
// elicitation handler fills in what each request asks for: "Alice" for a
// name, "blue" for anything else that is a string, true for a boolean.
func connectUnpinned(t *testing.T) *goSDKClient {
	t.Helper()
	g := &goSDKClient{rec: newRecorder(t)}
	opts := &gomcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *gomcp.ElicitRequest) (*gomcp.ElicitResult, error) {
			g.elicit.add(r.Params)
			content := map[string]any{}
			if s, ok := r.Params.RequestedSchema.(map[string]any); ok {
				props, _ := s["properties"].(map[string]any)
				for name, p := range props {
					typ, _ := p.(map[string]any)["type"].(string)
					switch {
					case typ == "boolean":
						content[name] = true
					case name == "name":
						content[name] = "Alice"
					default:
						content[name] = "blue"
					}
				}
			}
			return &gomcp.ElicitResult{Action: "accept", Content: content}, nil
		},
		CreateMessageHandler: func(_ context.Context, r *gomcp.CreateMessageRequest) (*gomcp.CreateMessageResult, error) {
			g.sampling.add(r.Params)
			return &gomcp.CreateMessageResult{Content: &gomcp.TextContent{Text: "go-sdk model says 4"}, Model: "interop-model", Role: "assistant"}, nil
		},
	}
	g.client = gomcp.NewClient(&gomcp.Implementation{Name: "interop-gosdk-unpinned", Version: "0"}, opts)
	tr := &gomcp.StreamableClientTransport{Endpoint: fixtureURL, HTTPClient: g.rec.client(), MaxRetries: -1}
	cs, err := g.client.Connect(ctxFor(t), tr, nil)
	require.NoError(t, err)
	g.cs = cs
	t.Cleanup(func() { _ = cs.Close() })
	return g
}

// TestMCPGoUnpinned connects the mcp-go client with no protocol version:
// it probes 2026-07-28 with server/discover, the dual-era server accepts
// it, and the client stays on stateless 2026-07-28 requests.
func TestMCPGoUnpinned(t *testing.T) {
	g := connectMCPGo(t, "", mcpGoOptions{})
	log := g.rec.exchanges()
	require.NotEmpty(t, log)
	assert.Equal(t, "server/discover", log[0].RPCMethod)
	assert.Equal(t, http.StatusOK, log[0].Status)
	assert.Empty(t, g.rec.find("initialize"))

	res, err := callMCPGo(ctxFor(t), g, "test_simple_text", nil)
	require.NoError(t, err)
	assert.Equal(t, simpleText, mcpGoText(t, res))
	for _, ex := range g.rec.exchanges() {
		if ex.HTTPMethod == http.MethodPost {
			assert.Equal(t, "2026-07-28", ex.Header, "%s", ex.RPCMethod)
		}
	}
}
