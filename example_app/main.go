// Command example_app is a small team task board, an ordinary chi
// application that added saguaro: its own JSON API at /api, the same tasks
// over MCP at /mcp, a live feed at /events and a dashboard at /, with JWT
// auth and request logging. Run it from the repository's root with
//
//	go run ./example_app [-addr 127.0.0.1:8080] [-data board.db | -db postgres://…] [-redis URL] [-debug-addr 127.0.0.1:6060]
//
// /healthz is its liveness check (the process answers), /readyz its
// readiness: 503 from the start of a shutdown and while its database or
// (with -redis) Redis does not answer within a second, 200 otherwise.
//
// SIGTERM (or SIGINT) shuts it down within -shutdown-timeout (default
// 20 s, under the 30 s an orchestrator such as Kubernetes waits by
// default): /readyz turns 503 at once and stays so for -drain-delay
// while everything is still served, so that the load balancer takes the
// replica out; then the MCP sessions are released (with -redis, another
// replica takes each over), event streams end, calls in flight finish,
// the listener closes and the stores are closed. The exit status is 0
// when all of it finished in time, 1 otherwise; a second signal exits at
// once with 1.
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
	dbURL := flag.String("db", "", "PostgreSQL URL to keep the board in (postgres://…), shared by replicas; instead of -data (default $"+databaseEnv+")")
	redisURL := flag.String("redis", "", "share MCP sessions with the other replicas on this Redis (redis://host:port/db, or a Redis Cluster as redis://host:port?addr=host2:port2&addr=host3:port3) (default $"+redisEnv+")")
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
	shutdownTimeout := flag.Duration("shutdown-timeout", 20*time.Second, "bound the whole shutdown after SIGTERM or SIGINT: drain delay, MCP sessions released, streams ended, calls drained, stores closed; keep it under the orchestrator's grace period")
	drainDelay := flag.Duration("drain-delay", 3*time.Second, "at shutdown, answer /readyz 503 for this long, still serving everything, before anything stops (the load balancer takes the replica out meanwhile); part of -shutdown-timeout")
	stdio := flag.Bool("stdio", false, "serve MCP over stdio instead of HTTP (for clients that start the app themselves); the user is $"+userEnv+" or $USER")
	flag.Parse()
	if *dbURL == "" {
		*dbURL = os.Getenv(databaseEnv)
	}
	if *redisURL == "" {
		*redisURL = os.Getenv(redisEnv)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if *shutdownTimeout <= 0 || *drainDelay < 0 || *drainDelay >= *shutdownTimeout {
		logger.Error("example_app: -shutdown-timeout must be positive and longer than -drain-delay")
		os.Exit(2)
	}
	ctx, stop := signalContext(logger)
	defer stop()

	if *data != "" && *dbURL != "" {
		logger.Error("example_app: -data and -db exclude each other")
		os.Exit(2)
	}
	if *stdio {
		// Standard output carries the protocol: nothing else is printed.
		if err := serveStdio(ctx, *data, *dbURL, *shutdownTimeout, logger); err != nil {
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
		BodyTimeout: *bodyTimeout, WriteTimeout: *writeTimeout, SessionIdle: *sessionIdle, ConnIdle: *connIdle,
		ShutdownTimeout: *shutdownTimeout, DrainDelay: *drainDelay}
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
	cfg.KeySecret = os.Getenv(keySecretEnv)
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

// signalContext is a context that ends at the first SIGTERM or SIGINT;
// a second one exits the process at once, with status 1.
func signalContext(logger *slog.Logger) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if _, ok := <-sigs; !ok {
			return
		}
		cancel()
		if sig, ok := <-sigs; ok {
			logger.Error("example_app: second signal during the shutdown; exiting now", slog.String("signal", sig.String()))
			os.Exit(1)
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(sigs)
		cancel()
	}
}

// passwordEnv sets the password of the user "demo" of the login page.
const passwordEnv = "EXAMPLE_PASSWORD"

// databaseEnv and redisEnv are the defaults of -db and -redis, so that
// an orchestrator can pass the stores' URLs, which carry credentials,
// from its secrets rather than on the command line.
const (
	databaseEnv = "EXAMPLE_DATABASE_URL"
	redisEnv    = "EXAMPLE_REDIS_URL"
)

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

// serve serves the app on ln until ctx ends, then shuts down within
// cfg.ShutdownTimeout (see shutdown); it returns errShutdownIncomplete
// when something did not finish in time.
func serve(ctx context.Context, ln net.Listener, cfg config, logger *slog.Logger) error {
	if cfg.ConnIdle <= 0 {
		cfg.ConnIdle = 2 * time.Minute
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 20 * time.Second
	}
	a, err := newApp(ctx, cfg, logger)
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if !closed {
			a.Close()
		}
	}()
	if err := greet(ctx, a); err != nil {
		return err
	}

	// Requests derive their context from this one: cancelling it at the
	// end of a shutdown cuts what still runs, so that every handler
	// answers (a cancelled call says so) before the server closes.
	base, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	srv := &http.Server{
		Handler:           a.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       cfg.ConnIdle,
		// No WriteTimeout: it would cut long-lived streams. The
		// controller and sse packages bound each write instead.
		BaseContext: func(net.Listener) context.Context { return base },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	debugDone := make(chan error, 1)
	if cfg.Debug != nil {
		go func() { debugDone <- a.serveDebug(base, cfg.Debug) }()
	} else {
		debugDone <- nil
	}
	defer func() {
		cancelBase()
		if err := <-debugDone; err != nil {
			logger.Warn("example_app", slog.Any("error", err))
		}
	}()

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	err = a.shutdown(srv, errc, cancelBase)
	closed = true
	return err
}

// errShutdownIncomplete is what serve returns when the shutdown left
// something undone within its timeout (the log says what): calls cut,
// sessions not released, stores not closed.
var errShutdownIncomplete = errors.New("the shutdown left work undone (see the errors above)")

// shutdown stops the app within cfg.ShutdownTimeout, in the order an
// orchestrator's load balancer needs:
//
//  1. /readyz answers 503 (the endpoint drains) while everything is
//     still served, for cfg.DrainDelay, so that the balancer stops
//     sending new requests here;
//  2. the MCP endpoint shuts down, until three quarters of the time left:
//     its sessions released (with -redis another replica takes each
//     over), their event streams ended, their calls in flight finished;
//  3. the live feeds end, the listener closes, and the requests in
//     flight get until an eighth of the time is left; then their base
//     context is cancelled so that each answers, and the connections
//     still open are closed;
//  4. the stores close (Redis, the database) in what remains.
//
// Whatever is not done in time is left behind, as a crash would leave
// it, and shutdown returns errShutdownIncomplete.
func (a *app) shutdown(srv *http.Server, errc <-chan error, cancelBase func()) error {
	cfg, logger := a.cfg, a.logger
	start := time.Now()
	deadline := start.Add(cfg.ShutdownTimeout)
	late := false
	step := func(what string, err error) {
		if err != nil {
			late = true
			logger.Error("shutdown: "+what, slog.Any("error", err))
		}
	}
	a.endpoint.Drain()
	logger.Info("shutting down: /readyz answers 503", slog.Duration("drain_delay", cfg.DrainDelay), slog.Duration("timeout", cfg.ShutdownTimeout))
	time.Sleep(min(cfg.DrainDelay, time.Until(deadline)))

	left := time.Until(deadline)
	epCtx, cancel := context.WithDeadline(context.Background(), deadline.Add(-left/4))
	step("MCP sessions", a.endpoint.Shutdown(epCtx))
	cancel()
	a.hub.Close() // the live feeds end: their clients come back elsewhere

	srvCtx, cancel := context.WithDeadline(context.Background(), deadline.Add(-left/8))
	err := srv.Shutdown(srvCtx)
	cancel()
	if err != nil {
		// Cut what still runs: each handler answers, then the server
		// gets what is left to write it.
		cancelBase()
		lastCtx, cancel := context.WithDeadline(context.Background(), deadline.Add(-left/16))
		err = srv.Shutdown(lastCtx)
		cancel()
		if err != nil {
			_ = srv.Close()
		}
		step("requests in flight", errors.New("still running at their deadline: cancelled"))
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		step("server", err)
	}

	closed := make(chan struct{})
	go func() {
		a.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(time.Until(deadline)):
		step("closing the stores", errors.New("not closed in time"))
	}
	if late {
		return errShutdownIncomplete
	}
	logger.Info("shut down", slog.Duration("took", time.Since(start).Round(time.Millisecond)))
	return nil
}
