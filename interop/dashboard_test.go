package interop

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/sse"
)

// browser starts a headless Chromium of its own (its own profile) and
// returns a context that drives it.
func browser(t *testing.T, exe string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox, // root in CI
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.WindowSize(1200, 800),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
		cancelAlloc()
	})
	return ctx
}

// TestDashboardSignIn: a person signs in on the dashboard (the code flow
// with PKCE, from the page, through the app's authorization server with
// development approval), adds a task and completes it; a second browser,
// not signed in, sees both live, and an MCP client subscribed to the
// board hears of them. The three run against the round-robin balancer in
// front of three replicas sharing PostgreSQL and Redis, so the sign-in's
// requests, the writes and each feed land on different replicas.
func TestDashboardSignIn(t *testing.T) {
	exe := chromium(t)
	rs := startReplicas(t, 3)
	base, token := rs.base, rs.token

	// The MCP subscriber: list changes, and updates of t1 once subscribed.
	listChanged := make(chan struct{}, 16)
	updated := make(chan string, 16)
	client := gomcp.NewClient(&gomcp.Implementation{Name: "subscriber", Version: "0"}, &gomcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *gomcp.ResourceListChangedRequest) { listChanged <- struct{}{} },
		ResourceUpdatedHandler: func(_ context.Context, r *gomcp.ResourceUpdatedNotificationRequest) {
			updated <- r.Params.URI
		},
	})
	cs, err := client.Connect(ctxFor(t), &gomcp.StreamableClientTransport{Endpoint: base + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token: token, base: http.DefaultTransport}}}, nil)
	require.NoError(t, err)
	defer cs.Close()

	alice, watcher := browser(t, exe), browser(t, exe)
	require.NoError(t, chromedp.Do(watcher, chromedp.Navigate(base+"/"), chromedp.WaitVisible(`#status.live`)),
		"the second dashboard loads and follows the feed")

	require.NoError(t, chromedp.Do(alice,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(`#status.live`),
		chromedp.Click(`#signin`),
		chromedp.WaitVisible(`#add`),
		chromedp.WaitVisible(`#signout`),
	), "signing in from the page")
	user, err := chromedp.Run(alice, chromedp.Text(`#user`))
	require.NoError(t, err)
	assert.Equal(t, "signed in as dev", user)

	require.NoError(t, chromedp.Do(alice,
		chromedp.SendKeys(`#title`, "Added from the page"),
		chromedp.SendKeys(`#tags`, "ui, e2e"),
		chromedp.Click(`#add button[type=submit]`),
		chromedp.WaitVisible(`li[data-id="t1"]`),
	), "adding a task from the page")
	require.NoError(t, chromedp.Do(watcher, chromedp.WaitVisible(`li[data-id="t1"]`)),
		"the second dashboard sees the task without a reload")
	title, err := chromedp.Run(watcher, chromedp.Text(`li[data-id="t1"] .title`))
	require.NoError(t, err)
	assert.Equal(t, "Added from the page", title)
	select {
	case <-listChanged:
	case <-time.After(10 * time.Second):
		t.Fatal("the MCP subscriber heard no resources/list_changed")
	}

	require.NoError(t, cs.Subscribe(ctxFor(t), &gomcp.SubscribeParams{URI: "tasks://t1"}))
	require.NoError(t, chromedp.Do(alice,
		chromedp.Click(`li[data-id="t1"] button.complete`),
		chromedp.WaitVisible(`li.done[data-id="t1"]`),
	), "completing the task from the page")
	require.NoError(t, chromedp.Do(watcher, chromedp.WaitVisible(`li.done[data-id="t1"]`)),
		"the second dashboard sees it done")
	select {
	case uri := <-updated:
		assert.Equal(t, "tasks://t1", uri)
	case <-time.After(10 * time.Second):
		t.Fatal("the MCP subscriber heard no resources/updated")
	}
	counts, err := chromedp.Run(watcher, chromedp.Text(`#counts`))
	require.NoError(t, err)
	assert.Equal(t, "0 open, 1 done", counts)

	png, err := chromedp.Run(alice, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	dir := filepath.Join("..", "artifacts")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dashboard-signed-in.png"), png, 0o644))
}

// TestDashboardSignedOutAndLate: a visitor who is not signed in sees no
// Add form, and an add made anyway (the form submitted by a script) asks
// them to sign in instead of saying a sign-in expired, which it says only
// when a token was refused; a page opened after seven tool calls shows
// their chart at once, not "No tool calls yet" until the next call; and
// the browser finds the page's icon at /favicon.ico.
func TestDashboardSignedOutAndLate(t *testing.T) {
	exe := chromium(t)
	app := startExampleApp(t)

	// Seven tool calls before any page opens, and their figures on the
	// feed (the app publishes them once a second when they change).
	ctx := ctxFor(t)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, app.base+"/events", nil)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	cs := app.connect(t, nil)
	for i := range 7 {
		r, err := cs.CallTool(ctx, &gomcp.CallToolParams{Name: "add_task", Arguments: map[string]any{"title": fmt.Sprintf("early %d", i+1)}})
		require.NoError(t, err)
		require.False(t, r.IsError)
	}
	feedUntil(t, sse.NewReader(res.Body), "tools", `"calls":7`)

	page := browser(t, exe)
	require.NoError(t, chromedp.Do(page,
		chromedp.Navigate(app.base+"/"),
		chromedp.WaitVisible(`#status.live`),
		chromedp.WaitVisible(`li[data-id="t7"]`),
		chromedp.WaitVisible(`#signin`),
	), "the dashboard loads, signed out")

	// The chart: there at once, without another call.
	waitCtx, cancel := context.WithTimeout(page, 5*time.Second)
	err = chromedp.Do(waitCtx, chromedp.WaitVisible(`#chart g[data-tool="add_task"][data-calls="7"]`))
	cancel()
	require.NoError(t, err, "a page opened after seven calls shows them without waiting for an eighth")
	shown, err := chromedp.Run(page, chromedp.Evaluate[bool](`!document.getElementById("nochart").hidden`))
	require.NoError(t, err)
	assert.False(t, shown, `"No tool calls yet" is hidden`)

	// Signed out: no Add form, as laid out, not only as marked.
	display, err := chromedp.Run(page, chromedp.Evaluate[string](`getComputedStyle(document.getElementById("add")).display`))
	require.NoError(t, err)
	assert.Equal(t, "none", display, "the Add form is not shown to a visitor who is not signed in")
	msg, err := chromedp.Run(page, chromedp.Evaluate[string](`(async () => {
		document.getElementById("title").value = "sneaky";
		document.getElementById("add").requestSubmit();
		for (let i = 0; i < 100 && document.getElementById("error").hidden; i++) await new Promise((r) => setTimeout(r, 50));
		return document.getElementById("error").textContent;
	})()`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	assert.Equal(t, "Sign in to add or complete tasks.", msg)
	status, body := app.api(t, http.MethodGet, "/api/tasks", "")
	require.Equal(t, http.StatusOK, status)
	assert.NotContains(t, body, "sneaky")

	// A token the API refuses: that sign-in expired, and the page says so.
	msg, err = chromedp.Run(page, chromedp.Evaluate[string](`(async () => {
		sessionStorage.setItem("token", "e30.eyJzdWIiOiJvbGQifQ.x");
		document.getElementById("title").value = "with an old token";
		document.getElementById("add").requestSubmit();
		for (let i = 0; i < 100 && document.getElementById("error").textContent.indexOf("expired") < 0; i++) await new Promise((r) => setTimeout(r, 50));
		return document.getElementById("error").textContent;
	})()`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	assert.Equal(t, "Your sign-in expired; sign in again.", msg)
	display, err = chromedp.Run(page, chromedp.Evaluate[string](`getComputedStyle(document.getElementById("add")).display`))
	require.NoError(t, err)
	assert.Equal(t, "none", display, "signed out again")

	// The icon: served, and an image the browser decodes.
	width, err := chromedp.Run(page, chromedp.Evaluate[int](`new Promise((resolve) => {
		const img = new Image();
		img.onload = () => resolve(img.naturalWidth);
		img.onerror = () => resolve(0);
		img.src = "/favicon.ico";
	})`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	assert.Positive(t, width, "/favicon.ico is an image")
	icon, err := http.Get(app.base + "/favicon.ico")
	require.NoError(t, err)
	defer icon.Body.Close()
	assert.Equal(t, http.StatusOK, icon.StatusCode)
	assert.Contains(t, []string{"image/x-icon", "image/vnd.microsoft.icon"}, icon.Header.Get("Content-Type"))
}
