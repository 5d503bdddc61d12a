// Package middleware holds the chi middleware that production wraps around
// an MCP endpoint: request logging that understands event streams and MCP,
// the Origin and Host checks of the MCP transport, a CORS preset for browser
// clients, a body size limit and rate limits. Every piece is an ordinary
// func(http.Handler) http.Handler and is useful without the mcp package.
//
// The package is named like chi's own middleware package; import one of the
// two under another name:
//
//	import (
//		chimw "github.com/go-chi/chi/v5/middleware"
//		"github.com/saguaro-go/saguaro/middleware"
//	)
//
// # Wiring
//
// Outer to inner (the order matters; reasons below):
//
//	logger := slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{
//		ReplaceAttr: httplog.SchemaECS.ReplaceAttr,
//	}))
//	origins := []string{"https://app.example.com"}
//
//	r := chi.NewRouter()
//	r.Use(chimw.RequestID)               // its id reaches the log line
//	r.Use(chimw.ClientIPFromRemoteAddr)  // or ClientIPFromXFF(proxies...) behind a proxy
//	r.Use(middleware.RequestLogger(logger, nil))
//	r.Use(chimw.Recoverer)               // inside the logger, so the line shows the 500
//	r.Use(chimw.Heartbeat("/healthz"))
//
//	r.Group(func(r chi.Router) {
//		r.Use(middleware.CORS(&middleware.CORSOptions{AllowedOrigins: origins}))
//		r.Use(middleware.OriginCheck(&middleware.OriginOptions{AllowedOrigins: origins}))
//		r.Use(middleware.RateLimit(nil))    // 100/min per client IP, before auth
//		r.Use(middleware.BodyLimit(middleware.DefaultMaxBodyBytes))
//		r.With(verifier, auth.Required(),
//			middleware.RateLimit(&middleware.RateLimitOptions{
//				Limit: 600,
//				Key:   middleware.KeyBySubject(subjectOf), // subject from the auth context
//			}),
//		).Mount("/mcp", mcp.Controller(opts)) // opts' log hook = middleware.SetAttrs
//	})
//
// Why this order:
//
//   - RequestID and ClientIPFrom… go before [RequestLogger] so that their
//     values are in the context the logger reads.
//   - chi's Recoverer goes after the logger, or set
//     [LogOptions].RecoverPanics instead; not both.
//   - [CORS] answers preflights itself and stops there, so it goes before
//     authentication (preflights carry no token). [OriginCheck] refuses what
//     CORS merely declines to bless.
//   - The per-IP [RateLimit] runs before authentication, so token checks are
//     rate limited too; the per-subject one runs after.
//
// # Logging and MCP attributes
//
// [RequestLogger] writes httplog v3's request line with its pitfalls
// closed: query values, credentials and the Referer's query are redacted
// (the handler still sees them), 429 is Warn, an event stream is logged
// once when it is accepted and once when it ends (with duration and
// bytes), its body is never copied, and [SetAttrs] and [SetError] add
// attributes from any goroutine. They replace httplog.SetAttrs and
// httplog.SetError, which do nothing under RequestLogger.
//
// The line costs CPU on every request. Give RequestLogger a logger whose
// handler is [NewJSONHandler]'s and the line is written straight into the
// output instead of through a slog.Record: the same bytes as
// slog.JSONHandler, for about 40% less CPU than the line costs through
// slog (BenchmarkRequestLogger_MCPPost: preset, preset-direct and
// preset-silent, the last writing no line). It applies when the handler has no ReplaceAttr and no
// AddSource; otherwise lines go through slog as with any other handler.
//
// The mcp package does not import this package. It takes a hook of type
// func(context.Context, ...slog.Attr); set it to [SetAttrs]. The attribute
// keys it uses are the constants [MCPMethodKey], [MCPIDKey], [MCPToolKey],
// [MCPPromptKey], [MCPResourceKey], [MCPNameKey], [MCPSessionKey],
// [MCPRevisionKey] and [MCPErrorCodeKey]. The logger fills the session,
// revision, method and name from the MCP headers by itself.
//
// # Status codes and bodies
//
// Refusals carry a small JSON body shaped as a JSON-RPC error with a null
// id, so an MCP client that parses it finds what it expects:
//
//	403  OriginCheck: Origin present and not allowed, or Host not allowed (-32600)
//	413  BodyLimit: Content-Length over the limit (-32600)
//	429  RateLimit: over the limit, with Retry-After (-32000)
//	503  RateLimit: key or counter failed, with Retry-After: 1 (-32000)
//
// # Streaming routes
//
// An MCP endpoint streams: the GET channel and any POST answered as
// text/event-stream stay open for minutes. Some stock middleware breaks that
// and must stay off the /mcp route (each claim is checked by a test in this
// package, over real HTTP):
//
//   - chi's Timeout cancels the request context at its deadline, which ends
//     the stream; its 504 comes too late to be sent, so the client sees a
//     200 stream that stops. Use http.Server's ReadHeaderTimeout and
//     IdleTimeout, and per-write deadlines (http.ResponseController's
//     SetWriteDeadline) instead of Timeout or Server.WriteTimeout.
//   - chi's Throttle holds its slot for the whole life of a stream: N idle
//     streams exhaust Throttle(N) and every other request gets 429. Use
//     [RateLimit], which counts requests, not open connections.
//   - net/http's TimeoutHandler buffers the whole response and its writer
//     cannot flush (http.ErrNotSupported): nothing streams.
//   - chi's Compress with "text/event-stream" in its types sends gzip bytes
//     under a header without Content-Encoding when the handler flushes
//     before writing the header. Call WriteHeader before the first flush
//     (the sse package does), or leave event-stream out of Compress's types.
//     Behind [RequestLogger] a bare Flush commits the header first, which
//     also saves a Compress placed outside the logger.
//
// RequestID, ClientIPFrom…, Recoverer, NoCache, Heartbeat, [RequestLogger],
// [CORS], [OriginCheck], [BodyLimit] and [RateLimit] are safe on streams.
package middleware
