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
}

// dashboardClient is the OAuth client id of the app's own dashboard.
const dashboardClient = "dashboard"

// baseURLEnv names the public base URL of replicas behind a load
// balancer (the tokens' audience is its /mcp).
const baseURLEnv = "EXAMPLE_BASE_URL"

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
}

func newApp(ctx context.Context, cfg config, logger *slog.Logger) (_ *app, err error) {
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = 30 * time.Second
	}
	a := &app{cfg: cfg, logger: logger, hub: sse.NewHub(nil)}
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
	a.verifier, err = auth.NewVerifier(ctx, &auth.Options{
		Resource: cfg.BaseURL + "/mcp",
		Issuer:   a.oauth.Issuer(),
		JWKS: &auth.JWKSOptions{
			URL:                 a.oauth.JWKSURL(),
			Client:              a.oauth.KeysClient(),
			Algorithms:          []string{"ES256"},
			RequireInitialFetch: true,
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
		Identity:     auth.Identity,
		Limits:       &mcp.Limits{BodyTimeout: cfg.BodyTimeout},
		Authorize:    a.authorizeMCP,
		Attrs:        middleware.SetAttrs,
		Logger:       logger,
		WriteTimeout: cfg.WriteTimeout,
		Telemetry:    a.tel.mcp,
	})
	return a, nil
}

// writeTools are the tools that change the board: they need tasks:write,
// the rest of MCP tasks:read.
var writeTools = map[string]bool{"add_task": true, "complete_task": true, "import_tasks": true}

// authorizeMCP refuses a write tool to a token without tasks:write, with
// the 403 insufficient_scope challenge the auth package writes, so an MCP
// client can ask for the scope (step-up authorization).
func (a *app) authorizeMCP(r *http.Request, method, name string) http.Handler {
	if method != "tools/call" || !writeTools[name] {
		return nil
	}
	if err := auth.CheckScopes(r, scopeWrite); err != nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { auth.WriteError(w, r, err) })
	}
	return nil
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

// Handler is the app's router: an ordinary chi app (its dashboard and JSON
// API) with saguaro's MCP endpoint and live feed mounted on it.
func (a *app) Handler() http.Handler {
	r := chi.NewRouter()
	r.Use(chimw.RequestID, chimw.ClientIPFromRemoteAddr, middleware.RequestLogger(a.logger, nil), chimw.Recoverer)

	// Public: health, the dashboard, its live feed, and the RFC 9728
	// metadata MCP clients read to learn how to get a token.
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok\n"))
	})
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
	r.Mount("/events", a.eventRoutes())

	// Token required: the JSON API and MCP.
	r.Group(func(r chi.Router) {
		r.Use(a.verifier.Handler)
		r.With(slowBodies).Mount("/api", a.apiRoutes())
		r.With(auth.RequireScopes(scopeRead)).Mount("/mcp", a.endpoint)
	})
	return r
}
