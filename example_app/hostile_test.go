package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/saguaro-go/saguaro/example_app/database/dbtest"
)

// The hostile suite: an attacker's probes against the real app (its
// router, its authorization server, its database) over loopback HTTP, on
// SQLite and on PostgreSQL. Each subtest is one probe or one finding of
// a review of the app as an attacker; every check asserts the status and
// the body an attack must get.

// hostile is one app under attack.
type hostile struct {
	*testApp
	base string
}

// startHostile starts the app on a real loopback server with its board in
// database (an SQLite path or a PostgreSQL URL).
func startHostile(t *testing.T, database string, mod func(*config)) *hostile {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	cfg := config{BaseURL: base, Database: database}
	if mod != nil {
		mod(&cfg)
	}
	a, err := newApp(context.Background(), cfg, quietLogger())
	require.NoError(t, err)
	srv.Config.Handler = a.Handler()
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		a.Close()
	})
	return &hostile{testApp: &testApp{app: a, srv: srv}, base: base}
}

// backends names the two databases the suite runs on; each call of the
// function gives a fresh, empty database.
var backends = []struct {
	name string
	db   func(t *testing.T) string
}{
	{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "board.db") }},
	{"postgres", func(t *testing.T) string { return dbtest.URL(t) }},
}

// manual is a client that shows every redirect instead of following it.
var manual = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

const cb = "http://127.0.0.1:9999/cb"

func (h *hostile) send(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	res, err := manual.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func (h *hostile) get(t *testing.T, path string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, h.base+path, nil)
	require.NoError(t, err)
	return h.send(t, req)
}

func (h *hostile) postForm(t *testing.T, path string, form url.Values) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.base+path, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return h.send(t, req)
}

func (h *hostile) register(t *testing.T, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.base+"/oauth/register", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	res, b := h.send(t, req)
	var m map[string]any
	_ = json.Unmarshal([]byte(b), &m)
	return res.StatusCode, m
}

// client registers a public client with refresh tokens and cb as its
// redirect URI.
func (h *hostile) client(t *testing.T, extra string) string {
	t.Helper()
	status, m := h.register(t, `{"redirect_uris":["`+cb+`"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"],"client_name":"probe"`+extra+`}`)
	require.Equal(t, http.StatusCreated, status, m)
	return m["client_id"].(string)
}

func newPKCE() (verifier, challenge string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	verifier = base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

func authz(clientID, challenge string) url.Values {
	return url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {cb}, "state": {"st"},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "scope": {scopeRead}}
}

// authorize follows the app's own redirects (login, callback) and returns
// the first answer that leaves it: a redirect to the client, or an error.
func (h *hostile) authorize(t *testing.T, p url.Values) (*http.Response, string) {
	t.Helper()
	next := h.base + "/oauth/authorize?" + p.Encode()
	for range 5 {
		req, _ := http.NewRequest(http.MethodGet, next, nil)
		res, body := h.send(t, req)
		loc := res.Header.Get("Location")
		if loc == "" || !strings.HasPrefix(loc, h.base+"/oauth/") {
			return res, body
		}
		next = loc
	}
	t.Fatal("too many redirects")
	return nil, ""
}

// back parses the redirect to the client and checks that it went to cb.
func back(t *testing.T, res *http.Response) url.Values {
	t.Helper()
	require.Equal(t, http.StatusFound, res.StatusCode)
	loc, err := url.Parse(res.Header.Get("Location"))
	require.NoError(t, err)
	require.Equal(t, cb, loc.Scheme+"://"+loc.Host+loc.Path, "the answer goes to the registered redirect URI")
	assert.Empty(t, loc.Fragment, "the answer is in the query (response_mode=query)")
	return loc.Query()
}

// code runs a development-approved authorization and returns its code.
func (h *hostile) code(t *testing.T, p url.Values) string {
	t.Helper()
	res, body := h.authorize(t, p)
	q := back(t, res)
	require.Empty(t, q.Get("error"), "%s %s", q.Get("error_description"), body)
	require.NotEmpty(t, q.Get("code"))
	return q.Get("code")
}

func (h *hostile) grant(t *testing.T, form url.Values) (int, map[string]any) {
	t.Helper()
	res, body := h.postForm(t, "/oauth/token", form)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &m), body)
	return res.StatusCode, m
}

func codeForm(clientID, code, verifier string) url.Values {
	return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {clientID},
		"redirect_uri": {cb}, "code_verifier": {verifier}}
}

func refreshForm(clientID, token string) url.Values {
	return url.Values{"grant_type": {"refresh_token"}, "refresh_token": {token}, "client_id": {clientID}}
}

// tokens runs a whole code flow for clientID and returns the token
// response.
func (h *hostile) tokens(t *testing.T, clientID string) map[string]any {
	t.Helper()
	verifier, challenge := newPKCE()
	status, tok := h.grant(t, codeForm(clientID, h.code(t, authz(clientID, challenge)), verifier))
	require.Equal(t, http.StatusOK, status, tok)
	return tok
}

// count returns the rows of an SQL count.
func (h *hostile) count(t *testing.T, query string) int {
	t.Helper()
	var n int
	require.NoError(t, h.db.QueryRow(query).Scan(&n))
	return n
}

// longestLine is the length of the log's longest line.
func (l *lockedBuffer) longestLine() int {
	n := 0
	for _, line := range strings.Split(l.String(), "\n") {
		n = max(n, len(line))
	}
	return n
}

func TestHostile(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			dev := startHostile(t, be.db(t), func(c *config) { c.DevUser = "tester" })
			probe := dev.client(t, "")
			t.Run("bounded parameters and bodies", func(t *testing.T) { hostileBounds(t, dev, probe) })
			t.Run("login attempts", func(t *testing.T) { hostileLogin(t, startHostile(t, be.db(t), nil)) })
			t.Run("public feed", func(t *testing.T) {
				hostileFeed(t, startHostile(t, be.db(t), func(c *config) { c.DevUser = "tester"; c.FeedPerClient, c.FeedTotal = 2, 3 }))
			})
			t.Run("keys", func(t *testing.T) {
				hostileKeys(t, startHostile(t, be.db(t), func(c *config) { c.DevUser = "tester"; c.KeySecret = "correct horse battery staple" }), be.name)
			})
			t.Run("registration", func(t *testing.T) { hostileRegistration(t, startHostile(t, be.db(t), nil)) })
			t.Run("loopback redirect URIs", func(t *testing.T) { hostileRedirects(t, dev, probe) })
			t.Run("scopes", func(t *testing.T) { hostileScopes(t, dev, probe) })
			t.Run("authorization request", func(t *testing.T) { hostileAuthorizationRequest(t, dev, probe) })
			t.Run("consent page", func(t *testing.T) { hostileConsent(t, startHostile(t, be.db(t), nil)) })
			t.Run("security headers", func(t *testing.T) { hostileHeaders(t, dev) })
			t.Run("token endpoint authentication", func(t *testing.T) { hostileClientAuth(t, dev) })
			t.Run("refresh families and revocation", func(t *testing.T) { hostileRefresh(t, dev, probe) })
			t.Run("held: PKCE, code replay, resource", func(t *testing.T) { heldCodeFlow(t, dev, probe) })
			t.Run("held: sessions, Origin and Host, tokens", func(t *testing.T) { heldMCP(t, dev) })
			t.Run("held: injection and SSRF", func(t *testing.T) { heldInjection(t, dev) })
		})
	}
}

// hostileBounds: no parameter or body reaches the database, op's log or a
// redirect unbounded (a 10 MB form, a 2 MB state, as the review sent).
func hostileBounds(t *testing.T, h *hostile, clientID string) {
	_, challenge := newPKCE()
	before := h.count(t, `SELECT COUNT(*) FROM oauth_requests`)

	// op logs refused requests on slog's default logger: watch it.
	logs := &lockedBuffer{}
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(logs, nil)))
	defer slog.SetDefault(old)

	big := authz(clientID, challenge)
	big.Set("state", strings.Repeat("s", 10<<20))
	res, body := h.postForm(t, "/oauth/authorize", big)
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)
	assert.Contains(t, body, `"error":"invalid_request"`)
	assert.Empty(t, res.Header.Get("Location"))

	// net/http bounds a request's head at 1 MiB (431), so a GET carries
	// less; what fits is bounded by the endpoint.
	p := authz(clientID, challenge)
	p.Set("state", strings.Repeat("s", 2<<20))
	res, _ = h.get(t, "/oauth/authorize?"+p.Encode())
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, res.StatusCode)
	for name, size := range map[string]int{"state": 512 << 10, "nonce": 64 << 10, "redirect_uri": 4000, "scope": 8000, "code_challenge": 4000, "login_hint": 4000} {
		p := authz(clientID, challenge)
		p.Set(name, strings.Repeat("a", size))
		res, body := h.get(t, "/oauth/authorize?"+p.Encode())
		assert.Equal(t, http.StatusBadRequest, res.StatusCode, name)
		assert.Contains(t, body, `"error":"invalid_request"`, name)
		assert.Contains(t, body, "longer than", name)
		assert.Empty(t, res.Header.Get("Location"), "%s: an oversized value is never redirected", name)
		assert.Less(t, len(body), 512, name)
	}
	p = authz(clientID, challenge)
	p.Add("state", "two")
	res, body = h.get(t, "/oauth/authorize?"+p.Encode())
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Contains(t, body, "state is repeated")
	assert.Equal(t, before, h.count(t, `SELECT COUNT(*) FROM oauth_requests`), "nothing was stored")
	assert.Less(t, logs.longestLine(), 4096, "no log line carries a value")

	// The largest state allowed goes through and comes back whole.
	p = authz(clientID, challenge)
	state := strings.Repeat("x", 2048)
	p.Set("state", state)
	res, _ = h.authorize(t, p)
	q := back(t, res)
	assert.Equal(t, state, q.Get("state"))
	assert.NotEmpty(t, q.Get("code"))

	// The other endpoints.
	res, body = h.postForm(t, "/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {strings.Repeat("c", 100<<10)}})
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, body)
	res, body = h.postForm(t, "/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {strings.Repeat("c", 4000)}, "client_id": {clientID}})
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Contains(t, body, "code is longer than")
	res, body = h.get(t, "/oauth/authorize/callback?id="+strings.Repeat("i", 10<<10))
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Contains(t, body, "longer than")
	res, _ = h.get(t, "/oauth/login?id="+strings.Repeat("i", 10<<10))
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	res, body = h.postForm(t, "/oauth/login", url.Values{"id": {"x"}, "username": {strings.Repeat("u", 1000)}, "password": {"p"}})
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Contains(t, body, "username is longer than")
	res, _ = h.postForm(t, "/oauth/login", url.Values{"id": {"x"}, "password": {strings.Repeat("p", 20<<10)}})
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)
	status, m := h.register(t, `{"redirect_uris":["`+cb+`"],"client_name":"`+strings.Repeat("n", 20<<10)+`"}`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "invalid_client_metadata", m["error"])
	res, body = h.postForm(t, "/oauth/revoke", url.Values{"token": {strings.Repeat("t", 20<<10)}})
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, body)
}

// hostileLogin: wrong passwords are bounded per request (the fifth ends
// it), per user (the tenth locks the name for a while) and per address
// (the 21st attempt in a minute waits), each with its answer.
func hostileLogin(t *testing.T, h *hostile) {
	// Passwords hashed at bcrypt's lowest cost: the race detector makes
	// the default cost take seconds, and the bounds are what is tested.
	for user, pw := range map[string]string{"bob": "correct horse", "carol": "battery staple"} {
		hash, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
		require.NoError(t, err)
		_, err = h.db.Exec(h.db.Rebind(`INSERT INTO oauth_users (name, password_hash) VALUES (?, ?)`), user, string(hash))
		require.NoError(t, err)
	}
	clientID := h.client(t, "")
	attempts := 0
	start := func() string {
		_, challenge := newPKCE()
		res, _ := h.get(t, "/oauth/authorize?"+authz(clientID, challenge).Encode())
		require.Equal(t, http.StatusFound, res.StatusCode)
		u, err := url.Parse(res.Header.Get("Location"))
		require.NoError(t, err)
		require.Equal(t, "/oauth/login", u.Path)
		return u.Query().Get("id")
	}
	login := func(id, user, password string) (*http.Response, string) {
		attempts++
		return h.postForm(t, "/oauth/login", url.Values{"id": {id}, "username": {user}, "password": {password}, "action": {"approve"}})
	}

	// Per request: four wrong passwords, then the fifth ends it, and the
	// right password no longer opens it.
	id := start()
	for i := range 4 {
		res, body := login(id, "bob", fmt.Sprintf("wrong %d", i))
		require.Equal(t, http.StatusUnauthorized, res.StatusCode)
		assert.Contains(t, body, "Wrong user or password")
	}
	res, _ := login(id, "bob", "wrong 4")
	q := back(t, res)
	assert.Equal(t, "access_denied", q.Get("error"))
	assert.Equal(t, "st", q.Get("state"))
	assert.Empty(t, q.Get("code"))
	res, body := login(id, "bob", "correct horse")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, "a request that failed too often is dead")
	assert.Contains(t, body, "unknown or expired")

	// Per user: five more wrong passwords on a new request (ten for bob),
	// then bob must wait, even with the right password.
	id = start()
	for i := range 5 {
		res, _ := login(id, "bob", fmt.Sprintf("again %d", i))
		if i < 4 {
			assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
		} else {
			assert.Equal(t, "access_denied", back(t, res).Get("error"))
		}
	}
	id = start()
	res, body = login(id, "bob", "correct horse")
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	assert.Equal(t, "900", res.Header.Get("Retry-After"))
	assert.Contains(t, body, "Too many failed sign-ins")
	// An injection attempt is a wrong password like any other.
	res, body = login(id, "' OR '1'='1' --", "' OR '1'='1' --")
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
	assert.Contains(t, body, "Wrong user or password")
	// Another user is not locked out by bob's failures.
	res, _ = login(id, "carol", "battery staple")
	assert.Equal(t, http.StatusSeeOther, res.StatusCode, "carol signs in")

	// Per address: 20 attempts a minute, whatever they are (these name
	// no pending request: they cost no password check).
	for attempts < 20 {
		res, _ := login("no-such-request", "carol", "battery staple")
		require.Equal(t, http.StatusBadRequest, res.StatusCode, "attempt %d", attempts)
	}
	res, body = login(start(), "carol", "battery staple")
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	assert.Equal(t, "60", res.Header.Get("Retry-After"))
	assert.Contains(t, body, "Too many sign-in attempts")
}

// hostileFeed: the public feed carries no notes and no session ids,
// checks Host and Origin, and bounds its streams.
func hostileFeed(t *testing.T, h *hostile) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	writer := h.token(t, scopeRead+" "+scopeWrite)
	res, body := h.do(t, http.MethodPost, "/api/tasks", writer, `{"title":"Payroll","notes":"the safe code is 1234"}`)
	require.Equal(t, http.StatusCreated, res.StatusCode, body)

	feed, rd := openFeed(t, ctx, h.base, "")
	defer feed.Body.Close()
	snap := nextOf(t, rd, "snapshot")
	assert.Contains(t, string(snap.Data), "Payroll")
	assert.NotContains(t, string(snap.Data), "1234", "the snapshot carries no notes")
	assert.NotContains(t, string(snap.Data), "notes")

	res, _ = h.do(t, http.MethodPost, "/api/tasks", writer, `{"title":"Audit","notes":"password is hunter2"}`)
	require.Equal(t, http.StatusCreated, res.StatusCode)
	for {
		ev := nextOf(t, rd, "task")
		assert.NotContains(t, string(ev.Data), "1234", "a change carries no notes")
		assert.NotContains(t, string(ev.Data), "hunter2", "a change carries no notes")
		if strings.Contains(string(ev.Data), "Audit") {
			break
		}
	}
	sid := h.initialize(t, writer)
	ev := nextOf(t, rd, "mcp")
	assert.Contains(t, string(ev.Data), "session opened")
	assert.NotContains(t, string(ev.Data), sid, "the feed never carries a session id")
	assert.NotContains(t, string(ev.Data), sid[:8])

	for _, hdr := range []struct{ name, value string }{{"Host", "evil.example"}, {"Origin", "https://evil.example"}} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.base+"/events", nil)
		if hdr.name == "Host" {
			req.Host = hdr.value
		} else {
			req.Header.Set(hdr.name, hdr.value)
		}
		res, body := h.send(t, req)
		assert.Equal(t, http.StatusForbidden, res.StatusCode, hdr.name)
		assert.NotContains(t, body, "Payroll", hdr.name)
	}

	// Two streams per address (this app's setting), three in all: the
	// first client (127.0.0.1) already holds one.
	from := func(ip string) *http.Client {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	}
	open := func(c *http.Client) *http.Response {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.base+"/events", nil)
		res, err := c.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	one, two := from("127.0.0.1"), from("127.0.0.2")
	res = open(one)
	require.Equal(t, http.StatusOK, res.StatusCode)
	res = open(one)
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode, "a third stream from one address")
	assert.NotEmpty(t, res.Header.Get("Retry-After"))
	res = open(two)
	require.Equal(t, http.StatusOK, res.StatusCode, "another address still gets one")
	res = open(two)
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode, "the fourth stream in all")
}

// hostileKeys: the SQLite files are private, the signing keys are stored
// encrypted, and they rotate with the key set publishing old and new.
func hostileKeys(t *testing.T, h *hostile, backend string) {
	ctx := context.Background()
	if backend == "sqlite" {
		path := h.cfg.Database
		_, _ = h.do(t, http.MethodPost, "/api/tasks", h.token(t, scopeWrite), `{"title":"a write, for the log"}`)
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			st, err := os.Stat(p)
			require.NoError(t, err, p)
			assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), p)
		}
	}
	rows, err := h.db.Query(`SELECT private_key FROM oauth_signing_keys`)
	require.NoError(t, err)
	n := 0
	for rows.Next() {
		var k string
		require.NoError(t, rows.Scan(&k))
		assert.NotContains(t, k, "PRIVATE KEY", "a key is stored encrypted")
		n++
	}
	require.NoError(t, rows.Close())
	assert.Equal(t, 1, n)
	assert.Equal(t, 0, h.count(t, `SELECT COUNT(*) FROM oauth_secrets`), "no key in plaintext anywhere")

	kid := func(tok string) string {
		hdr, _ := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[0])
		var m map[string]any
		require.NoError(t, json.Unmarshal(hdr, &m))
		return m["kid"].(string)
	}
	jwks := func() []string {
		res, body := h.get(t, "/oauth/keys")
		require.Equal(t, http.StatusOK, res.StatusCode)
		var set struct {
			Keys []struct {
				Kid string `json:"kid"`
			} `json:"keys"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &set))
		var ids []string
		for _, k := range set.Keys {
			ids = append(ids, k.Kid)
		}
		return ids
	}
	old := h.token(t, scopeRead)
	require.NoError(t, h.oauth.RotateSigningKey(ctx))
	fresh := h.token(t, scopeRead)
	require.NotEqual(t, kid(old), kid(fresh), "a new key signs")
	assert.ElementsMatch(t, []string{kid(old), kid(fresh)}, jwks(), "the key set publishes old and new")
	for _, tok := range []string{fresh, old} {
		res, body := h.do(t, http.MethodGet, "/api/tasks", tok, "")
		assert.Equal(t, http.StatusOK, res.StatusCode, body)
	}
	// Once its tokens are long expired, the old key leaves the set.
	_, err = h.db.Exec(h.db.Rebind(`UPDATE oauth_signing_keys SET retired_at = ? WHERE id = ?`), time.Now().Add(-3*time.Hour).Unix(), kid(old))
	require.NoError(t, err)
	assert.Equal(t, []string{kid(fresh)}, jwks())
}

// hostileRegistration: registration is rate-limited per address, and its
// URIs are web URLs, never script.
func hostileRegistration(t *testing.T, h *hostile) {
	for _, u := range []string{"javascript:alert(document.cookie)", "data:text/html,<script>alert(1)</script>", "https://" + strings.Repeat("x", 15<<10) + ".example/"} {
		for _, field := range []string{"client_uri", "logo_uri", "tos_uri", "policy_uri"} {
			status, m := h.register(t, `{"redirect_uris":["`+cb+`"],"`+field+`":"`+u+`"}`)
			assert.Equal(t, http.StatusBadRequest, status, field)
			assert.Equal(t, "invalid_client_metadata", m["error"], field)
			assert.NotContains(t, m, "client_id")
		}
	}
	// The twelve refusals count: 20 attempts a minute from one address.
	for i := 12; i < 20; i++ {
		status, m := h.register(t, `{"redirect_uris":["`+cb+`"],"client_uri":"https://app.example/about","token_endpoint_auth_method":"none"}`)
		require.Equal(t, http.StatusCreated, status, "attempt %d: %v", i+1, m)
		assert.Equal(t, "https://app.example/about", m["client_uri"])
	}
	req, _ := http.NewRequest(http.MethodPost, h.base+"/oauth/register", strings.NewReader(`{"redirect_uris":["`+cb+`"],"client_uri":"`+strings.Repeat("x", 15<<10)+`"}`))
	req.Header.Set("Content-Type", "application/json")
	res, body := h.send(t, req)
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
	assert.Equal(t, "60", res.Header.Get("Retry-After"))
	assert.Contains(t, body, "too many registrations")
	assert.Equal(t, 8, h.count(t, `SELECT COUNT(*) FROM oauth_clients WHERE id LIKE 'c_%'`))
}

// hostileRedirects: a loopback redirect URI may differ from the
// registered one in its port only (RFC 8252 §7.3).
func hostileRedirects(t *testing.T, h *hostile, clientID string) {
	_, challenge := newPKCE()
	for _, uri := range []string{
		"http://localhost:9999/cb", "http://127.0.0.2:9999/cb", "http://[::1]:9999/cb", "https://127.0.0.1:9999/cb",
		"http://127.0.0.1:9999/%63b", "http://127.0.0.1:9999/cb#frag", "http://127.0.0.1:9999/cb/", "http://127.0.0.1:9999/cb?x=1",
		"http://user@127.0.0.1:9999/cb", "http://127.0.0.1:9999/CB", "http://127.0.0.1/cb/../cb",
	} {
		p := authz(clientID, challenge)
		p.Set("redirect_uri", uri)
		res, _ := h.get(t, "/oauth/authorize?"+p.Encode())
		assert.Equal(t, http.StatusBadRequest, res.StatusCode, uri)
		assert.Empty(t, res.Header.Get("Location"), "%s: never redirected", uri)
	}
	// The port alone may change.
	p := authz(clientID, challenge)
	p.Set("redirect_uri", "http://127.0.0.1:41234/cb")
	res, _ := h.authorize(t, p)
	require.Equal(t, http.StatusFound, res.StatusCode)
	assert.True(t, strings.HasPrefix(res.Header.Get("Location"), "http://127.0.0.1:41234/cb?code="), res.Header.Get("Location"))
}

// hostileScopes: scopes the server does not offer (the OpenID Connect
// ones among them) are dropped, from the token as from the consent page,
// and a registration keeps only offered scopes.
func hostileScopes(t *testing.T, h *hostile, clientID string) {
	verifier, challenge := newPKCE()
	p := authz(clientID, challenge)
	p.Set("scope", "tasks:read profile email phone address openid admin")
	status, tok := h.grant(t, codeForm(clientID, h.code(t, p), verifier))
	require.Equal(t, http.StatusOK, status, tok)
	assert.Subset(t, []string{scopeRead, "offline_access"}, strings.Fields(tok["scope"].(string)), "only what the server offers")
	assert.Contains(t, strings.Fields(tok["scope"].(string)), scopeRead)
	assert.NotContains(t, tok, "id_token")

	p = authz(clientID, challenge)
	p.Set("scope", "profile email")
	q := back(t, first(h.authorize(t, p)))
	assert.Equal(t, "invalid_scope", q.Get("error"), "nothing offered is asked for")
	assert.Empty(t, q.Get("code"))

	status, m := h.register(t, `{"redirect_uris":["`+cb+`"],"token_endpoint_auth_method":"none","scope":"tasks:read profile *"}`)
	require.Equal(t, http.StatusCreated, status, m)
	assert.Equal(t, scopeRead, m["scope"], "the registration keeps the offered scopes only")
}

func first(res *http.Response, _ string) *http.Response { return res }

// hostileAuthorizationRequest: PKCE values of RFC 7636's form only, the
// query response mode only, and iss in every answer (RFC 9207).
func hostileAuthorizationRequest(t *testing.T, h *hostile, clientID string) {
	res, body := h.get(t, "/.well-known/oauth-authorization-server")
	require.Equal(t, http.StatusOK, res.StatusCode)
	var md map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &md))
	assert.Equal(t, true, md["authorization_response_iss_parameter_supported"])
	assert.Equal(t, []any{"query"}, md["response_modes_supported"])
	assert.Equal(t, h.base+"/oauth/revoke", md["revocation_endpoint"])

	for _, challenge := range []string{"abc", strings.Repeat("a", 42), strings.Repeat("a", 129), strings.Repeat("a", 42) + "!", strings.Repeat("a", 42) + "="} {
		q := back(t, first(h.authorize(t, authz(clientID, challenge))))
		assert.Equal(t, "invalid_request", q.Get("error"), challenge)
		assert.Contains(t, q.Get("error_description"), "code_challenge", challenge)
		assert.Empty(t, q.Get("code"))
		assert.Equal(t, h.base, q.Get("iss"), "an error carries iss")
	}
	_, challenge := newPKCE()
	for _, mode := range []string{"fragment", "form_post", "query.jwt"} {
		p := authz(clientID, challenge)
		p.Set("response_mode", mode)
		res, body := h.authorize(t, p)
		q := back(t, res) // in the query, whatever was asked
		assert.Equal(t, "invalid_request", q.Get("error"), mode)
		assert.Empty(t, q.Get("code"), mode)
		assert.NotContains(t, body, "<form", mode)
	}
	res, _ = h.authorize(t, authz(clientID, challenge))
	q := back(t, res)
	assert.NotEmpty(t, q.Get("code"))
	assert.Equal(t, h.base, q.Get("iss"), "a code carries iss")
	assert.Equal(t, "st", q.Get("state"))
}

// hostileConsent: the consent page tells a self-registered client from
// the app's own, names where the browser goes, and escapes what clients
// chose to be called.
func hostileConsent(t *testing.T, h *hostile) {
	page := func(clientID, redirect string) string {
		_, challenge := newPKCE()
		p := authz(clientID, challenge)
		p.Set("redirect_uri", redirect)
		p.Set("scope", "tasks:read profile email")
		res, body := h.get(t, "/oauth/authorize?"+p.Encode())
		require.Equal(t, http.StatusFound, res.StatusCode, body)
		res, body = h.get(t, strings.TrimPrefix(res.Header.Get("Location"), h.base))
		require.Equal(t, http.StatusOK, res.StatusCode)
		return body
	}
	status, m := h.register(t, `{"redirect_uris":["https://evil.example/steal"],"token_endpoint_auth_method":"none","client_name":"Task board dashboard"}`)
	require.Equal(t, http.StatusCreated, status, m)
	body := page(m["client_id"].(string), "https://evil.example/steal")
	assert.Contains(t, body, "Task board dashboard")
	assert.Contains(t, body, `id="unverified"`, "a self-registered client is marked")
	assert.Contains(t, body, `<code id="redirect-host">evil.example</code>`)
	assert.NotContains(t, body, "<code>profile</code>", "an unoffered scope is not shown")
	assert.NotContains(t, body, "<code>email</code>")
	assert.Contains(t, body, "<code>tasks:read</code>")

	body = page(dashboardClient, h.base+"/")
	assert.NotContains(t, body, `id="unverified"`, "the app's own dashboard is not marked")

	status, m = h.register(t, `{"redirect_uris":["`+cb+`"],"token_endpoint_auth_method":"none","client_name":"<script>alert(1)</script><img src=x onerror=alert(2)>"}`)
	require.Equal(t, http.StatusCreated, status, m)
	body = page(m["client_id"].(string), cb)
	assert.NotContains(t, body, "<script>alert")
	assert.NotContains(t, body, "<img")
	assert.Contains(t, body, "&lt;script&gt;alert(1)&lt;/script&gt;")
}

// hostileHeaders: every page of the app keeps out of frames, forbids
// type sniffing and sends no Referer.
func hostileHeaders(t *testing.T, h *hostile) {
	for _, path := range []string{"/", "/app.js", "/healthz", "/api/tasks", "/mcp", "/oauth/login?id=nope", "/oauth/authorize",
		"/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource/mcp", "/oauth/keys", "/no/such/page"} {
		res, _ := h.get(t, path)
		hd := res.Header
		assert.Equal(t, "DENY", hd.Get("X-Frame-Options"), path)
		assert.Contains(t, hd.Get("Content-Security-Policy"), "frame-ancestors 'none'", path)
		assert.Equal(t, "nosniff", hd.Get("X-Content-Type-Options"), path)
		assert.Equal(t, "no-referrer", hd.Get("Referrer-Policy"), path)
	}
}

// hostileClientAuth: a confidential client authenticates the way it
// registered, and a public one with no secret.
func hostileClientAuth(t *testing.T, h *hostile) {
	exchange := func(method, id, secret string, basic bool) (int, map[string]any) {
		verifier, challenge := newPKCE()
		form := codeForm(id, h.code(t, authz(id, challenge)), verifier)
		var req *http.Request
		if basic {
			form.Del("client_id")
			req, _ = http.NewRequest(http.MethodPost, h.base+"/oauth/token", strings.NewReader(form.Encode()))
			req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
		} else {
			if secret != "" {
				form.Set("client_secret", secret)
			}
			req, _ = http.NewRequest(http.MethodPost, h.base+"/oauth/token", strings.NewReader(form.Encode()))
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, body := h.send(t, req)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(body), &m), "%s: %s", method, body)
		return res.StatusCode, m
	}
	reg := func(method string) (string, string) {
		status, m := h.register(t, `{"redirect_uris":["`+cb+`"],"token_endpoint_auth_method":"`+method+`"}`)
		require.Equal(t, http.StatusCreated, status, m)
		secret, _ := m["client_secret"].(string)
		return m["client_id"].(string), secret
	}
	id, secret := reg("client_secret_basic")
	status, m := exchange("basic in the body", id, secret, false)
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Equal(t, "invalid_client", m["error"])
	assert.NotContains(t, m, "access_token")
	status, m = exchange("basic", id, secret, true)
	assert.Equal(t, http.StatusOK, status, m)

	id, secret = reg("client_secret_post")
	status, m = exchange("post in a header", id, secret, true)
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Equal(t, "invalid_client", m["error"])
	status, m = exchange("post", id, secret, false)
	assert.Equal(t, http.StatusOK, status, m)
	status, m = exchange("post, wrong secret", id, "wrong", false)
	assert.Equal(t, http.StatusUnauthorized, status, m)

	id, _ = reg("none")
	status, m = exchange("none with a secret", id, "made-up", false)
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Equal(t, "invalid_client", m["error"])
}

// hostileRefresh: a refresh token family has an absolute lifetime, and
// a revoked refresh token (RFC 7009) takes its family with it.
func hostileRefresh(t *testing.T, h *hostile, clientID string) {
	tok := h.tokens(t, clientID)
	status, next := h.grant(t, refreshForm(clientID, tok["refresh_token"].(string)))
	require.Equal(t, http.StatusOK, status, next)
	// The family started long ago: however freshly rotated, it ends.
	_, err := h.db.Exec(h.db.Rebind(`UPDATE oauth_refresh_tokens SET family_expires_at = ?`), time.Now().Add(-time.Minute).Unix())
	require.NoError(t, err)
	status, e := h.grant(t, refreshForm(clientID, next["refresh_token"].(string)))
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "invalid_grant", e["error"])
	assert.NotContains(t, e, "access_token")

	tok = h.tokens(t, clientID)
	status, next = h.grant(t, refreshForm(clientID, tok["refresh_token"].(string)))
	require.Equal(t, http.StatusOK, status, next)
	res, body := h.postForm(t, "/oauth/revoke", url.Values{"token": {next["refresh_token"].(string)}, "client_id": {clientID}})
	assert.Equal(t, http.StatusOK, res.StatusCode, body)
	status, e = h.grant(t, refreshForm(clientID, next["refresh_token"].(string)))
	assert.Equal(t, http.StatusBadRequest, status, "a revoked refresh token is dead")
	assert.Equal(t, "invalid_grant", e["error"])
	res, body = h.postForm(t, "/oauth/revoke", url.Values{"token": {tok["access_token"].(string)}, "client_id": {clientID}})
	assert.Equal(t, http.StatusOK, res.StatusCode, "an access token expires by itself: 200 (RFC 7009 §2.2) %s", body)
	res, body = h.postForm(t, "/oauth/revoke", url.Values{"client_id": {clientID}})
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Contains(t, body, "invalid_request")
}

// heldCodeFlow: the probes of the code flow that held before this suite
// existed, kept holding: PKCE, a replayed code (which revokes what it
// issued), refresh rotation (a reused token revokes its family), and
// the RFC 8707 resource.
func heldCodeFlow(t *testing.T, h *hostile, clientID string) {
	verifier, challenge := newPKCE()
	code := h.code(t, authz(clientID, challenge))
	status, e := h.grant(t, codeForm(clientID, code, strings.Repeat("v", 43)))
	assert.Equal(t, http.StatusBadRequest, status, "the wrong verifier")
	assert.Equal(t, "invalid_grant", e["error"])
	code = h.code(t, authz(clientID, challenge))
	form := codeForm(clientID, code, verifier)
	form.Del("code_verifier")
	status, _ = h.grant(t, form)
	assert.Equal(t, http.StatusBadRequest, status, "no verifier")
	p := authz(clientID, challenge)
	p.Set("code_challenge_method", "plain")
	assert.Equal(t, "invalid_request", back(t, first(h.authorize(t, p))).Get("error"), "plain PKCE")
	p.Del("code_challenge")
	p.Del("code_challenge_method")
	assert.Equal(t, "invalid_request", back(t, first(h.authorize(t, p))).Get("error"), "no PKCE")

	code = h.code(t, authz(clientID, challenge))
	status, tok := h.grant(t, codeForm(clientID, code, verifier))
	require.Equal(t, http.StatusOK, status, tok)
	status, e = h.grant(t, codeForm(clientID, code, verifier))
	assert.Equal(t, http.StatusBadRequest, status, "a replayed code")
	assert.Equal(t, "invalid_grant", e["error"])
	status, _ = h.grant(t, refreshForm(clientID, tok["refresh_token"].(string)))
	assert.Equal(t, http.StatusBadRequest, status, "the replay revoked what the code issued")

	tok = h.tokens(t, clientID)
	status, r1 := h.grant(t, refreshForm(clientID, tok["refresh_token"].(string)))
	require.Equal(t, http.StatusOK, status, r1)
	status, _ = h.grant(t, refreshForm(clientID, tok["refresh_token"].(string)))
	assert.Equal(t, http.StatusBadRequest, status, "a rotated-out refresh token")
	status, _ = h.grant(t, refreshForm(clientID, r1["refresh_token"].(string)))
	assert.Equal(t, http.StatusBadRequest, status, "its reuse revoked the family")

	p = authz(clientID, challenge)
	p.Set("resource", "https://evil.example/mcp")
	assert.Equal(t, "invalid_target", back(t, first(h.authorize(t, p))).Get("error"))
	form = codeForm(clientID, h.code(t, authz(clientID, challenge)), verifier)
	form.Set("resource", "https://evil.example/mcp")
	status, e = h.grant(t, form)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "invalid_target", e["error"])
	form = codeForm(clientID, h.code(t, authz(clientID, challenge)), verifier)
	form.Set("resource", h.base+"/mcp")
	status, tok = h.grant(t, form)
	require.Equal(t, http.StatusOK, status, tok)
	res, body := h.do(t, http.MethodGet, "/api/tasks", tok["access_token"].(string), "")
	assert.Equal(t, http.StatusOK, res.StatusCode, "the token of the code flow opens the API: %s", body)
}

// heldMCP: sessions are bound to their subject, /mcp checks Origin and
// Host, and forged, foreign or expired tokens open nothing.
func heldMCP(t *testing.T, h *hostile) {
	alice := h.token(t, scopeRead+" "+scopeWrite)
	sid := h.initialize(t, alice)
	mallory, err := h.oauth.DevToken(context.Background(), "mallory", scopeRead+" "+scopeWrite, time.Hour)
	require.NoError(t, err)
	res, _ := h.mcpPost(t, mallory, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "another subject's session does not exist for mallory")

	for _, hdr := range []struct{ name, value string }{{"Origin", "https://evil.example"}, {"Host", "evil.example"}} {
		req, _ := http.NewRequest(http.MethodPost, h.base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+alice)
		if hdr.name == "Host" {
			req.Host = hdr.value
		} else {
			req.Header.Set(hdr.name, hdr.value)
		}
		res, _ := h.send(t, req)
		assert.Equal(t, http.StatusForbidden, res.StatusCode, hdr.name)
	}

	claims := jwt.MapClaims{"iss": h.base, "sub": "eve", "aud": h.base + "/mcp", "scope": scopeRead + " " + scopeWrite,
		"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()}
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, claims).SignedString(jwt.UnsafeAllowNoneSignatureType)
	require.NoError(t, err)
	_, keys := h.get(t, "/oauth/keys")
	hs, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(keys))
	require.NoError(t, err)
	foreignKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	own := strings.Split(alice, ".")
	hdr, _ := base64.RawURLEncoding.DecodeString(own[0])
	var head map[string]any
	require.NoError(t, json.Unmarshal(hdr, &head))
	foreign := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	foreign.Header["kid"] = head["kid"]
	forged, err := foreign.SignedString(foreignKey)
	require.NoError(t, err)
	expired, err := h.oauth.DevToken(context.Background(), "tester", scopeRead, -time.Minute)
	require.NoError(t, err)
	for name, tok := range map[string]string{"alg none": none, "HS256 keyed with the public key set": hs,
		"signed by another key under our kid": forged, "expired": expired, "garbage": "a.b.c", "tampered": own[0] + "." + own[1] + "x." + own[2]} {
		res, _ := h.do(t, http.MethodGet, "/api/tasks", tok, "")
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode, name)
		res, _ = h.mcpPost(t, tok, "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode, name)
	}
}

// heldInjection: SQL in every field an attacker fills is data, and a
// client metadata document URL never makes the server call its own
// network.
func heldInjection(t *testing.T, h *hostile) {
	writer := h.token(t, scopeRead+" "+scopeWrite)
	title := `x'); DROP TABLE tasks; --`
	res, body := h.do(t, http.MethodPost, "/api/tasks", writer, `{"title":"x'); DROP TABLE tasks; --","notes":"' OR 1=1 --","tags":["'; DELETE FROM tasks; --"]}`)
	require.Equal(t, http.StatusCreated, res.StatusCode, body)
	var created struct{ ID string }
	require.NoError(t, json.Unmarshal([]byte(body), &created))
	res, body = h.do(t, http.MethodGet, "/api/tasks/"+url.PathEscape(created.ID), writer, "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, body, `DROP TABLE tasks; --`)
	res, _ = h.do(t, http.MethodGet, "/api/tasks/"+url.PathEscape("t1' OR '1'='1"), writer, "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	res, body = h.do(t, http.MethodGet, "/api/tasks?done="+url.QueryEscape("true' OR 1=1 --"), writer, "")
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, body, title[:10])
	_, challenge := newPKCE()
	res, _ = h.get(t, "/oauth/authorize?"+authz("' OR '1'='1", challenge).Encode())
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Empty(t, res.Header.Get("Location"))

	var calls atomic.Int32
	internal := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		_, _ = io.WriteString(w, `{"client_id":"`+"https://"+r.Host+r.URL.Path+`","redirect_uris":["`+cb+`"]}`)
	}))
	defer internal.Close()
	for _, id := range []string{internal.URL + "/client.json", "https://169.254.169.254/latest/meta-data/client.json",
		"https://10.0.0.1/client.json", "https://100.64.0.1/client.json", "https://[::1]:1/client.json", "https://0.0.0.0/client.json",
		strings.Replace(internal.URL, "https://127.0.0.1", "http://127.0.0.1", 1) + "/client.json"} {
		res, _ := h.get(t, "/oauth/authorize?"+authz(id, challenge).Encode())
		assert.Equal(t, http.StatusBadRequest, res.StatusCode, id)
		assert.Empty(t, res.Header.Get("Location"), id)
	}
	assert.Zero(t, calls.Load(), "the server never fetched a document from its own network")
}
