// Package auth makes a chi (or any net/http) app an OAuth 2.1 resource
// server, as the MCP authorization spec asks: it verifies JWT bearer
// tokens with golang-jwt v5, or opaque ones with RFC 7662 token
// introspection ([IntrospectionOptions]), answers with RFC 6750
// challenges, serves RFC 9728 protected resource metadata, and checks the
// RFC 8707 audience.
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
// What a token must satisfy is in [Verifier.Verify]; every answer, and
// the decisions where the RFCs leave room, in [WriteError]; what a
// verified token costs and how long it is trusted, in Options.CacheTTL;
// the JWKS refresher's lifetime, in [JWKSOptions].
package auth
