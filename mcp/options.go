package mcp

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/saguaro-go/saguaro/mcp/cluster"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/streamable"
)

// DefaultMaxBodyBytes is the default bound on a POST body (4 MiB).
const DefaultMaxBodyBytes = 4 << 20

// The defaults of Limits.MaxBatch and Limits.MaxAnswerBytes (and of
// ConnOptions' fields of the same names).
const (
	defaultMaxBatch       = 32
	defaultMaxAnswerBytes = 8 << 20
)

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
	// (package mcpredis provides one on Redis), so that a plain load
	// balancer with no stickiness can spread one session's requests over
	// them; package cluster says what moves and what is lost when a
	// replica dies. It implies Sessions (with the defaults when Sessions
	// is nil). nil keeps sessions in this process (a cluster.Memory with
	// this endpoint as its only replica).
	//
	// An owner runs each session; other replicas relay its requests
	// there; a replica whose owner is gone takes the session over. The
	// answers the transport specification does not give:
	//
	//	session store does not answer                        503, Retry-After: 1, -32603
	//	session store lost its data (restarted empty), until 503, Retry-After: 1, -32603, never 404
	//	  every live replica has recorded its sessions again
	//	session moving between replicas (a race)             503, Retry-After: 1, -32603
	//	owner unreachable for a reason other than being gone 502, -32603
	//	owner accepts a relay and does not answer (stopped)  once its lease lapses: taken over, the
	//	                                                       request served; while it beats: 502,
	//	                                                       -32603 after RequestTimeout + 1 s
	//	owner stops while a relayed event stream is silent   once its lease lapses, the stream is cut
	//	  (no keep-alive for twice KeepAlive)                  (the client resumes where it is taken over)
	//	owner dies while a relayed answer streams            the client's answer is cut (it resumes
	//	                                                       with Last-Event-ID); Warn with replica, session
	//	a relayed request reaching the wrong replica         421 naming the replica that answered (the
	//	                                                       relaying replica then finds the owner
	//	                                                       again, or takes over when it is gone)
	//	resuming a POST stream whose call died with its      200, one event: that call's -32603
	//	  replica (the id names the call)                       error response, then the stream ends
	//	a session whose state cannot move, owner gone        404 (the client initializes again)
	//	a session's request that would start something       503, Retry-After: 1, Connection: close,
	//	  (call, stream, initialize, DELETE) reaching a        -32603 (its retry reaches another replica,
	//	  replica shutting down (Endpoint.Shutdown)            which takes the session over)
	//	a call still running when Shutdown's ctx is about    -32603 "Request cancelled"
	//	  to end
	//
	// Registry changes announced on one replica reach every replica's
	// sessions and subscriptions/listen streams; changes of one kind made
	// close together, on one replica or several, may reach them as one
	// notification (the store decides: mcpredis waits ChangeWindow). Each
	// replica must register the same tools, resources and prompts, and
	// seal with the same ServerOptions.Keys. The 2026-07-28 revision is stateless and
	// needs no relay, except for its tasks, which live in the process
	// that runs them: their ids name that replica, and tasks/get,
	// tasks/update, tasks/cancel and subscriptions/listen with taskIds
	// are relayed there (a task whose replica is gone is unknown,
	// -32602). Endpoint.Ready reports the store's health, and
	// Endpoint.Shutdown releases this replica's sessions for the others.
	Cluster cluster.Cluster

	// JSONResponse answers every POST with application/json, even when
	// the client accepts an event stream; progress and log notifications
	// of such a call are then dropped, and server→client requests go to
	// the session's GET stream. Default false: a call that emits anything
	// before its result is answered as an event stream.
	JSONResponse bool

	// MaxBodyBytes bounds a POST body (413 beyond it); default
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64

	// AllowedOrigins and AllowedHosts configure the Origin and Host rule
	// every request passes first (403 otherwise), the same rule as the
	// middleware package's OriginCheck:
	//
	//   - Host: on a connection that arrived at a loopback address, the
	//     Host must name the loopback interface (localhost, 127.0.0.1,
	//     [::1], any port) or be listed in AllowedHosts, so that a web
	//     page on another site that resolves its own name to 127.0.0.1
	//     (DNS rebinding) cannot reach a local endpoint. With AllowedHosts
	//     set, every Host must be listed or loopback on a loopback
	//     connection. An entry is "name" (any port) or "name:port".
	//   - Origin: absent passes (not a browser); present, it must be the
	//     endpoint's own (the Host header's host and port), listed in
	//     AllowedOrigins as "scheme://host[:port]", or loopback on a
	//     loopback connection. "*" allows every origin: do not use it on
	//     an endpoint that relies on cookies or on being local.
	AllowedOrigins []string
	AllowedHosts   []string

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

	// Scopes returns the scopes the caller holds, such as auth.Scopes
	// (the verified token's): they decide which tools, resources and
	// prompts with Access.Scopes the caller sees and may use. nil means
	// no caller holds any.
	Scopes func(ctx context.Context) []string

	// StepUp writes the answer to a call of a tool, prompt or resource
	// the caller sees but lacks the Access.Scopes of (scopes): the MCP
	// authorization spec's step-up challenge, sent before the call is
	// dispatched. nil answers 403 with WWW-Authenticate: Bearer
	// error="insufficient_scope", scope="…" and the call's JSON-RPC
	// error. To answer as the auth package does, whose challenge also
	// names the resource metadata (resource_metadata):
	//
	//	StepUp: func(w http.ResponseWriter, r *http.Request, scopes []string) {
	//		auth.WriteError(w, r, auth.CheckScopes(r, scopes...))
	//	},
	//
	// It is used only with Scopes; without a token in play the refusal
	// is the call's JSON-RPC error, as over stdio.
	StepUp func(w http.ResponseWriter, r *http.Request, scopes []string)

	// Attrs receives log attributes about each call (method, id, tool,
	// session, revision, error code, and on a replica that relays the
	// request to its session's owner the owner's id), keyed by the Attr…
	// constants. Set it to httplog.SetAttrs to get them on httplog's
	// request line (github.com/go-chi/httplog/v3, under its RequestLogger
	// or saguaro's middleware.Logging). It is called on the request's
	// goroutine (or one the request waits for), before the handler
	// returns, never concurrently for one request: httplog.SetAttrs is
	// not safe for concurrent use. So a call's error code goes on the
	// line of the request that delivers its answer (a GET that resumed
	// its stream, say), or on none if its client left for good.
	Attrs func(ctx context.Context, attrs ...slog.Attr)

	// Logger receives handler panics, hidden handler errors and transport
	// trouble; default slog.Default().
	Logger *slog.Logger

	// WriteTimeout bounds each write to a client; default 10s.
	WriteTimeout time.Duration

	// KeepAlive is the interval of the keep-alive comments sent on every
	// event stream while it has nothing else to send (session streams,
	// 2026-07-28 call streams, subscriptions/listen); default 25s. Keep
	// it below the idle timeout of every proxy between client and server.
	KeepAlive time.Duration

	// Listen bounds subscriptions/listen streams (2026-07-28); nil means
	// defaults.
	Listen *ListenOptions

	// Limits bounds what one caller may hold at once and how long a
	// request body may take; nil means the defaults, which suit a
	// server on the open internet.
	Limits *Limits

	// Telemetry reports spans and metrics through OpenTelemetry; nil,
	// the default, reports nothing and costs nothing. See [Telemetry].
	Telemetry *Telemetry
}

// Limits bounds what one caller holds at once ([Options.Limits]), so that
// no single client, slow or hostile, can take what the others need. A
// caller is the identity Options.Identity returns or, for a request
// without one, the address it came from: the host of the request's
// RemoteAddr, an IPv6 address counted by its /64. Behind a proxy, put a
// middleware that sets RemoteAddr to the client's address (chi's RealIP,
// with a proxy you trust) in front of the endpoint, or every anonymous
// client counts as the proxy. Each replica of a cluster counts its own.
//
// Zero fields take the defaults; a negative field turns its bound off.
// The defaults suit people and their agents; a service that calls on
// behalf of many users with one identity needs more, or an Identity that
// tells its users apart.
//
// No request makes the server do or hold more than these bounds, Limits'
// and those of the other options, whatever its body says or its handler
// returns; each transport applies the ones that make sense for it
// (Options over HTTP, ConnOptions over stdio). A negative value turns a
// bound off.
//
//	bound                                     default    past it
//	Options.MaxBodyBytes                      4 MiB      413, -32600
//	ConnOptions.MaxMessageBytes               4 MiB      -32600, the line dropped
//	Limits.BodyTimeout                        30 s       408, -32600, connection closed, logged
//	Limits.MaxBatch, ConnOptions.MaxBatch     32         400, one -32600 error, id null; nothing runs
//	Limits.MaxAnswerBytes,                    8 MiB      tools/call: a tool error (isError) saying so;
//	  ConnOptions.MaxAnswerBytes: one answer               other methods -32603; Warn naming the method
//	                                                       and its tool, prompt or resource
//	the same, a batch's answers together      8 MiB      the answer that would pass it -32603
//	                                                       ("dropped"); the requests after it -32603
//	                                                       ("not run"), not run
//	Limits.Calls, per caller                  64         429, Retry-After: 1
//	Limits.Streams, per caller                32         429, Retry-After: 5
//	Limits.Sessions, per caller               256        429, Retry-After: 30
//	SessionOptions.MaxSessions                100,000    503, Retry-After
//	SessionOptions.QueueSize, per session     64         -32603 "Server overloaded"
//	SessionOptions.RequestTimeout             5 min      the call's context ends, -32603
//	SessionOptions.StreamEvents, per stream   128/1 MiB  an absent client loses the oldest
//	ListenOptions.MaxStreams                  10,000     429
//
// A result whose size is known before it is encoded (content blocks,
// resource contents) is refused without being encoded; text is written
// as it is, without HTML escaping (MCP is not HTML: < stays one byte). So
// one caller's answers in memory stay under Limits.Calls ×
// Limits.MaxAnswerBytes (512 MiB with the defaults, far less in
// practice), on top of what its handlers hold; lower both for a server
// whose tools return big results to untrusted callers.
type Limits struct {
	// BodyTimeout bounds how long a POST's body may take to arrive,
	// counted from when the endpoint sees the request. A client that
	// trickles its body is answered 408 Request Timeout, its connection
	// closed, and a warning logged. Default 30s: a body at the default
	// MaxBodyBytes (4 MiB) arrives in under 20 s at 2 Mbit/s, and a
	// trickling client holds its connection and goroutine for no longer.
	// It needs net/http's own ResponseWriter (or wrappers that unwrap to
	// it, as chi's and httplog's do): with another the body is unbounded.
	BodyTimeout time.Duration
	// Calls bounds the POSTs one caller has in flight at once; one more
	// is answered 429 with Retry-After: 1. A POST is in flight until its
	// answer, JSON or event stream, ends. Default 64: an agent runs a few
	// calls at once (parallel tool calls rarely pass ten), and one
	// caller's bodies in memory stay under 64 × MaxBodyBytes.
	Calls int
	// Streams bounds the event streams one caller holds open with no
	// call behind them: sessions' GET streams and subscriptions/listen
	// streams. One more is answered 429 with Retry-After: 5. Default 32:
	// a session has one GET stream (and a resumed call's stream while it
	// replays), a 2026-07-28 client one listen stream or two, so 32
	// covers a person's clients with room to spare, while each stream
	// holds a connection and a goroutine for as long as it lasts.
	Streams int
	// Sessions bounds the live sessions one caller created; an
	// initialize beyond it is answered 429 with Retry-After: 30. Default
	// 256: a person's IDE windows and agents hold a few dozen, and 256
	// lets a script that opens a session on every run and never ends it
	// run every 7 s within the default 30-minute IdleTimeout, while one
	// caller cannot fill SessionOptions.MaxSessions. A session taken
	// over from a replica that died counts, even beyond the bound.
	Sessions int
	// MaxBatch bounds the messages of one 2025-03-26 batch; a longer
	// batch is answered 400 with one -32600 error, and none of it runs.
	// Default 32: clients that batch at all send a handful, and a batch
	// runs its requests one after another on one connection.
	MaxBatch int
	// MaxAnswerBytes bounds the bytes of one answer, whatever the handler
	// returns. A result past it is not sent: a tools/call answers a tool
	// error (isError) that says so, other methods -32603, and the log
	// names the method, tool, prompt or resource. A batch's answers
	// together stay within it too: the answer that would pass it is
	// replaced by an error, and the requests after it are answered with
	// an error without being run. Default 8 MiB, twice MaxBodyBytes' default:
	// with Calls, one caller's answers in memory stay under 64 × 8 MiB.
	MaxAnswerBytes int
}

// orDefault is a bound as the options give it: def for 0, none (0) for
// a negative one.
func orDefault(v, def int) int {
	switch {
	case v < 0:
		return 0
	case v == 0:
		return def
	}
	return v
}

// config is o with the defaults filled in, for the transport.
func (o *Limits) config() streamable.Limits {
	var l Limits
	if o != nil {
		l = *o
	}
	c := streamable.Limits{
		BodyTimeout: l.BodyTimeout,
		Calls:       orDefault(l.Calls, 64),
		Streams:     orDefault(l.Streams, 32),
		Sessions:    orDefault(l.Sessions, 256),
		MaxBatch:    orDefault(l.MaxBatch, defaultMaxBatch),
		MaxAnswer:   orDefault(l.MaxAnswerBytes, defaultMaxAnswerBytes),
	}
	switch {
	case c.BodyTimeout < 0:
		c.BodyTimeout = 0
	case c.BodyTimeout == 0:
		c.BodyTimeout = 30 * time.Second
	}
	return c
}

// Log attribute keys passed to [Options.Attrs].
const (
	AttrMethod    = protocol.AttrMethod
	AttrID        = protocol.AttrID
	AttrTool      = protocol.AttrTool
	AttrPrompt    = protocol.AttrPrompt
	AttrResource  = protocol.AttrResource
	AttrSession   = protocol.AttrSession
	AttrRevision  = protocol.AttrRevision
	AttrErrorCode = protocol.AttrErrorCode
	AttrRelayedTo = protocol.AttrRelayedTo
)

// SessionOptions configures stateful sessions ([Options.Sessions]). Zero
// fields take the defaults.
type SessionOptions struct {
	// IdleTimeout ends a session that has had no request, call or open
	// stream for this long; default 30 minutes. A session with a call in
	// flight or a stream open is never reaped.
	IdleTimeout time.Duration
	// MaxSessions bounds the live sessions; an initialize beyond it is
	// answered 503 with Retry-After. Default 100,000.
	MaxSessions int
	// QueueSize bounds the stateful callbacks waiting for their turn in one
	// session (they run one at a time); one more is answered with
	// InternalError "Server overloaded". Default 64. Handlers that ignore
	// their state (a *Server) never queue.
	QueueSize int
	// RequestTimeout bounds each call; default 5 minutes, negative means
	// none. It includes the time a server→client request waits for the
	// client (a human answering an elicitation, say).
	RequestTimeout time.Duration
	// Retry is the reconnection delay event streams ask clients for; it is
	// sent with the priming event that opens each stream. Default 1s.
	Retry time.Duration
	// ResumeGrace is how long a call whose response stream lost its
	// client keeps running, waiting for the client to resume the stream
	// with GET and Last-Event-ID; then its context is cancelled. It is
	// also how long a finished call's result waits for a client that
	// lost its stream before the stream is forgotten. Default 10s.
	ResumeGrace time.Duration
	// StreamEvents bounds the events each stream keeps for replay; default
	// 128 (and 1 MiB). A call whose client is connected but this far
	// behind waits in Progress or Log until the client reads; a client
	// that is away, or behind on the session's GET stream, loses the
	// oldest.
	StreamEvents int
	// OnOpen, when set, is called after initialize created a session,
	// with the request that created it. It runs on the request's
	// goroutine and must not block.
	OnOpen func(r *http.Request, id string)
	// OnClose, when set, is called once when a session ends, with why. It
	// must not block.
	OnClose func(id string, reason CloseReason)
}

// CloseReason says why a session ended.
type CloseReason string

// The reasons a session ends.
const (
	CloseDeleted  CloseReason = "deleted"  // the client sent DELETE
	CloseIdle     CloseReason = "idle"     // reaped after IdleTimeout
	CloseShutdown CloseReason = "shutdown" // Endpoint.Shutdown
	CloseEnded    CloseReason = "ended"    // ended by the server otherwise
	// CloseMoved: another replica of the cluster took the session over
	// (this one was thought dead); the session goes on there.
	CloseMoved CloseReason = "moved"
)
