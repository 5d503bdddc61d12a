// Command example_app is a small chi application that adds saguaro's live
// endpoints to its routes. Run it with
//
//	go run ./example_app [-addr 127.0.0.1:8080]
//
// and watch the live feed with
//
//	curl -N http://127.0.0.1:8080/events
//
// while another shell broadcasts to every open stream:
//
//	curl -X POST -d 'hello' http://127.0.0.1:8080/events/broadcast
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
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		logger.Error("example_app cannot listen", slog.Any("error", err))
		os.Exit(1)
	}
	fmt.Fprintf(os.Stdout, "example_app listening on http://%s\n", ln.Addr())
	if err := serve(ctx, ln, logger); err != nil {
		logger.Error("example_app stopped", slog.Any("error", err))
		os.Exit(1)
	}
}

// serve serves the app on ln until ctx ends, then shuts down gracefully:
// live streams are told to end, in-flight requests get a few seconds to
// finish.
func serve(ctx context.Context, ln net.Listener, logger *slog.Logger) error {
	app := newApp(logger)
	defer app.Close()

	// Streams derive their context from this one, so cancelling it at
	// shutdown ends every live loop with a Disconnect; http.Server's
	// Shutdown alone would wait for them forever.
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	srv := &http.Server{
		Handler:           app.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// No WriteTimeout: it would cut long-lived streams. The
		// controller and sse packages bound each write instead.
		BaseContext: func(net.Listener) context.Context { return streams },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	endStreams()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
