package oauth

import (
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// clientMetadata is what the server keeps of a client: the RFC 7591
// fields it understands, as registered or as read from the client's
// metadata document.
type clientMetadata struct {
	ClientID                string   `json:"client_id,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
	GrantTypes              []string `json:"grant_types,omitempty"`
	ResponseTypes           []string `json:"response_types,omitempty"`
	ClientName              string   `json:"client_name,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
	LogoURI                 string   `json:"logo_uri,omitempty"`
	TOSURI                  string   `json:"tos_uri,omitempty"`
	PolicyURI               string   `json:"policy_uri,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
}

// The kinds of client, as oauth_clients.kind records them.
const (
	kindFirstParty = "first_party" // registered by the app (RegisterPublicClient)
	kindDynamic    = "dynamic"     // registered itself (RFC 7591): its name is its own claim
	kindDocument   = "document"    // a client ID metadata document, fetched from its URL
)

// client implements op.Client.
type client struct {
	md         clientMetadata
	kind       string
	secretHash string
	loginURL   string
	scopes     []string // the scopes it may be granted
}

func (c *client) GetID() string                    { return c.md.ClientID }
func (c *client) RedirectURIs() []string           { return c.md.RedirectURIs }
func (c *client) PostLogoutRedirectURIs() []string { return nil }
func (c *client) LoginURL(id string) string        { return c.loginURL + "?id=" + url.QueryEscape(id) }
func (c *client) AccessTokenType() op.AccessTokenType {
	return op.AccessTokenTypeJWT
}
func (c *client) IDTokenLifetime() time.Duration { return 10 * time.Minute }

// DevMode is false: op then refuses plain-http redirect URIs except
// loopback ones of native clients.
func (c *client) DevMode() bool { return false }
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) IsScopeAllowed(s string) bool         { return slices.Contains(c.scopes, s) }
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return false }
func (c *client) ClockSkew() time.Duration             { return 0 }

// ApplicationType is native when every redirect URI is a loopback or
// private-use one (RFC 8252: the port of a loopback redirect may vary),
// web otherwise (exact match only).
func (c *client) ApplicationType() op.ApplicationType {
	for _, u := range c.md.RedirectURIs {
		if strings.HasPrefix(u, "https://") {
			return op.ApplicationTypeWeb
		}
	}
	return op.ApplicationTypeNative
}

func (c *client) AuthMethod() oidc.AuthMethod {
	switch c.md.TokenEndpointAuthMethod {
	case "client_secret_post":
		return oidc.AuthMethodPost
	case "client_secret_basic":
		return oidc.AuthMethodBasic
	}
	return oidc.AuthMethodNone
}

func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}

func (c *client) GrantTypes() []oidc.GrantType {
	g := []oidc.GrantType{oidc.GrantTypeCode}
	if c.refreshTokens() {
		g = append(g, oidc.GrantTypeRefreshToken)
	}
	return g
}

func (c *client) refreshTokens() bool { return slices.Contains(c.md.GrantTypes, "refresh_token") }

// redirectAllowed reports whether uri is one of the client's redirect
// URIs: the same string, or, for an http URI on a loopback IP literal,
// the same string but for the port (RFC 8252 §7.3: a native app listens
// on whatever port it gets). Scheme, host literal (127.0.0.1, [::1] and
// localhost are three different hosts), path and query must match
// exactly, and a fragment never does.
func (c *client) redirectAllowed(uri string) bool {
	if strings.Contains(uri, "#") {
		return false
	}
	if slices.Contains(c.md.RedirectURIs, uri) {
		return true
	}
	want, ok := withoutPort(uri)
	if !ok {
		return false
	}
	for _, reg := range c.md.RedirectURIs {
		if r, ok := withoutPort(reg); ok && r == want {
			return true
		}
	}
	return false
}

// withoutPort returns an http URI on a loopback IP literal with its port
// taken out, and whether uri is one.
func withoutPort(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, "http://")
	if !ok {
		return "", false
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	host := authority
	if h, port, err := net.SplitHostPort(authority); err == nil {
		for _, d := range port {
			if d < '0' || d > '9' {
				return "", false
			}
		}
		host = h
	} else {
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() || ip.Zone() != "" {
		return "", false
	}
	return "http://" + host + tail, true
}

// validRedirectURI reports whether u may be registered: an absolute URI
// without a fragment that is https, http on a loopback host (RFC 8252
// §7.3), or a private-use scheme with a dot in it (RFC 8252 §7.1, such as
// com.example.app:/callback). Schemes that run code or read local data
// (javascript:, data:, file:, …) are never allowed.
func validRedirectURI(u string) bool {
	p, err := url.Parse(u)
	if err != nil || !p.IsAbs() || p.Fragment != "" || strings.Contains(u, "#") || len(u) > 2000 {
		return false
	}
	switch p.Scheme {
	case "https":
		return p.Host != ""
	case "http":
		h := p.Hostname()
		ip := net.ParseIP(h)
		return h == "localhost" || (ip != nil && ip.IsLoopback())
	case "javascript", "data", "file", "vbscript", "about", "blob", "filesystem", "ws", "wss", "ftp", "mailto":
		return false
	}
	return strings.Contains(p.Scheme, ".")
}
