package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/sse"
)

// userEnv names the user of the stdio mode; USER when it is not set.
const userEnv = "EXAMPLE_USER"

// serveStdio serves the board's MCP server over stdio, for clients that
// start the app as a process of their own (desktop and IDE clients):
// newline-delimited JSON-RPC on standard input and output, logs on
// standard error, no HTTP and no token. The client is the user who
// started the process, so the identity comes from the environment, as the
// MCP specification asks of stdio, and every tool is allowed. The tasks
// live in the same store as the HTTP mode's (-data).
func serveStdio(ctx context.Context, dataFile string, logger *slog.Logger) error {
	store, err := NewStore(dataFile)
	if err != nil {
		return err
	}
	a := &app{logger: logger, hub: sse.NewHub(nil), store: store}
	defer a.hub.Close()
	user := os.Getenv(userEnv)
	if user == "" {
		user = os.Getenv("USER")
	}
	a.mcp = a.newMCPServer(nil)
	return mcp.ServeStdio(ctx, a.mcp, &mcp.ConnOptions{Identity: user, Logger: logger})
}
