package auth

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
)

// challenger holds what every challenge of one verifier carries.
type challenger struct {
	resourceMetadata string
}

// problem is the HTTP form of an error.
type problem struct {
	status int
	code   string // RFC 6750 error code; "" for none
	desc   string // fixed text: never the token, never err.Error()
}

// errNotConfigured is what an enforcer sees when no verifier ran before it.
var errNotConfigured = errors.New("auth: enforcer used without Verifier.Handler before it")

// problemFor is the one place an error becomes a status and error code.
func problemFor(err error) problem {
	switch {
	case errors.Is(err, ErrNoToken):
		return problem{http.StatusUnauthorized, "", "a bearer token is required"}
	case errors.Is(err, ErrInvalidRequest):
		return problem{http.StatusBadRequest, "invalid_request", "the Authorization header is malformed"}
	case errors.Is(err, ErrInsufficientScope):
		return problem{http.StatusForbidden, "insufficient_scope", "the token lacks a required scope"}
	case errors.Is(err, ErrKeySource):
		return problem{http.StatusServiceUnavailable, "temporarily_unavailable", "the signing keys are unavailable; retry later"}
	case errors.Is(err, ErrIntrospection):
		return problem{http.StatusServiceUnavailable, "temporarily_unavailable", "token introspection is unavailable; retry later"}
	case errors.Is(err, ErrInactive):
		return problem{http.StatusUnauthorized, "invalid_token", "the token is not active"}
	case errors.Is(err, errNotConfigured):
		return problem{http.StatusInternalServerError, "server_error", "authentication is not configured"}
	case errors.Is(err, ErrExpired):
		return problem{http.StatusUnauthorized, "invalid_token", "the token has expired"}
	case errors.Is(err, ErrNotYetValid):
		return problem{http.StatusUnauthorized, "invalid_token", "the token is not valid yet"}
	case errors.Is(err, ErrIssuer):
		return problem{http.StatusUnauthorized, "invalid_token", "the token is from another issuer"}
	case errors.Is(err, ErrAudience):
		return problem{http.StatusUnauthorized, "invalid_token", "the token is for another resource"}
	case errors.Is(err, ErrSignature):
		return problem{http.StatusUnauthorized, "invalid_token", "the token signature is invalid"}
	case errors.Is(err, ErrUnknownKey):
		return problem{http.StatusUnauthorized, "invalid_token", "the token is signed with an unknown key"}
	case errors.Is(err, ErrMissingClaim):
		return problem{http.StatusUnauthorized, "invalid_token", "the token lacks a required claim"}
	}
	return problem{http.StatusUnauthorized, "invalid_token", "the token is malformed"}
}

// scopedError attaches the scopes a route requires to an error, so the
// challenge can name them; the sentinel it wraps is unchanged.
type scopedError struct {
	err    error
	scopes []string
}

func (e *scopedError) Error() string { return e.err.Error() }
func (e *scopedError) Unwrap() error { return e.err }

// WriteError answers r with the response for err, exactly as [Required]
// and [RequireScopes] do, for handlers that enforce their own rules. The
// status, the WWW-Authenticate challenge and the JSON body follow from the
// Err sentinel err wraps; an error wrapping none of them is answered 401
// invalid_token:
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
// document ([MetadataURL] of the resource unless configured otherwise),
// when a Verifier ran on r. The body is {"error": code,
// "error_description": text} with fixed texts; err's own message (and so
// any detail about the token) is never sent. A request with no token gets
// error "unauthorized" in the body, while its challenge, per RFC 6750
// §3.1, carries no error code.
//
// Decisions where the RFCs leave room:
//
//   - Two Authorization headers are a malformed request (RFC 6750 §3.1
//     "repeats the same parameter"), so 400 invalid_request, not a guess
//     at which one the client meant.
//   - A key source outage is the server's failure: 503, so clients retry
//     instead of discarding a good token and restarting the OAuth flow.
//   - A token without sub is refused, so every verified token has an
//     [Identity].
//   - An enforcer with no verifier before it answers 500: fail closed and
//     loudly.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	p := problemFor(err)
	var scopes []string
	if se := (*scopedError)(nil); errors.As(err, &se) {
		scopes = se.scopes
	}
	h := w.Header()
	switch p.status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusBadRequest:
		rm := ""
		if st := stateFrom(r.Context()); st != nil && st.challenge != nil {
			rm = st.challenge.resourceMetadata
		}
		h.Set("WWW-Authenticate", challenge(p.code, p.desc, scopes, rm))
	case http.StatusServiceUnavailable:
		h.Set("Retry-After", "10")
	}
	code := p.code
	if code == "" {
		code = "unauthorized"
	}
	body, _ := json.Marshal(struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}{code, p.desc})
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(p.status)
	_, _ = w.Write(append(body, '\n'))
}

// challenge renders a Bearer challenge (RFC 6750 §3, RFC 9728 §5.1).
func challenge(code, desc string, scopes []string, resourceMetadata string) string {
	var b strings.Builder
	b.WriteString("Bearer")
	sep := " "
	param := func(k, v string) {
		b.WriteString(sep)
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(quote(v))
		sep = ", "
	}
	if code != "" {
		param("error", code)
		param("error_description", desc)
	}
	if len(scopes) > 0 {
		param("scope", strings.Join(scopes, " "))
	}
	if resourceMetadata != "" {
		param("resource_metadata", resourceMetadata)
	}
	return b.String()
}

// quote renders s as an HTTP quoted-string (RFC 9110 §5.6.4): backslash
// and double quote are escaped, control characters dropped, so no value
// can end the parameter early or split the header.
func quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
