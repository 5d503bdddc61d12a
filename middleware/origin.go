package middleware

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/saguaro-go/saguaro/internal/origin"
)

// OriginOptions configures [OriginCheck]. A nil pointer lists nothing:
// only a request's own origin, and loopback origins on a loopback
// connection, are allowed.
type OriginOptions struct {
	// AllowedOrigins lists the browser origins allowed besides the
	// endpoint's own, as "scheme://host[:port]" (e.g.
	// "https://app.example.com"). Matching is exact after normalising
	// case, a trailing slash and the scheme's default port. "*" allows
	// every origin: do not use it on an endpoint that relies on cookies
	// or on being local.
	AllowedOrigins []string

	// AllowedHosts lists the Host header values accepted besides the
	// loopback names on a loopback connection: "name" (any port) or
	// "name:port". Once it is set, every request's Host must be listed
	// (or loopback on a loopback connection): use it for a server bound
	// to a LAN address or behind known names, and for the public names
	// of a local reverse proxy.
	AllowedHosts []string

	// OnDeny writes the answer to a refused request. The error wraps
	// [ErrOriginNotAllowed] or [ErrHostNotAllowed]. Default: 403 with a
	// small JSON body.
	OnDeny func(w http.ResponseWriter, r *http.Request, err error)
}

// OriginCheck returns middleware that refuses (403) a request whose Host
// or Origin the rule below does not allow. It is the same rule the mcp
// package's endpoint applies with its AllowedOrigins and AllowedHosts
// options, so the two never disagree:
//
//   - Host: on a connection that arrived at a loopback address, the Host
//     must name the loopback interface (localhost, 127.0.0.1, [::1], any
//     port) or be listed; that stops DNS rebinding, where a page on
//     evil.example.com resolves its own name to 127.0.0.1. With
//     AllowedHosts set, every Host must be listed or loopback on a
//     loopback connection.
//   - Origin: a request without one (not a browser) passes; one is
//     allowed when it is the request's own (its host and port are the
//     Host header's), listed, or a loopback origin on a loopback
//     connection. Several Origin headers, or a malformed one, are
//     refused.
//
// The MCP Streamable HTTP transport requires an Origin check on every
// request ("If the Origin header is present and invalid, servers MUST
// respond with HTTP 403 Forbidden"). Go's http.CrossOriginProtection is not
// a substitute: it lets every GET, HEAD and OPTIONS through, and the MCP
// event stream is a GET.
//
// Put it after [CORS] if both are used (a refused preflight then gets a
// 403 rather than a CORS error; either way the browser stops). OriginCheck
// panics if an allowed origin or host is malformed.
func OriginCheck(opts *OriginOptions) func(http.Handler) http.Handler {
	var o OriginOptions
	if opts != nil {
		o = *opts
	}
	rule, err := origin.New(o.AllowedOrigins, o.AllowedHosts)
	if err != nil {
		panic("saguaro/middleware: OriginCheck: " + err.Error())
	}
	onDeny := o.OnDeny
	if onDeny == nil {
		onDeny = denyForbidden
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := rule.Check(r); err != nil {
				onDeny(w, r, fmt.Errorf("saguaro/middleware: %w", err))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func denyForbidden(w http.ResponseWriter, _ *http.Request, err error) {
	msg := "Forbidden: origin not allowed"
	if errors.Is(err, ErrHostNotAllowed) {
		msg = "Forbidden: host not allowed"
	}
	writeError(w, http.StatusForbidden, codeInvalidRequest, msg)
}
