package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcp/mcptest"
)

// boardServer is the board's MCP server alone, as the stdio mode serves
// it: no HTTP, no auth, the board in an in-memory SQLite.
func boardServer(t *testing.T) *app {
	t.Helper()
	a, err := newBoardApp(context.Background(), "", slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	t.Cleanup(a.Close)
	return a
}

type taskOut struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Done  bool   `json:"done"`
}

// The board's tools, resources, prompts and completion, in a session and
// in 2026-07-28, through the test client.
func TestBoardOverMCP(t *testing.T) {
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(rev, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			a := boardServer(t)
			// A reader sees the write tools, and is asked for tasks:write.
			reader := mcptest.Connect(t, a.mcp, &mcptest.Options{Revision: rev, Server: &mcp.ConnOptions{Scopes: []string{scopeRead}}})
			tools, err := reader.ListTools(ctx)
			require.NoError(t, err)
			assert.Len(t, tools, 6)
			_, err = reader.CallTool(ctx, "add_task", map[string]any{"title": "nope"})
			assert.ErrorContains(t, err, "insufficient scope, needs tasks:write")

			c := mcptest.Connect(t, a.mcp, &mcptest.Options{Revision: rev, Server: &mcp.ConnOptions{Scopes: []string{scopeRead, scopeWrite}}})

			added, err := mcptest.CallTool[taskOut](ctx, c, "add_task", map[string]any{"title": "write the tests"})
			require.NoError(t, err)
			assert.Equal(t, "write the tests", added.Title)

			var notes mcptest.Notes
			imported, err := mcptest.CallTool[struct{ Imported int }](ctx, c, "import_tasks",
				map[string]any{"titles": []string{"one", "two", "three"}}, mcptest.Record(&notes))
			require.NoError(t, err)
			assert.Equal(t, 3, imported.Imported)
			assert.Len(t, notes.Progress, 3, "import_tasks reports each task")

			done, err := mcptest.CallTool[taskOut](ctx, c, "complete_task", map[string]any{"id": added.ID})
			require.NoError(t, err)
			assert.True(t, done.Done)
			_, err = mcptest.CallTool[taskOut](ctx, c, "complete_task", map[string]any{"id": "nope"})
			var te *mcptest.ToolError
			assert.ErrorAs(t, err, &te, "an unknown task is the tool's error")

			found, err := mcptest.CallTool[struct{ Tasks []taskOut }](ctx, c, "search_tasks", map[string]any{"query": "tw"})
			require.NoError(t, err)
			require.Len(t, found.Tasks, 1)
			assert.Equal(t, "two", found.Tasks[0].Title)

			// Without sampling the summary is written without a model.
			sum, err := mcptest.CallTool[struct{ Source string }](ctx, c, "summarize_tasks", nil)
			require.NoError(t, err)
			assert.Equal(t, "fallback", sum.Source)

			resources, err := c.ListResources(ctx)
			require.NoError(t, err)
			assert.Len(t, resources, 4, "every task is a resource")
			read, err := c.ReadResource(ctx, "tasks://"+added.ID)
			require.NoError(t, err)
			var got taskOut
			require.NoError(t, json.Unmarshal([]byte(read.Contents[0].Text), &got))
			assert.True(t, got.Done)

			ids, err := c.Complete(ctx, mcp.CompletionRef{Type: "ref/prompt", Name: "task_brief"}, "id", added.ID[:1])
			require.NoError(t, err)
			assert.Contains(t, ids.Values, added.ID)
			brief, err := c.GetPrompt(ctx, "task_brief", map[string]string{"id": added.ID})
			require.NoError(t, err)
			require.Len(t, brief.Messages, 2)
			assert.IsType(t, &mcp.EmbeddedResource{}, brief.Messages[0].Content)
		})
	}
}

// A subscribed task's changes reach the client, with sampling answered by
// the client's model.
func TestBoardSubscriptionAndSampling(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a := boardServer(t)
	c := mcptest.Connect(t, a.mcp, &mcptest.Options{
		Server: &mcp.ConnOptions{Scopes: []string{scopeRead, scopeWrite}},
		Sampling: func(_ context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: mcp.Text("All good."), Model: "test"}, nil
		},
	})
	added, err := mcptest.CallTool[taskOut](ctx, c, "add_task", map[string]any{"title": "watch me"})
	require.NoError(t, err)
	require.NoError(t, c.Subscribe(ctx, "tasks://"+added.ID))
	_, err = mcptest.CallTool[taskOut](ctx, c, "complete_task", map[string]any{"id": added.ID})
	require.NoError(t, err)
	select {
	case u := <-c.Updates():
		assert.Equal(t, "tasks://"+added.ID, u)
	case <-ctx.Done():
		t.Fatal("no resources/updated")
	}
	sum, err := mcptest.CallTool[struct{ Summary, Source string }](ctx, c, "summarize_tasks", nil)
	require.NoError(t, err)
	assert.Equal(t, "sampling", sum.Source)
	assert.Equal(t, "All good.", sum.Summary)
}
