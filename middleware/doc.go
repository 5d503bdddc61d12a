// Package middleware holds the chi middleware that production wraps around
// an MCP endpoint: httplog's request logging with a line when an event
// stream opens, the Origin and Host checks of the MCP transport, a CORS
// preset for browser clients, body limits and rate limits. Every piece is
// an ordinary func(http.Handler) http.Handler and is useful without the
// mcp package.
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
//	r.Use(chimw.RequestID)               // its id reaches the log lines
//	r.Use(chimw.ClientIPFromRemoteAddr)  // or ClientIPFromXFF(proxies...) behind a proxy
//	r.Use(middleware.Logging(logger, nil))
//	r.Use(chimw.Heartbeat("/healthz"))
//
//	r.Group(func(r chi.Router) {
//		r.Use(middleware.CORS(&middleware.CORSOptions{AllowedOrigins: origins}))
//		r.Use(middleware.OriginCheck(&middleware.OriginOptions{AllowedOrigins: origins}))
//		r.Use(middleware.RateLimit(nil))    // 100/min per client IP, before auth
//		r.Use(middleware.BodyLimit(middleware.DefaultMaxBodyBytes))
//		r.With(verifier.Handler, auth.Required(),
//			middleware.RateLimit(&middleware.RateLimitOptions{
//				Limit: 600,
//				Key:   middleware.KeyBySubject(auth.Identity),
//			}),
//		).Mount("/mcp", mcp.Controller(&mcp.Options{
//			Handler: srv,
//			Attrs:   httplog.SetAttrs, // MCP attributes on the request's line
//		}))
//	})
//
// Why this order:
//
//   - RequestID and ClientIPFrom… go before [Logging] so that their values
//     are in the context it reads.
//   - Logging recovers panics itself (httplog's RecoverPanics, on by
//     default) and logs them with their stack; chi's Recoverer after it
//     also works, and then the line shows the 500 without the panic.
//   - [CORS] answers preflights itself and stops there, so it goes before
//     authentication (preflights carry no token). [OriginCheck] refuses what
//     CORS merely declines to bless.
//   - The per-IP [RateLimit] runs before authentication, so token checks are
//     rate limited too; the per-subject one runs after.
//
// # Logging and MCP attributes
//
// The request line is httplog v3's: [Logging] is httplog.RequestLogger
// with httplog's options, plus a line when an event stream is accepted
// (httplog writes its line when the handler returns, which for a stream
// is when it ends) and chi's request id and resolved client IP. The mcp
// package does not import httplog or this package: it reports what a
// request calls (method, id, tool, prompt or resource, session, revision,
// JSON-RPC error code) through its Options.Attrs hook, on the request's
// goroutine; set the hook to httplog.SetAttrs.
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
//     Behind [Logging] a bare Flush commits the header first, which also
//     saves a Compress placed outside the logger.
//
// RequestID, ClientIPFrom…, Recoverer, NoCache, Heartbeat, [Logging],
// [CORS], [OriginCheck], [BodyLimit] and [RateLimit] are safe on streams.
package middleware
