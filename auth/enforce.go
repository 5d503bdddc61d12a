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

func enforce(scopes []string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			st := stateFrom(r.Context())
			var err error
			switch {
			case st == nil:
				err = errNotConfigured
			case st.err != nil:
				err = st.err
			case st.claims == nil:
				err = ErrNoToken
			default:
				for _, s := range scopes {
					if !st.claims.HasScope(s) {
						err = fmt.Errorf("%w: missing %q", ErrInsufficientScope, s)
						break
					}
				}
			}
			if err != nil {
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
