// Package middleware holds the chi middleware that production wraps around
// an MCP endpoint: httplog's request logging with a line when an event
// stream opens ([Logging]), the Origin and Host checks of the MCP
// transport ([OriginCheck]), a CORS preset for browser clients ([CORS]),
// body limits and rate limits. Every piece is an ordinary
// func(http.Handler) http.Handler, useful without the mcp package, and
// each one's documentation says where it goes in the chain and why. It is
// named like chi's own middleware package: import one of the two under
// another name (chimw below). Outer to inner (the package's Example runs
// it whole):
//
//	r.Use(chimw.RequestID, chimw.ClientIPFromRemoteAddr) // Logging logs them; behind a proxy, ClientIPFromXFF
//	r.Use(middleware.Logging(logger, nil))               // recovers panics itself
//	r.Use(chimw.Heartbeat("/healthz"))
//	r.Use(middleware.CORS(&middleware.CORSOptions{AllowedOrigins: origins}))          // answers preflights
//	r.Use(middleware.OriginCheck(&middleware.OriginOptions{AllowedOrigins: origins})) // refuses the rest
//	r.Use(middleware.RateLimit(nil)) // 100 a minute per client IP, token checks included
//	r.Use(middleware.BodyLimit(middleware.DefaultMaxBodyBytes))
//	r.With(v.Handler, auth.Required(), middleware.RateLimit(&middleware.RateLimitOptions{
//		Limit: 600, Key: middleware.KeyBySubject(auth.Identity), // per subject, after auth
//	})).Mount("/mcp", mcp.Controller(&mcp.Options{
//		Handler:        srv,
//		AllowedOrigins: origins, // the endpoint applies OriginCheck's rule itself
//		Attrs:          httplog.SetAttrs,
//	}))
//
// A refusal (403, 413, 429, 503) carries a JSON-RPC error with a null id
// (-32600 for the request itself, -32000 for "try again later"), so an
// MCP client that parses it finds what it expects.
//
// # Streaming routes
//
// An MCP endpoint streams for minutes (its GET channel, a POST answered as
// text/event-stream). Keep this stock middleware off its route (each
// claim is a test in this package, over real HTTP): chi's Timeout cancels
// the request at its deadline, which ends the stream, and its 504 comes
// too late to be sent (use http.Server's ReadHeaderTimeout and
// IdleTimeout, and per-write deadlines with http.ResponseController);
// chi's Throttle holds a slot for a stream's whole life, so N idle streams
// starve Throttle(N) (use [RateLimit], which counts requests);
// net/http's TimeoutHandler buffers the response and cannot flush; chi's
// Compress with "text/event-stream" among its types sends gzip bytes
// without Content-Encoding when the handler flushes before WriteHeader
// (the sse package writes the header first, and behind [Logging] a bare
// Flush commits it too, which also saves a Compress outside the logger).
// RequestID, ClientIPFrom…, Recoverer, NoCache, Heartbeat and every piece
// of this package are safe on streams.
package middleware
