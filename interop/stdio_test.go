package interop

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// buildExampleApp builds ../example_app (a module of its own) into dir.
func buildExampleApp(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "example_app")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = "../example_app"
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// The example app over stdio, started by the Go SDK's client as a desktop
// client starts a server: tools, resources, subscriptions, progress, at
// the client's default revision and pinned to the legacy ones.
func TestStdioGoSDK(t *testing.T) {
	dir := t.TempDir()
	bin := buildExampleApp(t, dir)
	for _, rev := range []string{"", "2025-06-18", "2025-11-25"} {
		name := rev
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var mu sync.Mutex
			var progress []float64
			updated := make(chan string, 8)
			c := gomcp.NewClient(&gomcp.Implementation{Name: "interop-stdio", Version: "0"}, &gomcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, r *gomcp.ProgressNotificationClientRequest) {
					mu.Lock()
					progress = append(progress, r.Params.Progress)
					mu.Unlock()
				},
				ResourceUpdatedHandler: func(_ context.Context, r *gomcp.ResourceUpdatedNotificationRequest) {
					updated <- r.Params.URI
				},
			})
			cmd := exec.Command(bin, "-stdio", "-data", filepath.Join(dir, name+".db"))
			cmd.Env = append(os.Environ(), "EXAMPLE_USER=interop")
			var so *gomcp.ClientSessionOptions
			if rev != "" {
				so = &gomcp.ClientSessionOptions{ProtocolVersion: rev}
			}
			cs, err := c.Connect(ctx, &gomcp.CommandTransport{Command: cmd}, so)
			require.NoError(t, err)
			defer cs.Close()

			tools, err := cs.ListTools(ctx, nil)
			require.NoError(t, err)
			names := map[string]bool{}
			for _, tool := range tools.Tools {
				names[tool.Name] = true
			}
			assert.True(t, names["add_task"] && names["list_tasks"] && names["import_tasks"], "%v", names)

			res, err := cs.CallTool(ctx, &gomcp.CallToolParams{Name: "add_task", Arguments: map[string]any{"title": "over stdio"}})
			require.NoError(t, err)
			require.False(t, res.IsError)
			var task struct {
				ID    string `json:"id"`
				Title string `json:"title"`
			}
			b, _ := json.Marshal(res.StructuredContent)
			require.NoError(t, json.Unmarshal(b, &task))
			assert.Equal(t, "over stdio", task.Title)

			uri := "tasks://" + task.ID
			if rev != "" {
				require.NoError(t, cs.Subscribe(ctx, &gomcp.SubscribeParams{URI: uri}))
			}
			read, err := cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: uri})
			require.NoError(t, err)
			require.NotEmpty(t, read.Contents)
			assert.Contains(t, read.Contents[0].Text, "over stdio")

			params := &gomcp.CallToolParams{Name: "import_tasks", Arguments: map[string]any{"titles": []string{"a", "b"}}}
			params.SetProgressToken("imp")
			res, err = cs.CallTool(ctx, params)
			require.NoError(t, err)
			require.False(t, res.IsError)
			// The client hands notifications to its handler on a goroutine
			// of its own: the last may come just after the result.
			assert.Eventually(t, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(progress) == 2 && progress[0] == 1 && progress[1] == 2
			}, 5*time.Second, 10*time.Millisecond, "progress of import_tasks")

			if rev != "" {
				_, err = cs.CallTool(ctx, &gomcp.CallToolParams{Name: "complete_task", Arguments: map[string]any{"id": task.ID}})
				require.NoError(t, err)
				select {
				case u := <-updated:
					assert.Equal(t, uri, u)
				case <-ctx.Done():
					t.Fatal("no resources/updated for the subscribed task")
				}
			}
		})
	}
}

// The same over stdio with mcp-go's client.
func TestStdioMCPGo(t *testing.T) {
	bin := buildExampleApp(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.NewStdioMCPClient(bin, []string{"EXAMPLE_USER=interop"}, "-stdio")
	require.NoError(t, err)
	defer c.Close()
	var ir mcpgo.InitializeRequest
	ir.Params.ClientInfo = mcpgo.Implementation{Name: "interop-mcpgo-stdio", Version: "0"}
	ir.Params.ProtocolVersion = "2025-06-18"
	init, err := c.Initialize(ctx, ir)
	require.NoError(t, err)
	assert.Equal(t, "saguaro-task-board", init.ServerInfo.Name)
	var call mcpgo.CallToolRequest
	call.Params.Name = "add_task"
	call.Params.Arguments = map[string]any{"title": "mcp-go over stdio"}
	res, err := c.CallTool(ctx, call)
	require.NoError(t, err)
	require.False(t, res.IsError)
	call.Params.Name = "list_tasks"
	call.Params.Arguments = map[string]any{}
	res, err = c.CallTool(ctx, call)
	require.NoError(t, err)
	b, _ := json.Marshal(res.StructuredContent)
	assert.Contains(t, string(b), "mcp-go over stdio")
}
