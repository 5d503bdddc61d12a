package auth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/auth"
)

// introspectionEndpoint is an RFC 7662 endpoint on loopback: it knows the
// tokens in answers (token → JSON answer), requires client_secret_basic
// credentials rs:secret, and counts its calls.
type introspectionEndpoint struct {
	*httptest.Server
	answers map[string]string
	calls   atomic.Int32
	status  atomic.Int32 // non-zero: answer with this status
	delay   atomic.Int64 // nanoseconds to wait before answering
}

func newIntrospectionEndpoint(t *testing.T) *introspectionEndpoint {
	e := &introspectionEndpoint{answers: map[string]string{}}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.calls.Add(1)
		if d := e.delay.Load(); d > 0 {
			select {
			case <-time.After(time.Duration(d)):
			case <-r.Context().Done():
				return
			}
		}
		if s := e.status.Load(); s != 0 {
			w.WriteHeader(int(s))
			return
		}
		id, secret, ok := r.BasicAuth()
		if !ok || id != "rs" || secret != "s%3Acret" || r.Method != http.MethodPost {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_ = r.ParseForm()
		if r.PostForm.Get("token_type_hint") != "access_token" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		ans, ok := e.answers[r.PostForm.Get("token")]
		if !ok {
			ans = `{"active":false}`
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(ans))
	}))
	t.Cleanup(e.Close)
	return e
}

func answer(t *testing.T, fields map[string]any) string {
	t.Helper()
	base := map[string]any{"active": true, "iss": testIssuer, "aud": testResource, "sub": "alice",
		"scope": "mcp:read mcp:write", "client_id": "app", "exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()}
	for k, v := range fields {
		if v == nil {
			delete(base, k)
		} else {
			base[k] = v
		}
	}
	b, err := json.Marshal(base)
	require.NoError(t, err)
	return string(b)
}

func introspectingVerifier(t *testing.T, e *introspectionEndpoint, mod ...func(*auth.Options)) *auth.Verifier {
	t.Helper()
	o := &auth.Options{Resource: testResource, Issuer: testIssuer,
		Introspection: &auth.IntrospectionOptions{URL: e.URL, ClientID: "rs", ClientSecret: "s:cret", Timeout: time.Second}}
	for _, m := range mod {
		m(o)
	}
	v, err := auth.NewVerifier(context.Background(), o)
	require.NoError(t, err)
	t.Cleanup(func() { v.Close() })
	return v
}

func TestIntrospection(t *testing.T) {
	e := newIntrospectionEndpoint(t)
	e.answers["good"] = answer(t, map[string]any{"team": "blue"})
	e.answers["inactive"] = `{"active":false}`
	e.answers["other-audience"] = answer(t, map[string]any{"aud": []string{"https://other.example/mcp"}})
	e.answers["no-aud"] = answer(t, map[string]any{"aud": nil})
	e.answers["other-issuer"] = answer(t, map[string]any{"iss": "https://evil.example"})
	e.answers["no-issuer"] = answer(t, map[string]any{"iss": nil})
	e.answers["expired"] = answer(t, map[string]any{"exp": time.Now().Add(-time.Hour).Unix()})
	e.answers["not-yet"] = answer(t, map[string]any{"nbf": time.Now().Add(time.Hour).Unix()})
	e.answers["no-sub"] = answer(t, map[string]any{"sub": nil})
	e.answers["not-rfc7662"] = `{"hello":"world"}`
	v := introspectingVerifier(t, e)
	ctx := context.Background()

	c, err := v.Verify(ctx, "good")
	require.NoError(t, err)
	assert.Equal(t, "alice", c.Subject)
	assert.Equal(t, []string{"mcp:read", "mcp:write"}, c.Scopes)
	assert.Equal(t, "app", c.ClientID)
	assert.Equal(t, []string{testResource}, c.Audience)
	var extra struct{ Team string }
	require.NoError(t, c.Decode(&extra))
	assert.Equal(t, "blue", extra.Team)
	_, err = v.Verify(ctx, "no-issuer")
	assert.NoError(t, err, "an endpoint that leaves iss out speaks for its issuer")

	for tok, want := range map[string]error{
		"inactive":       auth.ErrInactive,
		"unknown":        auth.ErrInactive,
		"other-audience": auth.ErrAudience,
		"no-aud":         auth.ErrMissingClaim,
		"other-issuer":   auth.ErrIssuer,
		"expired":        auth.ErrExpired,
		"not-yet":        auth.ErrNotYetValid,
		"no-sub":         auth.ErrMissingClaim,
		"not-rfc7662":    auth.ErrIntrospection,
	} {
		_, err := v.Verify(ctx, tok)
		assert.ErrorIs(t, err, want, tok)
		assert.NotContains(t, err.Error(), tok+"\"", "the token is never in the error")
	}
}

// TestIntrospectionIsCached: one call per token within CacheTTL; failures
// are never cached.
func TestIntrospectionIsCached(t *testing.T) {
	e := newIntrospectionEndpoint(t)
	e.answers["good"] = answer(t, nil)
	v := introspectingVerifier(t, e)
	for range 5 {
		_, err := v.Verify(context.Background(), "good")
		require.NoError(t, err)
		_, err = v.Verify(context.Background(), "bad")
		require.Error(t, err)
	}
	assert.EqualValues(t, 1+5, e.calls.Load())

	now := time.Now()
	clock := func() time.Time { return now }
	e.calls.Store(0)
	v = introspectingVerifier(t, e, func(o *auth.Options) { o.Now = clock; o.CacheTTL = time.Minute })
	_, err := v.Verify(context.Background(), "good")
	require.NoError(t, err)
	now = now.Add(2 * time.Minute)
	_, err = v.Verify(context.Background(), "good")
	require.NoError(t, err)
	assert.EqualValues(t, 2, e.calls.Load(), "asked again after the TTL")
}

// TestIntrospectionFailsClosed: an endpoint that is down, errs, stalls or
// refuses our credentials gets the request a 503 with Retry-After, never a
// 401 and never a pass.
func TestIntrospectionFailsClosed(t *testing.T) {
	e := newIntrospectionEndpoint(t)
	e.answers["good"] = answer(t, nil)
	v := introspectingVerifier(t, e)
	r := chiRouter(v)

	get := func() *http.Response {
		req := httptest.NewRequest(http.MethodGet, "/mcp", nil)
		req.Header.Set("Authorization", "Bearer good")
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		return w.Result()
	}
	for name, set := range map[string]func(){
		"500":     func() { e.status.Store(500) },
		"stalls":  func() { e.status.Store(0); e.delay.Store(int64(5 * time.Second)) },
		"refuses": func() { e.delay.Store(0); e.status.Store(401) },
	} {
		set()
		start := time.Now()
		res := get()
		assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode, name)
		assert.Equal(t, "10", res.Header.Get("Retry-After"), name)
		assert.Empty(t, res.Header.Get("WWW-Authenticate"), name)
		assert.Less(t, time.Since(start), 4*time.Second, "ended by the timeout (1s), not by the endpoint (5s): %s", name)
	}
	e.status.Store(0)
	assert.Equal(t, http.StatusOK, get().StatusCode, "back by itself")

	down := introspectingVerifier(t, e, func(o *auth.Options) {
		o.Introspection.URL = "http://127.0.0.1:1/introspect"
	})
	_, err := down.Verify(context.Background(), "good")
	assert.ErrorIs(t, err, auth.ErrIntrospection)
}

// TestIntrospectionChallenges: the same answers as for JWTs.
func TestIntrospectionChallenges(t *testing.T) {
	e := newIntrospectionEndpoint(t)
	e.answers["reader"] = answer(t, map[string]any{"scope": "mcp:read"})
	v := introspectingVerifier(t, e)
	r := chiRouter(v)
	for tok, want := range map[string]struct {
		status    int
		challenge string
	}{
		"":       {401, `Bearer scope="mcp:write", resource_metadata="` + testMetadata + `"`},
		"nope":   {401, `Bearer error="invalid_token", error_description="the token is not active", scope="mcp:write", resource_metadata="` + testMetadata + `"`},
		"reader": {403, `Bearer error="insufficient_scope", error_description="the token lacks a required scope", scope="mcp:write", resource_metadata="` + testMetadata + `"`},
	} {
		req := httptest.NewRequest(http.MethodPost, "/write", nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		assert.Equal(t, want.status, w.Code, tok)
		assert.Equal(t, want.challenge, w.Header().Get("WWW-Authenticate"), tok)
	}
}

func TestIntrospectionOptions(t *testing.T) {
	for name, o := range map[string]*auth.Options{
		"with keys": {Resource: testResource, Issuer: testIssuer, Keys: []auth.Key{auth.HMACKey("HS256", make([]byte, 32))},
			Introspection: &auth.IntrospectionOptions{URL: "https://login.example.com/introspect"}},
		"relative URL":   {Resource: testResource, Issuer: testIssuer, Introspection: &auth.IntrospectionOptions{URL: "/introspect"}},
		"half a secret":  {Resource: testResource, Issuer: testIssuer, Introspection: &auth.IntrospectionOptions{URL: "https://x/i", ClientID: "a"}},
		"negative limit": {Resource: testResource, Issuer: testIssuer, Introspection: &auth.IntrospectionOptions{URL: "https://x/i", Timeout: -1}},
	} {
		_, err := auth.NewVerifier(context.Background(), o)
		assert.ErrorIs(t, err, auth.ErrOptions, name)
	}
}

// chiRouter protects /mcp (mcp:read) and /write (mcp:write) with v.
func chiRouter(v *auth.Verifier) http.Handler {
	mux := http.NewServeMux()
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.Handle("/mcp", v.Handler(auth.RequireScopes("mcp:read")(ok)))
	mux.Handle("/write", v.Handler(auth.RequireScopes("mcp:write")(ok)))
	return mux
}
