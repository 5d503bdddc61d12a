package interop

//lint:file-ignore SA1019 these tests drive logging, ping and resource subscriptions at the revisions that have them; mcp-go marks them deprecated as of 2026-07-28, not gone

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mcpGoClient is an mcp-go client with the events its handlers saw.
type mcpGoClient struct {
	c        *client.Client
	init     *mcp.InitializeResult
	rec      *recorder
	progress events[progressEvent]
	logs     events[logEvent]
	sampling events[mcp.CreateMessageParams]
	elicit   events[mcp.ElicitationParams]
	roots    events[struct{}]
}

// The handlers mcp-go takes as interfaces.
type (
	mcpGoSampler struct {
		g      *mcpGoClient
		reject bool
	}
	mcpGoElicitor  struct{ g *mcpGoClient }
	mcpGoRootsList struct{ g *mcpGoClient }
)

func (s mcpGoSampler) CreateMessage(_ context.Context, r mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	s.g.sampling.add(r.CreateMessageParams)
	if s.reject {
		return nil, errors.New("the user refused sampling")
	}
	return &mcp.CreateMessageResult{
		SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("mcp-go model says 4")},
		Model:           "interop-model",
	}, nil
}

func (e mcpGoElicitor) Elicit(_ context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	e.g.elicit.add(r.Params)
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
		Action:  mcp.ElicitationResponseActionAccept,
		Content: map[string]any{"username": "mcpgo-user", "email": "mcpgo@example.com"},
	}}, nil
}

func (r mcpGoRootsList) ListRoots(context.Context, mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	r.g.roots.add(struct{}{})
	return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///tmp/interop", Name: "interop"}}}, nil
}

// mcpGoOptions selects the optional client features.
type mcpGoOptions struct {
	noSampling bool // no sampling handler: sampling not declared
	rejectLLM  bool // the sampling handler fails
}

// connectMCPGo starts and initializes an mcp-go client pinned to rev ("" =
// not pinned) with every handler set; it is closed when the test ends.
func connectMCPGo(t *testing.T, rev string, o mcpGoOptions) *mcpGoClient {
	t.Helper()
	g := &mcpGoClient{rec: newRecorder(t)}
	// The transport's own log goes to the test's log, once the client is
	// closed (a line may come from a goroutine after the test's body).
	tlog := &lockedWriter{w: &bytes.Buffer{}}
	t.Cleanup(func() {
		if s := tlog.String(); s != "" {
			t.Logf("mcp-go transport log:\n%s", s)
		}
	})
	tr, err := transport.NewStreamableHTTP(fixtureURL,
		transport.WithHTTPBasicClient(g.rec.client()),
		transport.WithHTTPLogger(slog.New(slog.NewTextHandler(tlog, nil))))
	require.NoError(t, err)
	opts := []client.ClientOption{
		client.WithElicitationHandler(mcpGoElicitor{g}),
		client.WithRootsHandler(mcpGoRootsList{g}),
	}
	if !o.noSampling {
		opts = append(opts, client.WithSamplingHandler(mcpGoSampler{g: g, reject: o.rejectLLM}))
	}
	if rev != "" {
		opts = append(opts, client.WithProtocolVersion(rev))
	}
	g.c = client.NewClient(tr, opts...)
	g.c.OnNotification(func(n mcp.JSONRPCNotification) {
		f := n.Params.AdditionalFields
		switch n.Method {
		case "notifications/progress":
			p, _ := f["progress"].(float64)
			total, _ := f["total"].(float64)
			g.progress.add(progressEvent{Token: f["progressToken"], Progress: p, Total: total})
		case "notifications/message":
			level, _ := f["level"].(string)
			logger, _ := f["logger"].(string)
			g.logs.add(logEvent{Level: level, Logger: logger, Data: f["data"]})
		}
	})
	ctx := ctxFor(t)
	require.NoError(t, g.c.Start(ctx))
	t.Cleanup(func() { _ = g.c.Close() })
	var ir mcp.InitializeRequest
	ir.Params.ClientInfo = mcp.Implementation{Name: "interop-mcpgo", Version: "0"}
	g.init, err = g.c.Initialize(ctx, ir)
	require.NoError(t, err)
	return g
}

// mcpGoText returns the text of a result's only text block.
func mcpGoText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	require.Len(t, res.Content, 1)
	tc, ok := mcp.AsTextContent(res.Content[0])
	require.True(t, ok, "content is %T, not text", res.Content[0])
	return tc.Text
}

func callMCPGo(ctx context.Context, g *mcpGoClient, name string, args map[string]any) (*mcp.CallToolResult, error) {
	var req mcp.CallToolRequest
	req.Params.Name, req.Params.Arguments = name, args
	return g.c.CallTool(ctx, req)
}

func TestMCPGo(t *testing.T) {
	for _, rev := range legacyRevisions {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			testMCPGo(t, rev)
		})
	}
}

func testMCPGo(t *testing.T, rev string) {
	t.Run("Initialize", func(t *testing.T) {
		g := connectMCPGo(t, rev, mcpGoOptions{})
		require.Equal(t, rev, g.init.ProtocolVersion)
		require.Equal(t, serverName, g.init.ServerInfo.Name)
		c := g.init.Capabilities
		require.NotNil(t, c.Tools)
		require.NotNil(t, c.Resources)
		assert.True(t, c.Resources.Subscribe)
		assert.NotNil(t, c.Prompts)
		assert.NotNil(t, c.Logging)
		assert.NotNil(t, c.Completions)
		require.NotEmpty(t, g.c.GetSessionId(), "no Mcp-Session-Id")
		checkHandshake(t, g.rec, rev)
	})

	t.Run("Tools", func(t *testing.T) {
		g := connectMCPGo(t, rev, mcpGoOptions{})
		ctx := ctxFor(t)
		lt, err := g.c.ListTools(ctx, mcp.ListToolsRequest{})
		require.NoError(t, err)
		var names []string
		for _, tool := range lt.Tools {
			names = append(names, tool.Name)
			if tool.Name == "test_sampling" {
				assert.Contains(t, tool.InputSchema.Properties, "prompt")
			}
		}
		for _, n := range fixtureTools {
			assert.Contains(t, names, n)
		}

		res, err := callMCPGo(ctx, g, "test_simple_text", nil)
		require.NoError(t, err)
		assert.False(t, res.IsError)
		assert.Equal(t, simpleText, mcpGoText(t, res))

		res, err = callMCPGo(ctx, g, "test_image_content", nil)
		require.NoError(t, err)
		require.Len(t, res.Content, 1)
		img, ok := mcp.AsImageContent(res.Content[0])
		require.True(t, ok, "content is %T", res.Content[0])
		assert.Equal(t, "image/png", img.MIMEType)
		data, err := base64.StdEncoding.DecodeString(img.Data)
		require.NoError(t, err)
		assert.Equal(t, pngData, data)

		res, err = callMCPGo(ctx, g, "test_audio_content", nil)
		require.NoError(t, err)
		require.Len(t, res.Content, 1)
		if ac, ok := mcp.AsAudioContent(res.Content[0]); assert.True(t, ok, "content is %T", res.Content[0]) {
			assert.Equal(t, "audio/wav", ac.MIMEType)
			wav, err := base64.StdEncoding.DecodeString(ac.Data)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(string(wav), "RIFF"), "not a WAV file")
		}

		res, err = callMCPGo(ctx, g, "test_embedded_resource", nil)
		require.NoError(t, err)
		require.Len(t, res.Content, 1)
		if er, ok := mcp.AsEmbeddedResource(res.Content[0]); assert.True(t, ok, "content is %T", res.Content[0]) {
			if trc, ok := mcp.AsTextResourceContents(er.Resource); assert.True(t, ok, "%T", er.Resource) {
				assert.Equal(t, "test://embedded-resource", trc.URI)
				assert.Equal(t, "This is an embedded resource content.", trc.Text)
			}
		}

		res, err = callMCPGo(ctx, g, "test_multiple_content_types", nil)
		require.NoError(t, err)
		require.Len(t, res.Content, 3)
		_, ok = mcp.AsTextContent(res.Content[0])
		assert.True(t, ok, "%T", res.Content[0])
		_, ok = mcp.AsImageContent(res.Content[1])
		assert.True(t, ok, "%T", res.Content[1])
		if er, ok := mcp.AsEmbeddedResource(res.Content[2]); assert.True(t, ok, "%T", res.Content[2]) {
			if trc, ok := mcp.AsTextResourceContents(er.Resource); assert.True(t, ok, "%T", er.Resource) {
				assert.Equal(t, "test://mixed-content-resource", trc.URI)
			}
		}

		res, err = callMCPGo(ctx, g, "test_error_handling", nil)
		require.NoError(t, err, "a tool's failure is a result, not a JSON-RPC error")
		assert.True(t, res.IsError)
		assert.Equal(t, errorToolText, mcpGoText(t, res))

		_, err = callMCPGo(ctx, g, "no_such_tool", nil)
		require.Error(t, err)
		assert.ErrorIs(t, err, mcp.ErrInvalidParams, "unknown tool")

		// Invalid arguments: an isError result from 2025-11-25 (SEP-1303),
		// -32602 before.
		res, err = callMCPGo(ctx, g, "test_sampling", map[string]any{"prompt": 42})
		if rev >= "2025-11-25" {
			require.NoError(t, err)
			assert.True(t, res.IsError)
			assert.Contains(t, mcpGoText(t, res), "Invalid arguments")
		} else {
			require.Error(t, err)
			assert.ErrorIs(t, err, mcp.ErrInvalidParams)
		}
		assert.Zero(t, g.sampling.len(), "a call with invalid arguments must not reach the tool")
	})

	t.Run("Progress", func(t *testing.T) {
		g := connectMCPGo(t, rev, mcpGoOptions{})
		token := "mcpgo-progress-" + rev
		var req mcp.CallToolRequest
		req.Params.Name = "test_tool_with_progress"
		req.Params.Meta = &mcp.Meta{ProgressToken: token}
		res, err := g.c.CallTool(ctxFor(t), req)
		require.NoError(t, err)
		assert.Equal(t, token, mcpGoText(t, res))
		checkProgress(t, g.progress.waitLen(t, 3), token)
	})

	t.Run("ConcurrentProgress", func(t *testing.T) {
		// Two calls at once in one session: each call's notifications
		// reach the client with its own token.
		g := connectMCPGo(t, rev, mcpGoOptions{})
		ctx := ctxFor(t)
		tokens := []string{"mcpgo-a-" + rev, "mcpgo-b-" + rev}
		errc := make(chan error, len(tokens))
		for _, tok := range tokens {
			go func() {
				var req mcp.CallToolRequest
				req.Params.Name = "test_tool_with_progress"
				req.Params.Meta = &mcp.Meta{ProgressToken: tok}
				res, err := g.c.CallTool(ctx, req)
				if err == nil {
					if tc, ok := mcp.AsTextContent(res.Content[0]); !ok || tc.Text != tok {
						err = errors.New("wrong result for " + tok)
					}
				}
				errc <- err
			}()
		}
		for range tokens {
			require.NoError(t, <-errc)
		}
		all := g.progress.waitLen(t, 6)
		for _, tok := range tokens {
			var mine []progressEvent
			for _, p := range all {
				if p.Token == tok {
					mine = append(mine, p)
				}
			}
			checkProgress(t, mine, tok)
		}
		assert.Len(t, all, 6)
	})

	t.Run("PrimingEvent", func(t *testing.T) {
		g := connectMCPGo(t, rev, mcpGoOptions{})
		var req mcp.CallToolRequest
		req.Params.Name = "test_tool_with_progress"
		req.Params.Meta = &mcp.Meta{ProgressToken: "prime"}
		_, err := g.c.CallTool(ctxFor(t), req)
		require.NoError(t, err)
		checkPriming(t, g.rec, rev)
	})

	t.Run("Reconnection", func(t *testing.T) {
		// test_reconnection closes its event stream mid-call (SEP-1699,
		// 2025-11-25 polling). mcp-go resumes at any revision.
		g := connectMCPGo(t, rev, mcpGoOptions{})
		res, err := callMCPGo(ctxFor(t), g, "test_reconnection", nil)
		require.NoError(t, err)
		assert.Equal(t, "Reconnection test completed successfully", mcpGoText(t, res))
		if rev < "2025-11-25" {
			// The server SHOULD NOT close a 2025-03-26 or 2025-06-18 stream
			// before the response: there is nothing to resume.
			assert.Empty(t, g.rec.find(http.MethodGet), "the client had to resume a %s stream", rev)
			return
		}
		checkResumed(t, g.rec)
	})

	t.Run("Logging", func(t *testing.T) {
		g := connectMCPGo(t, rev, mcpGoOptions{})
		ctx := ctxFor(t)
		setLevel := func(level mcp.LoggingLevel) error {
			var req mcp.SetLevelRequest
			req.Params.Level = level
			return g.c.SetLevel(ctx, req)
		}
		require.NoError(t, setLevel(mcp.LoggingLevelDebug))
		res, err := callMCPGo(ctx, g, "test_tool_with_logging", nil)
		require.NoError(t, err)
		assert.Equal(t, "Tool with logging executed successfully", mcpGoText(t, res))
		checkLogs(t, g.logs.waitLen(t, 3))

		// Above the tool's level nothing is sent.
		require.NoError(t, setLevel(mcp.LoggingLevelError))
		before := g.logs.len()
		_, err = callMCPGo(ctx, g, "test_tool_with_logging", nil)
		require.NoError(t, err)
		time.Sleep(100 * time.Millisecond)
		assert.Equal(t, before, g.logs.len(), "info messages sent at level error: %+v", g.logs.all())

		err = setLevel("verbose")
		require.Error(t, err)
		assert.ErrorIs(t, err, mcp.ErrInvalidParams)
	})

	t.Run("Sampling", func(t *testing.T) {
		g := connectMCPGo(t, rev, mcpGoOptions{})
		res, err := callMCPGo(ctxFor(t), g, "test_sampling", map[string]any{"prompt": "What is 2+2?"})
		require.NoError(t, err)
		assert.False(t, res.IsError)
		assert.Equal(t, "LLM response: mcp-go model says 4", mcpGoText(t, res))
		reqs := g.sampling.all()
		require.Len(t, reqs, 1)
		require.Len(t, reqs[0].Messages, 1)
		assert.Equal(t, mcp.RoleUser, reqs[0].Messages[0].Role)
		if tc, ok := mcp.AsTextContent(reqs[0].Messages[0].Content); assert.True(t, ok, "%T", reqs[0].Messages[0].Content) {
			assert.Equal(t, "What is 2+2?", tc.Text)
		}
		assert.Equal(t, 100, reqs[0].MaxTokens)
	})

	t.Run("SamplingRejected", func(t *testing.T) {
		// The client answers sampling/createMessage with an error: the tool
		// fails with it, as a result.
		g := connectMCPGo(t, rev, mcpGoOptions{rejectLLM: true})
		res, err := callMCPGo(ctxFor(t), g, "test_sampling", map[string]any{"prompt": "hi"})
		assert.Equal(t, 1, g.sampling.len())
		require.NoError(t, err)
		assert.True(t, res.IsError)
		assert.Contains(t, mcpGoText(t, res), "the user refused sampling")
		require.NoError(t, g.c.Ping(ctxFor(t)))
	})

	t.Run("SamplingNotDeclared", func(t *testing.T) {
		g := connectMCPGo(t, rev, mcpGoOptions{noSampling: true})
		res, err := callMCPGo(ctxFor(t), g, "test_sampling", map[string]any{"prompt": "hi"})
		require.NoError(t, err)
		assert.True(t, res.IsError, "the server used sampling the client did not declare")
		assert.Contains(t, mcpGoText(t, res), "sampling")
	})

	t.Run("Elicitation", func(t *testing.T) {
		g := connectMCPGo(t, rev, mcpGoOptions{})
		res, err := callMCPGo(ctxFor(t), g, "test_elicitation", map[string]any{"message": "Who are you?"})
		require.NoError(t, err)
		text := mcpGoText(t, res)
		if !elicitationRevision(rev) {
			// 2025-03-26 has no elicitation: the server must not send
			// elicitation/create even though this client declares it.
			assert.True(t, res.IsError, "elicitation on %s: %s", rev, text)
			assert.Contains(t, text, "elicitation")
			assert.Zero(t, g.elicit.len(), "elicitation/create sent on a 2025-03-26 session")
			return
		}
		assert.False(t, res.IsError, text)
		assert.Contains(t, text, "action=accept")
		assert.Contains(t, text, `"username":"mcpgo-user"`)
		assert.Contains(t, text, `"email":"mcpgo@example.com"`)
		reqs := g.elicit.all()
		require.Len(t, reqs, 1)
		assert.Equal(t, "Who are you?", reqs[0].Message)
		schema, err := json.Marshal(reqs[0].RequestedSchema)
		require.NoError(t, err)
		assert.Contains(t, string(schema), `"username"`)
	})

	t.Run("Roots", func(t *testing.T) {
		g := connectMCPGo(t, rev, mcpGoOptions{})
		ctx := ctxFor(t)
		// RootListChanges fails unless the server takes the notification.
		require.NoError(t, g.c.RootListChanges(ctx))
		sent := g.rec.find("notifications/roots/list_changed")
		require.Len(t, sent, 1)
		assert.Equal(t, http.StatusAccepted, sent[0].Status)
		require.NoError(t, g.c.Ping(ctx))

		lt, err := g.c.ListTools(ctx, mcp.ListToolsRequest{})
		require.NoError(t, err)
		if !slices.ContainsFunc(lt.Tools, func(tool mcp.Tool) bool { return tool.Name == rootsTool }) {
			t.Skipf("the fixture has no %s tool (see rootsTool): roots/list is not exercised", rootsTool)
		}
		res, err := callMCPGo(ctx, g, rootsTool, nil)
		require.NoError(t, err)
		assert.False(t, res.IsError)
		assert.Contains(t, mcpGoText(t, res), "file:///tmp/interop")
		assert.Equal(t, 1, g.roots.len())
	})

	t.Run("Resources", func(t *testing.T) {
		g := connectMCPGo(t, rev, mcpGoOptions{})
		ctx := ctxFor(t)
		lr, err := g.c.ListResources(ctx, mcp.ListResourcesRequest{})
		require.NoError(t, err)
		var uris []string
		for _, r := range lr.Resources {
			uris = append(uris, r.URI)
		}
		for _, u := range fixtureResources {
			assert.Contains(t, uris, u)
		}
		lrt, err := g.c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
		require.NoError(t, err)
		var templates []string
		for _, r := range lrt.ResourceTemplates {
			templates = append(templates, r.URITemplate.Raw())
		}
		assert.Contains(t, templates, "test://template/{id}/data")

		read := func(uri string) (*mcp.ReadResourceResult, error) {
			var req mcp.ReadResourceRequest
			req.Params.URI = uri
			return g.c.ReadResource(ctx, req)
		}
		rr, err := read("test://static-text")
		require.NoError(t, err)
		require.Len(t, rr.Contents, 1)
		if trc, ok := mcp.AsTextResourceContents(rr.Contents[0]); assert.True(t, ok, "%T", rr.Contents[0]) {
			assert.Equal(t, staticText, trc.Text)
			assert.Equal(t, "text/plain", trc.MIMEType)
		}

		rr, err = read("test://static-binary")
		require.NoError(t, err)
		require.Len(t, rr.Contents, 1)
		if brc, ok := mcp.AsBlobResourceContents(rr.Contents[0]); assert.True(t, ok, "%T", rr.Contents[0]) {
			blob, err := base64.StdEncoding.DecodeString(brc.Blob)
			require.NoError(t, err)
			assert.Equal(t, pngData, blob)
			assert.Equal(t, "image/png", brc.MIMEType)
		}

		rr, err = read("test://template/42/data")
		require.NoError(t, err)
		require.Len(t, rr.Contents, 1)
		if trc, ok := mcp.AsTextResourceContents(rr.Contents[0]); assert.True(t, ok, "%T", rr.Contents[0]) {
			assert.Equal(t, "test://template/42/data", trc.URI)
			assert.JSONEq(t, `{"id":"42","templateTest":true,"data":"Data for ID: 42"}`, trc.Text)
		}

		_, err = read("test://no-such-resource")
		require.Error(t, err)
		assert.ErrorIs(t, err, mcp.ErrResourceNotFound, "legacy resource not found is -32002")
	})

	t.Run("Subscribe", func(t *testing.T) {
		g := connectMCPGo(t, rev, mcpGoOptions{})
		ctx := ctxFor(t)
		var sub mcp.SubscribeRequest
		sub.Params.URI = "test://watched-resource"
		require.NoError(t, g.c.Subscribe(ctx, sub))
		var unsub mcp.UnsubscribeRequest
		unsub.Params.URI = "test://watched-resource"
		require.NoError(t, g.c.Unsubscribe(ctx, unsub))
		assert.Len(t, g.rec.find("resources/subscribe"), 1, "Subscribe must send resources/subscribe on a legacy session")
		assert.Len(t, g.rec.find("resources/unsubscribe"), 1)
		require.NoError(t, g.c.Ping(ctx))
	})

	t.Run("Prompts", func(t *testing.T) {
		g := connectMCPGo(t, rev, mcpGoOptions{})
		ctx := ctxFor(t)
		lp, err := g.c.ListPrompts(ctx, mcp.ListPromptsRequest{})
		require.NoError(t, err)
		var names []string
		for _, p := range lp.Prompts {
			names = append(names, p.Name)
			if p.Name == "test_prompt_with_arguments" {
				require.Len(t, p.Arguments, 2)
				assert.Equal(t, "arg1", p.Arguments[0].Name)
				assert.True(t, p.Arguments[0].Required)
			}
		}
		for _, n := range fixturePrompts {
			assert.Contains(t, names, n)
		}

		get := func(name string, args map[string]string) (*mcp.GetPromptResult, error) {
			var req mcp.GetPromptRequest
			req.Params.Name, req.Params.Arguments = name, args
			return g.c.GetPrompt(ctx, req)
		}
		gp, err := get("test_prompt_with_arguments", map[string]string{"arg1": "alpha", "arg2": "beta"})
		require.NoError(t, err)
		require.Len(t, gp.Messages, 1)
		assert.Equal(t, mcp.RoleUser, gp.Messages[0].Role)
		if tc, ok := mcp.AsTextContent(gp.Messages[0].Content); assert.True(t, ok, "%T", gp.Messages[0].Content) {
			assert.Equal(t, "Prompt with arguments: arg1='alpha', arg2='beta'", tc.Text)
		}

		gp, err = get("test_prompt_with_image", nil)
		require.NoError(t, err)
		require.Len(t, gp.Messages, 2)
		if ic, ok := mcp.AsImageContent(gp.Messages[0].Content); assert.True(t, ok, "%T", gp.Messages[0].Content) {
			data, err := base64.StdEncoding.DecodeString(ic.Data)
			require.NoError(t, err)
			assert.Equal(t, pngData, data)
		}

		_, err = get("no_such_prompt", nil)
		require.Error(t, err)
		assert.ErrorIs(t, err, mcp.ErrInvalidParams)
	})

	t.Run("Completion", func(t *testing.T) {
		g := connectMCPGo(t, rev, mcpGoOptions{})
		ctx := ctxFor(t)
		complete := func(value string) []string {
			var req mcp.CompleteRequest
			req.Params.Ref = mcp.PromptReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"}
			req.Params.Argument = mcp.CompleteArgument{Name: "arg1", Value: value}
			res, err := g.c.Complete(ctx, req)
			require.NoError(t, err)
			return res.Completion.Values
		}
		assert.Equal(t, []string{"paris", "park", "party"}, complete("pa"))
		assert.Equal(t, []string{"park"}, complete("park"))
		assert.Empty(t, complete("zz"))
	})

	t.Run("Ping", func(t *testing.T) {
		g := connectMCPGo(t, rev, mcpGoOptions{})
		require.NoError(t, g.c.Ping(ctxFor(t)))
		pings := g.rec.find("ping")
		require.Len(t, pings, 1)
		assert.Equal(t, http.StatusOK, pings[0].Status)
	})

	t.Run("Cancel", func(t *testing.T) {
		g := connectMCPGo(t, rev, mcpGoOptions{})
		ctx, cancel := context.WithCancel(ctxFor(t))
		var req mcp.CallToolRequest
		req.Params.Name = "test_tool_with_progress"
		req.Params.Meta = &mcp.Meta{ProgressToken: "mcpgo-cancel-" + rev}
		errc := make(chan error, 1)
		go func() {
			_, err := g.c.CallTool(ctx, req)
			errc <- err
		}()
		g.progress.waitLen(t, 1) // the call is running on the server
		cancel()
		select {
		case err := <-errc:
			// An error, not the result: the call did not run to completion.
			// Which error is mcp-go's business: when the cancelled stream
			// read ends, its select sees the closed response channel and
			// the cancelled context together and picks either
			// ("unexpected nil response" or context.Canceled).
			require.Error(t, err)
			if !errors.Is(err, context.Canceled) {
				assert.Contains(t, err.Error(), "unexpected nil response")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("CallTool did not return after its context was cancelled")
		}
		// mcp-go sends no notifications/cancelled over HTTP before
		// 2026-07-28: it only drops the POST's response stream.
		time.Sleep(50 * time.Millisecond)
		assert.Empty(t, g.rec.find("notifications/cancelled"))

		pctx := ctxFor(t)
		require.NoError(t, g.c.Ping(pctx))
		res, err := callMCPGo(pctx, g, "test_simple_text", nil)
		require.NoError(t, err)
		assert.Equal(t, simpleText, mcpGoText(t, res))
	})

	t.Run("Close", func(t *testing.T) {
		g := connectMCPGo(t, rev, mcpGoOptions{})
		id := g.c.GetSessionId()
		require.NotEmpty(t, id)
		require.Equal(t, http.StatusOK, sessionStatus(t, id, rev), "the live session must answer a ping")
		require.NoError(t, g.c.Close())
		dels := g.rec.find(http.MethodDelete)
		require.Len(t, dels, 1, "Close must send DELETE: %+v", g.rec.exchanges())
		assert.Equal(t, id, dels[0].Session)
		assert.True(t, dels[0].Status >= 200 && dels[0].Status < 300, "DELETE answered %d", dels[0].Status)
		assert.Equal(t, http.StatusNotFound, sessionStatus(t, id, rev), "a deleted session must be unknown (404)")
	})
}

// TestMCPGoSessionGone: when the server forgets a session (here: a DELETE
// from elsewhere), the client's next call fails with ErrSessionTerminated
// (HTTP 404).
func TestMCPGoSessionGone(t *testing.T) {
	for _, rev := range legacyRevisions {
		t.Run(rev, func(t *testing.T) {
			g := connectMCPGo(t, rev, mcpGoOptions{})
			require.Equal(t, http.StatusNoContent, deleteRaw(t, g.c.GetSessionId(), rev))
			_, err := callMCPGo(ctxFor(t), g, "test_simple_text", nil)
			require.Error(t, err)
			assert.ErrorIs(t, err, transport.ErrSessionTerminated)
		})
	}
}
