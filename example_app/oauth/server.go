package oauth

import (
	"bytes"
	"context"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
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
	PathRevoke    = "/oauth/revoke"
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
	// KeySecret, when set, encrypts the signing keys where the database
	// keeps them (AES-256-GCM under a key derived from it with
	// HKDF-SHA256), so that a copy of the database (a backup, a dump)
	// does not hold them in plaintext; keys stored in plaintext are
	// encrypted at start. Every replica needs the same value; a long
	// random string (32 bytes from a CSPRNG, base64) is right. Pitfall:
	// with the secret lost, New fails with ErrKeySecret until the keys
	// are deleted from oauth_signing_keys, which ends every token they
	// signed.
	KeySecret string
	// SigningKeyLifetime is how long one key signs access tokens before
	// the server rotates to a new one (see RotateSigningKey). Default 30
	// days; negative: no rotation but RotateSigningKey's.
	SigningKeyLifetime time.Duration
	// RegisteredScopesOnly holds a client that registered a scope (RFC
	// 7591 "scope") to the scopes it registered: it never gets another.
	// Off by default, because MCP's step-up authorization asks for a
	// scope beyond the first one with the same client, and the official
	// MCP SDKs register with the scope of the first challenge and never
	// register again: with this on, their step-up gets the old scope
	// back, and the call that needed the new one keeps failing.
	RegisteredScopesOnly bool
}

// Server is the authorization server. It is safe for concurrent use.
// Close stops its background sweep.
type Server struct {
	opts     Options
	db       *database.DB
	aead     cipher.AEAD // seals the signing keys; nil without Options.KeySecret
	ring     keyRing
	provider *op.Provider
	issuer   *op.IssuerInterceptor
	http     *http.Client
	st       *storage
	limits   *limits
	stop     context.CancelFunc
	done     chan struct{}
	closed   sync.Once
}

// ErrOptions is wrapped by New's configuration errors.
var ErrOptions = errors.New("oauth: invalid options")

// New migrates the server's schema in db, checks (or on the first start
// creates) its signing keys, starts the sweep of what expires, and
// returns the server; Close stops the sweep. Replicas that share db share
// everything: keys, clients, codes and refresh tokens. New fails with
// ErrKeySecret when the stored keys are encrypted with another
// Options.KeySecret than the one given.
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
	if opts.SigningKeyLifetime == 0 {
		opts.SigningKeyLifetime = defaultKeyLifetime
	}
	s := &Server{opts: opts, db: db, http: opts.HTTPClient, limits: newLimits()}
	if s.http == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.Proxy = nil
		d := &net.Dialer{Timeout: 5 * time.Second, Control: s.publicOnly}
		tr.DialContext = d.DialContext
		s.http = &http.Client{Timeout: 5 * time.Second, Transport: tr,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	var err error
	if s.aead, err = keyAEAD(opts.KeySecret); err != nil {
		return nil, fmt.Errorf("%w: KeySecret: %w", ErrOptions, err)
	}
	if err := db.Migrate(ctx, "oauth", migrations); err != nil {
		return nil, err
	}
	if err := s.initKeys(ctx); err != nil {
		return nil, err
	}
	// op encrypts a request's id into its code. Codes are looked up by
	// their hash, never decrypted, so this key protects nothing another
	// replica needs: each process draws its own and stores it nowhere.
	var codeKey [32]byte
	_, _ = rand.Read(codeKey[:])
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
	s.startSweep()
	return s, nil
}

// Close stops the server's background sweep (expired requests, tokens,
// registrations and keys; key rotation). It does not close the database.
func (s *Server) Close() {
	s.closed.Do(func() {
		s.stop()
		<-s.done
	})
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
		// The answers that go back to the client carry iss (RFC 9207).
		r.With(s.limits.authorize.Handler, s.withIss).Get(PathAuthorize, s.authorize)
		r.With(s.limits.authorize.Handler, s.withIss).Post(PathAuthorize, s.authorize)
		r.With(s.withIss).Get(PathCallback, s.callback)
		r.Get(PathLogin, s.loginPage)
		r.With(s.withIss).Post(PathLogin, s.login)
		r.With(cors).Post(PathToken, s.token)
		r.With(cors).Options(PathToken, func(http.ResponseWriter, *http.Request) {})
		r.With(cors).Post(PathRevoke, s.revoke)
		r.With(cors).Options(PathRevoke, func(http.ResponseWriter, *http.Request) {})
		r.With(cors).Get(PathKeys, func(w http.ResponseWriter, r *http.Request) { op.Keys(w, r, s.st) })
		r.With(cors, s.limits.register.Handler).Post(PathRegister, s.register)
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
	RevocationEndpoint                string   `json:"revocation_endpoint"`
	RevocationAuthMethodsSupported    []string `json:"revocation_endpoint_auth_methods_supported"`
	IssParameterSupported             bool     `json:"authorization_response_iss_parameter_supported"`
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
		RevocationEndpoint:                iss + PathRevoke,
		RevocationAuthMethodsSupported:    []string{"none", "client_secret_basic", "client_secret_post"},
		IssParameterSupported:             true,
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_ = json.NewEncoder(w).Encode(md)
}

// resourceKey carries a validated RFC 8707 resource from the authorize
// handler to CreateAuthRequest.
type resourceKey struct{}

func resourceFrom(ctx context.Context) string {
	s, _ := ctx.Value(resourceKey{}).(string)
	return s
}

// maxAuthorizeBody bounds a POSTed authorization request.
const maxAuthorizeBody = 32 << 10

// authorize serves the authorization endpoint through op.Authorize with
// this server's validation (ValidateAuthRequest). Its parameters are
// bounded first (authorizeParams), so that neither the database nor op's
// log lines and redirects ever carry an oversized value: an oversized
// one is a 400, never redirected.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, maxAuthorizeBody)
	}
	if !parseForm(w, r) {
		return
	}
	if e := authorizeParams.check(r.Form); e != nil {
		writeOAuthError(w, http.StatusBadRequest, e)
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

// callback issues the code of an approved request (op.AuthorizeCallback).
func (s *Server) callback(w http.ResponseWriter, r *http.Request) {
	if e := callbackParams.check(r.URL.Query()); e != nil {
		writeOAuthError(w, http.StatusBadRequest, e)
		return
	}
	op.AuthorizeCallback(w, r, s.provider)
}

// parseForm parses r's form and answers 408, 413 or 400 when it cannot.
func parseForm(w http.ResponseWriter, r *http.Request) bool {
	err := r.ParseForm()
	if err == nil {
		return true
	}
	if tooSlow(w, err) {
		return false
	}
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		writeOAuthError(w, http.StatusRequestEntityTooLarge, oidc.ErrInvalidRequest().WithDescription("the request is larger than %d bytes", mbe.Limit))
		return false
	}
	writeOAuthError(w, http.StatusBadRequest, oidc.ErrInvalidRequest().WithDescription("the request is not a form"))
	return false
}

// authorizer is op's Authorizer with this server's validation.
type authorizer struct {
	*op.Provider
	s           *Server
	badResource bool
}

// ValidateAuthRequest implements op.AuthorizeValidator. The client and
// its redirect URI are checked first, and their errors are never
// redirected: the redirect URI must be one the client registered,
// exactly, or a loopback one that differs only in its port (RFC 8252
// §7.3). Then op's checks, and the MCP rules, whose errors go back to the
// client's redirect URI: only response_mode=query (what the metadata
// says); PKCE with S256 and a challenge of 43 to 128 characters (RFC
// 7636); a resource naming this server's resource; and at least one of
// this server's scopes (the defaults when the client named none). Scopes
// it does not offer, the OpenID Connect ones among them (profile, email,
// …), are dropped, so the consent page never shows them.
func (a *authorizer) ValidateAuthRequest(ctx context.Context, req *oidc.AuthRequest, st op.Storage, v *op.IDTokenHintVerifier) (string, error) {
	c, err := a.s.client(ctx, req.ClientID)
	if err != nil {
		return "", oidc.ErrInvalidRequestRedirectURI().WithDescription("unknown client_id").WithParent(err)
	}
	if !c.redirectAllowed(req.RedirectURI) {
		return "", oidc.ErrInvalidRequestRedirectURI().WithDescription("the redirect_uri is not one this client registered")
	}
	asked := len(req.Scopes) > 0
	if !asked {
		req.Scopes = slices.Clone(a.s.opts.DefaultScopes)
	}
	sub, err := op.ValidateAuthRequestClient(ctx, req, c, v)
	if err != nil {
		return "", err
	}
	if req.ResponseMode != "" && req.ResponseMode != oidc.ResponseModeQuery {
		req.ResponseMode = "" // the error itself goes back in the query
		return "", oidc.ErrInvalidRequest().WithDescription("response_mode must be query")
	}
	if req.CodeChallenge == "" {
		return "", oidc.ErrInvalidRequest().WithDescription("PKCE is required: send code_challenge with code_challenge_method=S256")
	}
	if req.CodeChallengeMethod != oidc.CodeChallengeMethodS256 {
		return "", oidc.ErrInvalidRequest().WithDescription("code_challenge_method must be S256")
	}
	if !pkceValue(req.CodeChallenge) {
		return "", oidc.ErrInvalidRequest().WithDescription("code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~")
	}
	if a.badResource {
		return "", invalidTarget(a.s.opts.Resource)
	}
	req.Scopes = slices.DeleteFunc(req.Scopes, func(sc string) bool { return !slices.Contains(a.s.opts.Scopes, sc) })
	if len(req.Scopes) == 0 {
		return "", oidc.ErrInvalidScope().WithDescription("none of the requested scopes is offered to this client")
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

// pkceValue reports whether v is a PKCE code verifier or S256 challenge
// as RFC 7636 §4.1 spells it: 43 to 128 unreserved characters.
func pkceValue(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// invalidTarget is RFC 8707's error for a resource this server does not
// issue tokens for.
func invalidTarget(resource string) *oidc.Error {
	return oidc.ErrInvalidTarget().WithDescription("tokens are issued for %s only", resource)
}

// maxTokenBody bounds a token or revocation request.
const maxTokenBody = 16 << 10

// token serves the token endpoint through op.Exchange, after bounding its
// parameters, checking the RFC 8707 resource, the PKCE verifier's form
// and that the client authenticates the way it registered, with the
// headers RFC 6749 §5.1 asks for.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	r.Body = http.MaxBytesReader(w, r.Body, maxTokenBody)
	if !parseForm(w, r) {
		return
	}
	if e := tokenParams.check(r.Form); e != nil {
		writeOAuthError(w, http.StatusBadRequest, e)
		return
	}
	for _, res := range r.PostForm["resource"] {
		if res != s.opts.Resource {
			writeOAuthError(w, http.StatusBadRequest, invalidTarget(s.opts.Resource))
			return
		}
	}
	if v := r.PostForm.Get("code_verifier"); v != "" && !pkceValue(v) {
		writeOAuthError(w, http.StatusBadRequest, oidc.ErrInvalidRequest().WithDescription("code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~"))
		return
	}
	if !s.authMethodAllowed(w, r) {
		return
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

// authMethodAllowed refuses (401 invalid_client) a client that does not
// authenticate the way it registered (token_endpoint_auth_method): a
// client_secret_basic client with its secret in the body, a
// client_secret_post one with an Authorization header, a public client
// (none) with any secret. op alone accepts either way for every
// confidential client. An unknown client is left to op, which answers
// invalid_client too.
func (s *Server) authMethodAllowed(w http.ResponseWriter, r *http.Request) bool {
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id = r.PostForm.Get("client_id")
	}
	c, err := s.client(r.Context(), id)
	if err != nil {
		return true
	}
	var wrong string
	switch m := c.md.TokenEndpointAuthMethod; {
	case m == "none" && (secret != "" || r.PostForm.Get("client_secret") != ""):
		wrong = "this client is public: it authenticates with no secret"
	case m == "client_secret_basic" && !basic:
		wrong = "this client authenticates with HTTP Basic (client_secret_basic)"
	case m == "client_secret_post" && (basic || r.PostForm.Get("client_secret") == ""):
		wrong = "this client authenticates with client_secret in the body (client_secret_post)"
	}
	if wrong == "" {
		return true
	}
	if basic {
		w.Header().Set("WWW-Authenticate", `Basic realm="oauth"`)
	}
	writeOAuthError(w, http.StatusUnauthorized, oidc.ErrInvalidClient().WithDescription("%s", wrong))
	return false
}

// revoke serves RFC 7009 token revocation through op.Revoke: a refresh
// token revokes its whole family; an access token, a JWT, expires by
// itself (and is answered 200, as RFC 7009 §2.2 asks for a token the
// server does not revoke).
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	r.Body = http.MaxBytesReader(w, r.Body, maxTokenBody)
	if !parseForm(w, r) {
		return
	}
	if e := revokeParams.check(r.Form); e != nil {
		writeOAuthError(w, http.StatusBadRequest, e)
		return
	}
	if r.PostForm.Get("token") == "" {
		writeOAuthError(w, http.StatusBadRequest, oidc.ErrInvalidRequest().WithDescription("token is required"))
		return
	}
	if !s.authMethodAllowed(w, r) {
		return
	}
	op.Revoke(w, r, s.provider)
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
	w.Header().Set("Cache-Control", "no-store")
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

// withIss adds the issuer to every authorization response that goes back
// to the client, successful or not (RFC 9207 §2): a redirect whose query
// carries code or error (the server's own redirects, to the login page
// and the callback, carry neither). The metadata says so
// (authorization_response_iss_parameter_supported), which lets a client
// that talks to several authorization servers tell which one answered.
func (s *Server) withIss(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&issWriter{ResponseWriter: w, iss: s.opts.Issuer}, r)
	})
}

type issWriter struct {
	http.ResponseWriter
	iss   string
	wrote bool
}

func (w *issWriter) WriteHeader(status int) {
	if !w.wrote && (status == http.StatusFound || status == http.StatusSeeOther) {
		if loc, err := url.Parse(w.Header().Get("Location")); err == nil {
			q := loc.Query()
			if (q.Has("code") || q.Has("error")) && !q.Has("iss") {
				q.Set("iss", w.iss)
				loc.RawQuery = q.Encode()
				w.Header().Set("Location", loc.String())
			}
		}
	}
	w.wrote = true
	w.ResponseWriter.WriteHeader(status)
}

func (w *issWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *issWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

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
