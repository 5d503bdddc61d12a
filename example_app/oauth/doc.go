// Package oauth is the example app's OAuth 2.1 authorization server, built
// on zitadel/oidc's OpenID Provider (package op), which parses and answers
// the authorization and token endpoints, checks PKCE and client
// authentication, and signs the JWT access tokens. This package supplies
// what op leaves to its user:
//
//   - storage in the app's database (package database), so that every
//     replica behind a load balancer sees the same clients, codes and
//     refresh tokens: a code is consumed by one atomic UPDATE, a refresh
//     token rotated by another, so two replicas can never both redeem one;
//   - the MCP rules on top of op's: PKCE with S256 only, for every client;
//     the RFC 8707 resource, which must name the MCP endpoint and becomes
//     the token's audience; a default scope when a client asks for none;
//     refresh tokens for every client registered for that grant, rotated on
//     every use, a reused one revoking its whole family; a replayed code
//     revoking what it issued;
//   - RFC 8414 metadata, RFC 7591 dynamic client registration, and client
//     ID metadata documents (a client_id that is an https URL);
//   - the login and consent page that names the scopes, and a development
//     mode that approves every request for one fixed user.
//
// Access tokens are ES256 JWTs whose key lives in the database (every
// replica signs with it) and is published at /oauth/keys, where package
// auth's verifier reads it.
package oauth
