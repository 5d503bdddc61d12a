package auth

import (
	"fmt"
	"net/http"
	"slices"
)

// Required returns middleware that lets a request through only when the
// verifier before it accepted its token, and otherwise answers it with
// [WriteError]: 401 with a Bearer challenge pointing at the resource
// metadata, 400 for a malformed Authorization header, 503 when the keys are
// unavailable.
//
// Pitfall: it reads what [Verifier.Handler] left in the context, so the
// verifier must run first: r.With(v.Handler, auth.Required()). Used
// without one, it fails closed with 500 so the mistake is seen at once.
func Required() func(http.Handler) http.Handler {
	return enforce(nil)
}

// RequireScopes is [Required] plus a scope check: the token must carry
// every one of scopes, or the request is answered 403 with
// error="insufficient_scope" and scope="<all of scopes>". Its 401s carry the
// same scope parameter, so a client knows what to ask the authorization
// server for.
//
// It panics at construction (startup) when scopes is empty or a scope is not
// a valid RFC 6749 §3.3 scope token (printable ASCII, no space, '"' or '\').
func RequireScopes(scopes ...string) func(http.Handler) http.Handler {
	if len(scopes) == 0 {
		panic("auth: RequireScopes needs at least one scope")
	}
	for _, s := range scopes {
		if !isScopeToken(s) {
			panic(fmt.Sprintf("auth: RequireScopes: %q is not a valid scope token", s))
		}
	}
	return enforce(slices.Clone(scopes))
}

// CheckScopes is the check [RequireScopes] makes, for code that decides
// per request which scopes it needs (a tool-by-tool rule inside one
// endpoint, say): nil when the verified token carries every one of scopes,
// otherwise an error for [WriteError] that answers exactly as
// RequireScopes would, 403 insufficient_scope naming scopes (or 401 when
// there is no valid token).
//
// Pitfall: like the enforcers it reads what [Verifier.Handler] left in the
// context; without a verifier before it, it fails closed.
func CheckScopes(r *http.Request, scopes ...string) error {
	err := check(r, scopes)
	if err != nil && len(scopes) > 0 {
		err = &scopedError{err: err, scopes: slices.Clone(scopes)}
	}
	return err
}

// check is the one check every enforcer makes.
func check(r *http.Request, scopes []string) error {
	st := stateFrom(r.Context())
	switch {
	case st == nil:
		return errNotConfigured
	case st.err != nil:
		return st.err
	case st.claims == nil:
		return ErrNoToken
	}
	for _, s := range scopes {
		if !st.claims.HasScope(s) {
			return fmt.Errorf("%w: missing %q", ErrInsufficientScope, s)
		}
	}
	return nil
}

func enforce(scopes []string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := check(r, scopes); err != nil {
				if len(scopes) > 0 {
					err = &scopedError{err: err, scopes: scopes}
				}
				WriteError(w, r, err)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// isScopeToken reports whether s is a scope-token: 1*( %x21 / %x23-5B /
// %x5D-7E ).
func isScopeToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
