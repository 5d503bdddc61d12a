package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing/fstest"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcp/mcptest"
)

// An MCP App: a view kept in files (an embed.FS in a real program), a
// tool that a host renders with it, and an app-only tool that only the
// view calls. A client that renders views lists both tools with their
// _meta.ui; any other client sees only the first, without it, and reads
// its text.
func ExampleServer_AddView() {
	files := fstest.MapFS{ // //go:embed view in a real program
		"view/clock.html": {Data: []byte(`<!DOCTYPE html>
<html><head>{{csp}}<style>{{style "clock.css"}}</style></head>
<body><p id="now">…</p><script>{{script "clock.js"}}</script></body></html>`)},
		"view/clock.css": {Data: []byte(`p { font: 2em monospace }`)},
		"view/clock.js":  {Data: []byte(`/* talks to the host over postMessage */`)},
	}
	srv := mcp.NewServer(mcp.Implementation{Name: "clock", Version: "1.0.0"}, nil)
	if err := srv.AddView(&mcp.View{URI: "ui://clock/view", Name: "clock", FS: files, File: "view/clock.html",
		CSP: mcp.ViewCSP{ConnectDomains: []string{"https://time.example.com"}}}); err != nil {
		panic(err)
	}
	type now struct {
		Time string `json:"time"`
	}
	tell := func(context.Context, *mcp.CallToolRequest, struct{}) (now, error) { return now{Time: "12:00"}, nil }
	if err := mcp.AddTool(srv, &mcp.Tool{Name: "show_clock", Description: "Shows the time.",
		Meta: mcp.Meta{"ui": &mcp.ToolUI{ResourceURI: "ui://clock/view"}}}, tell); err != nil {
		panic(err)
	}
	if err := mcp.AddTool(srv, &mcp.Tool{Name: "tick", Description: "The view's refresh.",
		Meta: mcp.Meta{"ui": &mcp.ToolUI{ResourceURI: "ui://clock/view", Visibility: []mcp.Visibility{mcp.VisibilityApp}}}}, tell); err != nil {
		panic(err)
	}

	ctx := context.Background()
	for _, ext := range [][]string{{mcp.ExtUI}, nil} {
		c, _ := mcptest.Dial(ctx, srv, &mcptest.Options{Extensions: ext})
		tools, _ := c.ListTools(ctx)
		for _, t := range tools {
			meta, _ := json.Marshal(t.Meta)
			fmt.Println(t.Name, string(meta))
		}
		_ = c.Close()
	}
	c, _ := mcptest.Dial(ctx, srv, nil)
	defer c.Close()
	res, _ := c.CallTool(ctx, "show_clock", nil)
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// show_clock {"ui":{"resourceUri":"ui://clock/view"}}
	// tick {"ui":{"resourceUri":"ui://clock/view","visibility":["app"]}}
	// show_clock null
	// {"time":"12:00"}
}
