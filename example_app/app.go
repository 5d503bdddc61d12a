package main

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httplog/v3"
	"github.com/redis/go-redis/v9"

	"github.com/saguaro-go/saguaro/auth"
	"github.com/saguaro-go/saguaro/example_app/board"
	"github.com/saguaro-go/saguaro/example_app/database"
	"github.com/saguaro-go/saguaro/example_app/oauth"
	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcp/cluster"
	"github.com/saguaro-go/saguaro/mcpredis"
	"github.com/saguaro-go/saguaro/middleware"
	"github.com/saguaro-go/saguaro/sse"
)

//go:embed static
var staticFiles embed.FS

// config is what the app needs to start.
type config struct {
	// BaseURL is where the app is reached, e.g. http://127.0.0.1:8080;
	// the MCP endpoint's canonical URL (the tokens' audience) is
	// BaseURL+"/mcp".
	BaseURL string
	// DevUser, when set, makes the authorization server approve every
	// sign-in for this user without a page (tests, the quickstart).
	DevUser string
	// Password, when set, is the password of the login page's user
	// "demo"; PrintToken prints a development token at start.
	Password   string
	PrintToken bool
	// ResetPassword gives "demo" a new password at start (see
	// printSignIn), unless Password sets it.
	ResetPassword bool
	// Database is where the board lives: a PostgreSQL URL
	// (postgres://…), shared by replicas, or the path of an SQLite file;
	// "" is an SQLite database in memory.
	Database string
	// RedisURL, when set, shares the MCP sessions with the other
	// replicas on Redis; ReplicaURL is this replica's base URL as they
	// reach it (BaseURL is the load balancer's).
	RedisURL    string
	RedisPrefix string // the replicas' shared key prefix
	ReplicaURL  string
	// BodyTimeout bounds how long a request body may take to arrive,
	// on every route (408 beyond it); default 30 s.
	BodyTimeout time.Duration
	// WriteTimeout bounds each write to a client of the MCP endpoint and
	// the live feed (a client that stops reading is cut); default 10 s.
	WriteTimeout time.Duration
	// SessionIdle ends an MCP session after this long without a request
	// or an open stream; default 30 minutes.
	SessionIdle time.Duration
	// ConnIdle closes a keep-alive connection after this long without a
	// request; default 2 minutes.
	ConnIdle time.Duration
	// Debug, when set, serves expvar, net/http/pprof and a forced
	// collection (see debugHandler) on this listener, apart from the app.
	Debug net.Listener
	// KeySecret, when set, encrypts the authorization server's signing
	// keys in the database (oauth.Options.KeySecret); from
	// $EXAMPLE_KEY_SECRET.
	KeySecret string
	// FeedPerClient and FeedTotal bound the open /events streams, per
	// client address and in all (429 beyond); defaults 32 and 1024.
	FeedPerClient, FeedTotal int
	// ShutdownTimeout bounds the whole shutdown; default 20 s.
	// DrainDelay is how long /readyz answers 503 before anything stops
	// (part of ShutdownTimeout); default none.
	ShutdownTimeout time.Duration
	DrainDelay      time.Duration
}

// dashboardClient is the OAuth client id of the app's own dashboard.
const dashboardClient = "dashboard"

// baseURLEnv names the public base URL of replicas behind a load
// balancer (the tokens' audience is its /mcp).
const baseURLEnv = "EXAMPLE_BASE_URL"

// keySecretEnv names the secret the signing keys are encrypted with in
// the database (config.KeySecret); every replica needs the same one.
const keySecretEnv = "EXAMPLE_KEY_SECRET"

// app holds what the routes share.
type app struct {
	cfg      config
	logger   *slog.Logger
	hub      *sse.Hub
	db       *database.DB
	store    board.Store
	verifier *auth.Verifier
	oauth    *oauth.Server
	mcp      *boardHandler
	endpoint *mcp.Endpoint
	// With -redis: the cluster and its client.
	cluster *mcpredis.Cluster
	rdb     redis.UniversalClient
	unwatch func()
	// tel is the MCP endpoint's telemetry (/metrics, OTLP, the chart);
	// stopChart ends the chart's feed.
	tel       *telemetry
	stopChart func()
	// feeds bounds the open /events streams.
	feeds *feedLimit
	// boardSig wakes the board view's watch_board calls.
	boardSig boardSignal
}

func newApp(ctx context.Context, cfg config, logger *slog.Logger) (_ *app, err error) {
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = 30 * time.Second
	}
	a := &app{cfg: cfg, logger: logger, hub: sse.NewHub(nil), feeds: newFeedLimit(cfg.FeedPerClient, cfg.FeedTotal)}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	if a.db, err = database.Open(ctx, cfg.Database); err != nil {
		return nil, err
	}
	if a.store, err = board.Open(ctx, a.db, logger); err != nil {
		return nil, err
	}
	a.oauth, err = oauth.New(ctx, a.db, oauth.Options{
		Issuer:            cfg.BaseURL,
		Resource:          cfg.BaseURL + "/mcp",
		Scopes:            []string{scopeRead, scopeWrite},
		DefaultScopes:     []string{scopeRead},
		Implied:           map[string][]string{scopeWrite: {scopeRead}},
		ScopeDescriptions: map[string]string{scopeRead: "see the board's tasks", scopeWrite: "add, complete and delete tasks"},
		DevUser:           cfg.DevUser,
		Logger:            logger,
		KeySecret:         cfg.KeySecret,
	})
	if err != nil {
		return nil, err
	}
	// The dashboard signs people in from the browser (code flow, PKCE).
	if err := a.oauth.RegisterPublicClient(ctx, dashboardClient, "Task board dashboard", []string{cfg.BaseURL + "/"}); err != nil {
		return nil, err
	}
	// Tokens are the authorization server's ES256 JWTs, checked against
	// its published key set (read in process: see oauth.KeysClient).
	// Reading it is one query, so the verifier reads it every minute and
	// at once (at most every second) when a token names a key it does
	// not know: a key rotated in by another replica is known within a
	// second of its first token.
	a.verifier, err = auth.NewVerifier(ctx, &auth.Options{
		Resource: cfg.BaseURL + "/mcp",
		Issuer:   a.oauth.Issuer(),
		JWKS: &auth.JWKSOptions{
			URL:                 a.oauth.JWKSURL(),
			Client:              a.oauth.KeysClient(),
			Algorithms:          []string{"ES256"},
			RequireInitialFetch: true,
			RefreshInterval:     time.Minute,
			RefreshRateLimit:    time.Second,
		},
	})
	if err != nil {
		return nil, err
	}
	var keys [][]byte
	if cfg.RedisURL != "" {
		if err := a.joinCluster(ctx); err != nil {
			return nil, err
		}
		// Every replica seals and opens the same cursors and
		// requestState.
		k, err := a.cluster.SharedKey(ctx, "seal", 32)
		if err != nil {
			return nil, err
		}
		keys = [][]byte{k}
	}
	if a.tel, err = newTelemetry(ctx); err != nil {
		return nil, err
	}
	a.stopChart = a.chartFeed(context.WithoutCancel(ctx))
	a.mcp = a.newMCPServer(keys)
	a.unwatch = a.store.Watch(a.boardChanged)
	var cl cluster.Cluster // nil unless on Redis: a nil *mcpredis.Cluster is not a nil interface
	if a.cluster != nil {
		cl = a.cluster
	}
	a.endpoint = mcp.Controller(&mcp.Options{
		Cluster: cl,
		Handler: a.mcp,
		Sessions: &mcp.SessionOptions{
			IdleTimeout: cfg.SessionIdle,
			OnOpen: func(_ *http.Request, id string) {
				a.activity(map[string]any{"kind": "session opened", "session": id})
			},
			OnClose: func(id string, why mcp.CloseReason) {
				a.activity(map[string]any{"kind": "session closed", "session": id, "reason": why})
			},
		},
		Identity: auth.Identity,
		Limits:   &mcp.Limits{BodyTimeout: cfg.BodyTimeout},
		// The token's scopes decide who may call the write tools
		// (writeAccess); a reader is asked to step up, with the
		// auth package's challenge, which names the resource
		// metadata a client reads to ask for tasks:write.
		Scopes: auth.Scopes,
		StepUp: func(w http.ResponseWriter, r *http.Request, scopes []string) {
			auth.WriteError(w, r, auth.CheckScopes(r, scopes...))
		},
		Attrs:        httplog.SetAttrs,
		Logger:       logger,
		WriteTimeout: cfg.WriteTimeout,
		Telemetry:    a.tel.mcp,
	})
	return a, nil
}

// joinCluster connects to Redis and joins this replica to the cluster.
func (a *app) joinCluster(ctx context.Context) error {
	rdb, err := mcpredis.NewClient(a.cfg.RedisURL)
	if err != nil {
		return err
	}
	cl, err := mcpredis.New(ctx, rdb, &mcpredis.Options{
		URL:    a.cfg.ReplicaURL + "/mcp",
		Prefix: a.cfg.RedisPrefix,
		Logger: a.logger,
	})
	if err != nil {
		_ = rdb.Close()
		return fmt.Errorf("joining the cluster on %s: %w", a.cfg.RedisURL, err)
	}
	a.rdb, a.cluster = rdb, cl
	return nil
}

// Close ends every live subscription, the verifier, the cluster and the
// database. It is safe on an app newApp left half built.
func (a *app) Close() {
	if a.unwatch != nil {
		a.unwatch()
	}
	if a.stopChart != nil {
		a.stopChart()
	}
	if a.tel != nil {
		a.tel.Close(context.Background())
	}
	a.hub.Close()
	if a.verifier != nil {
		a.verifier.Close()
	}
	if a.oauth != nil {
		a.oauth.Close()
	}
	if a.cluster != nil {
		_ = a.cluster.Close()
		_ = a.rdb.Close()
	}
	if a.store != nil {
		_ = a.store.Close()
	}
	if a.db != nil {
		_ = a.db.Close()
	}
}

// readyTimeout bounds each store's answer to a readiness probe.
const readyTimeout = time.Second

// readyz is the readiness probe: 503 from the start of a shutdown and
// while the database or the session store (-redis) does not answer
// within readyTimeout, 200 otherwise. /healthz stays the liveness
// check: a store that is down is no reason to restart the process.
func (a *app) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	db := make(chan error, 1)
	go func() { db <- a.db.PingContext(ctx) }()
	err := a.endpoint.Ready(ctx)
	if dbErr := <-db; err == nil && dbErr != nil {
		err = fmt.Errorf("the database does not answer: %w", dbErr)
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Cache-Control", "no-store")
	if err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprintf(w, "not ready: %v\n", err)
		return
	}
	_, _ = w.Write([]byte("ready\n"))
}

// Handler is the app's router: an ordinary chi app (its dashboard and JSON
// API) with saguaro's MCP endpoint and live feed mounted on it.
func (a *app) Handler() http.Handler {
	r := chi.NewRouter()
	r.Use(chimw.RequestID, chimw.ClientIPFromRemoteAddr, middleware.Logging(a.logger, nil), securityHeaders)

	// Public: health, the dashboard, its live feed, and the RFC 9728
	// metadata MCP clients read to learn how to get a token.
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok\n"))
	})
	r.Get("/readyz", a.readyz)
	// The MCP endpoint's metrics, for Prometheus to scrape.
	r.Handle("/metrics", a.tel.metrics)
	static, _ := fs.Sub(staticFiles, "static")
	r.Handle("/*", http.FileServerFS(static))
	// The RFC 9728 metadata names the authorization server (this app's
	// own, package oauth), whose endpoints and RFC 8414 metadata are
	// public too.
	md := a.verifier.ResourceMetadata()
	md.ScopesSupported = []string{scopeRead, scopeWrite}
	md.ResourceName = "Team task board"
	must(auth.MountMetadata(r, &md))
	// A client that trickles its body is cut after cfg.BodyTimeout (408),
	// so that slow clients cannot hold connections and goroutines for as
	// long as they like. The MCP endpoint bounds its own bodies
	// (mcp.Limits).
	slowBodies := middleware.BodyTimeout(a.cfg.BodyTimeout)
	r.Group(func(r chi.Router) {
		r.Use(slowBodies)
		a.oauth.Routes(r)
	})
	// The live feed checks Host and Origin as /mcp does (a page on
	// another site, or a DNS-rebound name, gets 403).
	r.With(middleware.OriginCheck(nil)).Mount("/events", a.eventRoutes())

	// Token required: the JSON API and MCP.
	r.Group(func(r chi.Router) {
		r.Use(a.verifier.Handler)
		r.With(slowBodies).Mount("/api", a.apiRoutes())
		r.With(auth.RequireScopes(scopeRead)).Mount("/mcp", a.endpoint)
	})
	return r
}

// securityHeaders sets, on every answer of the app, the headers that keep
// its pages out of other sites' frames (clickjacking: X-Frame-Options and
// CSP frame-ancestors), stop browsers from guessing a content type
// (nosniff), and keep the app's URLs, whose query may carry an OAuth code
// or a sign-in request id, out of the Referer of the pages it links to.
// A handler may set a stricter Content-Security-Policy of its own (the
// login page does).
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}
