// Package oauth is the example app's OAuth 2.1 authorization server, built
// on zitadel/oidc's OpenID Provider (package op), which parses and answers
// the authorization, token and revocation endpoints, checks PKCE and
// client authentication, and signs the JWT access tokens. This package
// supplies what op leaves to its user:
//
//   - storage in the app's database (package database), so that every
//     replica behind a load balancer sees the same clients, codes and
//     refresh tokens: a code is consumed by one atomic UPDATE, a refresh
//     token rotated by another, so two replicas can never both redeem one;
//   - the MCP rules on top of op's: PKCE with S256 only, for every client;
//     the RFC 8707 resource, which must name the MCP endpoint and becomes
//     the token's audience; a default scope when a client asks for none;
//     refresh tokens for every client registered for that grant, rotated on
//     every use, a reused one revoking its whole family, a family ending
//     90 days after its sign-in whatever happens; a replayed code revoking
//     what it issued;
//   - RFC 8414 metadata, RFC 7591 dynamic client registration, client ID
//     metadata documents (a client_id that is an https URL, fetched only
//     from public addresses), RFC 7009 revocation and RFC 9207's iss in
//     every authorization response;
//   - the login and consent page that names the scopes, marks a client
//     that registered itself as unverified and names where the browser
//     goes next, and a development mode that approves every request for
//     one fixed user.
//
// # Bounds
//
// What an unauthenticated client can make the server do is bounded:
//
//	what                                  bound                                answer past it
//	a parameter (state, redirect_uri, …)  a length of its own (paramLimits),   400 invalid_request, never redirected
//	                                      32 parameters, each once
//	an authorization request body         32 KiB                               413
//	a token or revocation request body    16 KiB                               413
//	a registration body                   16 KiB; URIs 2000 characters         400 invalid_client_metadata
//	authorization requests                120 a minute per client address      429, Retry-After
//	registrations                         20 a minute per client address;      429, Retry-After; 503
//	                                      10,000 kept at once
//	sign-in attempts                      20 a minute per client address       429, Retry-After: 60
//	failed sign-ins as one user           10 in 15 minutes                     429, Retry-After: 900
//	failed sign-ins of one request        5                                    the request ends: access_denied
//	password checks running at once       half the CPUs                        wait, then 503
//
// The per-address and per-user counts are kept in memory by each replica
// (github.com/go-chi/httprate); a request's failures are kept in its row,
// so they add up across replicas.
//
// # Keys and what expires
//
// Access tokens are ES256 JWTs signed with a key kept in the database
// (every replica signs with it; Options.KeySecret keeps it encrypted
// there) and published at /oauth/keys, where package auth's verifier
// reads it. Keys rotate (RotateSigningKey, and by themselves after
// Options.SigningKeyLifetime): the new key signs at once, and the old
// one stays published for two hours, longer than any token it signed
// lives. A sweep every minute deletes expired requests and codes,
// refresh tokens, cached metadata documents, abandoned registrations
// (never used within a day, or unused for 90 days) and old keys.
package oauth
