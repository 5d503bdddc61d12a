// Command gosdk serves the echo tool with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk), written the way its README and
// examples do it: a typed tool added with mcp.AddTool (input schema
// inferred from the struct and validated by the SDK) behind
// mcp.NewStreamableHTTPHandler.
//
// Modes: "stateless" (StreamableHTTPOptions.Stateless) and "stateful"
// (sessions, with SessionTimeout set from -idle-timeout). Both use
// JSONResponse, so a tools/call is answered with application/json.
package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/saguaro-go/saguaro/bench/internal/serve"
)

var mode = "stateless"

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo back"`
}

func echo(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
}

func build(o serve.Options) (serve.Built, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-gosdk", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo the text back"}, echo)

	opts := &mcp.StreamableHTTPOptions{JSONResponse: true}
	var notes string
	switch o.Mode {
	case "stateless":
		opts.Stateless = true
		notes = "Stateless: true, JSONResponse: true"
	case "stateful":
		opts.SessionTimeout = o.IdleTimeout
		notes = fmt.Sprintf("sessions, JSONResponse: true, SessionTimeout: %v", o.IdleTimeout)
	default:
		return serve.Built{}, fmt.Errorf("unknown mode %q", o.Mode)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts)
	return serve.Built{Handler: h, Notes: notes}, nil
}

func main() { serve.Main("go-sdk", mode, build) }
