// Package origin is the one Origin and Host rule of saguaro's endpoints,
// shared by the MCP endpoint's options and the OriginCheck middleware so
// that the two never disagree about a request.
//
// The rule, checked on every request:
//
//   - Host: on a connection that arrived at a loopback address, the Host
//     header must name the loopback interface (localhost, 127.0.0.1,
//     [::1], any port) or be listed; that stops DNS rebinding, where a
//     page on evil.example.com resolves its own name to 127.0.0.1. When
//     hosts are listed, every other connection's Host must be listed too.
//     A listed host ("example.com") matches any port; "example.com:8443"
//     only that one.
//   - Origin: a request without one (not a browser) passes. One is
//     allowed when it is the endpoint's own (its host and port are the
//     Host header's), listed, or a loopback origin on a loopback
//     connection; "*" in the list allows every origin. Several Origin
//     headers, or a malformed one, are refused.
package origin

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Errors a Rule reports, wrapped with the offending value.
var (
	ErrOriginNotAllowed = errors.New("origin not allowed")
	ErrHostNotAllowed   = errors.New("host not allowed")
)

// Rule is a compiled rule. The zero Rule allows no listed origin and no
// listed host.
type Rule struct {
	origins map[string]bool
	any     bool
	hosts   map[string]bool
}

// New compiles a rule: origins as "scheme://host[:port]" or "*", hosts as
// "name", "name:port", "[v6]" or "[v6]:port". It fails on a malformed
// entry.
func New(origins, hosts []string) (*Rule, error) {
	r := &Rule{origins: map[string]bool{}, hosts: map[string]bool{}}
	for _, o := range origins {
		if o == "*" {
			r.any = true
			continue
		}
		n, ok := Normalize(o)
		if !ok || strings.Contains(o, "*") {
			return nil, fmt.Errorf("bad allowed origin %q (want scheme://host[:port] or *)", o)
		}
		r.origins[n] = true
	}
	for _, h := range hosts {
		host, port, ok := splitHost(strings.ToLower(strings.TrimSpace(h)))
		if !ok || strings.ContainsAny(host, "/@ *") {
			return nil, fmt.Errorf("bad allowed host %q (want name[:port])", h)
		}
		r.hosts[joinHost(host, port)] = true
	}
	return r, nil
}

// Check applies the rule to a request: nil, or an error wrapping
// ErrHostNotAllowed or ErrOriginNotAllowed.
func (r *Rule) Check(req *http.Request) error {
	loopback := onLoopback(req)
	if loopback || len(r.hosts) > 0 {
		if !r.hostAllowed(req.Host, loopback) {
			return fmt.Errorf("%w: %q", ErrHostNotAllowed, req.Host)
		}
	}
	vals := req.Header.Values("Origin")
	switch {
	case len(vals) == 0:
		return nil
	case len(vals) > 1:
		return fmt.Errorf("%w: %d Origin headers", ErrOriginNotAllowed, len(vals))
	}
	if r.any {
		return nil
	}
	n, ok := Normalize(vals[0])
	if ok && (r.origins[n] || sameOrigin(n, req.Host) || loopback && isLoopbackOrigin(n)) {
		return nil
	}
	return fmt.Errorf("%w: %q", ErrOriginNotAllowed, vals[0])
}

func (r *Rule) hostAllowed(hostport string, loopback bool) bool {
	host, port, ok := splitHost(strings.ToLower(hostport))
	if !ok {
		return false
	}
	return loopback && isLoopbackName(host) || r.hosts[joinHost(host, "")] || port != "" && r.hosts[joinHost(host, port)]
}

// onLoopback reports whether the request arrived at a loopback address.
func onLoopback(r *http.Request) bool {
	addr, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// sameOrigin reports whether a normalised origin is the endpoint's own:
// its host and port are the Host header's (a default port written or not).
func sameOrigin(origin, hostHeader string) bool {
	scheme, rest, _ := strings.Cut(origin, "://")
	host, port, ok := splitHost(strings.ToLower(hostHeader))
	if !ok {
		return false
	}
	if scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		port = ""
	}
	return rest == joinHost(host, port)
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

func joinHost(host, port string) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return host
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

// Normalize returns an origin as browsers serialise it: lower-case scheme
// and host, no default port, no trailing slash. It refuses anything with
// a path, query, fragment or user info.
func Normalize(s string) (string, bool) {
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
	return scheme + "://" + joinHost(host, port), true
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
