package middleware

import (
	"net/http"
	"slices"
	"strings"

	"github.com/go-chi/cors"
)

// CORSOptions configures [CORS].
type CORSOptions struct {
	// AllowedOrigins lists the browser origins that may call the endpoint,
	// in go-chi/cors syntax: "https://app.example.com", one "*" wildcard per
	// entry ("https://*.example.com"), or "*" alone for any origin.
	// Required: CORS panics without it (go-chi/cors would default to "*").
	// Give [OriginCheck] the same list (it takes no wildcards), or a
	// browser passes CORS only to be refused with a 403.
	AllowedOrigins []string

	// AllowCredentials lets browsers send cookies and TLS client
	// certificates. MCP clients authenticate with the Authorization header,
	// which needs no credentials mode, so leave it off unless your
	// deployment relies on cookies. Refused together with "*".
	AllowCredentials bool

	// MaxAge is how long, in seconds, a browser may cache a preflight.
	// Default: 300. Browsers cap it (Chrome at 7200).
	MaxAge int

	// AllowedHeaders adds request headers to the preset's list.
	AllowedHeaders []string

	// ExposedHeaders adds response headers to the preset's list.
	ExposedHeaders []string

	// NoParamHeaders stops allowing Mcp-Param-* request headers.
	NoParamHeaders bool
}

// Headers of the CORS preset. Header names are case-insensitive; go-chi/cors
// sends them in canonical form (Mcp-Protocol-Version, Last-Event-Id).
var (
	corsAllowedHeaders = []string{
		"Accept", "Authorization", "Content-Type", "Last-Event-ID",
		"Mcp-Session-Id", "MCP-Protocol-Version", "Mcp-Method", "Mcp-Name",
	}
	corsExposedHeaders = []string{
		"Mcp-Session-Id", "MCP-Protocol-Version", "WWW-Authenticate", "Retry-After",
	}
	corsMethods = []string{http.MethodGet, http.MethodPost, http.MethodDelete, http.MethodOptions}
)

const paramHeaderPrefix = "Mcp-Param-"

// CORS returns the CORS preset for browser MCP clients (such as the MCP
// Inspector), built on go-chi/cors. It allows the methods GET, POST, DELETE
// and OPTIONS and the request headers Accept, Authorization, Content-Type,
// Last-Event-ID, Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, Mcp-Name
// and Mcp-Param-*; it exposes Mcp-Session-Id, MCP-Protocol-Version,
// WWW-Authenticate and Retry-After to scripts.
//
// go-chi/cors matches allowed headers exactly or allows all of them ("*");
// it has no prefix wildcard, and the Mcp-Param-{Name} headers of the
// 2026-07-28 revision are named by each tool's schema. So CORS answers a
// preflight whose requested headers are all in the list above or start with
// Mcp-Param- as if every header were allowed (go-chi/cors then echoes the
// requested list, which browsers accept even with credentials), and any
// other preflight with the strict list.
//
// A preflight (OPTIONS with Origin and Access-Control-Request-Method) is
// answered here and goes no further, so put CORS before authentication. It
// does not refuse anything: a disallowed origin merely gets no CORS headers.
// Pair it with [OriginCheck], which does refuse. CORS panics if opts is nil,
// lists no origin, or combines "*" with AllowCredentials.
func CORS(opts *CORSOptions) func(http.Handler) http.Handler {
	if opts == nil || len(opts.AllowedOrigins) == 0 {
		panic("saguaro/middleware: CORS needs AllowedOrigins")
	}
	o := *opts
	if o.AllowCredentials && slices.Contains(o.AllowedOrigins, "*") {
		panic(`saguaro/middleware: CORS refuses AllowedOrigins "*" with AllowCredentials`)
	}
	if o.MaxAge == 0 {
		o.MaxAge = 300
	}
	allowed := append(slices.Clone(corsAllowedHeaders), o.AllowedHeaders...)
	for _, h := range allowed {
		if h == "*" {
			panic(`saguaro/middleware: CORS refuses AllowedHeaders "*"`)
		}
	}
	base := cors.Options{
		AllowedOrigins:   slices.Clone(o.AllowedOrigins),
		AllowedMethods:   corsMethods,
		AllowedHeaders:   allowed,
		ExposedHeaders:   append(slices.Clone(corsExposedHeaders), o.ExposedHeaders...),
		AllowCredentials: o.AllowCredentials,
		MaxAge:           o.MaxAge,
	}
	strict := cors.New(base)
	if o.NoParamHeaders {
		return strict.Handler
	}
	withParams := base
	withParams.AllowedHeaders = []string{"*"}
	loose := cors.New(withParams)

	known := make(map[string]bool, len(allowed))
	for _, h := range allowed {
		known[http.CanonicalHeaderKey(h)] = true
	}
	return func(next http.Handler) http.Handler {
		strictH, looseH := strict.Handler(next), loose.Handler(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodOptions && onlyKnownOrParamHeaders(r.Header.Get("Access-Control-Request-Headers"), known) {
				looseH.ServeHTTP(w, r)
				return
			}
			strictH.ServeHTTP(w, r)
		})
	}
}

// onlyKnownOrParamHeaders reports whether a requested-headers list names
// at least one Mcp-Param-* header and otherwise only known headers. Every
// name must be made of letters, digits and "-_.", the characters go-chi/cors
// keeps, so that both parsers read the same names.
func onlyKnownOrParamHeaders(list string, known map[string]bool) bool {
	sawParam := false
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		for i := 0; i < len(name); i++ {
			c := name[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
				return false
			}
		}
		name = http.CanonicalHeaderKey(name)
		switch {
		case known[name]:
		case len(name) > len(paramHeaderPrefix) && strings.HasPrefix(name, paramHeaderPrefix):
			sawParam = true
		default:
			return false
		}
	}
	return sawParam
}
