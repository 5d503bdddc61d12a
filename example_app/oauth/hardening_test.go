package oauth

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/auth"
	"github.com/saguaro-go/saguaro/example_app/database/dbtest"
)

// TestKeyRotation: a new key signs; the key set publishes old and new
// until the old one's tokens are long expired; both tokens verify
// through the key set meanwhile; the sweep then deletes the old key, and
// rotates by itself once a key outlives SigningKeyLifetime.
func TestKeyRotation(t *testing.T) {
	ctx := context.Background()
	a := newAS(t, sqliteDB(t), true)
	v, err := auth.NewVerifier(ctx, &auth.Options{Resource: a.base + "/mcp", Issuer: a.base,
		JWKS: &auth.JWKSOptions{URL: a.JWKSURL(), Client: a.KeysClient(), RequireInitialFetch: true, RefreshRateLimit: time.Millisecond}})
	require.NoError(t, err)
	defer v.Close()

	before, err := a.DevToken(ctx, "alice", "tasks:read", time.Hour)
	require.NoError(t, err)
	old, err := a.signer(ctx)
	require.NoError(t, err)
	require.NoError(t, a.RotateSigningKey(ctx))
	after, err := a.DevToken(ctx, "alice", "tasks:read", time.Hour)
	require.NoError(t, err)
	cur, err := a.signer(ctx)
	require.NoError(t, err)
	require.NotEqual(t, old.id, cur.id)

	keys, err := a.publishedKeys(ctx)
	require.NoError(t, err)
	require.Len(t, keys, 2)
	assert.ElementsMatch(t, []string{cur.id, old.id}, []string{keys[0].ID(), keys[1].ID()})
	for _, tok := range []string{before, after} {
		_, err := v.Verify(ctx, tok)
		assert.NoError(t, err, "both keys verify through the key set")
	}

	// A sweep within the grace keeps the old key; past it, deletes it.
	require.NoError(t, a.sweep(ctx))
	keys, _ = a.publishedKeys(ctx)
	assert.Len(t, keys, 2)
	_, err = a.db.Exec(`UPDATE oauth_signing_keys SET retired_at = ? WHERE id = ?`, time.Now().Add(-retiredKeyGrace-time.Minute).Unix(), old.id)
	require.NoError(t, err)
	require.NoError(t, a.sweep(ctx))
	var n int
	require.NoError(t, a.db.QueryRow(`SELECT COUNT(*) FROM oauth_signing_keys`).Scan(&n))
	assert.Equal(t, 1, n, "the old key is deleted")

	// Too old: the sweep rotates; young: it does not.
	require.NoError(t, a.sweep(ctx))
	k, _ := a.activeKey(ctx)
	assert.Equal(t, cur.id, k.id)
	_, err = a.db.Exec(`UPDATE oauth_signing_keys SET created_at = ?`, time.Now().Add(-defaultKeyLifetime-time.Hour).Unix())
	require.NoError(t, err)
	require.NoError(t, a.sweep(ctx))
	k, _ = a.activeKey(ctx)
	assert.NotEqual(t, cur.id, k.id, "a key past its lifetime is rotated")
}

// TestKeyRotationOnReplicas: two replicas on one PostgreSQL rotate at
// once; one new key results, and both end up signing with it.
func TestKeyRotationOnReplicas(t *testing.T) {
	ctx := context.Background()
	u := dbtest.URL(t)
	a, b := newAS(t, openPG(t, u), true), newAS(t, openPG(t, u), true)
	old, err := a.activeKey(ctx)
	require.NoError(t, err)
	errs := make(chan error, 2)
	for _, s := range []*testAS{a, b} {
		go func() { errs <- s.addKey(ctx, old.id) }()
	}
	e1, e2 := <-errs, <-errs
	assert.True(t, (e1 == nil) != (e2 == nil), "one rotation wins: %v, %v", e1, e2)
	var active int
	require.NoError(t, a.db.QueryRow(`SELECT COUNT(*) FROM oauth_signing_keys WHERE retired_at = 0`).Scan(&active))
	assert.Equal(t, 1, active)
	ka, _ := a.activeKey(ctx)
	kb, _ := b.activeKey(ctx)
	assert.Equal(t, ka.id, kb.id)
	assert.NotEqual(t, old.id, ka.id)
}

// TestKeySecret: with a KeySecret the keys are stored encrypted; without
// it, or with another, the server refuses to start rather than mint a
// new key; a key stored in plaintext is encrypted at the next start.
func TestKeySecret(t *testing.T) {
	ctx := context.Background()
	db := sqliteDB(t)
	plain := newAS(t, db, true)
	k, err := plain.activeKey(ctx)
	require.NoError(t, err)
	var stored string
	require.NoError(t, db.QueryRow(`SELECT private_key FROM oauth_signing_keys`).Scan(&stored))
	assert.Contains(t, stored, "PRIVATE KEY", "without a secret, the key is plaintext (in a 0600 file)")
	plain.Close()

	sealed := newAS(t, db, true, func(o *Options) { o.KeySecret = "s3cret" })
	require.NoError(t, db.QueryRow(`SELECT private_key FROM oauth_signing_keys`).Scan(&stored))
	assert.True(t, strings.HasPrefix(stored, sealedPrefix), "encrypted at start")
	assert.NotContains(t, stored, "PRIVATE KEY")
	k2, err := sealed.activeKey(ctx)
	require.NoError(t, err)
	assert.Equal(t, k.id, k2.id, "the same key, now encrypted")
	require.NoError(t, sealed.RotateSigningKey(ctx))
	sealed.Close()

	for _, secret := range []string{"", "another"} {
		_, err := New(ctx, db, Options{Issuer: "http://127.0.0.1:1", Resource: "http://127.0.0.1:1/mcp", Scopes: []string{"tasks:read"}, KeySecret: secret})
		assert.ErrorIs(t, err, ErrKeySecret, "secret %q", secret)
	}
	again := newAS(t, db, true, func(o *Options) { o.KeySecret = "s3cret" })
	keys, err := again.publishedKeys(ctx)
	require.NoError(t, err)
	assert.Len(t, keys, 2)
}

// TestSchemaOneKeyMoves: a database of schema version 1 keeps its key,
// now in oauth_signing_keys (tokens it signed stay valid), and loses the
// code key it no longer needs.
func TestSchemaOneKeyMoves(t *testing.T) {
	ctx := context.Background()
	db := sqliteDB(t)
	require.NoError(t, db.Migrate(ctx, "oauth", migrations[:1]))
	k, text, err := newSigningKey()
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO oauth_secrets (name, value) VALUES ('signing-key-es256', ?), ('code-key', 'AAAA')`, text)
	require.NoError(t, err)
	a := newAS(t, db, true)
	cur, err := a.activeKey(ctx)
	require.NoError(t, err)
	assert.Equal(t, k.id, cur.id)
	var n int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM oauth_secrets`).Scan(&n))
	assert.Zero(t, n)
}

// TestSweep: what expired goes, what lives stays.
func TestSweep(t *testing.T) {
	ctx := context.Background()
	a := newAS(t, sqliteDB(t), true)
	id := a.publicClient(t)
	verifier, challenge := pkce()
	status, tok := a.token(t, exchange(id, a.code(t, authParams(id, challenge)), verifier))
	require.Equal(t, http.StatusOK, status, tok)
	unused := a.publicClient(t)
	a.code(t, authParams(id, challenge)) // a request whose code is never exchanged
	count := func(q string) int {
		var n int
		require.NoError(t, a.db.QueryRow(q).Scan(&n))
		return n
	}
	require.NoError(t, a.sweep(ctx))
	assert.Equal(t, 2, count(`SELECT COUNT(*) FROM oauth_requests`))
	assert.Equal(t, 1, count(`SELECT COUNT(*) FROM oauth_refresh_tokens`))
	assert.Equal(t, 2, count(`SELECT COUNT(*) FROM oauth_clients`))

	old := time.Now().Add(-48 * time.Hour).Unix()
	_, err := a.db.Exec(`UPDATE oauth_requests SET created_at = ?`, old)
	require.NoError(t, err)
	_, err = a.db.Exec(`UPDATE oauth_refresh_tokens SET expires_at = ?`, old)
	require.NoError(t, err)
	_, err = a.db.Exec(`UPDATE oauth_clients SET created_at = ?`, old)
	require.NoError(t, err)
	_, err = a.db.Exec(`INSERT INTO oauth_clients (id, metadata, created_at, expires_at, kind) VALUES ('https://gone.example/c.json', '{}', ?, ?, 'document')`, old, old)
	require.NoError(t, err)
	require.NoError(t, a.sweep(ctx))
	assert.Zero(t, count(`SELECT COUNT(*) FROM oauth_requests`))
	assert.Zero(t, count(`SELECT COUNT(*) FROM oauth_refresh_tokens`))
	assert.Zero(t, count(`SELECT COUNT(*) FROM oauth_clients WHERE id = '`+unused+`'`), "never used, a day old")
	assert.Zero(t, count(`SELECT COUNT(*) FROM oauth_clients WHERE kind = 'document'`))
	assert.Equal(t, 1, count(`SELECT COUNT(*) FROM oauth_clients WHERE id = '`+id+`'`), "used recently: kept")
	_, err = a.db.Exec(`UPDATE oauth_clients SET last_used_at = ?`, time.Now().Add(-clientIdleTTL-time.Hour).Unix())
	require.NoError(t, err)
	require.NoError(t, a.sweep(ctx))
	assert.Zero(t, count(`SELECT COUNT(*) FROM oauth_clients`), "idle past every refresh token's life")
}

// TestRegistrationCap: past maxDynamicClients registrations, 503.
func TestRegistrationCap(t *testing.T) {
	a := newAS(t, sqliteDB(t), true)
	_, err := a.db.Exec(`INSERT INTO oauth_clients (id, metadata, created_at, kind)
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		SELECT 'filler-' || i, '{}', 0, 'dynamic' FROM n`, maxDynamicClients)
	require.NoError(t, err)
	status, m := a.register(t, `{"redirect_uris":["`+callback+`"]}`)
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, "temporarily_unavailable", m["error"])
	assert.NotContains(t, m, "client_id")
}

// TestRegisteredScopesOnly: with the option, a client registered for
// tasks:read never gets tasks:write; without it (the default, for MCP
// step-up), it does once asked.
func TestRegisteredScopesOnly(t *testing.T) {
	for _, strict := range []bool{true, false} {
		a := newAS(t, sqliteDB(t), true, func(o *Options) { o.RegisteredScopesOnly = strict })
		status, m := a.register(t, `{"redirect_uris":["`+callback+`"],"token_endpoint_auth_method":"none","scope":"tasks:read"}`)
		require.Equal(t, http.StatusCreated, status, m)
		id := m["client_id"].(string)
		verifier, challenge := pkce()
		p := authParams(id, challenge)
		p.Set("scope", "tasks:read tasks:write")
		status, tok := a.token(t, exchange(id, a.code(t, p), verifier))
		require.Equal(t, http.StatusOK, status, tok)
		if strict {
			assert.Equal(t, "tasks:read", tok["scope"])
			p.Set("scope", "tasks:write")
			res := a.authorize(t, p)
			loc, _ := url.Parse(res.Header.Get("Location"))
			assert.Equal(t, "invalid_scope", loc.Query().Get("error"))
		} else {
			assert.Contains(t, tok["scope"], "tasks:write")
		}
	}
}

// TestLoginFailuresCountAcrossReplicas: the failures of one request are
// counted in its row, so a request spread over two replicas still ends
// at the fifth.
func TestLoginFailuresCountAcrossReplicas(t *testing.T) {
	u := dbtest.URL(t)
	a, b := newAS(t, openPG(t, u), false), newAS(t, openPG(t, u), false)
	cheapPassword(t, a.db, "bob", "correct horse")
	id := a.publicClient(t)
	_, challenge := pkce()
	res, err := noRedirects.Get(a.base + PathAuthorize + "?" + authParams(id, challenge).Encode())
	require.NoError(t, err)
	res.Body.Close()
	login, _ := url.Parse(res.Header.Get("Location"))
	reqID := login.Query().Get("id")
	for i, s := range []*testAS{a, b, a, b, a} {
		res, err := noRedirects.PostForm(s.base+PathLogin, url.Values{"id": {reqID}, "username": {"bob"}, "password": {"wrong"}, "action": {"approve"}})
		require.NoError(t, err)
		res.Body.Close()
		if i < 4 {
			assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
			continue
		}
		require.Equal(t, http.StatusFound, res.StatusCode)
		loc, _ := url.Parse(res.Header.Get("Location"))
		assert.Equal(t, "access_denied", loc.Query().Get("error"))
		assert.Equal(t, a.base, loc.Query().Get("iss"), "RFC 9207 on an error too")
	}
	res, err = noRedirects.PostForm(b.base+PathLogin, url.Values{"id": {reqID}, "username": {"bob"}, "password": {"correct horse"}, "action": {"approve"}})
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
}

// TestBcryptBound: password checks run on at most half the CPUs.
func TestBcryptBound(t *testing.T) {
	l := newLimits()
	assert.Equal(t, max(1, runtime.GOMAXPROCS(0)/2), cap(l.bcrypt))
}

// TestNotPublic: the client metadata fetcher never dials an address off
// the public internet, the ranges a first review missed among them.
func TestNotPublic(t *testing.T) {
	for _, ip := range []string{
		"0.0.0.0", "0.1.2.3", "10.1.2.3", "100.64.0.1", "100.127.255.254", "127.0.0.1", "169.254.169.254", "172.16.0.1",
		"192.0.0.8", "192.0.2.1", "192.88.99.1", "192.168.1.1", "198.18.0.1", "198.19.255.255", "198.51.100.7", "203.0.113.9",
		"224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
		"::", "::1", "::ffff:10.0.0.1", "::ffff:127.0.0.1", "::10.0.0.1", "64:ff9b::a00:1", "64:ff9b:1::1", "100::1",
		"2001::1", "2001:db8::1", "2002:a00:1::1", "fc00::1", "fd12:3456::1", "fe80::1", "fec0::1", "ff02::1", "3fff::1",
	} {
		assert.False(t, publicAddr(netip.MustParseAddr(ip)), ip)
		s := &Server{}
		assert.ErrorIs(t, s.publicOnly("tcp", netip.AddrPortFrom(netip.MustParseAddr(ip), 443).String(), nil), errNotPublic, ip)
	}
	for _, ip := range []string{"8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.1", "198.17.255.255", "198.20.0.1", "2606:4700::1111", "2a00:1450::1"} {
		assert.True(t, publicAddr(netip.MustParseAddr(ip)), ip)
	}
}

// TestRedirectAllowed: RFC 8252 §7.3 matching, one case at a time.
func TestRedirectAllowed(t *testing.T) {
	c := &client{md: clientMetadata{RedirectURIs: []string{"http://127.0.0.1:9999/cb", "http://[::1]/cb?x=1", "https://app.example/cb", "com.example.app:/cb"}}}
	for uri, want := range map[string]bool{
		"http://127.0.0.1:9999/cb":     true,
		"http://127.0.0.1:1/cb":        true,
		"http://127.0.0.1/cb":          true,
		"http://[::1]:5000/cb?x=1":     true,
		"https://app.example/cb":       true,
		"com.example.app:/cb":          true,
		"http://[::1]:5000/cb":         false,
		"http://[::1]:5000/cb?x=2":     false,
		"http://localhost:9999/cb":     false,
		"http://127.0.0.2:9999/cb":     false,
		"http://[::1]:9999/cb":         false,
		"https://127.0.0.1:9999/cb":    false,
		"http://127.0.0.1:9999/%63b":   false,
		"http://127.0.0.1:9999/cb#x":   false,
		"http://127.0.0.1:9999/cb/":    false,
		"http://u@127.0.0.1:9999/cb":   false,
		"http://127.0.0.1:99a/cb":      false,
		"http://127.0.0.1:9999@e/cb":   false,
		"https://app.example:444/cb":   false,
		"https://app.example/cb?x":     false,
		"com.example.app:/cb/x":        false,
		"http://127.0.0.01:9999/cb":    false,
		"http://[fe80::1%25lo]:1/cb":   false,
		"http://2130706433:9999/cb":    false,
		"HTTP://127.0.0.1:9999/cb":     false,
		"http://127.0.0.1:9999/cb?":    false,
		"http://127.0.0.1:9999/cb/../": false,
	} {
		assert.Equal(t, want, c.redirectAllowed(uri), uri)
	}
}

// FuzzRedirectAllowed: whatever is allowed is registered, or a loopback
// one with another port; never a fragment.
func FuzzRedirectAllowed(f *testing.F) {
	reg := []string{"http://127.0.0.1:9999/cb", "http://[::1]/cb?x=1", "https://app.example/cb"}
	for _, s := range append(reg, "http://127.0.0.1:1/cb", "http://localhost/cb", "http://127.0.0.1:9999/cb#", "http://[::1]:80/cb?x=1") {
		f.Add(s)
	}
	c := &client{md: clientMetadata{RedirectURIs: reg}}
	f.Fuzz(func(t *testing.T, uri string) {
		if !c.redirectAllowed(uri) {
			return
		}
		if strings.Contains(uri, "#") {
			t.Fatalf("%q allowed with a fragment", uri)
		}
		for _, r := range reg {
			if r == uri {
				return
			}
		}
		u, err := url.Parse(uri)
		if err != nil || u.Scheme != "http" || u.User != nil {
			t.Fatalf("%q allowed", uri)
		}
		ip, err := netip.ParseAddr(u.Hostname())
		if err != nil || !ip.IsLoopback() {
			t.Fatalf("%q allowed on a host that is not a loopback literal", uri)
		}
		stripped, _ := withoutPort(uri)
		for _, r := range reg {
			if w, ok := withoutPort(r); ok && w == stripped {
				return
			}
		}
		t.Fatalf("%q allowed but matches no registered URI", uri)
	})
}

// FuzzParamLimits: a form that passes holds no value over its limit,
// and no name more often than allowed.
func FuzzParamLimits(f *testing.F) {
	f.Add("state=abc&state=def&resource=x&resource=y")
	f.Add("client_id=" + strings.Repeat("a", 3000))
	f.Fuzz(func(t *testing.T, query string) {
		form, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		if authorizeParams.check(form) != nil {
			return
		}
		if len(form) > maxParams {
			t.Fatal("too many parameters passed")
		}
		for name, vs := range form {
			limit, ok := authorizeParams.max[name]
			if !ok {
				limit = authorizeParams.other
			}
			times := max(1, authorizeParams.repeat[name])
			if len(vs) > times {
				t.Fatalf("%q repeated %d times passed", name, len(vs))
			}
			for _, v := range vs {
				if len(v) > limit {
					t.Fatalf("%q of %d bytes passed", name, len(v))
				}
			}
		}
	})
}

// TestAuthorizeRateLimit: each authorization request stores a row, so
// one address may make maxAddressAuthorizations a minute; then 429.
func TestAuthorizeRateLimit(t *testing.T) {
	a := newAS(t, sqliteDB(t), true)
	id := a.publicClient(t)
	_, challenge := pkce()
	u := a.base + PathAuthorize + "?" + authParams(id, challenge).Encode()
	for i := range maxAddressAuthorizations {
		res, err := noRedirects.Get(u)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusFound, res.StatusCode, "request %d", i+1)
	}
	res, err := noRedirects.Get(u)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	assert.Equal(t, "60", res.Header.Get("Retry-After"))
	var n int
	require.NoError(t, a.db.QueryRow(`SELECT COUNT(*) FROM oauth_requests`).Scan(&n))
	assert.Equal(t, maxAddressAuthorizations, n)
}
