package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/saguaro-go/saguaro/auth"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	testIssuer   = "https://login.example.com"
	testResource = "https://mcp.example.com/mcp"
	testMetadata = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
)

// fixtures holds test keys, generated once (RSA generation is slow).
type fixtures struct {
	rsa    *rsa.PrivateKey
	rsaPEM []byte
	ec     *ecdsa.PrivateKey
	ec384  *ecdsa.PrivateKey
	ed     ed25519.PrivateKey
	secret []byte
}

var testKeys = sync.OnceValue(func() *fixtures {
	f := &fixtures{secret: []byte("0123456789abcdef0123456789abcdef")}
	var err error
	if f.rsa, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		panic(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&f.rsa.PublicKey)
	if err != nil {
		panic(err)
	}
	f.rsaPEM = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	if f.ec, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		panic(err)
	}
	if f.ec384, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader); err != nil {
		panic(err)
	}
	if _, f.ed, err = ed25519.GenerateKey(rand.Reader); err != nil {
		panic(err)
	}
	return f
})

// staticKeys is the key configuration of most tests: one key of each
// family, each with a kid.
func staticKeys() []auth.Key {
	k := testKeys()
	return []auth.Key{
		auth.RSAKey("RS256", &k.rsa.PublicKey).WithID("rsa1"),
		auth.ECDSAKey(&k.ec.PublicKey).WithID("ec1"),
		auth.Ed25519Key(k.ed.Public().(ed25519.PublicKey)).WithID("ed1"),
		auth.HMACKey("HS256", k.secret).WithID("hs1"),
	}
}

// claims returns valid claims for testResource, changed by edits.
func claims(edits ...func(jwt.MapClaims)) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{
		"iss":   testIssuer,
		"aud":   testResource,
		"sub":   "alice",
		"exp":   now.Add(5 * time.Minute).Unix(),
		"iat":   now.Unix(),
		"scope": "tools:read tools:call",
	}
	for _, e := range edits {
		e(c)
	}
	return c
}

// mint signs c with method and key, setting kid when not empty.
func mint(t testing.TB, method jwt.SigningMethod, key any, kid string, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	require.NoError(t, err)
	return s
}

// rsaToken is a valid RS256 token with kid rsa1.
func rsaToken(t testing.TB, edits ...func(jwt.MapClaims)) string {
	return mint(t, jwt.SigningMethodRS256, testKeys().rsa, "rsa1", claims(edits...))
}

func newVerifier(t testing.TB, o *auth.Options) *auth.Verifier {
	t.Helper()
	v, err := auth.NewVerifier(context.Background(), o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = v.Close() })
	return v
}

func defaultOptions() *auth.Options {
	return &auth.Options{Resource: testResource, Issuer: testIssuer, Keys: staticKeys()}
}

// newApp serves a chi app the way saguaro users mount it: metadata outside
// auth, /mcp behind Required, /tools behind RequireScopes, /optional with
// the verifier alone.
func newApp(t testing.TB, v *auth.Verifier) *httptest.Server {
	t.Helper()
	r := chi.NewRouter()
	md := v.ResourceMetadata()
	md.ScopesSupported = []string{"tools:read", "tools:call"}
	require.NoError(t, auth.MountMetadata(r, &md))
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, auth.Identity(r))
	})
	r.With(v.Handler, auth.Required()).Mount("/mcp", hello)
	r.With(v.Handler, auth.RequireScopes("tools:call", "tools:admin")).Get("/admin", hello)
	r.With(v.Handler, auth.RequireScopes("tools:call")).Get("/tools", hello)
	r.With(v.Handler).Get("/optional", func(w http.ResponseWriter, r *http.Request) {
		if err := auth.ErrorFromContext(r.Context()); err != nil {
			_, _ = io.WriteString(w, "anonymous: "+err.Error())
			return
		}
		_, _ = io.WriteString(w, "hello "+auth.Subject(r.Context()))
	})
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv
}

type reply struct {
	status int
	header http.Header
	body   string
}

// get sends GET path with the given Authorization values (each one a
// separate header line).
func get(t testing.TB, srv *httptest.Server, path string, authz ...string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	require.NoError(t, err)
	for _, a := range authz {
		req.Header.Add("Authorization", a)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return reply{resp.StatusCode, resp.Header, strings.TrimSpace(string(b))}
}

// challengeFor is the exact WWW-Authenticate of an invalid_token answer.
func challengeFor(code, desc string) string {
	return `Bearer error="` + code + `", error_description="` + desc + `", resource_metadata="` + testMetadata + `"`
}

func mustRSA(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	return k
}

func mustEC(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return k
}
