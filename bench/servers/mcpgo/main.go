// Command mcpgo serves the echo tool with github.com/mark3labs/mcp-go,
// written the way its README does it: a typed tool (mcp.WithInputSchema[T]
// and mcp.NewTypedToolHandler) on an MCPServer with input schema validation
// turned on (it is opt-in in mcp-go), behind server.NewStreamableHTTPServer.
//
// Modes: "stdio" (StdioServer.Listen), "stateless" (WithStateLess) and
// "stateful" (WithStateful, the
// in-memory session manager, with WithSessionIdleTTL from -idle-timeout).
// mcp-go answers a tools/call with application/json unless the tool emits
// notifications.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/saguaro-go/saguaro/bench/internal/serve"
)

var mode = "stateless"

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo back"`
}

func echo(_ context.Context, _ mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultText(in.Text), nil
}

// progress sends serve.ProgressSteps progress notifications for the call's
// token (when it has one), then answers like echo.
func progress(ctx context.Context, req mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, error) {
	if m := req.Params.Meta; m != nil && m.ProgressToken != nil {
		srv := server.ServerFromContext(ctx)
		for i := 1; i <= serve.ProgressSteps; i++ {
			err := srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
				"progressToken": m.ProgressToken, "progress": i, "total": serve.ProgressSteps,
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return echo(ctx, req, in)
}

func build(o serve.Options) (serve.Built, error) {
	s := server.NewMCPServer("bench-mcpgo", "1.0.0",
		server.WithToolCapabilities(false),
		server.WithInputSchemaValidation(),
	)
	s.AddTool(mcp.NewTool("echo",
		mcp.WithDescription("echo the text back"),
		mcp.WithInputSchema[echoIn](),
	), mcp.NewTypedToolHandler(echo))
	s.AddTool(mcp.NewTool("progress",
		mcp.WithDescription("report progress, then echo the text back"),
		mcp.WithInputSchema[echoIn](),
	), mcp.NewTypedToolHandler(progress))
	addDocs(s, o.PayloadDocs)

	var opts []server.StreamableHTTPOption
	var notes string
	switch o.Mode {
	case "stdio":
		return serve.Built{
			Stdio: func(ctx context.Context) error {
				return server.NewStdioServer(s).Listen(ctx, os.Stdin, os.Stdout)
			},
			Notes: "NewStdioServer(...).Listen on stdin/stdout, WithInputSchemaValidation()",
		}, nil
	case "stateless":
		opts = append(opts, server.WithStateLess(true))
		notes = "WithStateLess(true), WithInputSchemaValidation()"
	case "stateful":
		opts = append(opts, server.WithStateful(true), server.WithSessionIdleTTL(o.IdleTimeout))
		notes = fmt.Sprintf("WithStateful(true), WithSessionIdleTTL(%v), WithInputSchemaValidation()", o.IdleTimeout)
	default:
		return serve.Built{}, fmt.Errorf("unknown mode %q", o.Mode)
	}
	h := server.NewStreamableHTTPServer(s, opts...)
	return serve.Built{Handler: h, Notes: notes}, nil
}

func main() { serve.Main("mcp-go", mode, build) }
