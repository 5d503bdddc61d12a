// Command conformance serves the MCP conformance fixture: the tools,
// resources and prompts that the official conformance suite
// (@modelcontextprotocol/conformance) calls, unauthenticated, with
// sessions, at http://ADDR/mcp.
//
//	go run ./example_app/conformance -addr 127.0.0.1:3001
//	npx @modelcontextprotocol/conformance server --url http://127.0.0.1:3001/mcp --suite all
//
// make test runs exactly that (see .ci/conformance.sh).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/saguaro-go/saguaro/mcp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:3001", "address to listen on")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		logger.Error("listen", slog.Any("error", err))
		os.Exit(1)
	}
	fmt.Printf("conformance fixture at http://%s/mcp\n", ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, ln, logger); err != nil {
		logger.Error("serve", slog.Any("error", err))
		os.Exit(1)
	}
}

// handler is the fixture's router: the MCP endpoint at /mcp.
func handler(logger *slog.Logger) http.Handler {
	r := chi.NewRouter()
	r.Mount("/mcp", mcp.Controller(&mcp.Options{
		Handler:  newFixture(logger),
		Sessions: &mcp.SessionOptions{IdleTimeout: 5 * time.Minute},
		Tasks:    &mcp.TaskOptions{PollInterval: 200 * time.Millisecond},
		Logger:   logger,
	}))
	return r
}

func serve(ctx context.Context, ln net.Listener, logger *slog.Logger) error {
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	srv := &http.Server{
		Handler:           handler(logger),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return streams },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	endStreams()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
