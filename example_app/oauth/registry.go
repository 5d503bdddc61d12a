package oauth

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits of client registration.
const (
	maxRedirectURIs  = 10
	maxClientDoc     = 5 << 10 // a client metadata document
	clientDocTTL     = time.Hour
	maxRegistration  = 16 << 10
	maxClientNameLen = 200
	maxURILen        = 2000
	maxScopeLen      = 1000
	// maxDynamicClients bounds the dynamic registrations kept at once;
	// past it, registration answers 503 until the sweep frees room.
	maxDynamicClients = 10000
	// unusedClientTTL: a registration that never got a token is swept
	// this long after it was made; clientIdleTTL: one that did, this
	// long after its last token (by then its refresh tokens are dead).
	unusedClientTTL = 24 * time.Hour
	clientIdleTTL   = refreshFamilyTTL
)

// registrationError is an RFC 7591 §3.2.2 error.
type registrationError struct {
	code, description string
}

func (e *registrationError) Error() string { return e.code + ": " + e.description }

func badMetadata(format string, args ...any) error {
	return &registrationError{"invalid_client_metadata", fmt.Sprintf(format, args...)}
}

func badRedirect(format string, args ...any) error {
	return &registrationError{"invalid_redirect_uri", fmt.Sprintf(format, args...)}
}

// check validates md as registration metadata and fills its defaults.
// public is true for a client metadata document, which may only describe a
// public client.
func (md *clientMetadata) check(public bool) error {
	if len(md.RedirectURIs) == 0 || len(md.RedirectURIs) > maxRedirectURIs {
		return badRedirect("1 to %d redirect_uris are required", maxRedirectURIs)
	}
	for _, u := range md.RedirectURIs {
		if !validRedirectURI(u) {
			return badRedirect("redirect URI %q is not allowed: https, http on a loopback host, or a private-use scheme, without a fragment", u)
		}
	}
	switch md.TokenEndpointAuthMethod {
	case "":
		md.TokenEndpointAuthMethod = "client_secret_basic" // RFC 7591 §2
		if public {
			md.TokenEndpointAuthMethod = "none"
		}
	case "none":
	case "client_secret_basic", "client_secret_post":
		if public {
			return badMetadata("a client metadata document describes a public client: token_endpoint_auth_method must be none")
		}
	default:
		return badMetadata("token_endpoint_auth_method %q is not supported", md.TokenEndpointAuthMethod)
	}
	if len(md.GrantTypes) == 0 {
		md.GrantTypes = []string{"authorization_code"}
	}
	for _, g := range md.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return badMetadata("grant type %q is not supported", g)
		}
	}
	if !slices.Contains(md.GrantTypes, "authorization_code") {
		return badMetadata("grant_types must include authorization_code")
	}
	if len(md.ResponseTypes) == 0 {
		md.ResponseTypes = []string{"code"}
	}
	if len(md.ResponseTypes) != 1 || md.ResponseTypes[0] != "code" {
		return badMetadata("response_types must be [\"code\"]")
	}
	if len(md.ClientName) > maxClientNameLen {
		return badMetadata("client_name is longer than %d characters", maxClientNameLen)
	}
	if !utf8.ValidString(md.ClientName) || strings.IndexFunc(md.ClientName, unicode.IsControl) >= 0 {
		return badMetadata("client_name holds control characters or is not UTF-8")
	}
	for name, u := range map[string]string{"client_uri": md.ClientURI, "logo_uri": md.LogoURI, "tos_uri": md.TOSURI, "policy_uri": md.PolicyURI} {
		if u != "" && !webURI(u) {
			return badMetadata("%s must be an https URL (or http on a loopback address) of at most %d characters", name, maxURILen)
		}
	}
	if len(md.Scope) > maxScopeLen {
		return badMetadata("scope is longer than %d characters", maxScopeLen)
	}
	return nil
}

// webURI reports whether u may be shown or linked as a client's web page:
// https with a host, or http on a loopback host, without user
// information; never javascript:, data: or another scheme a browser
// would run or read locally.
func webURI(u string) bool {
	p, err := url.Parse(u)
	if err != nil || len(u) > maxURILen || p.Host == "" || p.User != nil || p.Opaque != "" {
		return false
	}
	switch p.Scheme {
	case "https":
		return true
	case "http":
		ip, err := netip.ParseAddr(p.Hostname())
		return p.Hostname() == "localhost" || (err == nil && ip.IsLoopback())
	}
	return false
}

// registeredScope keeps the scopes of a registration's scope that this
// server offers (RFC 7591 §2 lets the server replace the value asked
// for): clients habitually register OpenID Connect scopes (profile,
// email) or names of their own, and refusing them would refuse the
// client.
func (s *Server) registeredScope(scope string) string {
	var keep []string
	for _, sc := range strings.Fields(scope) {
		if (slices.Contains(s.opts.Scopes, sc) || sc == "offline_access") && !slices.Contains(keep, sc) {
			keep = append(keep, sc)
		}
	}
	return strings.Join(keep, " ")
}

// register serves RFC 7591 dynamic client registration: 201 with the
// client's id (and secret, for a confidential client), 400 with
// invalid_redirect_uri or invalid_client_metadata, 429 past
// maxAddressRegistrations a minute from one address (the route's
// limiter), 503 when maxDynamicClients are registered.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata", "error_description": "the body must be application/json"})
		return
	}
	var md clientMetadata
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRegistration))
	if err := dec.Decode(&md); err != nil {
		if tooSlow(w, err) {
			return
		}
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata", "error_description": "the body is not a JSON object of client metadata"})
		return
	}
	if err := md.check(false); err != nil {
		var re *registrationError
		errors.As(err, &re)
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": re.code, "error_description": re.description})
		return
	}
	md.Scope = s.registeredScope(md.Scope)
	db := s.db
	var n int
	if err := db.QueryRowContext(r.Context(), `SELECT COUNT(*) FROM oauth_clients WHERE kind = 'dynamic'`).Scan(&n); err != nil {
		s.opts.Logger.Error("oauth: register", "error", err)
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "server_error"})
		return
	}
	if n >= maxDynamicClients {
		retryAfter(w, time.Hour)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "temporarily_unavailable",
			"error_description": "the server holds as many registrations as it keeps; try again later"})
		return
	}
	md.ClientID = "c_" + randomToken()
	var secret, secretHash string
	if md.TokenEndpointAuthMethod != "none" {
		secret = randomToken()
		secretHash = hash(secret)
	}
	data, _ := json.Marshal(md)
	now := time.Now().Unix()
	if _, err := db.ExecContext(r.Context(), db.Rebind(`INSERT INTO oauth_clients (id, secret_hash, metadata, created_at, kind) VALUES (?, ?, ?, ?, 'dynamic')`),
		md.ClientID, secretHash, string(data), now); err != nil {
		s.opts.Logger.Error("oauth: register", "error", err)
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "server_error"})
		return
	}
	out := map[string]any{
		"client_id": md.ClientID, "client_id_issued_at": now,
		"redirect_uris": md.RedirectURIs, "token_endpoint_auth_method": md.TokenEndpointAuthMethod,
		"grant_types": md.GrantTypes, "response_types": md.ResponseTypes,
	}
	for k, v := range map[string]string{"client_name": md.ClientName, "client_uri": md.ClientURI, "logo_uri": md.LogoURI,
		"tos_uri": md.TOSURI, "policy_uri": md.PolicyURI, "scope": md.Scope} {
		if v != "" {
			out[k] = v
		}
	}
	if secret != "" {
		out["client_secret"] = secret
		out["client_secret_expires_at"] = 0
	}
	writeJSON(w, http.StatusCreated, out)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// client returns a registered client, or the client a metadata document
// URL describes (fetched, checked, and kept for an hour).
func (s *Server) client(ctx context.Context, id string) (*client, error) {
	db := s.db
	if len(id) > maxURILen {
		return nil, fmt.Errorf("%w: client id too long", errNotFound)
	}
	var (
		data, secretHash, kind string
		expires                int64
	)
	err := db.QueryRowContext(ctx, db.Rebind(`SELECT metadata, secret_hash, expires_at, kind FROM oauth_clients WHERE id = ?`), id).
		Scan(&data, &secretHash, &expires, &kind)
	switch {
	case err == nil && (expires == 0 || time.Now().Unix() < expires):
		var md clientMetadata
		if err := json.Unmarshal([]byte(data), &md); err != nil {
			return nil, fmt.Errorf("oauth: client %s: %w", id, err)
		}
		return s.newClient(md, kind, secretHash), nil
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("oauth: client: %w", err)
	}
	if !s.isMetadataURL(id) {
		return nil, fmt.Errorf("%w: client %q", errNotFound, id)
	}
	md, err := s.fetchClientDocument(ctx, id)
	if err != nil {
		return nil, err
	}
	doc, _ := json.Marshal(md)
	now := time.Now()
	_, err = db.ExecContext(ctx, db.Rebind(`INSERT INTO oauth_clients (id, metadata, created_at, expires_at, kind) VALUES (?, ?, ?, ?, 'document')
		ON CONFLICT (id) DO UPDATE SET metadata = excluded.metadata, expires_at = excluded.expires_at`),
		id, string(doc), now.Unix(), now.Add(clientDocTTL).Unix())
	if err != nil {
		return nil, fmt.Errorf("oauth: client: %w", err)
	}
	return s.newClient(*md, kindDocument, ""), nil
}

// newClient builds a client from its metadata. It may be granted this
// server's scopes (and offline_access); with RegisteredScopesOnly, only
// those it registered, when it registered some.
func (s *Server) newClient(md clientMetadata, kind, secretHash string) *client {
	scopes := append(slices.Clone(s.opts.Scopes), "offline_access")
	if registered := strings.Fields(md.Scope); s.opts.RegisteredScopesOnly && len(registered) > 0 {
		scopes = slices.DeleteFunc(scopes, func(sc string) bool { return !slices.Contains(registered, sc) && sc != "offline_access" })
	}
	return &client{md: md, kind: kind, secretHash: secretHash, loginURL: s.loginURL(), scopes: scopes}
}

// isMetadataURL reports whether a client id is a client ID metadata
// document URL: https with a path (or, with InsecureMetadataURLs, http on
// a loopback host).
func (s *Server) isMetadataURL(id string) bool {
	u, err := url.Parse(id)
	if err != nil || u.Host == "" || u.Path == "" || u.Path == "/" || u.Fragment != "" || u.User != nil {
		return false
	}
	switch u.Scheme {
	case "https":
		return true
	case "http":
		ip := net.ParseIP(u.Hostname())
		return s.opts.InsecureMetadataURLs && (u.Hostname() == "localhost" || (ip != nil && ip.IsLoopback()))
	}
	return false
}

// fetchClientDocument reads and checks a client ID metadata document: its
// client_id must be the URL it came from, and it describes a public
// client.
func (s *Server) fetchClientDocument(ctx context.Context, id string) (*clientMetadata, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: client %q", errNotFound, id)
	}
	req.Header.Set("Accept", "application/json")
	res, err := s.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("oauth: client metadata document %s: %w", id, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("oauth: client metadata document %s: status %d", id, res.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxClientDoc+1))
	if err != nil || len(body) > maxClientDoc {
		return nil, fmt.Errorf("oauth: client metadata document %s: too large or unreadable", id)
	}
	var md clientMetadata
	if err := json.Unmarshal(body, &md); err != nil {
		return nil, fmt.Errorf("oauth: client metadata document %s: %w", id, err)
	}
	md.Scope = s.registeredScope(md.Scope)
	if md.ClientID != id {
		return nil, fmt.Errorf("oauth: client metadata document %s names client_id %q", id, md.ClientID)
	}
	if strings.Contains(string(body), `"client_secret"`) {
		return nil, fmt.Errorf("oauth: client metadata document %s holds a secret", id)
	}
	if err := md.check(true); err != nil {
		return nil, fmt.Errorf("oauth: client metadata document %s: %w", id, err)
	}
	return &md, nil
}

// RegisterPublicClient records (or updates) a first-party public client
// under a fixed id, such as the app's own dashboard, which signs people in
// with the authorization code flow and PKCE from the browser.
func (s *Server) RegisterPublicClient(ctx context.Context, id, name string, redirectURIs []string) error {
	md := clientMetadata{ClientID: id, ClientName: name, RedirectURIs: redirectURIs, TokenEndpointAuthMethod: "none"}
	if err := md.check(true); err != nil {
		return fmt.Errorf("%w: client %s: %w", ErrOptions, id, err)
	}
	data, _ := json.Marshal(md)
	_, err := s.db.ExecContext(ctx, s.db.Rebind(`INSERT INTO oauth_clients (id, metadata, created_at, kind) VALUES (?, ?, ?, 'first_party')
		ON CONFLICT (id) DO UPDATE SET metadata = excluded.metadata, secret_hash = '', expires_at = 0, kind = 'first_party'`),
		id, string(data), time.Now().Unix())
	if err != nil {
		return fmt.Errorf("oauth: register %s: %w", id, err)
	}
	return nil
}
