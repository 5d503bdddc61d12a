// Command example_app is a small team task board, an ordinary chi
// application that added saguaro: its own JSON API at /api, the same tasks
// over MCP at /mcp, a live feed at /events and a dashboard at /, with JWT
// auth and request logging. Run it from the repository's root with
//
//	go run ./example_app [-addr 127.0.0.1:8080] [-data board.db | -db postgres://…] [-redis URL] [-debug-addr 127.0.0.1:6060]
//
// The board lives in a database: an SQLite file (-data; in memory without
// it), or PostgreSQL (-db), which replicas share: a change made on any
// replica reaches every replica's /events feed and every MCP session.
//
// With -stdio it serves the same board's MCP server over stdio instead,
// for desktop and IDE clients that start it as a process of their own
// (the README has the client configuration).
//
// With -redis, its MCP sessions live on Redis (package mcpredis), so that
// several replicas of it can run side by side behind one load balancer
// with no stickiness; see the README.
//
// It is its own OAuth 2.1 authorization server (package oauth): MCP
// clients find it through the protected resource metadata and sign people
// in on its login page (-dev-login approves everyone as one user). It also
// prints a development token (1 hour, all scopes) for curl; see the
// README's quickstart.
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
	"strings"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	data := flag.String("data", "", "SQLite file to keep the board in (default: in memory)")
	dbURL := flag.String("db", "", "PostgreSQL URL to keep the board in (postgres://…), shared by replicas; instead of -data")
	redisURL := flag.String("redis", "", "share MCP sessions with the other replicas on this Redis (redis://host:port/db)")
	redisPrefix := flag.String("redis-prefix", "saguaro-example:", "with -redis: the key prefix the replicas share")
	advertise := flag.String("advertise", "", "with -redis: this replica's base URL as the other replicas reach it (default http://<listen addr>)")
	printToken := flag.Bool("dev-token", true, "print a development access token (1 hour, all scopes) for curl")
	devLogin := flag.Bool("dev-login", false, "development: approve every OAuth sign-in as user \"dev\", without a login page")
	resetPassword := flag.Bool("reset-password", false, "give the login page's user \"demo\" a new password and print it (unless $"+passwordEnv+" sets it)")
	debugAddr := flag.String("debug-addr", "", "serve expvar, pprof and a forced GC (POST /debug/gc) on this address, e.g. 127.0.0.1:6060; off when empty; never expose it")
	sessionIdle := flag.Duration("session-idle", 30*time.Minute, "end an MCP session after this long without a request or an open stream")
	bodyTimeout := flag.Duration("body-timeout", 30*time.Second, "cut a client whose request body takes longer than this to arrive (408)")
	writeTimeout := flag.Duration("write-timeout", 10*time.Second, "cut a stream or answer whose client takes longer than this to take one write")
	connIdle := flag.Duration("conn-idle", 2*time.Minute, "close a keep-alive connection after this long without a request")
	stdio := flag.Bool("stdio", false, "serve MCP over stdio instead of HTTP (for clients that start the app themselves); the user is $"+userEnv+" or $USER")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *data != "" && *dbURL != "" {
		logger.Error("example_app: -data and -db exclude each other")
		os.Exit(2)
	}
	if *stdio {
		// Standard output carries the protocol: nothing else is printed.
		if err := serveStdio(ctx, *data, *dbURL, logger); err != nil {
			logger.Error("example_app stopped", slog.Any("error", err))
			os.Exit(1)
		}
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		logger.Error("example_app cannot listen", slog.Any("error", err))
		os.Exit(1)
	}
	cfg := config{BaseURL: "http://" + ln.Addr().String(), Database: *data, RedisURL: *redisURL, RedisPrefix: *redisPrefix,
		PrintToken: *printToken, Password: os.Getenv(passwordEnv),
		BodyTimeout: *bodyTimeout, WriteTimeout: *writeTimeout, SessionIdle: *sessionIdle, ConnIdle: *connIdle}
	if *debugAddr != "" {
		if cfg.Debug, err = net.Listen("tcp", *debugAddr); err != nil {
			logger.Error("example_app cannot listen for debugging", slog.Any("error", err))
			os.Exit(1)
		}
		fmt.Printf("debug listener on http://%s/debug/\n", cfg.Debug.Addr())
	}
	if *dbURL != "" {
		cfg.Database = *dbURL
	}
	cfg.ResetPassword = *resetPassword
	if *devLogin {
		cfg.DevUser = "dev"
	}
	cfg.ReplicaURL = cfg.BaseURL
	if *advertise != "" {
		cfg.ReplicaURL = strings.TrimRight(*advertise, "/")
	}
	if s := os.Getenv(baseURLEnv); s != "" {
		// Replicas behind one load balancer share its URL: the
		// tokens' audience and the metadata name it.
		cfg.BaseURL = strings.TrimRight(s, "/")
	}
	if cfg.ReplicaURL != cfg.BaseURL {
		fmt.Printf("example_app replica on %s, one of those behind %s\n", cfg.ReplicaURL, cfg.BaseURL)
	}
	fmt.Printf("example_app listening on %s (dashboard %s/, MCP %s/mcp)\n", cfg.BaseURL, cfg.BaseURL, cfg.BaseURL)
	if err := serve(ctx, ln, cfg, logger); err != nil {
		logger.Error("example_app stopped", slog.Any("error", err))
		os.Exit(1)
	}
}

// passwordEnv sets the password of the user "demo" of the login page.
const passwordEnv = "EXAMPLE_PASSWORD"

// greet prints how to sign in, and a development token when asked.
func greet(ctx context.Context, a *app) error {
	if err := printSignIn(ctx, os.Stdout, a); err != nil {
		return err
	}
	if a.cfg.PrintToken {
		token, err := a.oauth.DevToken(ctx, "dev", scopeRead+" "+scopeWrite, time.Hour)
		if err != nil {
			return err
		}
		fmt.Printf("dev token (1 hour, scopes %s %s):\nexport TOKEN=%s\n", scopeRead, scopeWrite, token)
	}
	return nil
}

// serve serves the app on ln until ctx ends, then shuts down gracefully:
// live streams are told to end, in-flight requests get a few seconds to
// finish.
func serve(ctx context.Context, ln net.Listener, cfg config, logger *slog.Logger) error {
	if cfg.ConnIdle <= 0 {
		cfg.ConnIdle = 2 * time.Minute
	}
	a, err := newApp(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer a.Close()
	if err := greet(ctx, a); err != nil {
		return err
	}

	// Streams derive their context from this one, so cancelling it at
	// shutdown ends every live loop with a Disconnect; http.Server's
	// Shutdown alone would wait for them forever.
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	srv := &http.Server{
		Handler:           a.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       cfg.ConnIdle,
		// No WriteTimeout: it would cut long-lived streams. The
		// controller and sse packages bound each write instead.
		BaseContext: func(net.Listener) context.Context { return streams },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	debugDone := make(chan error, 1)
	if cfg.Debug != nil {
		go func() { debugDone <- a.serveDebug(streams, cfg.Debug) }()
	} else {
		debugDone <- nil
	}
	defer func() {
		endStreams()
		if err := <-debugDone; err != nil {
			logger.Warn("example_app", slog.Any("error", err))
		}
	}()

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	// MCP sessions end first (their clients hear 404 and start over; with
	// -redis they are released instead, and the next request, on another
	// replica, takes each over), then every live stream, then the server
	// waits for what is in flight.
	_ = a.endpoint.Shutdown(context.Background())
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
