package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcp/jsonrpc"
	"github.com/saguaro-go/saguaro/mcp/mcptest"
)

const viewDoc = "<!DOCTYPE html><html><body><p>board</p></body></html>"

type boardIn struct {
	Filter string `json:"filter,omitempty"`
}

type boardOut struct {
	Tasks []string `json:"tasks"`
}

// appsServer is a server with a tool list, a plain tool and a resource;
// with views, the list tool is linked to ui://board/view and an app-only
// refresh tool is added. Without views it is what the same server was
// before it had a view.
func appsServer(t testing.TB, views bool) *mcp.Server {
	t.Helper()
	srv := mcp.NewServer(mcp.Implementation{Name: "apps", Version: "1"}, nil)
	show := func(context.Context, *mcp.CallToolRequest, boardIn) (boardOut, error) {
		return boardOut{Tasks: []string{"write the docs"}}, nil
	}
	listMeta := mcp.Meta{"example.com/owner": "team"}
	if views {
		require.NoError(t, srv.AddView(&mcp.View{URI: "ui://board/view", Name: "board", Title: "Board", HTML: viewDoc,
			CSP: mcp.ViewCSP{ConnectDomains: []string{"https://api.example.com"}}, Permissions: mcp.ViewPermissions{ClipboardWrite: true},
			PrefersBorder: ptr(true)}))
		listMeta = mcp.Meta{"example.com/owner": "team", "ui": &mcp.ToolUI{ResourceURI: "ui://board/view"}}
		require.NoError(t, mcp.AddTool(srv, &mcp.Tool{Name: "refresh", Description: "Refreshes the board view.",
			Meta: mcp.Meta{"ui": &mcp.ToolUI{ResourceURI: "ui://board/view", Visibility: []mcp.Visibility{mcp.VisibilityApp}}}}, show))
	}
	require.NoError(t, mcp.AddTool(srv, &mcp.Tool{Name: "list", Title: "List", Description: "Lists the board.", Meta: listMeta}, show))
	require.NoError(t, mcp.AddTool(srv, &mcp.Tool{Name: "plain", Description: "Has no view."}, show))
	require.NoError(t, srv.AddResource(&mcp.Resource{URI: "docs://readme", Name: "readme", MIMEType: "text/plain"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "docs://readme", Text: "hi"}}}, nil
		}))
	return srv
}

// controller serves h over HTTP with sessions: without them a legacy
// client's capabilities are forgotten after initialize.
func controller(h mcp.Handler) http.Handler {
	return mcp.Controller(&mcp.Options{Handler: h, Sessions: &mcp.SessionOptions{}})
}

func ptr[T any](v T) *T { return &v }

var revisions = []string{"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// rawList is a list method's result as the client received it.
func rawList(t *testing.T, c *mcptest.Client, method string) string {
	t.Helper()
	var raw json.RawMessage
	require.NoError(t, c.Call(context.Background(), method, nil, &raw))
	return string(raw)
}

// TestAppsWithoutExtension: a client that does not declare the extension
// (or speaks 2025-03-26) sees byte for byte the lists of the server
// without views, and cannot call the app-only tool.
func TestAppsWithoutExtension(t *testing.T) {
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			before := mcptest.Connect(t, appsServer(t, false), &mcptest.Options{Revision: rev})
			c := mcptest.Connect(t, appsServer(t, true), &mcptest.Options{Revision: rev})
			assert.Equal(t, rawList(t, before, "tools/list"), rawList(t, c, "tools/list"))
			assert.Equal(t, rawList(t, before, "resources/list"), rawList(t, c, "resources/list"))

			_, err := c.CallTool(context.Background(), "refresh", nil)
			var je *jsonrpc.Error
			require.ErrorAs(t, err, &je, "an app-only tool is unknown to a client without views")
			assert.Equal(t, jsonrpc.InvalidParams, je.Code)
			assert.Contains(t, je.Message, "unknown tool")

			res, err := c.CallTool(context.Background(), "list", nil)
			require.NoError(t, err, "the linked tool works as any tool")
			assert.JSONEq(t, `{"tasks":["write the docs"]}`, res.Content[0].(*mcp.TextContent).Text, "its text stays useful")
		})
	}
	t.Run("2025-03-26 declaring it", func(t *testing.T) {
		before := mcptest.Connect(t, appsServer(t, false), &mcptest.Options{Revision: "2025-03-26"})
		c := mcptest.Connect(t, appsServer(t, true), &mcptest.Options{Revision: "2025-03-26", Extensions: []string{mcp.ExtUI}})
		assert.Equal(t, rawList(t, before, "tools/list"), rawList(t, c, "tools/list"), "no _meta in 2025-03-26: never a UI client")
	})
}

// TestAppsWithExtension: a client that renders views lists every tool,
// the linked ones with _meta.ui, the view with its _meta.ui, and may call
// the app-only tool.
func TestAppsWithExtension(t *testing.T) {
	for _, rev := range revisions[1:] {
		t.Run(rev, func(t *testing.T) {
			c := mcptest.Connect(t, appsServer(t, true), &mcptest.Options{Revision: rev, Extensions: []string{mcp.ExtUI}})
			var tools struct {
				Tools []map[string]json.RawMessage `json:"tools"`
			}
			require.NoError(t, json.Unmarshal([]byte(rawList(t, c, "tools/list")), &tools))
			meta := map[string]string{}
			for _, tl := range tools.Tools {
				var name string
				require.NoError(t, json.Unmarshal(tl["name"], &name))
				meta[name] = string(tl["_meta"])
			}
			assert.JSONEq(t, `{"example.com/owner":"team","ui":{"resourceUri":"ui://board/view"}}`, meta["list"])
			assert.JSONEq(t, `{"ui":{"resourceUri":"ui://board/view","visibility":["app"]}}`, meta["refresh"])
			assert.Equal(t, "", meta["plain"])

			res, err := c.CallTool(context.Background(), "refresh", nil)
			require.NoError(t, err)
			assert.False(t, res.IsError)

			resources, err := c.ListResources(context.Background())
			require.NoError(t, err)
			require.Len(t, resources, 2)
			assert.Equal(t, "ui://board/view", resources[1].URI)
			assert.Equal(t, mcp.ViewMIMEType, resources[1].MIMEType)

			var read json.RawMessage
			require.NoError(t, c.Call(context.Background(), "resources/read", map[string]any{"uri": "ui://board/view"}, &read))
			var rr struct {
				Contents []struct {
					URI      string          `json:"uri"`
					MIMEType string          `json:"mimeType"`
					Text     string          `json:"text"`
					Meta     json.RawMessage `json:"_meta"`
				} `json:"contents"`
			}
			require.NoError(t, json.Unmarshal(read, &rr))
			require.Len(t, rr.Contents, 1)
			assert.Equal(t, viewDoc, rr.Contents[0].Text)
			assert.Equal(t, "text/html;profile=mcp-app", rr.Contents[0].MIMEType)
			assert.JSONEq(t, `{"ui":{"csp":{"connectDomains":["https://api.example.com"]},"permissions":{"clipboardWrite":{}},"prefersBorder":true}}`,
				string(rr.Contents[0].Meta))
		})
	}
	t.Run("mimeTypes without the view type", func(t *testing.T) {
		// A host that declares the extension for another MIME type is
		// not served views (the HTTP test below declares it by hand).
		srv := appsServer(t, true)
		body := postHTTP(t, httptest.NewServer(controller(srv)), "2025-11-25",
			`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/uri-list"]}}}`)
		assert.NotContains(t, body, "refresh")
		assert.NotContains(t, body, "resourceUri")
	})
}

// postHTTP opens a session of rev whose client declares caps and sends
// msg in it, returning the answer's body (the initialize answer's without
// msg).
func postHTTP(t *testing.T, ts *httptest.Server, rev, msg, caps string) string {
	t.Helper()
	t.Cleanup(ts.Close)
	sid := ""
	do := func(body string) string {
		req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", rev)
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			sid = id
		}
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	init := do(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + rev +
		`","capabilities":` + caps + `,"clientInfo":{"name":"t","version":"1"}}}`)
	if msg == "" {
		return init
	}
	return do(msg)
}

// TestAppsCapability: initialize (2025-06-18 on) and server/discover
// advertise the extension once a view is registered, over HTTP.
func TestAppsCapability(t *testing.T) {
	for _, rev := range revisions[:3] {
		t.Run(rev, func(t *testing.T) {
			var res struct {
				Result struct {
					Capabilities struct {
						Extensions map[string]json.RawMessage `json:"extensions"`
					} `json:"capabilities"`
				} `json:"result"`
			}
			body := postHTTP(t, httptest.NewServer(controller(appsServer(t, true))), rev, "", `{}`)
			require.NoError(t, json.Unmarshal([]byte(body), &res), body)
			if rev == "2025-03-26" {
				assert.NotContains(t, body, "extensions")
				return
			}
			assert.JSONEq(t, `{}`, string(res.Result.Capabilities.Extensions[mcp.ExtUI]))
			without := postHTTP(t, httptest.NewServer(controller(appsServer(t, false))), rev, "", `{}`)
			assert.NotContains(t, without, "extensions", "no view, nothing advertised")
		})
	}
	t.Run("2026-07-28", func(t *testing.T) {
		c := mcptest.Connect(t, appsServer(t, true), &mcptest.Options{Revision: "2026-07-28"})
		var d struct {
			Capabilities struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"capabilities"`
		}
		require.NoError(t, c.Call(context.Background(), "server/discover", nil, &d))
		assert.JSONEq(t, `{}`, string(d.Capabilities.Extensions[mcp.ExtUI]))
	})
	t.Run("HTTP tools/list", func(t *testing.T) {
		ui := `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html; profile=mcp-app"]}}}`
		list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
		with := postHTTP(t, httptest.NewServer(controller(appsServer(t, true))), "2025-11-25", list, ui)
		assert.Contains(t, with, `"visibility":["app"]`)
		plain := postHTTP(t, httptest.NewServer(controller(appsServer(t, true))), "2025-11-25", list, `{}`)
		before := postHTTP(t, httptest.NewServer(controller(appsServer(t, false))), "2025-11-25", list, `{}`)
		assert.Equal(t, before, plain)
	})
}

// TestViewRegistration: what AddView and a tool's link refuse.
func TestViewRegistration(t *testing.T) {
	bad := map[string]*mcp.View{
		"not ui://":         {URI: "https://example.com/view", Name: "v", HTML: viewDoc},
		"no host":           {URI: "ui:view", Name: "v", HTML: viewDoc},
		"no document":       {URI: "ui://a/v", Name: "v"},
		"not HTML5":         {URI: "ui://a/v", Name: "v", HTML: "<p>hi</p>"},
		"HTML and FS":       {URI: "ui://a/v", Name: "v", HTML: viewDoc, FS: fstest.MapFS{}, File: "x.html"},
		"missing file":      {URI: "ui://a/v", Name: "v", FS: fstest.MapFS{}, File: "x.html"},
		"CSP with a space":  {URI: "ui://a/v", Name: "v", HTML: viewDoc, CSP: mcp.ViewCSP{ConnectDomains: []string{"https://a.com https://b.com"}}},
		"CSP with ;":        {URI: "ui://a/v", Name: "v", HTML: viewDoc, CSP: mcp.ViewCSP{ResourceDomains: []string{"https://a.com;script-src *"}}},
		"CSP with a quote":  {URI: "ui://a/v", Name: "v", HTML: viewDoc, CSP: mcp.ViewCSP{FrameDomains: []string{"'unsafe-eval'"}}},
		"CSP with a path":   {URI: "ui://a/v", Name: "v", HTML: viewDoc, CSP: mcp.ViewCSP{ConnectDomains: []string{"https://a.com/api"}}},
		"CSP any host":      {URI: "ui://a/v", Name: "v", HTML: viewDoc, CSP: mcp.ViewCSP{ConnectDomains: []string{"https://*"}}},
		"CSP inner *":       {URI: "ui://a/v", Name: "v", HTML: viewDoc, CSP: mcp.ViewCSP{ConnectDomains: []string{"https://a.*.com"}}},
		"CSP ftp":           {URI: "ui://a/v", Name: "v", HTML: viewDoc, CSP: mcp.ViewCSP{BaseURIDomains: []string{"ftp://a.com"}}},
		"CSP no scheme":     {URI: "ui://a/v", Name: "v", HTML: viewDoc, CSP: mcp.ViewCSP{ConnectDomains: []string{"a.com"}}},
		"domain with space": {URI: "ui://a/v", Name: "v", HTML: viewDoc, Domain: "a b"},
	}
	for name, v := range bad {
		t.Run(name, func(t *testing.T) {
			err := mcp.NewServer(mcp.Implementation{Name: "a", Version: "1"}, nil).AddView(v)
			assert.ErrorIs(t, err, mcp.ErrView)
		})
	}
	srv := mcp.NewServer(mcp.Implementation{Name: "a", Version: "1"}, nil)
	assert.ErrorIs(t, srv.AddView(&mcp.View{URI: "ui://a/v", HTML: viewDoc}), mcp.ErrName, "a view needs a name")
	require.NoError(t, srv.AddView(&mcp.View{URI: "ui://a/v", Name: "v", HTML: "\n  <!doctype HTML>\n<title>v</title>",
		CSP: mcp.ViewCSP{ConnectDomains: []string{"https://*.example.com", "wss://rt.example.com:8443", "http://127.0.0.1:8080"}}}))
	assert.ErrorIs(t, srv.AddView(&mcp.View{URI: "ui://a/v", Name: "v", HTML: viewDoc}), mcp.ErrDuplicate)

	raw := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	links := map[string]any{
		"an unknown view":       &mcp.ToolUI{ResourceURI: "ui://a/other"},
		"an empty visibility":   &mcp.ToolUI{ResourceURI: "ui://a/v", Visibility: []mcp.Visibility{}},
		"an unknown visibility": &mcp.ToolUI{Visibility: []mcp.Visibility{"user"}},
		"a repeated visibility": mcp.ToolUI{Visibility: []mcp.Visibility{mcp.VisibilityApp, mcp.VisibilityApp}},
		"an unknown member":     map[string]any{"resourceUri": "ui://a/v", "csp": map[string]any{}},
		"a nil link":            (*mcp.ToolUI)(nil),
		"not an object":         "ui://a/v",
	}
	for name, ui := range links {
		t.Run("tool with "+name, func(t *testing.T) {
			assert.ErrorIs(t, srv.AddToolRaw(&mcp.Tool{Name: "t", Meta: mcp.Meta{"ui": ui}}, raw), mcp.ErrView)
		})
	}
	// A tool read from JSON (a proxy re-serving another server's tools)
	// keeps its link.
	var decoded mcp.Tool
	require.NoError(t, json.Unmarshal([]byte(`{"name":"decoded","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"ui://a/v","visibility":["model","app"]}}}`), &decoded))
	require.NoError(t, srv.AddToolRaw(&decoded, raw))
	c := mcptest.Connect(t, srv, &mcptest.Options{Extensions: []string{mcp.ExtUI}})
	tools, err := c.ListTools(context.Background())
	require.NoError(t, err)
	require.Len(t, tools, 1)
	b, _ := json.Marshal(tools[0].Meta)
	assert.JSONEq(t, `{"ui":{"resourceUri":"ui://a/v","visibility":["model","app"]}}`, string(b))
}

// TestViewTemplate: a view kept in files is one document, its script and
// style inlined, its CSP in a meta tag.
func TestViewTemplate(t *testing.T) {
	files := fstest.MapFS{
		"view/index.html": {Data: []byte(`<!DOCTYPE html><html><head>{{csp}}<style>{{style "app.css"}}</style></head>` +
			`<body><h1>{{.Title}}</h1><script>{{script "app.js"}}</script></body></html>`)},
		"view/app.js":   {Data: []byte(`document.title = "a < b && c";`)},
		"view/app.css":  {Data: []byte(`h1 > span { color: red }`)},
		"view/bad.js":   {Data: []byte(`x = "</SCRIPT><img src=x>";`)},
		"view/bad.html": {Data: []byte(`<!DOCTYPE html><script>{{script "bad.js"}}</script>`)},
	}
	srv := mcp.NewServer(mcp.Implementation{Name: "a", Version: "1"}, nil)
	require.NoError(t, srv.AddView(&mcp.View{URI: "ui://a/v", Name: "v", FS: files, File: "view/index.html",
		Data: map[string]string{"Title": "Tasks & more"}, CSP: mcp.ViewCSP{ConnectDomains: []string{"https://api.example.com"}}}))
	c := mcptest.Connect(t, srv, nil)
	res, err := c.ReadResource(context.Background(), "ui://a/v")
	require.NoError(t, err)
	doc := res.Contents[0].Text
	assert.Contains(t, doc, `<script>document.title = "a < b && c";</script>`, "the script as written")
	assert.Contains(t, doc, `<style>h1 > span { color: red }</style>`)
	assert.Contains(t, doc, `<h1>Tasks &amp; more</h1>`, "data is escaped")
	assert.Contains(t, doc, `<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;;`)
	assert.Contains(t, doc, `connect-src &#39;self&#39; https://api.example.com;`)

	err = srv.AddView(&mcp.View{URI: "ui://a/bad", Name: "bad", FS: files, File: "view/bad.html"})
	assert.ErrorIs(t, err, mcp.ErrView, "a script that would close its element")
}

func TestViewCSPPolicy(t *testing.T) {
	assert.Equal(t, "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "+
		"img-src 'self' data:; font-src 'self'; media-src 'self' data:; connect-src 'none'; frame-src 'none'; "+
		"object-src 'none'; base-uri 'self'", mcp.ViewCSP{}.Policy(), "nothing declared: the restrictive default")
	p := mcp.ViewCSP{ConnectDomains: []string{"https://api.example.com"}, ResourceDomains: []string{"https://cdn.example.com"},
		FrameDomains: []string{"https://video.example.com"}, BaseURIDomains: []string{"https://base.example.com"}}.Policy()
	for _, want := range []string{"script-src 'self' 'unsafe-inline' https://cdn.example.com;", "img-src 'self' data: https://cdn.example.com;",
		"connect-src 'self' https://api.example.com;", "frame-src https://video.example.com;", "base-uri https://base.example.com"} {
		assert.Contains(t, p, want)
	}
}

func TestViewPermissionsJSON(t *testing.T) {
	b, err := json.Marshal(mcp.ViewPermissions{Camera: true, ClipboardWrite: true})
	require.NoError(t, err)
	assert.JSONEq(t, `{"camera":{},"clipboardWrite":{}}`, string(b))
	var p mcp.ViewPermissions
	require.NoError(t, json.Unmarshal([]byte(`{"microphone":{},"geolocation":{}}`), &p))
	assert.Equal(t, mcp.ViewPermissions{Microphone: true, Geolocation: true}, p)
	assert.Error(t, json.Unmarshal([]byte(`[]`), &p))
}

// TestViewAccess: a hidden view is neither listed nor read for a caller
// without access, and an app-only tool keeps its Access.
func TestViewAccess(t *testing.T) {
	srv := mcp.NewServer(mcp.Implementation{Name: "a", Version: "1"}, nil)
	require.NoError(t, srv.AddView(&mcp.View{URI: "ui://a/v", Name: "v", HTML: viewDoc,
		Access: &mcp.Access{Scopes: []string{"board:read"}, Hidden: true}}))
	c := mcptest.Connect(t, srv, &mcptest.Options{Extensions: []string{mcp.ExtUI}})
	resources, err := c.ListResources(context.Background())
	require.NoError(t, err)
	assert.Empty(t, resources)
	_, err = c.ReadResource(context.Background(), "ui://a/v")
	var je *jsonrpc.Error
	require.True(t, errors.As(err, &je), "%v", err)
	assert.Equal(t, jsonrpc.ResourceNotFound, je.Code)
}
