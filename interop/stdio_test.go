//lint:file-ignore SA1019 these tests drive sampling and resource subscriptions, which go-sdk and mcp-go mark deprecated as of 2026-07-28, not gone

package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
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

// stdioSummary is what the clients' models answer the example app's
// summarize_tasks with.
const stdioSummary = "Two tasks are open; start with the tests."

// sampler is a client's sampling handler: it answers stdioSummary, or,
// once hold is set, waits for its context (the server cancels its
// request when the tool's call is cancelled) or for release, and reports
// how it ended.
type sampler struct {
	hold    atomic.Bool
	held    chan struct{} // a held request started
	ended   chan error    // a held request's context ended, with its error
	release chan struct{} // closed: a held request answers
}

func newSampler() *sampler {
	return &sampler{held: make(chan struct{}, 1), ended: make(chan error, 1), release: make(chan struct{})}
}

func (s *sampler) sample(ctx context.Context) (string, error) {
	if !s.hold.Load() {
		return stdioSummary, nil
	}
	s.held <- struct{}{}
	select {
	case <-ctx.Done():
		s.ended <- ctx.Err()
		return "", ctx.Err()
	case <-s.release:
		s.ended <- nil
		return "too late", nil
	case <-time.After(10 * time.Second):
		s.ended <- errors.New("the held sampling request was never cancelled")
		return "", errors.New("held too long")
	}
}

// The example app over stdio, started by the Go SDK's client as a desktop
// client starts a server: tools, resources, subscriptions, progress,
// sampling and cancellation, at the client's default revision (it probes
// 2026-07-28 first) and pinned to the legacy ones.
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
			smp := newSampler()
			c := gomcp.NewClient(&gomcp.Implementation{Name: "interop-stdio", Version: "0"}, &gomcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, r *gomcp.ProgressNotificationClientRequest) {
					mu.Lock()
					progress = append(progress, r.Params.Progress)
					mu.Unlock()
				},
				ResourceUpdatedHandler: func(_ context.Context, r *gomcp.ResourceUpdatedNotificationRequest) {
					updated <- r.Params.URI
				},
				CreateMessageHandler: func(ctx context.Context, _ *gomcp.CreateMessageRequest) (*gomcp.CreateMessageResult, error) {
					text, err := smp.sample(ctx)
					if err != nil {
						return nil, err
					}
					return &gomcp.CreateMessageResult{Role: "assistant", Model: "stdio-model", Content: &gomcp.TextContent{Text: text}}, nil
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
			assert.True(t, names["add_task"] && names["list_tasks"] && names["import_tasks"] && names["summarize_tasks"], "%v", names)

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
			// In 2026-07-28 the SDK subscribes with subscriptions/listen.
			require.NoError(t, cs.Subscribe(ctx, &gomcp.SubscribeParams{URI: uri}))
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

			// Sampling: the tool asks the client's model (over stdio in a
			// session; as an input_required round trip in 2026-07-28).
			res, err = cs.CallTool(ctx, &gomcp.CallToolParams{Name: "summarize_tasks", Arguments: map[string]any{}})
			require.NoError(t, err)
			require.False(t, res.IsError, "%+v", res.Content)
			b, _ = json.Marshal(res.StructuredContent)
			assert.JSONEq(t, `{"summary":"`+stdioSummary+`","source":"sampling"}`, string(b))

			// Cancellation: the call is cancelled while its sampling
			// request waits for the model.
			smp.hold.Store(true)
			cctx, ccancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(cctx, &gomcp.CallToolParams{Name: "summarize_tasks", Arguments: map[string]any{}})
				done <- err
			}()
			<-smp.held
			ccancel()
			require.ErrorIs(t, <-done, context.Canceled)
			// In a session the server cancels the sampling request it
			// sent; in 2026-07-28 the client ran it as part of the call.
			assert.ErrorIs(t, <-smp.ended, context.Canceled, "the held sampling request")
			smp.hold.Store(false)
			_, err = cs.ListTools(ctx, nil)
			require.NoError(t, err, "the server serves on after a cancellation")

			_, err = cs.CallTool(ctx, &gomcp.CallToolParams{Name: "complete_task", Arguments: map[string]any{"id": task.ID}})
			require.NoError(t, err)
			select {
			case u := <-updated:
				assert.Equal(t, uri, u)
			case <-ctx.Done():
				t.Fatal("no resources/updated for the subscribed task")
			}
		})
	}
}

// mcpGoStdioSampler answers the example app's sampling requests for
// mcp-go's client.
type mcpGoStdioSampler struct{ s *sampler }

func (m mcpGoStdioSampler) CreateMessage(ctx context.Context, _ mcpgo.CreateMessageRequest) (*mcpgo.CreateMessageResult, error) {
	text, err := m.s.sample(ctx)
	if err != nil {
		return nil, err
	}
	return &mcpgo.CreateMessageResult{
		SamplingMessage: mcpgo.SamplingMessage{Role: mcpgo.RoleAssistant, Content: mcpgo.NewTextContent(text)},
		Model:           "stdio-model",
	}, nil
}

// The same over stdio with mcp-go's client: list, call, progress,
// sampling, cancellation and a resource subscription, at each legacy
// revision.
func TestStdioMCPGo(t *testing.T) {
	dir := t.TempDir()
	bin := buildExampleApp(t, dir)
	for _, rev := range []string{"2025-03-26", "2025-06-18", "2025-11-25"} {
		t.Run(rev, func(t *testing.T) { stdioMCPGo(t, bin, filepath.Join(dir, rev+".db"), rev) })
	}
}

func stdioMCPGo(t *testing.T, bin, data, rev string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	smp := newSampler()
	tr := transport.NewStdio(bin, []string{"EXAMPLE_USER=interop"}, "-stdio", "-data", data)
	c := client.NewClient(tr, client.WithSamplingHandler(mcpGoStdioSampler{s: smp}))
	require.NoError(t, c.Start(ctx)) // starts the process, and serves the server's requests
	defer c.Close()
	var mu sync.Mutex
	var progress []float64
	updated := make(chan string, 8)
	cancelled := make(chan any, 8)
	c.OnNotification(func(n mcpgo.JSONRPCNotification) {
		switch n.Method {
		case "notifications/cancelled":
			cancelled <- n.Params.AdditionalFields["requestId"]
		case "notifications/progress":
			if p, ok := n.Params.AdditionalFields["progress"].(float64); ok {
				mu.Lock()
				progress = append(progress, p)
				mu.Unlock()
			}
		case "notifications/resources/updated":
			if u, ok := n.Params.AdditionalFields["uri"].(string); ok {
				updated <- u
			}
		}
	})
	var ir mcpgo.InitializeRequest
	ir.Params.ClientInfo = mcpgo.Implementation{Name: "interop-mcpgo-stdio", Version: "0"}
	ir.Params.ProtocolVersion = rev
	init, err := c.Initialize(ctx, ir)
	require.NoError(t, err)
	assert.Equal(t, "saguaro-task-board", init.ServerInfo.Name)
	assert.Equal(t, rev, init.ProtocolVersion)

	tools, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
	require.NoError(t, err)
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = true
	}
	assert.True(t, names["add_task"] && names["import_tasks"] && names["summarize_tasks"], "%v", names)

	var call mcpgo.CallToolRequest
	call.Params.Name = "add_task"
	call.Params.Arguments = map[string]any{"title": "mcp-go over stdio"}
	res, err := c.CallTool(ctx, call)
	require.NoError(t, err)
	require.False(t, res.IsError)
	var task struct{ ID string }
	b, _ := json.Marshal(res.StructuredContent)
	require.NoError(t, json.Unmarshal(b, &task))
	uri := "tasks://" + task.ID
	var sub mcpgo.SubscribeRequest
	sub.Params.URI = uri
	require.NoError(t, c.Subscribe(ctx, sub))

	call.Params.Name = "list_tasks"
	call.Params.Arguments = map[string]any{}
	res, err = c.CallTool(ctx, call)
	require.NoError(t, err)
	b, _ = json.Marshal(res.StructuredContent)
	assert.Contains(t, string(b), "mcp-go over stdio")

	call.Params.Name = "import_tasks"
	call.Params.Arguments = map[string]any{"titles": []string{"x", "y", "z"}}
	call.Params.Meta = &mcpgo.Meta{ProgressToken: "imp"}
	res, err = c.CallTool(ctx, call)
	require.NoError(t, err)
	require.False(t, res.IsError)
	assert.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(progress) == 3 && progress[2] == 3
	}, 5*time.Second, 10*time.Millisecond, "progress of import_tasks")
	call.Params.Meta = nil

	call.Params.Name = "summarize_tasks"
	call.Params.Arguments = map[string]any{}
	res, err = c.CallTool(ctx, call)
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res.Content)
	b, _ = json.Marshal(res.StructuredContent)
	assert.JSONEq(t, `{"summary":"`+stdioSummary+`","source":"sampling"}`, string(b))

	smp.hold.Store(true)
	cctx, ccancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(cctx, call)
		done <- err
	}()
	<-smp.held
	ccancel()
	require.ErrorIs(t, <-done, context.Canceled)
	// The server cancels its sampling request with the call (mcp-go's
	// client does not cancel a handler for it, so the notification is
	// checked), and the model's late answer to it is dropped.
	select {
	case id := <-cancelled:
		assert.NotNil(t, id, "notifications/cancelled names the sampling request")
	case <-ctx.Done():
		t.Fatal("the server did not cancel its sampling request")
	}
	close(smp.release)
	assert.NoError(t, <-smp.ended)
	smp.hold.Store(false)

	call.Params.Name = "complete_task"
	call.Params.Arguments = map[string]any{"id": task.ID}
	_, err = c.CallTool(ctx, call)
	require.NoError(t, err)
	select {
	case u := <-updated:
		assert.Equal(t, uri, u)
	case <-ctx.Done():
		t.Fatal("no resources/updated for the subscribed task")
	}
}

// The same over stdio with the official TypeScript SDK's
// StdioClientTransport (ts/stdio_client.mjs), which starts the app itself:
// list, call, progress, sampling, cancellation and a resource
// subscription. Node 22 and the SDK come from .ci/tools.sh.
func TestStdioTypeScript(t *testing.T) {
	tools, err := nodeTools()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	dir := t.TempDir()
	bin := buildExampleApp(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, tools[0], "ts/stdio_client.mjs")
	cmd.Env = append(os.Environ(), "APP_BIN="+bin, "APP_DATA="+filepath.Join(dir, "ts.db"), "SDK_DIR="+tools[1])
	cmd.SysProcAttr = procAttr()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "stdio_client.mjs\nstdout: %s\nstderr: %s", out, stderr.String())
	steps := map[string]json.RawMessage{}
	var last string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		last = line
		var s struct {
			Step string `json:"step"`
		}
		if json.Unmarshal([]byte(line), &s) == nil && s.Step != "" {
			steps[s.Step] = json.RawMessage(line)
		}
	}
	require.Equal(t, "DONE", last, "stdout: %s\nstderr: %s", out, stderr.String())
	assert.JSONEq(t, `{"step":"connected","server":"saguaro-task-board","version":"spawned"}`, string(steps["connected"]))
	var list struct{ Tools []string }
	require.NoError(t, json.Unmarshal(steps["list"], &list))
	assert.Subset(t, list.Tools, []string{"add_task", "complete_task", "import_tasks", "list_tasks", "summarize_tasks"})
	assert.JSONEq(t, `{"step":"call","title":"from TypeScript over stdio","isError":false}`, string(steps["call"]))
	assert.JSONEq(t, `{"step":"progress","imported":3,"progress":[["ts-import",1,3],["ts-import",2,3],["ts-import",3,3]]}`, string(steps["progress"]))
	assert.JSONEq(t, `{"step":"sampling","summary":"`+stdioSummary+`","source":"sampling"}`, string(steps["sampling"]))
	assert.JSONEq(t, `{"step":"cancel","callRejected":true,"samplingCancelled":true}`, string(steps["cancel"]))
	assert.JSONEq(t, `{"step":"subscribe","read":true,"updated":true}`, string(steps["subscribe"]))
}
