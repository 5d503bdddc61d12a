package interop

//lint:file-ignore SA1019 these tests drive sampling, logging and roots at the revisions that have them; the Go SDK marks them deprecated as of 2026-07-28, not gone

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goSDKClient is a go-sdk client session with the events its handlers saw.
type goSDKClient struct {
	cs       *gomcp.ClientSession
	client   *gomcp.Client
	rec      *recorder
	progress events[progressEvent]
	logs     events[logEvent]
	sampling events[*gomcp.CreateMessageParams]
	elicit   events[*gomcp.ElicitParams]
}

// goSDKOptions selects the optional client features.
type goSDKOptions struct {
	noSampling bool // no CreateMessageHandler: sampling not declared
	retries    bool // the transport's default reconnection (MaxRetries 0 = 5 tries); otherwise none
	rejectLLM  bool // the sampling handler fails
}

// connectGoSDK connects a go-sdk client pinned to rev ("" = not pinned)
// with every handler set; the session is closed when the test ends.
func connectGoSDK(t *testing.T, rev string, o goSDKOptions) *goSDKClient {
	t.Helper()
	g := &goSDKClient{rec: newRecorder(t)}
	opts := &gomcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *gomcp.ProgressNotificationClientRequest) {
			g.progress.add(progressEvent{Token: r.Params.ProgressToken, Progress: r.Params.Progress, Total: r.Params.Total})
		},
		LoggingMessageHandler: func(_ context.Context, r *gomcp.LoggingMessageRequest) {
			g.logs.add(logEvent{Level: string(r.Params.Level), Logger: r.Params.Logger, Data: r.Params.Data})
		},
		ElicitationHandler: func(_ context.Context, r *gomcp.ElicitRequest) (*gomcp.ElicitResult, error) {
			g.elicit.add(r.Params)
			return &gomcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "gosdk-user", "email": "gosdk@example.com"}}, nil
		},
	}
	if !o.noSampling {
		opts.CreateMessageHandler = func(_ context.Context, r *gomcp.CreateMessageRequest) (*gomcp.CreateMessageResult, error) {
			g.sampling.add(r.Params)
			if o.rejectLLM {
				return nil, errors.New("the user refused sampling")
			}
			return &gomcp.CreateMessageResult{Content: &gomcp.TextContent{Text: "go-sdk model says 4"}, Model: "interop-model", Role: "assistant"}, nil
		}
	}
	g.client = gomcp.NewClient(&gomcp.Implementation{Name: "interop-gosdk", Version: "0"}, opts)
	tr := &gomcp.StreamableClientTransport{Endpoint: fixtureURL, HTTPClient: g.rec.client(), MaxRetries: -1}
	if o.retries {
		tr.MaxRetries = 0
	}
	var so *gomcp.ClientSessionOptions
	if rev != "" {
		so = &gomcp.ClientSessionOptions{ProtocolVersion: rev}
	}
	cs, err := g.client.Connect(ctxFor(t), tr, so)
	require.NoError(t, err)
	g.cs = cs
	t.Cleanup(func() { _ = cs.Close() })
	return g
}

// goSDKCode returns the JSON-RPC error code in err, or 0.
func goSDKCode(err error) int64 {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 0
}

// goSDKText returns the text of a result's only text block.
func goSDKText(t *testing.T, res *gomcp.CallToolResult) string {
	t.Helper()
	require.Len(t, res.Content, 1)
	tc, ok := res.Content[0].(*gomcp.TextContent)
	require.True(t, ok, "content is %T, not text", res.Content[0])
	return tc.Text
}

func TestGoSDK(t *testing.T) {
	for _, rev := range legacyRevisions {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			testGoSDK(t, rev)
		})
	}
}

func testGoSDK(t *testing.T, rev string) {
	t.Run("Initialize", func(t *testing.T) {
		g := connectGoSDK(t, rev, goSDKOptions{})
		ir := g.cs.InitializeResult()
		require.Equal(t, rev, ir.ProtocolVersion)
		require.Equal(t, serverName, ir.ServerInfo.Name)
		c := ir.Capabilities
		require.NotNil(t, c.Tools)
		require.NotNil(t, c.Resources)
		assert.True(t, c.Resources.Subscribe)
		assert.NotNil(t, c.Prompts)
		assert.NotNil(t, c.Logging)
		assert.NotNil(t, c.Completions)
		require.NotEmpty(t, g.cs.ID(), "no Mcp-Session-Id")
		checkHandshake(t, g.rec, rev)
	})

	t.Run("Tools", func(t *testing.T) {
		g := connectGoSDK(t, rev, goSDKOptions{})
		ctx := ctxFor(t)
		var names []string
		for tool, err := range g.cs.Tools(ctx, nil) {
			require.NoError(t, err)
			names = append(names, tool.Name)
			if tool.Name == "test_sampling" {
				schema, err := json.Marshal(tool.InputSchema)
				require.NoError(t, err)
				assert.Contains(t, string(schema), `"prompt"`)
			}
		}
		for _, n := range fixtureTools {
			assert.Contains(t, names, n)
		}

		res, err := g.cs.CallTool(ctx, &gomcp.CallToolParams{Name: "test_simple_text"})
		require.NoError(t, err)
		assert.False(t, res.IsError)
		assert.Equal(t, simpleText, goSDKText(t, res))

		res, err = g.cs.CallTool(ctx, &gomcp.CallToolParams{Name: "test_image_content"})
		require.NoError(t, err)
		require.Len(t, res.Content, 1)
		img, ok := res.Content[0].(*gomcp.ImageContent)
		require.True(t, ok, "content is %T", res.Content[0])
		assert.Equal(t, "image/png", img.MIMEType)
		assert.Equal(t, pngData, img.Data)

		res, err = g.cs.CallTool(ctx, &gomcp.CallToolParams{Name: "test_audio_content"})
		require.NoError(t, err)
		require.Len(t, res.Content, 1)
		if ac, ok := res.Content[0].(*gomcp.AudioContent); assert.True(t, ok, "content is %T", res.Content[0]) {
			assert.Equal(t, "audio/wav", ac.MIMEType)
			assert.True(t, strings.HasPrefix(string(ac.Data), "RIFF"), "not a WAV file")
		}

		res, err = g.cs.CallTool(ctx, &gomcp.CallToolParams{Name: "test_embedded_resource"})
		require.NoError(t, err)
		require.Len(t, res.Content, 1)
		if er, ok := res.Content[0].(*gomcp.EmbeddedResource); assert.True(t, ok, "content is %T", res.Content[0]) {
			assert.Equal(t, "test://embedded-resource", er.Resource.URI)
			assert.Equal(t, "This is an embedded resource content.", er.Resource.Text)
		}

		res, err = g.cs.CallTool(ctx, &gomcp.CallToolParams{Name: "test_multiple_content_types"})
		require.NoError(t, err)
		require.Len(t, res.Content, 3)
		assert.IsType(t, &gomcp.TextContent{}, res.Content[0])
		assert.IsType(t, &gomcp.ImageContent{}, res.Content[1])
		if er, ok := res.Content[2].(*gomcp.EmbeddedResource); assert.True(t, ok, "%T", res.Content[2]) {
			assert.Equal(t, "test://mixed-content-resource", er.Resource.URI)
		}

		res, err = g.cs.CallTool(ctx, &gomcp.CallToolParams{Name: "test_error_handling"})
		require.NoError(t, err, "a tool's failure is a result, not a JSON-RPC error")
		assert.True(t, res.IsError)
		assert.Equal(t, errorToolText, goSDKText(t, res))

		_, err = g.cs.CallTool(ctx, &gomcp.CallToolParams{Name: "no_such_tool"})
		require.Error(t, err)
		assert.EqualValues(t, jsonrpc.CodeInvalidParams, goSDKCode(err), "unknown tool: %v", err)

		// Invalid arguments: an isError result from 2025-11-25 (SEP-1303),
		// -32602 before.
		res, err = g.cs.CallTool(ctx, &gomcp.CallToolParams{Name: "test_sampling", Arguments: map[string]any{"prompt": 42}})
		if rev >= "2025-11-25" {
			require.NoError(t, err)
			assert.True(t, res.IsError)
			assert.Contains(t, goSDKText(t, res), "Invalid arguments")
		} else {
			require.Error(t, err)
			assert.EqualValues(t, jsonrpc.CodeInvalidParams, goSDKCode(err), "%v", err)
		}
		assert.Zero(t, g.sampling.len(), "a call with invalid arguments must not reach the tool")
	})

	t.Run("Progress", func(t *testing.T) {
		g := connectGoSDK(t, rev, goSDKOptions{})
		token := "gosdk-progress-" + rev
		p := &gomcp.CallToolParams{Name: "test_tool_with_progress"}
		p.SetProgressToken(token)
		res, err := g.cs.CallTool(ctxFor(t), p)
		require.NoError(t, err)
		assert.Equal(t, token, goSDKText(t, res))
		checkProgress(t, g.progress.waitLen(t, 3), token)
	})

	t.Run("ConcurrentProgress", func(t *testing.T) {
		// Two calls at once in one session: each call's notifications
		// reach the client with its own token (a peer server misroutes
		// them under concurrency).
		g := connectGoSDK(t, rev, goSDKOptions{})
		ctx := ctxFor(t)
		tokens := []string{"gosdk-a-" + rev, "gosdk-b-" + rev}
		errc := make(chan error, len(tokens))
		for _, tok := range tokens {
			go func() {
				p := &gomcp.CallToolParams{Name: "test_tool_with_progress"}
				p.SetProgressToken(tok)
				res, err := g.cs.CallTool(ctx, p)
				if err == nil {
					if tc, ok := res.Content[0].(*gomcp.TextContent); !ok || tc.Text != tok {
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
		g := connectGoSDK(t, rev, goSDKOptions{})
		p := &gomcp.CallToolParams{Name: "test_tool_with_progress"}
		p.SetProgressToken("prime")
		_, err := g.cs.CallTool(ctxFor(t), p)
		require.NoError(t, err)
		checkPriming(t, g.rec, rev)
	})

	t.Run("Reconnection", func(t *testing.T) {
		// test_reconnection closes its event stream mid-call (SEP-1699,
		// 2025-11-25 polling).
		if rev < "2025-11-25" {
			// A client of 2025-03-26 or 2025-06-18 need not resume a
			// stream (go-sdk with MaxRetries -1 does not): the server
			// SHOULD NOT close the stream before the response.
			g := connectGoSDK(t, rev, goSDKOptions{})
			res, err := g.cs.CallTool(ctxFor(t), &gomcp.CallToolParams{Name: "test_reconnection"})
			require.NoError(t, err, "the server closed a %s stream before the response", rev)
			assert.Equal(t, "Reconnection test completed successfully", goSDKText(t, res))
			return
		}
		g := connectGoSDK(t, rev, goSDKOptions{retries: true})
		res, err := g.cs.CallTool(ctxFor(t), &gomcp.CallToolParams{Name: "test_reconnection"})
		require.NoError(t, err)
		assert.Equal(t, "Reconnection test completed successfully", goSDKText(t, res))
		checkResumed(t, g.rec)
	})

	t.Run("Logging", func(t *testing.T) {
		g := connectGoSDK(t, rev, goSDKOptions{})
		ctx := ctxFor(t)
		require.NoError(t, g.cs.SetLoggingLevel(ctx, &gomcp.SetLoggingLevelParams{Level: "debug"}))
		res, err := g.cs.CallTool(ctx, &gomcp.CallToolParams{Name: "test_tool_with_logging"})
		require.NoError(t, err)
		assert.Equal(t, "Tool with logging executed successfully", goSDKText(t, res))
		checkLogs(t, g.logs.waitLen(t, 3))

		// Above the tool's level nothing is sent.
		require.NoError(t, g.cs.SetLoggingLevel(ctx, &gomcp.SetLoggingLevelParams{Level: "error"}))
		before := g.logs.len()
		_, err = g.cs.CallTool(ctx, &gomcp.CallToolParams{Name: "test_tool_with_logging"})
		require.NoError(t, err)
		time.Sleep(100 * time.Millisecond)
		assert.Equal(t, before, g.logs.len(), "info messages sent at level error: %+v", g.logs.all())

		err = g.cs.SetLoggingLevel(ctx, &gomcp.SetLoggingLevelParams{Level: "verbose"})
		require.Error(t, err)
		assert.EqualValues(t, jsonrpc.CodeInvalidParams, goSDKCode(err), "%v", err)
	})

	t.Run("Sampling", func(t *testing.T) {
		g := connectGoSDK(t, rev, goSDKOptions{})
		res, err := g.cs.CallTool(ctxFor(t), &gomcp.CallToolParams{Name: "test_sampling", Arguments: map[string]any{"prompt": "What is 2+2?"}})
		require.NoError(t, err)
		assert.False(t, res.IsError)
		assert.Equal(t, "LLM response: go-sdk model says 4", goSDKText(t, res))
		reqs := g.sampling.all()
		require.Len(t, reqs, 1)
		require.Len(t, reqs[0].Messages, 1)
		assert.Equal(t, gomcp.Role("user"), reqs[0].Messages[0].Role)
		if tc, ok := reqs[0].Messages[0].Content.(*gomcp.TextContent); assert.True(t, ok) {
			assert.Equal(t, "What is 2+2?", tc.Text)
		}
		assert.EqualValues(t, 100, reqs[0].MaxTokens)
	})

	t.Run("SamplingRejected", func(t *testing.T) {
		// The client answers sampling/createMessage with an error: the tool
		// fails with it, as a result.
		g := connectGoSDK(t, rev, goSDKOptions{rejectLLM: true})
		res, err := g.cs.CallTool(ctxFor(t), &gomcp.CallToolParams{Name: "test_sampling", Arguments: map[string]any{"prompt": "hi"}})
		assert.Equal(t, 1, g.sampling.len())
		require.NoError(t, err)
		assert.True(t, res.IsError)
		assert.Contains(t, goSDKText(t, res), "the user refused sampling")
		require.NoError(t, g.cs.Ping(ctxFor(t), nil))
	})

	t.Run("SamplingNotDeclared", func(t *testing.T) {
		g := connectGoSDK(t, rev, goSDKOptions{noSampling: true})
		res, err := g.cs.CallTool(ctxFor(t), &gomcp.CallToolParams{Name: "test_sampling", Arguments: map[string]any{"prompt": "hi"}})
		require.NoError(t, err)
		assert.True(t, res.IsError, "the server used sampling the client did not declare")
		assert.Contains(t, goSDKText(t, res), "sampling")
	})

	t.Run("Elicitation", func(t *testing.T) {
		g := connectGoSDK(t, rev, goSDKOptions{})
		res, err := g.cs.CallTool(ctxFor(t), &gomcp.CallToolParams{Name: "test_elicitation", Arguments: map[string]any{"message": "Who are you?"}})
		require.NoError(t, err)
		text := goSDKText(t, res)
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
		assert.Contains(t, text, `"username":"gosdk-user"`)
		assert.Contains(t, text, `"email":"gosdk@example.com"`)
		reqs := g.elicit.all()
		require.Len(t, reqs, 1)
		assert.Equal(t, "Who are you?", reqs[0].Message)
		schema, err := json.Marshal(reqs[0].RequestedSchema)
		require.NoError(t, err)
		assert.Contains(t, string(schema), `"username"`)
	})

	t.Run("Roots", func(t *testing.T) {
		g := connectGoSDK(t, rev, goSDKOptions{})
		ctx := ctxFor(t)
		// The client announces a change of its roots; the server takes the
		// notification (202) and the session goes on.
		g.client.AddRoots(&gomcp.Root{URI: "file:///tmp/interop", Name: "interop"})
		require.Eventually(t, func() bool { return len(g.rec.find("notifications/roots/list_changed")) == 1 },
			5*time.Second, 5*time.Millisecond)
		assert.Equal(t, http.StatusAccepted, g.rec.find("notifications/roots/list_changed")[0].Status)
		require.NoError(t, g.cs.Ping(ctx, nil))

		if !hasGoSDKTool(t, g, rootsTool) {
			t.Skipf("the fixture has no %s tool (see rootsTool): roots/list is not exercised", rootsTool)
		}
		res, err := g.cs.CallTool(ctx, &gomcp.CallToolParams{Name: rootsTool})
		require.NoError(t, err)
		assert.False(t, res.IsError)
		assert.Contains(t, goSDKText(t, res), "file:///tmp/interop")
	})

	t.Run("Resources", func(t *testing.T) {
		g := connectGoSDK(t, rev, goSDKOptions{})
		ctx := ctxFor(t)
		var uris []string
		for r, err := range g.cs.Resources(ctx, nil) {
			require.NoError(t, err)
			uris = append(uris, r.URI)
		}
		for _, u := range fixtureResources {
			assert.Contains(t, uris, u)
		}
		var templates []string
		for r, err := range g.cs.ResourceTemplates(ctx, nil) {
			require.NoError(t, err)
			templates = append(templates, r.URITemplate)
		}
		assert.Contains(t, templates, "test://template/{id}/data")

		rr, err := g.cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: "test://static-text"})
		require.NoError(t, err)
		require.Len(t, rr.Contents, 1)
		assert.Equal(t, staticText, rr.Contents[0].Text)
		assert.Equal(t, "text/plain", rr.Contents[0].MIMEType)

		rr, err = g.cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: "test://static-binary"})
		require.NoError(t, err)
		require.Len(t, rr.Contents, 1)
		assert.Equal(t, pngData, rr.Contents[0].Blob)
		assert.Equal(t, "image/png", rr.Contents[0].MIMEType)

		rr, err = g.cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: "test://template/42/data"})
		require.NoError(t, err)
		require.Len(t, rr.Contents, 1)
		assert.Equal(t, "test://template/42/data", rr.Contents[0].URI)
		assert.JSONEq(t, `{"id":"42","templateTest":true,"data":"Data for ID: 42"}`, rr.Contents[0].Text)

		_, err = g.cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: "test://no-such-resource"})
		require.Error(t, err)
		assert.EqualValues(t, -32002, goSDKCode(err), "legacy resource not found: %v", err)
	})

	t.Run("Subscribe", func(t *testing.T) {
		g := connectGoSDK(t, rev, goSDKOptions{})
		ctx := ctxFor(t)
		require.NoError(t, g.cs.Subscribe(ctx, &gomcp.SubscribeParams{URI: "test://watched-resource"}))
		require.NoError(t, g.cs.Unsubscribe(ctx, &gomcp.UnsubscribeParams{URI: "test://watched-resource"}))
		assert.Len(t, g.rec.find("resources/subscribe"), 1, "Subscribe must send resources/subscribe on a legacy session")
		assert.Len(t, g.rec.find("resources/unsubscribe"), 1)
		require.NoError(t, g.cs.Ping(ctx, nil))
	})

	t.Run("Prompts", func(t *testing.T) {
		g := connectGoSDK(t, rev, goSDKOptions{})
		ctx := ctxFor(t)
		lp, err := g.cs.ListPrompts(ctx, nil)
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

		gp, err := g.cs.GetPrompt(ctx, &gomcp.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "alpha", "arg2": "beta"}})
		require.NoError(t, err)
		require.Len(t, gp.Messages, 1)
		assert.Equal(t, gomcp.Role("user"), gp.Messages[0].Role)
		if tc, ok := gp.Messages[0].Content.(*gomcp.TextContent); assert.True(t, ok) {
			assert.Equal(t, "Prompt with arguments: arg1='alpha', arg2='beta'", tc.Text)
		}

		gp, err = g.cs.GetPrompt(ctx, &gomcp.GetPromptParams{Name: "test_prompt_with_image"})
		require.NoError(t, err)
		require.Len(t, gp.Messages, 2)
		if ic, ok := gp.Messages[0].Content.(*gomcp.ImageContent); assert.True(t, ok) {
			assert.Equal(t, pngData, ic.Data)
		}

		_, err = g.cs.GetPrompt(ctx, &gomcp.GetPromptParams{Name: "no_such_prompt"})
		require.Error(t, err)
		assert.EqualValues(t, jsonrpc.CodeInvalidParams, goSDKCode(err), "%v", err)
	})

	t.Run("Completion", func(t *testing.T) {
		g := connectGoSDK(t, rev, goSDKOptions{})
		ctx := ctxFor(t)
		complete := func(value string) []string {
			res, err := g.cs.Complete(ctx, &gomcp.CompleteParams{
				Ref:      &gomcp.CompleteReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"},
				Argument: gomcp.CompleteParamsArgument{Name: "arg1", Value: value},
			})
			require.NoError(t, err)
			return res.Completion.Values
		}
		assert.Equal(t, []string{"paris", "park", "party"}, complete("pa"))
		assert.Equal(t, []string{"park"}, complete("park"))
		assert.Empty(t, complete("zz"))
	})

	t.Run("Ping", func(t *testing.T) {
		g := connectGoSDK(t, rev, goSDKOptions{})
		require.NoError(t, g.cs.Ping(ctxFor(t), nil))
		pings := g.rec.find("ping")
		require.Len(t, pings, 1)
		assert.Equal(t, http.StatusOK, pings[0].Status)
	})

	t.Run("Cancel", func(t *testing.T) {
		g := connectGoSDK(t, rev, goSDKOptions{})
		ctx, cancel := context.WithCancel(ctxFor(t))
		token := "gosdk-cancel-" + rev
		p := &gomcp.CallToolParams{Name: "test_tool_with_progress"}
		p.SetProgressToken(token)
		errc := make(chan error, 1)
		go func() {
			_, err := g.cs.CallTool(ctx, p)
			errc <- err
		}()
		g.progress.waitLen(t, 1) // the call is running on the server
		cancel()
		select {
		case err := <-errc:
			// An error, not the result: the call did not run to completion
			// (it takes ~100ms after its first progress notification).
			require.Error(t, err)
			assert.ErrorIs(t, err, context.Canceled)
		case <-time.After(5 * time.Second):
			t.Fatal("CallTool did not return after its context was cancelled")
		}

		// go-sdk tells the server with notifications/cancelled, which the
		// server accepts; the session stays healthy.
		require.Eventually(t, func() bool { return len(g.rec.find("notifications/cancelled")) == 1 },
			5*time.Second, 5*time.Millisecond)
		assert.Equal(t, http.StatusAccepted, g.rec.find("notifications/cancelled")[0].Status)
		// Nothing more reaches the client for the cancelled call (this does
		// not prove that the server stopped the tool: the fixture has no
		// way to tell).
		time.Sleep(250 * time.Millisecond)
		assert.Less(t, g.progress.len(), 3, "progress for the cancelled call kept arriving: %+v", g.progress.all())

		pctx := ctxFor(t)
		require.NoError(t, g.cs.Ping(pctx, nil))
		res, err := g.cs.CallTool(pctx, &gomcp.CallToolParams{Name: "test_simple_text"})
		require.NoError(t, err)
		assert.Equal(t, simpleText, goSDKText(t, res))
	})

	t.Run("Close", func(t *testing.T) {
		g := connectGoSDK(t, rev, goSDKOptions{})
		id := g.cs.ID()
		require.NotEmpty(t, id)
		require.Equal(t, http.StatusOK, sessionStatus(t, id, rev), "the live session must answer a ping")
		require.NoError(t, g.cs.Close())
		dels := g.rec.find(http.MethodDelete)
		require.Len(t, dels, 1, "Close must send DELETE: %+v", g.rec.exchanges())
		assert.Equal(t, id, dels[0].Session)
		assert.True(t, dels[0].Status >= 200 && dels[0].Status < 300, "DELETE answered %d", dels[0].Status)
		assert.Equal(t, http.StatusNotFound, sessionStatus(t, id, rev), "a deleted session must be unknown (404)")
	})
}

// TestGoSDKSessionGone: when the server forgets a session (here: a DELETE
// from elsewhere), the client's next call fails with ErrSessionMissing
// (HTTP 404) rather than hanging. (With MaxRetries -1 the client reports
// instead that its standalone GET stream ended, so retries stay on: the
// reconnecting GET meets the 404.)
func TestGoSDKSessionGone(t *testing.T) {
	for _, rev := range legacyRevisions {
		t.Run(rev, func(t *testing.T) {
			g := connectGoSDK(t, rev, goSDKOptions{retries: true})
			require.Equal(t, http.StatusNoContent, deleteRaw(t, g.cs.ID(), rev))
			_, err := g.cs.CallTool(ctxFor(t), &gomcp.CallToolParams{Name: "test_simple_text"})
			require.Error(t, err)
			assert.ErrorIs(t, err, gomcp.ErrSessionMissing)
		})
	}
}

func hasGoSDKTool(t *testing.T, g *goSDKClient, name string) bool {
	t.Helper()
	res, err := g.cs.ListTools(ctxFor(t), nil)
	require.NoError(t, err)
	return slices.ContainsFunc(res.Tools, func(tool *gomcp.Tool) bool { return tool.Name == name })
}
