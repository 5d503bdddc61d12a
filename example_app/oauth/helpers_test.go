package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/saguaro-go/saguaro/example_app/database"
)

const callback = "http://127.0.0.1:9999/callback"

// testAS is the server on a real loopback listener.
type testAS struct {
	*Server
	srv  *httptest.Server
	base string
	db   *database.DB
}

func sqliteDB(t *testing.T) *database.DB {
	t.Helper()
	db, err := database.Open(context.Background(), filepath.Join(t.TempDir(), "as.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// newAS starts a server on db; dev approves every request as "alice".
func newAS(t *testing.T, db *database.DB, dev bool, mod ...func(*Options)) *testAS {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	opts := Options{Issuer: base, Resource: base + "/mcp", Scopes: []string{"tasks:read", "tasks:write"},
		ScopeDescriptions: map[string]string{"tasks:read": "see the board", "tasks:write": "change the board"},
		Logger:            slog.New(slog.NewTextHandler(io.Discard, nil))}
	if dev {
		opts.DevUser = "alice"
	}
	for _, m := range mod {
		m(&opts)
	}
	s, err := New(context.Background(), db, opts)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	r := chi.NewRouter()
	s.Routes(r)
	srv.Config.Handler = r
	srv.Start()
	t.Cleanup(srv.Close)
	return &testAS{Server: s, srv: srv, base: base, db: db}
}

// noRedirects is a client that shows every redirect instead of following
// it.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (a *testAS) register(t *testing.T, body string) (int, map[string]any) {
	t.Helper()
	res, err := http.Post(a.base+PathRegister, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	return res.StatusCode, m
}

// publicClient registers a public client with refresh tokens.
func (a *testAS) publicClient(t *testing.T) string {
	t.Helper()
	status, m := a.register(t, `{"redirect_uris":["`+callback+`"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"],"client_name":"test client"}`)
	require.Equal(t, http.StatusCreated, status, m)
	return m["client_id"].(string)
}

func pkce() (verifier, challenge string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	verifier = base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

func authParams(clientID, challenge string) url.Values {
	return url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {callback},
		"state": {"st4te"}, "code_challenge": {challenge}, "code_challenge_method": {"S256"}, "scope": {"tasks:read"}}
}

// authorize follows the server's own redirects (login, callback) and
// returns the first response that leaves it: a redirect to the client, or
// an error page.
func (a *testAS) authorize(t *testing.T, p url.Values) *http.Response {
	t.Helper()
	next := a.base + PathAuthorize + "?" + p.Encode()
	for range 5 {
		res, err := noRedirects.Get(next)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		loc := res.Header.Get("Location")
		if loc == "" || !strings.HasPrefix(loc, a.base) {
			return res
		}
		next = loc
	}
	t.Fatal("too many redirects")
	return nil
}

// code runs the authorization and returns the code it yields.
func (a *testAS) code(t *testing.T, p url.Values) string {
	t.Helper()
	res := a.authorize(t, p)
	require.Equal(t, http.StatusFound, res.StatusCode)
	loc, err := url.Parse(res.Header.Get("Location"))
	require.NoError(t, err)
	require.Equal(t, callback, loc.Scheme+"://"+loc.Host+loc.Path)
	require.Empty(t, loc.Query().Get("error"), loc.Query().Get("error_description"))
	require.Equal(t, "st4te", loc.Query().Get("state"))
	return loc.Query().Get("code")
}

func (a *testAS) token(t *testing.T, form url.Values) (int, map[string]any) {
	t.Helper()
	res, err := http.PostForm(a.base+PathToken, form)
	require.NoError(t, err)
	defer res.Body.Close()
	var m map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&m))
	return res.StatusCode, m
}

func exchange(clientID, code, verifier string) url.Values {
	return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {clientID},
		"redirect_uri": {callback}, "code_verifier": {verifier}}
}

func refresh(clientID, token string) url.Values {
	return url.Values{"grant_type": {"refresh_token"}, "refresh_token": {token}, "client_id": {clientID}}
}

func openPG(t *testing.T, url string) *database.DB {
	t.Helper()
	db, err := database.Open(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// cheapPassword sets user's password hashed at bcrypt's lowest cost: the
// race detector makes the default cost take seconds per check.
func cheapPassword(t *testing.T, db *database.DB, user, password string) {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	require.NoError(t, err)
	_, err = db.Exec(db.Rebind(`INSERT INTO oauth_users (name, password_hash) VALUES (?, ?)
		ON CONFLICT (name) DO UPDATE SET password_hash = excluded.password_hash`), user, string(h))
	require.NoError(t, err)
}
