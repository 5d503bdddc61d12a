package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/saguaro-go/saguaro/example_app/database"
	"github.com/saguaro-go/saguaro/middleware"
)

// The server's endpoints, relative to the issuer (the app's base URL).
const (
	PathAuthorize = "/oauth/authorize"
	PathCallback  = "/oauth/authorize/callback"
	PathToken     = "/oauth/token"
	PathKeys      = "/oauth/keys"
	PathRegister  = "/oauth/register"
	PathLogin     = "/oauth/login"
)

// Options configures a Server.
type Options struct {
	// Issuer is the server's issuer identifier and base URL, such as
	// http://127.0.0.1:8080; its RFC 8414 metadata is at
	// Issuer/.well-known/oauth-authorization-server. Required.
	Issuer string
	// Resource is the one protected resource tokens are issued for (the
	// MCP endpoint's canonical URL): every token's audience. A request
	// naming another resource (RFC 8707) is refused with invalid_target.
	// Required.
	Resource string
	// Scopes are the scopes clients may ask for. Required.
	Scopes []string
	// DefaultScopes are granted to a request that names no scope (RFC
	// 6749 §3.3). Default: the first of Scopes.
	DefaultScopes []string
	// Implied lists, per scope, the narrower scopes it includes
	// ("tasks:write" includes "tasks:read"): a grant of the broader one
	// carries them too, so that a client that asked for the broader
	// scope alone (a step-up) still passes every narrower check.
	Implied map[string][]string
	// ScopeDescriptions name each scope on the consent page.
	ScopeDescriptions map[string]string
	// DevUser, when set, approves every authorization request for that
	// user without showing a page: for tests and the quickstart, never for
	// a deployment.
	DevUser string
	// InsecureMetadataURLs lets client ID metadata documents be fetched
	// over plain http from loopback hosts (tests); by default only https
	// URLs are client ids.
	InsecureMetadataURLs bool
	// HTTPClient fetches client metadata documents. Default: one with a
	// 5 s timeout that follows no redirects.
	HTTPClient *http.Client
	// Logger receives the server's warnings. Default: slog.Default().
	Logger *slog.Logger
}

// Server is the authorization server. It is safe for concurrent use.
type Server struct {
	opts     Options
	db       *database.DB
	key      *signingKey
	provider *op.Provider
	issuer   *op.IssuerInterceptor
	http     *http.Client
	st       *storage
}

// ErrOptions is wrapped by New's configuration errors.
var ErrOptions = errors.New("oauth: invalid options")

// New migrates the server's schema in db, loads (or on the first start
// creates) its signing key, and returns the server. Replicas that share
// db share everything: keys, clients, codes and refresh tokens.
func New(ctx context.Context, db *database.DB, opts Options) (*Server, error) {
	if opts.Issuer == "" || opts.Resource == "" || len(opts.Scopes) == 0 {
		return nil, fmt.Errorf("%w: Issuer, Resource and Scopes are required", ErrOptions)
	}
	opts.Issuer = strings.TrimRight(opts.Issuer, "/")
	if len(opts.DefaultScopes) == 0 {
		opts.DefaultScopes = opts.Scopes[:1]
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Server{opts: opts, db: db, http: opts.HTTPClient}
	if s.http == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.Proxy = nil
		d := &net.Dialer{Timeout: 5 * time.Second, Control: s.publicOnly}
		tr.DialContext = d.DialContext
		s.http = &http.Client{Timeout: 5 * time.Second, Transport: tr,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if err := db.Migrate(ctx, "oauth", migrations); err != nil {
		return nil, err
	}
	var err error
	if s.key, err = loadSigningKey(ctx, db); err != nil {
		return nil, err
	}
	codeKey, err := loadCryptoKey(ctx, db)
	if err != nil {
		return nil, err
	}
	s.st = &storage{s: s}
	supported := append(slices.Clone(opts.Scopes), oidc.ScopeOfflineAccess)
	s.provider, err = op.NewProvider(&op.Config{
		CryptoKey:             codeKey,
		CodeMethodS256:        true,
		AuthMethodPost:        true,
		GrantTypeRefreshToken: true,
		SupportedScopes:       supported,
	}, s.st, op.StaticIssuer(opts.Issuer),
		op.WithAllowInsecure(), // the example runs on http://127.0.0.1; a deployment serves https
		op.WithCustomAuthEndpoint(op.NewEndpoint(strings.TrimPrefix(PathAuthorize, "/"))),
		op.WithCustomTokenEndpoint(op.NewEndpoint(strings.TrimPrefix(PathToken, "/"))),
		op.WithCustomKeysEndpoint(op.NewEndpoint(strings.TrimPrefix(PathKeys, "/"))),
	)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	s.issuer = op.NewIssuerInterceptor(s.provider.IssuerFromRequest)
	return s, nil
}

// Issuer returns the issuer identifier, the iss of every token.
func (s *Server) Issuer() string { return s.opts.Issuer }

// JWKSURL returns where the server publishes its signing key.
func (s *Server) JWKSURL() string { return s.opts.Issuer + PathKeys }

// Routes mounts the server on r, which must be the app's root router (the
// metadata lives at the root's well-known paths), outside any auth
// middleware.
func (s *Server) Routes(r chi.Router) {
	md := http.HandlerFunc(s.serveMetadata)
	r.With(cors).Get("/.well-known/oauth-authorization-server", md)
	r.With(cors).Get("/.well-known/openid-configuration", md)
	r.Group(func(r chi.Router) {
		r.Use(s.issuer.Handler)
		r.Get(PathAuthorize, s.authorize)
		r.Post(PathAuthorize, s.authorize)
		r.Get(PathCallback, func(w http.ResponseWriter, r *http.Request) { op.AuthorizeCallback(w, r, s.provider) })
		r.Get(PathLogin, s.loginPage)
		r.Post(PathLogin, s.login)
		r.With(cors).Post(PathToken, s.token)
		r.With(cors).Options(PathToken, func(http.ResponseWriter, *http.Request) {})
		r.With(cors).Get(PathKeys, func(w http.ResponseWriter, r *http.Request) { op.Keys(w, r, s.st) })
		r.With(cors).Post(PathRegister, s.register)
		r.With(cors).Options(PathRegister, func(http.ResponseWriter, *http.Request) {})
	})
}

// cors lets browser clients on other origins use the public endpoints:
// they take no cookies, so any origin may.
func cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, MCP-Protocol-Version")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// metadata is the RFC 8414 document.
type metadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	JWKSURI                           string   `json:"jwks_uri"`
	ScopesSupported                   []string `json:"scopes_supported"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	ResponseModesSupported            []string `json:"response_modes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
	SubjectTypesSupported             []string `json:"subject_types_supported"`
	IDTokenSigningAlgValuesSupported  []string `json:"id_token_signing_alg_values_supported"`
}

func (s *Server) serveMetadata(w http.ResponseWriter, _ *http.Request) {
	iss := s.opts.Issuer
	md := metadata{
		Issuer:                            iss,
		AuthorizationEndpoint:             iss + PathAuthorize,
		TokenEndpoint:                     iss + PathToken,
		RegistrationEndpoint:              iss + PathRegister,
		JWKSURI:                           iss + PathKeys,
		ScopesSupported:                   append(slices.Clone(s.opts.Scopes), oidc.ScopeOfflineAccess),
		ResponseTypesSupported:            []string{"code"},
		ResponseModesSupported:            []string{"query"},
		GrantTypesSupported:               []string{"authorization_code", "refresh_token"},
		TokenEndpointAuthMethodsSupported: []string{"none", "client_secret_basic", "client_secret_post"},
		CodeChallengeMethodsSupported:     []string{"S256"},
		ClientIDMetadataDocumentSupported: true,
		SubjectTypesSupported:             []string{"public"},
		IDTokenSigningAlgValuesSupported:  []string{"ES256"},
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_ = json.NewEncoder(w).Encode(md)
}

// errNotPublic refuses a client metadata document on an internal address.
var errNotPublic = errors.New("oauth: a client metadata document must be on a public address")

// publicOnly is the metadata fetcher's dial check: a client_id URL is
// chosen by whoever registers, so it must not reach this server's own
// network (loopback, private, link-local ranges), unless
// InsecureMetadataURLs allows loopback for tests.
func (s *Server) publicOnly(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return errNotPublic
	}
	ip = ip.Unmap()
	if ip.IsLoopback() && s.opts.InsecureMetadataURLs {
		return nil
	}
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsMulticast() || ip.IsUnspecified() || ip.IsInterfaceLocalMulticast() {
		return fmt.Errorf("%w: %s", errNotPublic, ip)
	}
	return nil
}

// resourceKey carries a validated RFC 8707 resource from the authorize
// handler to CreateAuthRequest.
type resourceKey struct{}

func resourceFrom(ctx context.Context) string {
	s, _ := ctx.Value(resourceKey{}).(string)
	return s
}

// authorize serves the authorization endpoint through op.Authorize with
// this server's validation (validateAuthRequest).
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		if tooSlow(w, err) {
			return
		}
		http.Error(w, "invalid request", http.StatusBadRequest)
		return
	}
	resource := s.opts.Resource
	var badResource bool
	if rs := r.Form["resource"]; len(rs) > 0 {
		badResource = len(rs) != 1 || rs[0] != s.opts.Resource
	}
	ctx := context.WithValue(r.Context(), resourceKey{}, resource)
	op.Authorize(w, r.WithContext(ctx), &authorizer{Provider: s.provider, s: s, badResource: badResource})
}

// authorizer is op's Authorizer with this server's validation.
type authorizer struct {
	*op.Provider
	s           *Server
	badResource bool
}

// ValidateAuthRequest implements op.AuthorizeValidator: op's checks of the
// client and its redirect URI first (their errors are never redirected),
// then the MCP rules, whose errors go back to the client's redirect URI:
// PKCE with S256, a resource naming this server's resource, and at least
// one known scope (the defaults when the client named none).
func (a *authorizer) ValidateAuthRequest(ctx context.Context, req *oidc.AuthRequest, st op.Storage, v *op.IDTokenHintVerifier) (string, error) {
	c, err := st.GetClientByClientID(ctx, req.ClientID)
	if err != nil {
		return "", oidc.ErrInvalidRequestRedirectURI().WithDescription("unknown client_id").WithParent(err)
	}
	asked := len(req.Scopes) > 0
	if !asked {
		req.Scopes = slices.Clone(a.s.opts.DefaultScopes)
	}
	sub, err := op.ValidateAuthRequestClient(ctx, req, c, v)
	if err != nil {
		return "", err
	}
	if req.CodeChallenge == "" {
		return "", oidc.ErrInvalidRequest().WithDescription("PKCE is required: send code_challenge with code_challenge_method=S256")
	}
	if req.CodeChallengeMethod != oidc.CodeChallengeMethodS256 {
		return "", oidc.ErrInvalidRequest().WithDescription("code_challenge_method must be S256")
	}
	if a.badResource {
		return "", invalidTarget(a.s.opts.Resource)
	}
	req.Scopes = slices.DeleteFunc(req.Scopes, func(s string) bool {
		return s == oidc.ScopeOfflineAccess || s == oidc.ScopeOpenID
	})
	if len(req.Scopes) == 0 {
		return "", oidc.ErrInvalidScope().WithDescription("none of the requested scopes is known")
	}
	for _, sc := range slices.Clone(req.Scopes) {
		for _, narrower := range a.s.opts.Implied[sc] {
			if !slices.Contains(req.Scopes, narrower) {
				req.Scopes = append(req.Scopes, narrower)
			}
		}
	}
	return sub, nil
}

// invalidTarget is RFC 8707's error for a resource this server does not
// issue tokens for.
func invalidTarget(resource string) *oidc.Error {
	return oidc.ErrInvalidTarget().WithDescription("tokens are issued for %s only", resource)
}

// token serves the token endpoint through op.Exchange, after checking the
// RFC 8707 resource, with the headers RFC 6749 §5.1 asks for.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		if tooSlow(w, err) {
			return
		}
		writeOAuthError(w, http.StatusBadRequest, oidc.ErrInvalidRequest().WithDescription("the body is not a form"))
		return
	}
	for _, res := range r.PostForm["resource"] {
		if res != s.opts.Resource {
			writeOAuthError(w, http.StatusBadRequest, invalidTarget(s.opts.Resource))
			return
		}
	}
	rec := &tokenResponse{header: w.Header()}
	op.Exchange(rec, r, s.provider)
	body := rec.body.Bytes()
	if rec.status == http.StatusOK {
		// op adds an OpenID Connect ID token to every response; this
		// server speaks OAuth only (it drops the openid scope), and an
		// ID token whose audience names the resource must not circulate.
		var m map[string]json.RawMessage
		if json.Unmarshal(body, &m) == nil {
			if _, ok := m["id_token"]; ok {
				delete(m, "id_token")
				body, _ = json.Marshal(m)
				w.Header().Del("Content-Length")
			}
		}
	}
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	w.WriteHeader(rec.status)
	_, _ = w.Write(body)
}

// tokenResponse holds op's token response so that it can be edited.
type tokenResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (t *tokenResponse) Header() http.Header { return t.header }
func (t *tokenResponse) WriteHeader(status int) {
	if t.status == 0 {
		t.status = status
	}
}
func (t *tokenResponse) Write(b []byte) (int, error) {
	if t.status == 0 {
		t.status = http.StatusOK
	}
	return t.body.Write(b)
}

func writeOAuthError(w http.ResponseWriter, status int, e *oidc.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": string(e.ErrorType), "error_description": e.Description})
}

// loginURL is where op sends the user to approve a request.
func (s *Server) loginURL() string { return s.opts.Issuer + PathLogin }

// callbackURL is where the user goes once a request is approved: op
// issues the code there.
func (s *Server) callbackURL(id string) string {
	return s.opts.Issuer + PathCallback + "?id=" + url.QueryEscape(id)
}

// tooSlow answers 408 when err is a body that did not arrive in time
// (middleware.BodyTimeout, which the app puts in front of these
// endpoints), and reports whether it did.
func tooSlow(w http.ResponseWriter, err error) bool {
	if !errors.Is(err, middleware.ErrBodyTimeout) {
		return false
	}
	http.Error(w, "request body too slow", http.StatusRequestTimeout)
	return true
}
