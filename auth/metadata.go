package auth

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// WellKnownPath is the RFC 9728 well-known path of protected resource
// metadata.
const WellKnownPath = "/.well-known/oauth-protected-resource"

// ResourceMetadata is the RFC 9728 document that tells an OAuth client
// which authorization servers issue tokens for this resource and which
// scopes exist. Serve it with [NewMetadataHandler] or [MountMetadata].
// bearer_methods_supported is always ["header"], the only method the
// verifier reads.
type ResourceMetadata struct {
	// Resource is the canonical resource URL: the same string as
	// Options.Resource, the audience tokens must carry. Required.
	Resource string `json:"resource"`

	// AuthorizationServers are the issuer URLs of the authorization
	// servers that issue tokens for it. MCP clients need at least one.
	AuthorizationServers []string `json:"authorization_servers,omitempty"`

	// ScopesSupported lists the scopes this resource understands.
	ScopesSupported []string `json:"scopes_supported,omitempty"`

	// ResourceName is a human-readable name.
	ResourceName string `json:"resource_name,omitempty"`

	// ResourceDocumentation is a URL of documentation for developers.
	ResourceDocumentation string `json:"resource_documentation,omitempty"`
}

// ResourceMetadata returns the metadata this verifier implies: its
// Resource, and its Issuer as the one authorization server. Add
// ScopesSupported and pass it to [MountMetadata].
func (v *Verifier) ResourceMetadata() ResourceMetadata {
	return ResourceMetadata{Resource: v.resource, AuthorizationServers: []string{v.issuer}}
}

// MetadataURL returns where RFC 9728 §3.1 puts the metadata of resource:
// the well-known path inserted between host and path, so
// "https://api.example.com/mcp" gives
// "https://api.example.com/.well-known/oauth-protected-resource/mcp". This
// is the default resource_metadata of a Verifier's challenges.
func MetadataURL(resource string) (string, error) {
	u, err := url.Parse(resource)
	if err == nil {
		err = checkResourceURL(resource)
	}
	if err != nil {
		return "", fmt.Errorf("%w: resource: %w", ErrOptions, err)
	}
	md := url.URL{Scheme: u.Scheme, Host: u.Host, Path: wellKnownPath(u), RawQuery: u.RawQuery}
	return md.String(), nil
}

// wellKnownPath is WellKnownPath plus the resource's path without its
// trailing slash.
func wellKnownPath(u *url.URL) string {
	return WellKnownPath + strings.TrimSuffix(u.EscapedPath(), "/")
}

// NewMetadataHandler validates md and returns a handler that serves it as
// JSON to GET and HEAD (405 with Allow otherwise), with
// "Access-Control-Allow-Origin: *" and an OPTIONS preflight answer, since
// browser-based clients fetch it cross-origin and it is public. The
// document is encoded once, here.
//
// Pitfall: serve it outside the auth middleware; a client must read it
// before it has a token.
func NewMetadataHandler(md *ResourceMetadata) (http.Handler, error) {
	if md == nil {
		return nil, fmt.Errorf("%w: nil ResourceMetadata", ErrOptions)
	}
	if err := checkResourceURL(md.Resource); err != nil {
		return nil, fmt.Errorf("%w: ResourceMetadata.Resource: %w", ErrOptions, err)
	}
	for _, as := range md.AuthorizationServers {
		if u, err := url.Parse(as); err != nil || !u.IsAbs() || u.Host == "" {
			return nil, fmt.Errorf("%w: authorization server %q is not an absolute URL", ErrOptions, as)
		}
	}
	for _, s := range md.ScopesSupported {
		if !isScopeToken(s) {
			return nil, fmt.Errorf("%w: %q is not a valid scope token", ErrOptions, s)
		}
	}
	doc := struct {
		ResourceMetadata
		BearerMethods []string `json:"bearer_methods_supported"`
	}{*md, []string{"header"}}
	doc.AuthorizationServers = slices.Clone(md.AuthorizationServers)
	doc.ScopesSupported = slices.Clone(md.ScopesSupported)
	body, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: encode metadata: %w", ErrOptions, err)
	}
	body = append(body, '\n')
	length := strconv.Itoa(len(body))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodGet, http.MethodHead:
		case http.MethodOptions:
			h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "*")
			h.Set("Access-Control-Max-Age", "86400")
			w.WriteHeader(http.StatusNoContent)
			return
		default:
			h.Set("Allow", "GET, HEAD, OPTIONS")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "public, max-age=300")
		h.Set("Content-Length", length)
		if r.Method == http.MethodGet {
			_, _ = w.Write(body)
		}
	}), nil
}

// Router is the one method [MountMetadata] needs; *chi.Mux, chi.Router and
// *http.ServeMux all have it.
type Router interface {
	Handle(pattern string, h http.Handler)
}

// MountMetadata serves md on r at the root well-known path
// (/.well-known/oauth-protected-resource) and, when md.Resource has a
// path, at the path-suffixed variant RFC 9728 and MCP clients try first
// (/.well-known/oauth-protected-resource/mcp for ".../mcp"). Call it on the
// root router, outside any auth middleware.
//
// Pitfall: the root path can describe only one resource. With several
// protected resources on one host, mount one with MountMetadata and serve
// the others with NewMetadataHandler at their suffixed paths only (an
// http.ServeMux panics when a pattern is registered twice).
func MountMetadata(r Router, md *ResourceMetadata) error {
	h, err := NewMetadataHandler(md)
	if err != nil {
		return err
	}
	u, _ := url.Parse(md.Resource) // checked by NewMetadataHandler
	r.Handle(WellKnownPath, h)
	if p := wellKnownPath(u); p != WellKnownPath {
		r.Handle(p, h)
	}
	return nil
}
