package oauth

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/auth"
	"github.com/saguaro-go/saguaro/example_app/database/dbtest"
)

func TestMetadata(t *testing.T) {
	a := newAS(t, sqliteDB(t), true)
	for _, path := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		res, err := http.Get(a.base + path)
		require.NoError(t, err)
		var md map[string]any
		require.NoError(t, json.NewDecoder(res.Body).Decode(&md))
		res.Body.Close()
		assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
		assert.Equal(t, a.base, md["issuer"])
		assert.Equal(t, a.base+PathAuthorize, md["authorization_endpoint"])
		assert.Equal(t, a.base+PathToken, md["token_endpoint"])
		assert.Equal(t, a.base+PathRegister, md["registration_endpoint"])
		assert.Equal(t, []any{"S256"}, md["code_challenge_methods_supported"], "plain is not offered")
		assert.Equal(t, true, md["client_id_metadata_document_supported"])
	}
}

// TestCodeFlow: registration, authorization (development approval), the
// code's exchange, a JWT that package auth's verifier accepts through the
// JWKS, and refresh tokens that rotate.
func TestCodeFlow(t *testing.T) {
	a := newAS(t, sqliteDB(t), true)
	id := a.publicClient(t)
	verifier, challenge := pkce()
	p := authParams(id, challenge)
	p.Set("resource", a.base+"/mcp")
	code := a.code(t, p)

	form := exchange(id, code, verifier)
	form.Set("resource", a.base+"/mcp")
	res, err := http.PostForm(a.base+PathToken, form)
	require.NoError(t, err)
	var tok map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&tok))
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, tok)
	assert.Equal(t, "no-store", res.Header.Get("Cache-Control"))
	assert.Equal(t, "Bearer", tok["token_type"])
	assert.NotContains(t, tok, "id_token")
	assert.NotEmpty(t, tok["refresh_token"])

	v, err := auth.NewVerifier(context.Background(), &auth.Options{Resource: a.base + "/mcp", Issuer: a.base,
		JWKS: &auth.JWKSOptions{URL: a.JWKSURL(), RequireInitialFetch: true}})
	require.NoError(t, err)
	defer v.Close()
	claims, err := v.Verify(context.Background(), tok["access_token"].(string))
	require.NoError(t, err)
	assert.Equal(t, "alice", claims.Subject)
	assert.Equal(t, []string{a.base + "/mcp"}, claims.Audience, "the audience is the resource (RFC 8707)")
	assert.Equal(t, []string{"tasks:read"}, claims.Scopes)
	assert.Equal(t, id, claims.ClientID)

	// Refresh: a new pair; the old refresh token is spent.
	status, r1 := a.token(t, refresh(id, tok["refresh_token"].(string)))
	require.Equal(t, http.StatusOK, status, r1)
	assert.NotEqual(t, tok["refresh_token"], r1["refresh_token"])
	_, err = v.Verify(context.Background(), r1["access_token"].(string))
	require.NoError(t, err)
	status, r2 := a.token(t, refresh(id, r1["refresh_token"].(string)))
	require.Equal(t, http.StatusOK, status, r2)

	// The rotated-out token is refused, and its use revokes the family:
	// the newest token is dead too.
	status, e := a.token(t, refresh(id, tok["refresh_token"].(string)))
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "invalid_grant", e["error"])
	status, e = a.token(t, refresh(id, r2["refresh_token"].(string)))
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "invalid_grant", e["error"])
}

// TestImpliedScopes: a broader scope brings the narrower ones it
// includes.
func TestImpliedScopes(t *testing.T) {
	a := newAS(t, sqliteDB(t), true, func(o *Options) { o.Implied = map[string][]string{"tasks:write": {"tasks:read"}} })
	id := a.publicClient(t)
	verifier, challenge := pkce()
	p := authParams(id, challenge)
	p.Set("scope", "tasks:write")
	status, tok := a.token(t, exchange(id, a.code(t, p), verifier))
	require.Equal(t, http.StatusOK, status, tok)
	assert.Contains(t, tok["scope"], "tasks:read")
	assert.Contains(t, tok["scope"], "tasks:write")
}

func TestNoScopeGetsTheDefault(t *testing.T) {
	a := newAS(t, sqliteDB(t), true)
	id := a.publicClient(t)
	verifier, challenge := pkce()
	p := authParams(id, challenge)
	p.Del("scope")
	status, tok := a.token(t, exchange(id, a.code(t, p), verifier))
	require.Equal(t, http.StatusOK, status, tok)
	assert.Contains(t, tok["scope"], "tasks:read")
	assert.NotContains(t, tok["scope"], "tasks:write")
}

// TestHostile: every attack is refused with the RFC's error, and nothing
// is issued.
func TestHostile(t *testing.T) {
	a := newAS(t, sqliteDB(t), true)
	id := a.publicClient(t)

	redirectError := func(t *testing.T, p url.Values) url.Values {
		t.Helper()
		res := a.authorize(t, p)
		require.Equal(t, http.StatusFound, res.StatusCode)
		loc, err := url.Parse(res.Header.Get("Location"))
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(loc.String(), callback))
		assert.Empty(t, loc.Query().Get("code"), "no code issued")
		assert.Equal(t, "st4te", loc.Query().Get("state"))
		return loc.Query()
	}

	t.Run("another audience", func(t *testing.T) {
		verifier, challenge := pkce()
		p := authParams(id, challenge)
		p.Set("resource", "https://evil.example/mcp")
		assert.Equal(t, "invalid_target", redirectError(t, p).Get("error"))

		form := exchange(id, a.code(t, authParams(id, challenge)), verifier)
		form.Set("resource", "https://evil.example/mcp")
		status, e := a.token(t, form)
		assert.Equal(t, http.StatusBadRequest, status)
		assert.Equal(t, "invalid_target", e["error"])
		assert.NotContains(t, e, "access_token")
	})

	t.Run("code replayed", func(t *testing.T) {
		verifier, challenge := pkce()
		code := a.code(t, authParams(id, challenge))
		status, tok := a.token(t, exchange(id, code, verifier))
		require.Equal(t, http.StatusOK, status, tok)
		status, e := a.token(t, exchange(id, code, verifier))
		assert.Equal(t, http.StatusBadRequest, status)
		assert.Equal(t, "invalid_grant", e["error"])
		assert.NotContains(t, e, "access_token")
		// The replay revoked what the code had issued.
		status, e = a.token(t, refresh(id, tok["refresh_token"].(string)))
		assert.Equal(t, http.StatusBadRequest, status)
		assert.Equal(t, "invalid_grant", e["error"])
	})

	t.Run("no verifier, or the challenge as plain", func(t *testing.T) {
		_, challenge := pkce()
		code := a.code(t, authParams(id, challenge))
		status, e := a.token(t, exchange(id, code, ""))
		assert.Equal(t, http.StatusBadRequest, status)
		assert.Contains(t, []any{"invalid_grant", "invalid_request"}, e["error"])
		assert.NotContains(t, e, "access_token")

		code = a.code(t, authParams(id, challenge))
		status, e = a.token(t, exchange(id, code, challenge))
		assert.Equal(t, http.StatusBadRequest, status)
		assert.Equal(t, "invalid_grant", e["error"])
		assert.NotContains(t, e, "access_token")
	})

	t.Run("plain and missing PKCE at authorize", func(t *testing.T) {
		p := authParams(id, "a-plain-challenge-that-is-long-enough-0123456789")
		p.Set("code_challenge_method", "plain")
		assert.Equal(t, "invalid_request", redirectError(t, p).Get("error"))
		p.Del("code_challenge_method")
		assert.Equal(t, "invalid_request", redirectError(t, p).Get("error"), "no method means plain")
		p.Del("code_challenge")
		assert.Equal(t, "invalid_request", redirectError(t, p).Get("error"))
	})

	t.Run("redirect URI one character off", func(t *testing.T) {
		_, challenge := pkce()
		p := authParams(id, challenge)
		p.Set("redirect_uri", strings.TrimSuffix(callback, "k")+"K")
		res := a.authorize(t, p)
		assert.Equal(t, http.StatusBadRequest, res.StatusCode)
		assert.Empty(t, res.Header.Get("Location"), "never redirected to an unregistered URI")

		verifier, challenge := pkce()
		form := exchange(id, a.code(t, authParams(id, challenge)), verifier)
		form.Set("redirect_uri", callback+"/")
		status, e := a.token(t, form)
		assert.Equal(t, http.StatusBadRequest, status)
		assert.Equal(t, "invalid_grant", e["error"])
	})

	t.Run("expired refresh token", func(t *testing.T) {
		verifier, challenge := pkce()
		status, tok := a.token(t, exchange(id, a.code(t, authParams(id, challenge)), verifier))
		require.Equal(t, http.StatusOK, status)
		_, err := a.db.Exec(a.db.Rebind(`UPDATE oauth_refresh_tokens SET expires_at = ? WHERE token_hash = ?`),
			time.Now().Add(-time.Minute).Unix(), hash(tok["refresh_token"].(string)))
		require.NoError(t, err)
		status, e := a.token(t, refresh(id, tok["refresh_token"].(string)))
		assert.Equal(t, http.StatusBadRequest, status)
		assert.Equal(t, "invalid_grant", e["error"])
		assert.NotContains(t, e, "access_token")
	})

	t.Run("unknown client", func(t *testing.T) {
		_, challenge := pkce()
		res := a.authorize(t, authParams("c_nobody", challenge))
		assert.Equal(t, http.StatusBadRequest, res.StatusCode)
		assert.Empty(t, res.Header.Get("Location"))
	})

	t.Run("registration", func(t *testing.T) {
		for body, want := range map[string]string{
			`{"redirect_uris":["javascript:alert(1)"]}`:                                     "invalid_redirect_uri",
			`{"redirect_uris":["data:text/html,hi"]}`:                                       "invalid_redirect_uri",
			`{"redirect_uris":["http://evil.example/cb"]}`:                                  "invalid_redirect_uri",
			`{"redirect_uris":["https://app.example/cb#frag"]}`:                             "invalid_redirect_uri",
			`{"redirect_uris":[]}`:                                                          "invalid_redirect_uri",
			`{"redirect_uris":["https://app.example/cb"],"token_endpoint_auth_method":"x"}`: "invalid_client_metadata",
			`{"redirect_uris":["https://app.example/cb"],"grant_types":["implicit"]}`:       "invalid_client_metadata",
			`not json`: "invalid_client_metadata",
		} {
			status, m := a.register(t, body)
			assert.Equal(t, http.StatusBadRequest, status, body)
			assert.Equal(t, want, m["error"], body)
			assert.NotContains(t, m, "client_id", body)
		}
	})
}

// TestConfidentialClient: a secret is issued once and required.
func TestConfidentialClient(t *testing.T) {
	a := newAS(t, sqliteDB(t), true)
	status, m := a.register(t, `{"redirect_uris":["`+callback+`"],"token_endpoint_auth_method":"client_secret_post"}`)
	require.Equal(t, http.StatusCreated, status, m)
	id, secret := m["client_id"].(string), m["client_secret"].(string)
	verifier, challenge := pkce()
	form := exchange(id, a.code(t, authParams(id, challenge)), verifier)
	form.Set("client_secret", "wrong")
	status, e := a.token(t, form)
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Equal(t, "invalid_client", e["error"])

	form = exchange(id, a.code(t, authParams(id, challenge)), verifier)
	form.Set("client_secret", secret)
	status, tok := a.token(t, form)
	assert.Equal(t, http.StatusOK, status, tok)
	assert.NotContains(t, tok, "refresh_token", "not registered for refresh_token")
}

// TestClientIDMetadataDocument: a URL is a client id; its document must
// name itself.
func TestClientIDMetadataDocument(t *testing.T) {
	var doc string
	docs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, strings.ReplaceAll(doc, "SELF", "http://"+r.Host+r.URL.Path))
	}))
	defer docs.Close()
	a := newAS(t, sqliteDB(t), true, func(o *Options) { o.InsecureMetadataURLs = true })

	id := docs.URL + "/client.json"
	doc = `{"client_id":"SELF","client_name":"CIMD client","redirect_uris":["` + callback + `"],"grant_types":["authorization_code","refresh_token"]}`
	verifier, challenge := pkce()
	status, tok := a.token(t, exchange(id, a.code(t, authParams(id, challenge)), verifier))
	require.Equal(t, http.StatusOK, status, tok)
	assert.NotEmpty(t, tok["refresh_token"])

	other := docs.URL + "/other.json"
	doc = `{"client_id":"https://someone.else/client.json","redirect_uris":["` + callback + `"]}`
	res := a.authorize(t, authParams(other, challenge))
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Empty(t, res.Header.Get("Location"))

	// Without InsecureMetadataURLs, an http URL is no client id, and an
	// https one on this machine's own network is never fetched.
	strict := newAS(t, sqliteDB(t), true)
	res = strict.authorize(t, authParams(docs.URL+"/third.json", challenge))
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	tlsDocs := httptest.NewTLSServer(docs.Config.Handler)
	defer tlsDocs.Close()
	_, err := strict.client(context.Background(), tlsDocs.URL+"/client.json")
	assert.ErrorIs(t, err, errNotPublic)
	for _, internal := range []string{"https://10.0.0.1/c.json", "https://169.254.169.254/c.json", "https://[::1]/c.json"} {
		_, err := strict.client(context.Background(), internal)
		assert.ErrorIs(t, err, errNotPublic, internal)
	}
}

// TestLoginPage: the page names the scopes; a wrong password is refused;
// Deny sends access_denied to the client; the right password approves.
func TestLoginPage(t *testing.T) {
	a := newAS(t, sqliteDB(t), false)
	cheapPassword(t, a.db, "bob", "correct horse")
	id := a.publicClient(t)
	_, challenge := pkce()
	p := authParams(id, challenge)
	p.Set("scope", "tasks:read tasks:write")

	start := func() (string, string) {
		res, err := noRedirects.Get(a.base + PathAuthorize + "?" + p.Encode())
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusFound, res.StatusCode)
		login := res.Header.Get("Location")
		require.True(t, strings.HasPrefix(login, a.base+PathLogin), login)
		u, _ := url.Parse(login)
		return login, u.Query().Get("id")
	}
	login, reqID := start()
	res, err := http.Get(login)
	require.NoError(t, err)
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, string(page), "tasks:read")
	assert.Contains(t, string(page), "tasks:write")
	assert.Contains(t, string(page), "change the board")
	assert.Contains(t, string(page), "test client")

	post := func(form url.Values) *http.Response {
		res, err := noRedirects.PostForm(a.base+PathLogin, form)
		require.NoError(t, err)
		res.Body.Close()
		return res
	}
	res = post(url.Values{"id": {reqID}, "username": {"bob"}, "password": {"wrong"}, "action": {"approve"}})
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
	res = post(url.Values{"id": {reqID}, "action": {"deny"}})
	require.Equal(t, http.StatusFound, res.StatusCode)
	assert.Contains(t, res.Header.Get("Location"), "error=access_denied")
	assert.NotContains(t, res.Header.Get("Location"), "code=")

	_, reqID = start()
	res = post(url.Values{"id": {reqID}, "username": {"bob"}, "password": {"correct horse"}, "action": {"approve"}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	cb, err := noRedirects.Get(res.Header.Get("Location"))
	require.NoError(t, err)
	cb.Body.Close()
	assert.Contains(t, cb.Header.Get("Location"), callback+"?code=")
	// An approved request cannot be approved again.
	res = post(url.Values{"id": {reqID}, "username": {"bob"}, "password": {"correct horse"}, "action": {"approve"}})
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
}

// TestReplicasRedeemOnce: two servers on one PostgreSQL database (two
// replicas) share clients and codes, and a code or a refresh token
// presented to both at once is redeemed exactly once.
func TestReplicasRedeemOnce(t *testing.T) {
	url := dbtest.URL(t)
	a := newAS(t, openPG(t, url), true)
	b := newAS(t, openPG(t, url), true)
	// b issues tokens under a's issuer: both stand for one service.
	id := a.publicClient(t)
	for range 5 {
		verifier, challenge := pkce()
		code := b.code(t, authParams(id, challenge))
		var wins, refreshToken = 0, ""
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, s := range []*testAS{a, b, a, b} {
			wg.Go(func() {
				status, tok := s.token(t, exchange(id, code, verifier))
				mu.Lock()
				defer mu.Unlock()
				if status == http.StatusOK {
					wins++
					refreshToken = tok["refresh_token"].(string)
				}
			})
		}
		wg.Wait()
		require.Equal(t, 1, wins, "a code is redeemed once")
		// The losers were replays, which revoke what the code issued; a
		// fresh code gives the refresh token to race with.
		status, tok := a.token(t, exchange(id, b.code(t, authParams(id, challenge)), verifier))
		require.Equal(t, http.StatusOK, status)
		refreshToken = tok["refresh_token"].(string)
		wins = 0
		for _, s := range []*testAS{b, a, b, a} {
			wg.Go(func() {
				status, _ := s.token(t, refresh(id, refreshToken))
				mu.Lock()
				defer mu.Unlock()
				if status == http.StatusOK {
					wins++
				}
			})
		}
		wg.Wait()
		require.Equal(t, 1, wins, "a refresh token is redeemed once")
	}
	// Both replicas sign with one key.
	ka, err := a.signer(context.Background())
	require.NoError(t, err)
	kb, err := b.signer(context.Background())
	require.NoError(t, err)
	assert.Equal(t, ka.id, kb.id)
}
