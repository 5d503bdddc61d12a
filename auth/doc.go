// Package auth makes a chi (or any net/http) app an OAuth 2.1 resource
// server, as the MCP authorization spec asks: it verifies JWT bearer
// tokens with golang-jwt v5, or opaque ones with RFC 7662 token
// introspection ([IntrospectionOptions]), answers with RFC 6750
// challenges, serves RFC 9728 protected resource metadata, and checks the
// RFC 8707 audience.
//
// # Usage
//
// Build one [Verifier] at startup, serve the metadata outside the auth
// middleware, and protect routes with the verifier followed by an enforcer:
//
//	v, err := auth.NewVerifier(ctx, &auth.Options{
//		Resource: "https://api.example.com/mcp", // tokens must carry this aud
//		Issuer:   "https://login.example.com",
//		JWKS:     &auth.JWKSOptions{URL: "https://login.example.com/jwks.json"},
//	})
//	if err != nil { ... }         // every configuration mistake surfaces here
//	defer v.Close()               // stops the JWKS refresher
//
//	md := v.ResourceMetadata()
//	md.ScopesSupported = []string{"mcp:read", "mcp:write"}
//	if err := auth.MountMetadata(r, &md); err != nil { ... }
//
//	r.With(v.Handler, auth.Required()).Mount("/mcp", mcp.Controller(opts))
//	r.With(v.Handler, auth.RequireScopes("admin")).Post("/admin", h)
//
// [Verifier.Handler] never rejects: it stores the verified [Claims] (or the
// reason there are none) in the request context, so optional-auth routes
// can use it alone. [Required] and [RequireScopes] reject. Handlers read
// the result with [ClaimsFromContext], [Subject], [Scopes],
// [ErrorFromContext], and [Identity], whose signature
// func(*http.Request) string lets mcp bind sessions to a caller without
// importing this package.
//
// # What a token must satisfy
//
//   - It arrives in exactly one Authorization header, scheme Bearer (any
//     case). Query parameters, form fields and cookies are ignored.
//   - Its alg is pinned: only keys configured for exactly that alg are
//     tried, and "none" is never accepted. Static keys come from
//     [HMACKey], [RSAKey], [ECDSAKey], [Ed25519Key]; remote ones from a
//     JWKS ([JWKSOptions]), which never yields HMAC keys.
//   - exp is required; exp, nbf and iat are checked with Options.Leeway
//     (30s by default).
//   - iss equals Options.Issuer; aud equals Options.Resource or is an
//     array containing it; sub is present.
//   - Scopes come from "scope" (a space-separated string) and "scp" (a
//     string or an array).
//
// # Responses
//
// One function, [WriteError], maps errors to responses:
//
//	no Authorization header, or another scheme   401  Bearer resource_metadata="…"
//	two Authorization headers, "Bearer" alone,   400  Bearer error="invalid_request", …
//	  a token outside the b64token alphabet
//	bad, expired, not yet valid, wrong iss/aud,  401  Bearer error="invalid_token", …
//	  unknown key, too long
//	valid token without a required scope         403  Bearer error="insufficient_scope", scope="…", …
//	kid not cached and the JWKS down or slower   503  Retry-After: 10 (no challenge)
//	  than LookupTimeout
//	introspection: the token is not active       401  Bearer error="invalid_token", …
//	introspection endpoint down, slow, or not    503  Retry-After: 10 (no challenge)
//	  answering 200 with RFC 7662 JSON
//
// Every challenge carries resource_metadata, the URL of the RFC 9728
// document ([MetadataURL] of the resource unless configured otherwise).
// Bodies are {"error": …, "error_description": …} with fixed texts; the
// token and the internal error are never echoed.
//
// Decisions where the RFCs leave room:
//
//   - Two Authorization headers are a malformed request (RFC 6750 §3.1
//     "repeats the same parameter"), so 400 invalid_request, not a guess at
//     which one the client meant.
//   - A key source outage is our failure: 503, so clients retry instead of
//     discarding a good token and restarting the OAuth flow.
//   - A token without sub is refused, so every verified token has an
//     [Identity].
//   - An enforcer with no verifier before it answers 500: fail closed and
//     loudly.
//
// # Cost
//
// A client sends the same token on every request, and checking an RS256 or
// ES256 signature costs more than the rest of a typical request (about
// 50 µs against 0.15 µs for a cache hit, BenchmarkVerify). So a token that
// verified is trusted again for Options.CacheTTL (1 minute) without its
// signature being checked, never past its exp; Options.CacheSize bounds
// the cache (4096 tokens, indexed by a per-process seeded hash, a hit
// needing the very token). A JWKS refresh that drops a
// key sends every cached token back to a full check, so the removed key's
// tokens fail from that refresh on. A token revoked at the authorization
// server stays valid for up to CacheTTL: set CacheTTL negative where that
// matters more than the cost.
//
// # Lifecycle
//
// A Verifier with a JWKS owns one goroutine (the refresher) until the
// context given to [NewVerifier] ends or [Verifier.Close] runs. Requests
// never wait on the JWKS endpoint longer than JWKSOptions.LookupTimeout,
// and unknown kids refresh the set at most once per
// JWKSOptions.RefreshRateLimit.
package auth
