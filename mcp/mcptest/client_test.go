package mcptest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcp/jsonrpc"
	"github.com/saguaro-go/saguaro/mcp/mcptest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

type nIn struct {
	N int `json:"n"`
}

// server is what the tests call: typed and text tools, a failing one,
// one that reports progress and logs, one that asks the client for
// everything it can, resources, a template, prompts and completions.
func server(t testing.TB, opts *mcp.ServerOptions) *mcp.Server {
	s := mcp.NewServer(mcp.Implementation{Name: "mcptest", Version: "1"}, opts)
	must := func(err error) {
		t.Helper()
		require.NoError(t, err)
	}
	must(mcp.AddTool(s, &mcp.Tool{Name: "add"}, func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (addOut, error) {
		return addOut{Sum: in.A + in.B}, nil
	}))
	must(mcp.AddTool(s, &mcp.Tool{Name: "shout"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return strings.ToUpper(in.Text), nil
	}))
	must(mcp.AddTool(s, &mcp.Tool{Name: "fail"}, func(context.Context, *mcp.CallToolRequest, struct{}) (string, error) {
		return "", errors.New("nope")
	}))
	must(mcp.AddTool(s, &mcp.Tool{Name: "work"}, func(ctx context.Context, req *mcp.CallToolRequest, in nIn) (string, error) {
		for i := 1; i <= in.N; i++ {
			if err := req.Progress(ctx, float64(i), float64(in.N), fmt.Sprintf("step %d of call %d", i, in.N)); err != nil {
				return "", err
			}
			if err := req.Log(ctx, mcp.LogInfo, "work", map[string]int{"step": i, "of": in.N}); err != nil {
				return "", err
			}
		}
		return fmt.Sprintf("did %d", in.N), nil
	}))
	must(mcp.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (string, error) {
		sampled, err := req.CreateMessage(mcp.WithInputKey(ctx, "sample"), &mcp.CreateMessageParams{MaxTokens: 5,
			Messages: []*mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.Text("name a color")}}})
		elicited, err2 := req.Elicit(mcp.WithInputKey(ctx, "elicit"), &mcp.ElicitParams{Message: "your name?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		roots, err3 := req.ListRoots(mcp.WithInputKey(ctx, "roots"))
		if err := errors.Join(err, err2, err3); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %v %s", sampled.Content.(*mcp.TextContent).Text, elicited.Content["name"], roots.Roots[0].URI), nil
	}))
	must(mcp.AddTool(s, &mcp.Tool{Name: "block"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}))
	for _, name := range []string{"r1", "r2", "r3"} {
		must(s.AddResource(&mcp.Resource{URI: "test://" + name, Name: name, MIMEType: "text/plain"},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, Text: "text of " + req.URI}}}, nil
			}))
	}
	must(s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://item/{id}", Name: "item"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, Text: "item " + req.Vars["id"]}}}, nil
		}))
	must(s.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "who", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.Text("hello " + req.Arguments["who"])}}}, nil
		}))
	must(s.AddPromptCompletion("greet", "who",
		func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			var out []string
			for _, n := range []string{"ann", "anna", "bob"} {
				if strings.HasPrefix(n, req.ArgumentValue) {
					out = append(out, n)
				}
			}
			return &mcp.CompleteResult{Values: out}, nil
		}))
	return s
}

// answers are the client's answers to the server's requests.
func answers() *mcptest.Options {
	return &mcptest.Options{
		Sampling: func(_ context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: mcp.Text("blue"), Model: "m"}, nil
		},
		Elicit: func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ann"}}, nil
		},
		Roots: func(context.Context) ([]mcp.Root, error) { return []mcp.Root{{URI: "file:///tmp/x"}}, nil },
	}
}

// Every revision, the same calls, the same answers.
func TestEveryRevision(t *testing.T) {
	for _, rev := range []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(rev, func(t *testing.T) {
			ctx := context.Background()
			o := answers()
			o.Revision = rev
			c := mcptest.Connect(t, server(t, &mcp.ServerOptions{PageSize: 2}), o)

			sum, err := mcptest.CallTool[addOut](ctx, c, "add", addIn{A: 2, B: 3})
			require.NoError(t, err)
			assert.Equal(t, 5, sum.Sum)
			shout, err := mcptest.CallTool[string](ctx, c, "shout", map[string]string{"text": "hi"})
			require.NoError(t, err)
			assert.Equal(t, "HI", shout)
			_, err = mcptest.CallTool[string](ctx, c, "fail", nil)
			var te *mcptest.ToolError
			require.ErrorAs(t, err, &te)
			assert.Contains(t, te.Error(), "nope")
			_, err = c.CallTool(ctx, "missing", nil)
			var je *jsonrpc.Error
			require.ErrorAs(t, err, &je)
			assert.Equal(t, jsonrpc.InvalidParams, je.Code)

			tools, err := c.ListTools(ctx)
			require.NoError(t, err)
			assert.Len(t, tools, 6, "every page")
			resources, err := c.ListResources(ctx)
			require.NoError(t, err)
			assert.Len(t, resources, 3)
			templates, err := c.ListResourceTemplates(ctx)
			require.NoError(t, err)
			assert.Equal(t, "test://item/{id}", templates[0].URITemplate)
			read, err := c.ReadResource(ctx, "test://item/7")
			require.NoError(t, err)
			assert.Equal(t, "item 7", read.Contents[0].Text)
			prompts, err := c.ListPrompts(ctx)
			require.NoError(t, err)
			assert.Equal(t, "greet", prompts[0].Name)
			got, err := c.GetPrompt(ctx, "greet", map[string]string{"who": "Ann"})
			require.NoError(t, err)
			assert.Equal(t, "hello Ann", got.Messages[0].Content.(*mcp.TextContent).Text)
			done, err := c.Complete(ctx, mcp.CompletionRef{Type: "ref/prompt", Name: "greet"}, "who", "an")
			require.NoError(t, err)
			assert.Equal(t, []string{"ann", "anna"}, done.Values)

			// The server's requests, answered by the test's functions:
			// sent on the session, or as input_required rounds.
			asked, err := mcptest.CallTool[string](ctx, c, "ask", nil)
			if rev == "2025-03-26" {
				require.ErrorAs(t, err, &te, "2025-03-26 has no elicitation")
				assert.Contains(t, te.Error(), "elicitation")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "blue Ann file:///tmp/x", asked)
		})
	}
}

// A call's progress and log messages are its own, however many calls run
// at once.
func TestRecordPerCall(t *testing.T) {
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(rev, func(t *testing.T) {
			ctx := context.Background()
			c := mcptest.Connect(t, server(t, nil), &mcptest.Options{Revision: rev})
			require.NoError(t, c.SetLogLevel(ctx, mcp.LogDebug))
			var wg sync.WaitGroup
			for n := 1; n <= 8; n++ {
				wg.Go(func() {
					var notes mcptest.Notes
					out, err := mcptest.CallTool[string](ctx, c, "work", nIn{N: n}, mcptest.Record(&notes))
					assert.NoError(t, err)
					assert.Equal(t, fmt.Sprintf("did %d", n), out)
					if assert.Len(t, notes.Progress, n) && assert.Len(t, notes.Logs, n) {
						for i, p := range notes.Progress {
							assert.Equal(t, fmt.Sprintf("step %d of call %d", i+1, n), p.Message)
						}
						assert.JSONEq(t, fmt.Sprintf(`{"step":%d,"of":%d}`, n, n), string(notes.Logs[n-1].Data))
					}
				})
			}
			wg.Wait()
		})
	}
}

func TestSubscribeAndWatch(t *testing.T) {
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(rev, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := server(t, nil)
			c := mcptest.Connect(t, s, &mcptest.Options{Revision: rev})
			require.NoError(t, c.Subscribe(ctx, "test://r1"))
			require.NoError(t, c.Watch(ctx))
			s.ResourceUpdated("test://r2")
			s.ResourceUpdated("test://r1")
			select {
			case u := <-c.Updates():
				assert.Equal(t, "test://r1", u, "only the subscribed resource")
			case <-time.After(5 * time.Second):
				t.Fatal("no update")
			}
			require.NoError(t, mcp.AddTool(s, &mcp.Tool{Name: "late"}, func(context.Context, *mcp.CallToolRequest, struct{}) (string, error) { return "", nil }))
			select {
			case m := <-c.Changes():
				assert.Equal(t, "notifications/tools/list_changed", m)
			case <-time.After(5 * time.Second):
				t.Fatal("no list change")
			}
		})
	}
}

// Closing the client ends the session: what runs is cancelled, and the
// server stops cleanly.
func TestCloseCancels(t *testing.T) {
	c, err := mcptest.Dial(context.Background(), server(t, nil), nil)
	require.NoError(t, err)
	errc := make(chan error, 1)
	go func() {
		_, err := c.CallTool(context.Background(), "block", nil)
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, c.Close())
	assert.ErrorIs(t, <-errc, mcptest.ErrClosed)
	_, err = c.CallTool(context.Background(), "add", addIn{})
	assert.ErrorIs(t, err, mcptest.ErrClosed)
}

// A call whose context ends is cancelled on the server too.
func TestCallContextCancels(t *testing.T) {
	c := mcptest.Connect(t, server(t, nil), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.CallTool(ctx, "block", nil)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	out, err := mcptest.CallTool[addOut](context.Background(), c, "add", addIn{A: 1, B: 1})
	require.NoError(t, err, "the session goes on")
	assert.Equal(t, 2, out.Sum)
}
