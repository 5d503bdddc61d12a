package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/saguaro-go/saguaro/example_app/board"
	"github.com/saguaro-go/saguaro/example_app/database"
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
// MCP specification asks of stdio, and every tool is allowed. The board
// is the HTTP mode's: the SQLite file of -data, or the PostgreSQL of -db,
// whose changes made by the HTTP app reach the stdio client too.
//
// When the client closes standard input, the calls still running finish
// and their answers are written (what still runs shortly before
// shutdownTimeout is cancelled); when ctx ends (SIGTERM), they are
// cancelled at once and their answers written within shutdownTimeout,
// whether or not the client still reads them.
func serveStdio(ctx context.Context, dataFile, dbURL string, shutdownTimeout time.Duration, logger *slog.Logger) error {
	dsn := dataFile
	if dbURL != "" {
		dsn = dbURL
	}
	a, err := newBoardApp(ctx, dsn, logger)
	if err != nil {
		return err
	}
	defer a.Close()
	user := os.Getenv(userEnv)
	if user == "" {
		user = os.Getenv("USER")
	}
	// The user who started the process may read and change the board.
	return mcp.ServeStdio(ctx, a.mcp, &mcp.ConnOptions{Identity: user, Scopes: []string{scopeRead, scopeWrite}, Logger: logger,
		ShutdownTimeout: shutdownTimeout})
}

// newBoardApp is the board and its MCP server alone, without HTTP, auth
// or a cluster: what the stdio mode serves. dsn is database.Open's.
func newBoardApp(ctx context.Context, dsn string, logger *slog.Logger) (_ *app, err error) {
	a := &app{logger: logger, hub: sse.NewHub(nil)}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	if a.db, err = database.Open(ctx, dsn); err != nil {
		return nil, err
	}
	if a.store, err = board.Open(ctx, a.db, logger); err != nil {
		return nil, err
	}
	a.mcp = a.newMCPServer(nil)
	a.unwatch = a.store.Watch(a.boardChanged)
	return a, nil
}
