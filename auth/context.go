package auth

import (
	"context"
	"net/http"
	"slices"
)

// stateKey is the context key for the verifier's outcome.
type stateKey struct{}

// state is what the verifier middleware leaves in the context.
type state struct {
	claims    *Claims
	err       error
	challenge *challenger
}

func stateFrom(ctx context.Context) *state {
	st, _ := ctx.Value(stateKey{}).(*state)
	return st
}

// NewContext returns a copy of ctx carrying claims as if a verifier had
// accepted them. It is for tests of handlers behind the middleware, and for
// callers that verify tokens by other means. Pitfall: whatever reads the
// context trusts these claims; never build them from unverified input.
func NewContext(ctx context.Context, claims *Claims) context.Context {
	return context.WithValue(ctx, stateKey{}, &state{claims: claims})
}

// ClaimsFromContext returns the verified claims, or nil when the verifier
// did not run or the request carried no valid token.
func ClaimsFromContext(ctx context.Context) *Claims {
	if st := stateFrom(ctx); st != nil && st.err == nil {
		return st.claims
	}
	return nil
}

// ErrorFromContext returns why the request has no verified claims (wrapping
// one of the Err sentinels, e.g. [ErrNoToken] or [ErrExpired]), or nil when
// it has them or the verifier did not run. Useful for logging and for
// routes where a token is optional.
func ErrorFromContext(ctx context.Context) error {
	if st := stateFrom(ctx); st != nil {
		return st.err
	}
	return nil
}

// Subject returns the verified token's sub, or "".
func Subject(ctx context.Context) string {
	if c := ClaimsFromContext(ctx); c != nil {
		return c.Subject
	}
	return ""
}

// Scopes returns a copy of the verified token's scopes, or nil.
func Scopes(ctx context.Context) []string {
	if c := ClaimsFromContext(ctx); c != nil {
		return slices.Clone(c.Scopes)
	}
	return nil
}

// Identity returns a stable identity for the caller of r: the verified
// token's issuer and subject (see [Claims.Identity]), or "" when the
// request carries no verified token. Its type is func(*http.Request)
// string, so it can be handed to packages that must not import auth, such
// as mcp's session-binding option. Pitfall: "" means anonymous; a consumer
// binding sessions must treat two "" callers as unrelated, not the same.
func Identity(r *http.Request) string {
	if r == nil {
		return ""
	}
	return ClaimsFromContext(r.Context()).Identity()
}
