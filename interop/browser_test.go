package interop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chromium finds a Chromium binary: $CHROMIUM, or one on PATH (make test
// installs Debian's chromium through .ci/chromium.sh). Without one the
// test skips, except in CI, where a missing browser is a failure.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no Chromium on this machine: run .ci/chromium.sh (make test does)")
	}
	t.Skip("no Chromium on this machine: run .ci/chromium.sh to install Debian's chromium")
	return ""
}

// TestDashboardInBrowser loads the example app's dashboard in headless
// Chromium, adds a task through MCP, and waits for it to appear on the
// page without a reload (the page follows /events with EventSource). It
// saves a screenshot to artifacts/dashboard.png at the repository root.
func TestDashboardInBrowser(t *testing.T) {
	exe := chromium(t)
	app := startExampleApp(t)

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox, // root in CI
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		// This machine has no network but loopback: no background calls.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.WindowSize(1200, 800),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	defer cancelTimeout()

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(app.base+"/"),
		chromedp.WaitVisible(`#status.live`),
		chromedp.WaitVisible(`#empty`),
	), "the dashboard loads and its feed connects")

	cs := app.connect(t, nil)
	res, err := cs.CallTool(ctx, &gomcp.CallToolParams{Name: "add_task",
		Arguments: map[string]any{"title": "Seen in the browser", "tags": []string{"e2e"}}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	_, err = cs.CallTool(ctx, &gomcp.CallToolParams{Name: "add_task", Arguments: map[string]any{"title": "And a second one"}})
	require.NoError(t, err)
	_, err = cs.CallTool(ctx, &gomcp.CallToolParams{Name: "complete_task", Arguments: map[string]any{"id": "t1"}})
	require.NoError(t, err)

	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(`li.done[data-id="t1"]`),
		chromedp.WaitVisible(`li[data-id="t2"]`),
	), "tasks added over MCP appear without a reload")
	text := func(sel string) string {
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		require.NoError(t, err, sel)
		return s
	}
	title, counts, feed := text(`li[data-id="t1"] .title`), text(`#counts`), text(`#feed`)
	assert.Equal(t, "Seen in the browser", title)
	assert.Equal(t, "1 open, 1 done", counts)
	assert.Contains(t, feed, "add_task")
	assert.Contains(t, feed, "complete_task")

	// The chart of tool calls follows /metrics: a bar per tool, and a
	// bar that grows with the next call.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(`#chart g[data-tool="add_task"][data-calls="2"]`),
		chromedp.WaitVisible(`#chart g[data-tool="complete_task"][data-calls="1"]`),
	), "the chart shows the tools' calls")
	_, err = cs.CallTool(ctx, &gomcp.CallToolParams{Name: "add_task", Arguments: map[string]any{"title": "A third"}})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`#chart g[data-tool="add_task"][data-calls="3"]`)),
		"the chart moves after a tool call")

	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100 is PNG
	require.NoError(t, err)
	dir := filepath.Join("..", "artifacts")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	path := filepath.Join(dir, "dashboard.png")
	require.NoError(t, os.WriteFile(path, png, 0o644))
	abs, _ := filepath.Abs(path)
	t.Logf("screenshot: %s (%d bytes)", abs, len(png))
	assert.True(t, strings.HasPrefix(string(png), "\x89PNG"), "a PNG")
}
