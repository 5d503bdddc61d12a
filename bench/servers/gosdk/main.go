// Command gosdk serves the echo tool with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk), written the way its README and
// examples do it: a typed tool added with mcp.AddTool (input schema
// inferred from the struct and validated by the SDK) behind
// mcp.NewStreamableHTTPHandler.
//
// Modes: "stdio" (Server.Run on StdioTransport), "stateless"
// (StreamableHTTPOptions.Stateless) and "stateful"
// (sessions, with SessionTimeout set from -idle-timeout). Both use
// JSONResponse, so a tools/call is answered with application/json, except
// with -progress, where the SDK's default event streams carry the
// progress notifications.
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

// progress sends serve.ProgressSteps progress notifications for the call's
// token (when it has one), then answers like echo.
func progress(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
	if tok := req.Params.GetProgressToken(); tok != nil {
		for i := 1; i <= serve.ProgressSteps; i++ {
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: tok, Progress: float64(i), Total: serve.ProgressSteps,
			})
			if err != nil {
				return nil, nil, err
			}
		}
	}
	return echo(ctx, req, in)
}

func build(o serve.Options) (serve.Built, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-gosdk", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo the text back"}, echo)
	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "report progress, then echo the text back"}, progress)
	addDocs(s, o.PayloadDocs)

	// JSONResponse routes a call's notifications to the GET stream, where
	// a progress call's would be lost, so the progress workload runs with
	// the SDK's default event streams.
	opts := &mcp.StreamableHTTPOptions{JSONResponse: !o.Progress}
	var notes string
	switch o.Mode {
	case "stdio":
		return serve.Built{
			Stdio: func(ctx context.Context) error { return s.Run(ctx, &mcp.StdioTransport{}) },
			Notes: "Server.Run with StdioTransport",
		}, nil
	case "stateless":
		opts.Stateless = true
		notes = fmt.Sprintf("Stateless: true, JSONResponse: %v", opts.JSONResponse)
	case "stateful":
		opts.SessionTimeout = o.IdleTimeout
		notes = fmt.Sprintf("sessions, JSONResponse: %v, SessionTimeout: %v", opts.JSONResponse, o.IdleTimeout)
	default:
		return serve.Built{}, fmt.Errorf("unknown mode %q", o.Mode)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts)
	return serve.Built{Handler: h, Notes: notes}, nil
}

func main() { serve.Main("go-sdk", mode, build) }
