package mcp

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

// DefaultMaxBodyBytes is the default bound on a POST body (4 MiB).
const DefaultMaxBodyBytes = 4 << 20

// Options configures [Controller]. A nil *Options is not allowed (there is
// no handler to serve); zero fields take the defaults. Controller copies
// the struct and never modifies the caller's.
type Options struct {
	// Handler serves the protocol; usually a *Server. Required.
	Handler Handler

	// Sessions turns on stateful sessions (Mcp-Session-Id), which the
	// GET stream, server→client requests (sampling, elicitation, roots)
	// and resource subscriptions need. nil serves every POST on its own,
	// statelessly: the fastest mode, and enough for tools that only
	// compute.
	Sessions *SessionOptions

	// Cluster shares the sessions with the other replicas of this server
	// (package mcpredis implements it on Redis), so that a plain load
	// balancer with no stickiness can spread one session's requests over
	// them; see Cluster for what moves and what is lost when a replica
	// dies. It implies Sessions (with the defaults when Sessions is nil).
	// nil keeps sessions in this process.
	Cluster Cluster

	// JSONResponse answers every POST with application/json, even when
	// the client accepts an event stream; progress and log notifications
	// of such a call are then dropped, and server→client requests go to
	// the session's GET stream. Default false: a call that emits anything
	// before its result is answered as an event stream.
	JSONResponse bool

	// MaxBodyBytes bounds a POST body (413 beyond it); default
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64

	// AllowedOrigins lists the browser origins ("https://app.example.com")
	// allowed besides the endpoint's own. A request whose Origin is
	// present and neither its own (scheme-less comparison with Host) nor
	// listed, nor loopback while the endpoint listens on loopback, is
	// answered 403. "*" allows every origin: do not use it on an endpoint
	// that relies on cookies or on being local.
	AllowedOrigins []string

	// AllowedHosts lists Host header values (host or host:port) accepted
	// while the endpoint listens on a loopback address, besides
	// localhost, 127.0.0.1 and [::1]. Anything else is answered 403: a web
	// page on another site that resolves its own name to 127.0.0.1 (DNS
	// rebinding) cannot reach a local endpoint. Behind a local reverse
	// proxy, list the public host names here.
	AllowedHosts []string

	// Identity returns who is calling, such as auth.Identity (the
	// verified token's issuer and subject). A session is bound to the
	// identity of the request that created it; a request with another
	// identity is answered 404, as if the session did not exist. nil
	// means everyone is anonymous and sessions are bound to nobody.
	Identity func(*http.Request) string

	// Authorize decides, per request, whether the caller may make it:
	// method is the JSON-RPC method and name the tool (tools/call), prompt
	// (prompts/get) or resource URI (resources/read and subscriptions) it
	// is about, "" for other methods. nil lets the request through; an
	// http.Handler writes the refusal instead, in the app's own words,
	// e.g. a 403 insufficient_scope challenge:
	//
	//	Authorize: func(r *http.Request, method, name string) http.Handler {
	//		if method == "tools/call" && writeTools[name] {
	//			if err := auth.CheckScopes(r, "tasks:write"); err != nil {
	//				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { auth.WriteError(w, r, err) })
	//			}
	//		}
	//		return nil
	//	}
	//
	// It runs after the body is decoded and before the call is
	// dispatched, for requests only (notifications and responses carry no
	// work to refuse); its verdict ends the request, so an event stream
	// never starts. In a batch (2025-03-26) every request is asked, and
	// one refusal refuses the whole batch. nil allows everything the
	// route's middleware allowed.
	Authorize func(r *http.Request, method, name string) http.Handler

	// Attrs receives log attributes about each call (method, id, tool,
	// session, revision, error code), from any goroutine; set it to
	// middleware.SetAttrs to get them on the request's log line. The keys
	// are the Attr… constants.
	Attrs func(ctx context.Context, attrs ...slog.Attr)

	// Logger receives handler panics, hidden handler errors and transport
	// trouble; default slog.Default().
	Logger *slog.Logger

	// WriteTimeout bounds each write to a client; default 10s.
	WriteTimeout time.Duration

	// The 2026-07-28 revision (stateless, served on the same endpoint;
	// see the package documentation).

	// StateKeys seal the requestState of input_required results: the
	// first key seals, every key opens (rotation: put the new key first,
	// drop the old one after StateTTL). nil means a random key per
	// process: state then does not survive a restart or cross replicas.
	// See EngineOptions.StateKeys.
	StateKeys [][]byte
	// StateTTL bounds how long a client may take to answer an
	// input_required result; default 10 minutes.
	StateTTL time.Duration
	// CacheHints sets the caching hints (ttlMs, cacheScope) of cacheable
	// results by method; default ttlMs 0, private. See CacheHint.
	CacheHints map[string]CacheHint
	// Tasks enables the tasks extension (io.modelcontextprotocol/tasks);
	// nil leaves it off. See TaskOptions and Tool.TaskSupport.
	Tasks *TaskOptions
	// Listen bounds subscriptions/listen streams; nil means defaults.
	Listen *ListenOptions
}

// Log attribute keys passed to [Options.Attrs]. They are the same strings
// as the middleware package's MCP…Key constants.
const (
	AttrMethod    = "mcp.method"
	AttrID        = "mcp.id"
	AttrTool      = "mcp.tool"
	AttrPrompt    = "mcp.prompt"
	AttrResource  = "mcp.resource"
	AttrSession   = "mcp.session"
	AttrRevision  = "mcp.revision"
	AttrErrorCode = "mcp.error_code"
)
