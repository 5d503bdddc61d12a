package auth_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/auth"
)

// jwk is one entry of a test key set.
type jwk struct {
	kid, alg string
	key      any // a public key
}

func jwksJSON(t testing.TB, keys ...jwk) []byte {
	t.Helper()
	ctx := context.Background()
	store := jwkset.NewMemoryStorage()
	for _, k := range keys {
		j, err := jwkset.NewJWKFromKey(k.key, jwkset.JWKOptions{
			Metadata: jwkset.JWKMetadataOptions{KID: k.kid, ALG: jwkset.ALG(k.alg)},
		})
		require.NoError(t, err)
		require.NoError(t, store.KeyWrite(ctx, j))
	}
	raw, err := store.JSONPublic(ctx)
	require.NoError(t, err)
	return raw
}

// jwksServer is a real JWKS endpoint whose keys and health tests change.
type jwksServer struct {
	*httptest.Server
	mu      sync.Mutex
	body    []byte
	status  int
	slow    bool
	fetches atomic.Int32
	done    chan struct{}
}

func newJWKSServer(t testing.TB, keys ...jwk) *jwksServer {
	t.Helper()
	s := &jwksServer{body: jwksJSON(t, keys...), status: http.StatusOK, done: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		s.mu.Lock()
		body, status, slow := s.body, s.status, s.slow
		s.mu.Unlock()
		if slow {
			select {
			case <-r.Context().Done():
			case <-s.done:
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(func() {
		close(s.done)
		s.Close()
	})
	return s
}

func (s *jwksServer) set(body []byte, status int, slow bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if body != nil {
		s.body = body
	}
	s.status, s.slow = status, slow
}

func jwksOptions(s *jwksServer, edit func(*auth.JWKSOptions)) *auth.Options {
	j := &auth.JWKSOptions{URL: s.URL + "/jwks.json", OnRefreshError: func(context.Context, error) {}}
	if edit != nil {
		edit(j)
	}
	return &auth.Options{Resource: testResource, Issuer: testIssuer, JWKS: j}
}

func TestJWKSVerifiesEachKeyType(t *testing.T) {
	t.Parallel()
	k := testKeys()
	js := newJWKSServer(t,
		jwk{"r", "RS256", &k.rsa.PublicKey},
		jwk{"e", "", &k.ec.PublicKey}, // no alg: pinned by curve
		jwk{"d", "", k.ed.Public()},
	)
	srv := newApp(t, newVerifier(t, jwksOptions(js, nil)))
	identity := `"` + testIssuer + `" "alice"`
	for name, tok := range map[string]string{
		"RS256":        mint(t, jwt.SigningMethodRS256, k.rsa, "r", claims()),
		"ES256":        mint(t, jwt.SigningMethodES256, k.ec, "e", claims()),
		"ES256 no kid": mint(t, jwt.SigningMethodES256, k.ec, "", claims()),
		"EdDSA":        mint(t, jwt.SigningMethodEdDSA, k.ed, "d", claims()),
	} {
		got := get(t, srv, "/mcp", "Bearer "+tok)
		assert.Equal(t, 200, got.status, name)
		assert.Equal(t, identity, got.body, name)
	}
	assert.Equal(t, int32(1), js.fetches.Load(), "known kids are served from the cache")
}

func TestJWKSPinsAlgorithmPerKey(t *testing.T) {
	t.Parallel()
	k := testKeys()
	js := newJWKSServer(t, jwk{"r", "RS256", &k.rsa.PublicKey}, jwk{"e", "", &k.ec.PublicKey})
	srv := newApp(t, newVerifier(t, jwksOptions(js, func(o *auth.JWKSOptions) { o.RefreshRateLimit = time.Hour })))

	// The JWK says RS256; PS256 with the same RSA key must not verify.
	got := get(t, srv, "/mcp", "Bearer "+mint(t, jwt.SigningMethodPS256, k.rsa, "r", claims()))
	assert.Equal(t, 401, got.status)
	assert.Equal(t, challengeFor("invalid_token", "the token is signed with an unknown key"), got.header.Get("WWW-Authenticate"))

	// HS256 signed with the RSA public key bytes: HS* is never a JWKS alg.
	got = get(t, srv, "/mcp", "Bearer "+mint(t, jwt.SigningMethodHS256, k.rsaPEM, "r", claims()))
	assert.Equal(t, 401, got.status)
	assert.Equal(t, challengeFor("invalid_token", "the token signature is invalid"), got.header.Get("WWW-Authenticate"))

	// An EC key without alg cannot verify an RSA-signed token claiming its kid.
	got = get(t, srv, "/mcp", "Bearer "+mint(t, jwt.SigningMethodRS256, k.rsa, "e", claims()))
	assert.Equal(t, 401, got.status)
}

func TestJWKSIgnoresSymmetricKeys(t *testing.T) {
	t.Parallel()
	k := testKeys()
	js := newJWKSServer(t)
	oct := fmt.Sprintf(`{"keys":[{"kty":"oct","kid":"s","k":%q}]}`, base64.RawURLEncoding.EncodeToString(k.secret))
	js.set([]byte(oct), 200, false)
	o := jwksOptions(js, func(o *auth.JWKSOptions) { o.Algorithms = []string{"RS256"} })
	o.Keys = nil
	v := newVerifier(t, o)
	// Even a token whose alg the set allows cannot use the oct key.
	_, err := v.Verify(context.Background(), mint(t, jwt.SigningMethodRS256, k.rsa, "s", claims()))
	assert.ErrorIs(t, err, auth.ErrUnknownKey)
	_, err = v.Verify(context.Background(), mint(t, jwt.SigningMethodHS256, k.secret, "s", claims()))
	assert.ErrorIs(t, err, auth.ErrSignature)
}

// TestJWKSRotation rotates the authorization server's key mid-test: the
// new kid is picked up by one on-demand refresh, and the old key, gone from
// the set, stops verifying, though its token verified a moment before and
// sits in the verified-token cache.
func TestJWKSRotation(t *testing.T) {
	t.Parallel()
	k := testKeys()
	newEC := mustEC(t)
	js := newJWKSServer(t, jwk{"old", "ES256", &k.ec.PublicKey})
	o := jwksOptions(js, func(o *auth.JWKSOptions) { o.RefreshRateLimit = time.Hour })
	o.CacheTTL = time.Hour
	srv := newApp(t, newVerifier(t, o))
	oldTok := mint(t, jwt.SigningMethodES256, k.ec, "old", claims())
	newTok := mint(t, jwt.SigningMethodES256, newEC, "new", claims())
	assert.Equal(t, 200, get(t, srv, "/mcp", "Bearer "+oldTok).status)

	js.set(jwksJSON(t, jwk{"new", "ES256", &newEC.PublicKey}), 200, false)
	got := get(t, srv, "/mcp", "Bearer "+newTok)
	assert.Equal(t, 200, got.status, "the unknown kid triggered a refresh that found it")
	assert.Equal(t, int32(2), js.fetches.Load(), "initial fetch + one on-demand refresh")

	// The refresh replaced the set: the old key is revoked. Its kid is now
	// unknown and the limiter allows no second refresh, so it fails fast.
	start := time.Now()
	got = get(t, srv, "/mcp", "Bearer "+oldTok)
	assert.Equal(t, 401, got.status)
	assert.Equal(t, challengeFor("invalid_token", "the token is signed with an unknown key"), got.header.Get("WWW-Authenticate"))
	assert.Less(t, time.Since(start), time.Second, "a rate-limited miss does not wait")
	assert.Equal(t, int32(2), js.fetches.Load())
}

func TestJWKSUnknownKidSpamIsRateLimited(t *testing.T) {
	t.Parallel()
	k := testKeys()
	js := newJWKSServer(t, jwk{"a", "ES256", &k.ec.PublicKey})
	srv := newApp(t, newVerifier(t, jwksOptions(js, nil))) // default limit: 5m
	start := time.Now()
	for i := range 20 {
		got := get(t, srv, "/mcp", "Bearer "+mint(t, jwt.SigningMethodES256, k.ec, fmt.Sprint("forged-", i), claims()))
		assert.Equal(t, 401, got.status)
	}
	assert.Equal(t, int32(2), js.fetches.Load(), "one initial fetch, one on-demand refresh")
	assert.Less(t, time.Since(start), 5*time.Second)
}

// TestJWKSDown: the key server fails at startup. The verifier starts
// anyway, answers 503 while it has no keys, and recovers once the server
// is back.
func TestJWKSDown(t *testing.T) {
	t.Parallel()
	k := testKeys()
	js := newJWKSServer(t, jwk{"a", "ES256", &k.ec.PublicKey})
	js.set(nil, http.StatusInternalServerError, false)
	var refreshErrs atomic.Int32
	srv := newApp(t, newVerifier(t, jwksOptions(js, func(o *auth.JWKSOptions) {
		o.RefreshRateLimit = 20 * time.Millisecond
		o.OnRefreshError = func(context.Context, error) { refreshErrs.Add(1) }
	})))
	assert.GreaterOrEqual(t, refreshErrs.Load(), int32(1), "the failed first fetch is reported")

	tok := "Bearer " + mint(t, jwt.SigningMethodES256, k.ec, "a", claims())
	got := get(t, srv, "/mcp", tok)
	assert.Equal(t, 503, got.status)
	assert.Equal(t, "10", got.header.Get("Retry-After"))
	assert.Empty(t, got.header.Get("WWW-Authenticate"), "503 is not a challenge")
	assert.Contains(t, got.body, `"temporarily_unavailable"`)

	// No kid: the (empty) cached set is used, still 503 while failing.
	got = get(t, srv, "/mcp", "Bearer "+mint(t, jwt.SigningMethodES256, k.ec, "", claims()))
	assert.Equal(t, 503, got.status)

	js.set(nil, http.StatusOK, false)
	assert.Eventually(t, func() bool { return get(t, srv, "/mcp", tok).status == 200 },
		5*time.Second, 30*time.Millisecond, "recovers after the server is back")
}

func TestJWKSUnreachable(t *testing.T) {
	t.Parallel()
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	v := newVerifier(t, &auth.Options{Resource: testResource, Issuer: testIssuer, JWKS: &auth.JWKSOptions{
		URL: url, OnRefreshError: func(context.Context, error) {},
	}})
	_, err := v.Verify(context.Background(), mint(t, jwt.SigningMethodES256, testKeys().ec, "a", claims()))
	assert.ErrorIs(t, err, auth.ErrKeySource)
}

func TestJWKSRequireInitialFetch(t *testing.T) {
	t.Parallel()
	js := newJWKSServer(t)
	js.set(nil, http.StatusInternalServerError, false)
	v, err := auth.NewVerifier(context.Background(), jwksOptions(js, func(o *auth.JWKSOptions) { o.RequireInitialFetch = true }))
	assert.Nil(t, v)
	assert.ErrorIs(t, err, auth.ErrKeySource)
}

// TestJWKSSlow: a key server that hangs never holds a request longer than
// LookupTimeout, and cached keys keep working meanwhile.
func TestJWKSSlow(t *testing.T) {
	t.Parallel()
	k := testKeys()
	js := newJWKSServer(t, jwk{"a", "ES256", &k.ec.PublicKey})
	srv := newApp(t, newVerifier(t, jwksOptions(js, func(o *auth.JWKSOptions) {
		o.LookupTimeout = 200 * time.Millisecond
	})))
	js.set(nil, http.StatusOK, true)

	start := time.Now()
	got := get(t, srv, "/mcp", "Bearer "+mint(t, jwt.SigningMethodES256, k.ec, "rotated", claims()))
	elapsed := time.Since(start)
	assert.Equal(t, 503, got.status)
	assert.GreaterOrEqual(t, elapsed, 150*time.Millisecond, "it did wait for the refresh")
	assert.Less(t, elapsed, 2*time.Second, "bounded by LookupTimeout")

	got = get(t, srv, "/mcp", "Bearer "+mint(t, jwt.SigningMethodES256, k.ec, "a", claims()))
	assert.Equal(t, 200, got.status, "a cached key does not touch the slow server")
}

func TestJWKSSlowAtStartup(t *testing.T) {
	t.Parallel()
	js := newJWKSServer(t)
	js.set(nil, http.StatusOK, true)
	start := time.Now()
	v := newVerifier(t, jwksOptions(js, func(o *auth.JWKSOptions) { o.FetchTimeout = 100 * time.Millisecond }))
	assert.Less(t, time.Since(start), 2*time.Second, "the first fetch is bounded by FetchTimeout")
	_, err := v.Verify(context.Background(), mint(t, jwt.SigningMethodES256, testKeys().ec, "a", claims()))
	assert.ErrorIs(t, err, auth.ErrKeySource)
}

// TestJWKSBackgroundRefresh shows the refresher running, and stopping on
// Close and on context cancellation (goleak checks the goroutine is gone).
func TestJWKSBackgroundRefresh(t *testing.T) {
	t.Parallel()
	k := testKeys()
	for _, stop := range []string{"Close", "context"} {
		t.Run(stop, func(t *testing.T) {
			js := newJWKSServer(t, jwk{"a", "ES256", &k.ec.PublicKey})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			v, err := auth.NewVerifier(ctx, jwksOptions(js, func(o *auth.JWKSOptions) { o.RefreshInterval = 20 * time.Millisecond }))
			require.NoError(t, err)
			defer v.Close()
			assert.Eventually(t, func() bool { return js.fetches.Load() >= 3 }, 5*time.Second, 10*time.Millisecond)

			// A key published now is found without an on-demand refresh.
			newEC := mustEC(t)
			js.set(jwksJSON(t, jwk{"b", "ES256", &newEC.PublicKey}), 200, false)
			assert.Eventually(t, func() bool {
				_, err := v.Verify(context.Background(), mint(t, jwt.SigningMethodES256, newEC, "", claims()))
				return err == nil
			}, 5*time.Second, 10*time.Millisecond)

			if stop == "Close" {
				require.NoError(t, v.Close())
			} else {
				cancel()
			}
			time.Sleep(50 * time.Millisecond) // let an in-flight tick finish
			n := js.fetches.Load()
			time.Sleep(150 * time.Millisecond)
			assert.Equal(t, n, js.fetches.Load(), "no refresh after %s", stop)
		})
	}
}

func TestJWKSAndStaticKeysTogether(t *testing.T) {
	t.Parallel()
	k := testKeys()
	js := newJWKSServer(t, jwk{"e", "ES256", &k.ec.PublicKey})
	o := jwksOptions(js, nil)
	o.Keys = []auth.Key{auth.HMACKey("HS256", k.secret)}
	v := newVerifier(t, o)
	for name, tok := range map[string]string{
		"static": mint(t, jwt.SigningMethodHS256, k.secret, "", claims()),
		"jwks":   mint(t, jwt.SigningMethodES256, k.ec, "e", claims()),
	} {
		c, err := v.Verify(context.Background(), tok)
		if assert.NoError(t, err, name) {
			assert.Equal(t, "alice", c.Subject)
		}
	}
}

func TestJWKSDocumentIsValidJSON(t *testing.T) {
	// Guards the fixture itself: the set must hold public keys only.
	t.Parallel()
	raw := jwksJSON(t, jwk{"d", "", testKeys().ed.Public().(ed25519.PublicKey)})
	var doc struct {
		Keys []map[string]any `json:"keys"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	require.Len(t, doc.Keys, 1)
	assert.NotContains(t, doc.Keys[0], "d", "no private material in a JWKS")
}
