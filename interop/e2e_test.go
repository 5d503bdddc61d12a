package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/sse"
)

// exampleApp is the real example_app binary, running as a newcomer runs
// it: its address and dev token read from what it prints.
type exampleApp struct {
	cmd     *exec.Cmd
	base    string
	token   string
	data    string
	replica string // with EXAMPLE_BASE_URL: this replica's own URL
	signIn  string // the "sign-in:" line it printed
	debug   string // with -debug-addr: its listener's base URL
	done    chan struct{}
	err     error
	stderr  *lockedWriter
}

// exampleAppBin builds ../example_app (a module of its own) once per test
// binary.
var exampleAppBin = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "saguaro-example-app-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "example_app")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = "../example_app"
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w\n%s", err, out)
	}
	return bin, nil
})

// startExampleApp starts the example app on a free loopback port with an
// SQLite file and development sign-in, as `go run ./example_app
// -dev-login` would.
func startExampleApp(t *testing.T) *exampleApp {
	t.Helper()
	data := filepath.Join(t.TempDir(), "board.db")
	app := runExampleApp(t, nil, "-addr", "127.0.0.1:0", "-data", data, "-dev-login")
	app.data = data
	return app
}

// runExampleApp runs the example app's binary with args and env, and
// reads its address (the replica's own with -advertise or
// EXAMPLE_BASE_URL, else the one it listens on) and dev token from what
// it prints.
func runExampleApp(t *testing.T, env []string, args ...string) *exampleApp {
	t.Helper()
	bin, err := exampleAppBin()
	require.NoError(t, err)
	app := &exampleApp{done: make(chan struct{}), stderr: &lockedWriter{w: &bytes.Buffer{}}}
	app.cmd = exec.Command(bin, args...)
	app.cmd.SysProcAttr = procAttr()
	app.cmd.Env = append(os.Environ(), env...)
	stdout, err := app.cmd.StdoutPipe()
	require.NoError(t, err)
	app.cmd.Stderr = app.stderr
	require.NoError(t, app.cmd.Start())
	go func() { app.err = app.cmd.Wait(); close(app.done) }()
	t.Cleanup(func() {
		_ = app.cmd.Process.Kill()
		<-app.done
	})

	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, "example_app replica on "); ok {
				app.replica, _, _ = strings.Cut(rest, ",")
			}
			if strings.HasPrefix(line, "sign-in:") {
				app.signIn = line
			}
			if rest, ok := strings.CutPrefix(line, "debug listener on "); ok {
				app.debug = strings.TrimSuffix(rest, "/debug/")
			}
			if rest, ok := strings.CutPrefix(line, "example_app listening on "); ok {
				app.base, _, _ = strings.Cut(rest, " ")
			}
			if tok, ok := strings.CutPrefix(line, "export TOKEN="); ok {
				app.token = tok
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-app.done:
		t.Fatalf("example_app exited: %v\n%s", app.err, app.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("example_app printed no token\n%s", app.stderr)
	}
	require.True(t, strings.HasPrefix(app.base, "http://127.0.0.1:"), "address %q", app.base)
	return app
}

// bearer adds the app's token to every request of an http.Client.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// connect opens an MCP session with the official Go SDK client.
func (app *exampleApp) connect(t *testing.T, onProgress func(float64)) *gomcp.ClientSession {
	t.Helper()
	client := gomcp.NewClient(&gomcp.Implementation{Name: "e2e", Version: "0"}, &gomcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *gomcp.ProgressNotificationClientRequest) {
			if onProgress != nil {
				onProgress(r.Params.Progress)
			}
		},
	})
	tr := &gomcp.StreamableClientTransport{Endpoint: app.base + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token: app.token, base: http.DefaultTransport}}}
	cs, err := client.Connect(ctxFor(t), tr, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func (app *exampleApp) api(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, app.base+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+app.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// feedUntil reads the live feed until an event of type typ whose data
// contains want arrives.
func feedUntil(t *testing.T, rd *sse.Reader, typ, want string) sse.Event {
	t.Helper()
	for {
		ev, err := rd.Next()
		require.NoError(t, err, "feed ended before a %s event with %q", typ, want)
		if ev.Event == typ && strings.Contains(string(ev.Data), want) {
			return ev
		}
	}
}

// TestExampleAppEndToEnd drives the real binary the way its README's
// quickstart does: the printed token, the JSON API with plain HTTP, MCP
// with the Go SDK client, and the live feed showing both.
func TestExampleAppEndToEnd(t *testing.T) {
	app := startExampleApp(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, app.base+"/events", nil)
	feed, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer feed.Body.Close()
	rd := sse.NewReader(feed.Body)
	feedUntil(t, rd, "snapshot", `"tasks"`)

	status, body := app.api(t, http.MethodPost, "/api/tasks", `{"title":"From the API"}`)
	require.Equal(t, http.StatusCreated, status, body)
	feedUntil(t, rd, "task", "From the API")

	// The Go SDK client speaks 2026-07-28 when the server does: no
	// session, every request stateless.
	cs := app.connect(t, nil)
	assert.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion)
	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	assert.Subset(t, names, []string{"list_tasks", "add_task", "complete_task", "search_tasks", "import_tasks", "summarize_tasks"})

	res, err := cs.CallTool(ctx, &gomcp.CallToolParams{Name: "add_task", Arguments: map[string]any{"title": "From MCP", "tags": []string{"e2e"}}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res.Content)
	feedUntil(t, rd, "task", "From MCP")
	feedUntil(t, rd, "mcp", `"tool":"add_task"`)

	status, body = app.api(t, http.MethodGet, "/api/tasks", "")
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "From MCP", "the API sees what MCP added")

	// A resource per task, read through MCP.
	rr, err := cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: "tasks://t2"})
	require.NoError(t, err)
	require.Len(t, rr.Contents, 1)
	assert.Contains(t, rr.Contents[0].Text, "From MCP")

	// Progress reaches the client.
	var mu sync.Mutex
	var progress []float64
	cs2 := app.connect(t, func(p float64) {
		mu.Lock()
		defer mu.Unlock()
		progress = append(progress, p)
	})
	p := &gomcp.CallToolParams{Name: "import_tasks", Arguments: map[string]any{"titles": []string{"x", "y", "z"}}}
	p.SetProgressToken("imp")
	res, err = cs2.CallTool(ctx, p)
	require.NoError(t, err)
	require.False(t, res.IsError)
	// The client hands notifications to its handler asynchronously.
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(progress) == 3
	}, 5*time.Second, 5*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []float64{1, 2, 3}, progress)
}

// TestExampleAppShutdownUnderLoad sends SIGTERM while event streams are
// open and calls are in flight: the process exits 0 within a few seconds,
// without a panic, and its database is whole.
func TestExampleAppShutdownUnderLoad(t *testing.T) {
	app := startExampleApp(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// Open streams: three feeds and an MCP session's GET stream (the Go
	// SDK client opens one).
	for range 3 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, app.base+"/events", nil)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		go func() { _, _ = io.Copy(io.Discard, res.Body) }()
	}
	cs := app.connect(t, nil)

	// Calls in flight: importers writing to the database.
	errs := make(chan error, 4)
	for i := range 4 {
		go func() {
			titles := make([]string, 300)
			for j := range titles {
				titles[j] = fmt.Sprintf("load %d-%d", i, j)
			}
			_, err := cs.CallTool(ctx, &gomcp.CallToolParams{Name: "import_tasks", Arguments: map[string]any{"titles": titles}})
			errs <- err
		}()
	}
	time.Sleep(150 * time.Millisecond)
	require.NoError(t, app.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-app.done:
	case <-time.After(10 * time.Second):
		t.Fatal("example_app did not exit within 10 s of SIGTERM")
	}
	assert.NoError(t, app.err, "exit status after SIGTERM\n%s", app.stderr)
	assert.NotContains(t, app.stderr.String(), "panic")
	for range 4 {
		<-errs // finished or cut off: either way, answered
	}

	// The database is whole: the app starts again on it and lists
	// what the importers committed.
	again := runExampleApp(t, nil, "-addr", "127.0.0.1:0", "-data", app.data)
	status, body := again.api(t, http.MethodGet, "/api/tasks", "")
	require.Equal(t, http.StatusOK, status, body)
	var saved struct {
		Tasks []json.RawMessage `json:"tasks"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &saved))
	assert.NotEmpty(t, saved.Tasks)
}
