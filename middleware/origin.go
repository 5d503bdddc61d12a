package middleware

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// OriginOptions configures [OriginCheck]. A nil pointer means: no browser
// origin is allowed and the Host is not checked.
type OriginOptions struct {
	// AllowedOrigins lists the origins whose requests are served, as
	// "scheme://host[:port]" (e.g. "https://app.example.com",
	// "http://localhost:6274"). Matching is exact after normalising case,
	// a trailing slash and the scheme's default port; wildcards are refused.
	// List your own web UI's origin too if it calls the endpoint: a
	// same-origin POST carries an Origin header as well.
	AllowedOrigins []string

	// AllowLoopbackOrigins also allows any http or https origin on
	// localhost, 127.0.0.1 or [::1], on any port: handy for local tools
	// such as the MCP Inspector. Only for servers on a developer's machine.
	AllowLoopbackOrigins bool

	// LoopbackHost refuses a Host header that is not localhost or a
	// loopback IP literal (127.0.0.1, [::1], …). Turn it on whenever the
	// server listens on a loopback address: it is the defence against DNS
	// rebinding, where a page on evil.example.com resolves its own name to
	// 127.0.0.1 and sends Host: evil.example.com.
	LoopbackHost bool

	// AllowedHosts lists further host names (no port) accepted in the Host
	// header; setting it turns the Host check on. Use it for a server bound
	// to a LAN address or behind known names.
	AllowedHosts []string

	// Port, if set, must be the port of every Host header that carries one
	// (the port the server listens on). Empty: any port.
	Port string

	// OnDeny writes the answer to a refused request. The error wraps
	// [ErrOriginNotAllowed] or [ErrHostNotAllowed]. Default: 403 with a
	// small JSON body.
	OnDeny func(w http.ResponseWriter, r *http.Request, err error)
}

// OriginCheck returns middleware that answers 403 to a request whose Origin
// header is present and not allowed, and, when the Host check is on
// (LoopbackHost or AllowedHosts), to a request whose Host is not allowed.
// A request without an Origin header (a non-browser client) passes the
// Origin check.
//
// The MCP Streamable HTTP transport requires this on every request ("If the
// Origin header is present and invalid, servers MUST respond with HTTP 403
// Forbidden"). Go's http.CrossOriginProtection is not a substitute: it lets
// every GET, HEAD and OPTIONS through, and the MCP event stream is a GET.
//
// Put it after [CORS] if both are used (a refused preflight then gets a
// 403 rather than a CORS error; either way the browser stops). OriginCheck
// panics if an allowed origin, host or the port is malformed.
func OriginCheck(opts *OriginOptions) func(http.Handler) http.Handler {
	var o OriginOptions
	if opts != nil {
		o = *opts
	}
	origins := make(map[string]bool, len(o.AllowedOrigins))
	for _, a := range o.AllowedOrigins {
		n, ok := normalizeOrigin(a)
		if !ok || strings.Contains(a, "*") {
			panic(fmt.Sprintf("saguaro/middleware: OriginCheck: bad allowed origin %q (want scheme://host[:port])", a))
		}
		origins[n] = true
	}
	var hosts map[string]bool
	if len(o.AllowedHosts) > 0 {
		hosts = make(map[string]bool, len(o.AllowedHosts))
		for _, h := range o.AllowedHosts {
			if h == "" || strings.ContainsAny(h, "/:[]*@ ") {
				panic(fmt.Sprintf("saguaro/middleware: OriginCheck: bad allowed host %q (want a name or IPv4 address, no port)", h))
			}
			hosts[strings.ToLower(h)] = true
		}
	}
	if o.Port != "" && !validPort(o.Port) {
		panic(fmt.Sprintf("saguaro/middleware: OriginCheck: bad port %q", o.Port))
	}
	checkHost := o.LoopbackHost || hosts != nil
	onDeny := o.OnDeny
	if onDeny == nil {
		onDeny = denyForbidden
	}

	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if checkHost {
				if err := checkHostHeader(r.Host, o.LoopbackHost, hosts, o.Port); err != nil {
					onDeny(w, r, err)
					return
				}
			}
			if err := checkOrigin(r, func(origin string) bool {
				return origins[origin] || (o.AllowLoopbackOrigins && isLoopbackOrigin(origin))
			}); err != nil {
				onDeny(w, r, err)
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

// CheckOrigin reports whether r may be served under the MCP Origin rule: nil
// when r has no Origin header or its Origin is one of allowed (compared as
// [OriginCheck] does; malformed entries never match), otherwise an error
// wrapping [ErrOriginNotAllowed]. An empty, repeated or malformed Origin
// header is not allowed.
//
// It normalises allowed on every call; [OriginCheck] does that once.
func CheckOrigin(r *http.Request, allowed []string) error {
	return checkOrigin(r, func(origin string) bool {
		for _, a := range allowed {
			if n, ok := normalizeOrigin(a); ok && n == origin {
				return true
			}
		}
		return false
	})
}

func checkOrigin(r *http.Request, allow func(normalized string) bool) error {
	vals := r.Header.Values("Origin")
	switch {
	case len(vals) == 0:
		return nil
	case len(vals) > 1:
		return fmt.Errorf("%w: %d Origin headers", ErrOriginNotAllowed, len(vals))
	}
	if n, ok := normalizeOrigin(vals[0]); ok && allow(n) {
		return nil
	}
	return fmt.Errorf("%w: %q", ErrOriginNotAllowed, vals[0])
}

// CheckLoopbackHost reports whether r's Host header names this machine's
// loopback interface: "localhost" or a loopback IP literal ("127.0.0.1",
// "[::1]"), with any port when port is empty, else with that port or none.
// Otherwise it returns an error wrapping [ErrHostNotAllowed]. A server
// listening on loopback must refuse other hosts: that is what stops DNS
// rebinding.
func CheckLoopbackHost(r *http.Request, port string) error {
	return checkHostHeader(r.Host, true, nil, port)
}

func checkHostHeader(hostport string, loopback bool, hosts map[string]bool, port string) error {
	host, p, ok := splitHost(hostport)
	if ok && port != "" && p != "" && p != port {
		ok = false
	}
	if ok {
		name := strings.ToLower(host)
		ok = (loopback && isLoopbackName(name)) || hosts[name]
	}
	if !ok {
		return fmt.Errorf("%w: %q", ErrHostNotAllowed, hostport)
	}
	return nil
}

// splitHost splits a Host header into host and port. IPv6 literals come
// without brackets. A missing port is "".
func splitHost(hostport string) (host, port string, ok bool) {
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return "", "", false
		}
		host, rest := hostport[1:end], hostport[end+1:]
		if rest == "" {
			return host, "", host != ""
		}
		if rest[0] != ':' || !validPort(rest[1:]) {
			return "", "", false
		}
		return host, rest[1:], host != ""
	}
	host, port, hasPort := strings.Cut(hostport, ":")
	if hasPort && !validPort(port) {
		return "", "", false
	}
	return host, port, host != ""
}

func validPort(p string) bool {
	if p == "" || len(p) > 5 {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
	}
	return true
}

// isLoopbackName reports whether a lower-case host (no port, no brackets)
// is localhost or a loopback IP literal.
func isLoopbackName(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}

// normalizeOrigin returns an origin as browsers serialise it: lower-case
// scheme and host, no default port, no trailing slash. It refuses anything
// with a path, query, fragment or user info.
func normalizeOrigin(s string) (string, bool) {
	s = strings.TrimSuffix(strings.TrimSpace(s), "/")
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "" {
		return "", false
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, true
}

// isLoopbackOrigin reports whether a normalised origin is http(s) on a
// loopback host.
func isLoopbackOrigin(origin string) bool {
	scheme, rest, _ := strings.Cut(origin, "://")
	if scheme != "http" && scheme != "https" {
		return false
	}
	host, _, ok := splitHost(rest)
	return ok && isLoopbackName(host)
}
