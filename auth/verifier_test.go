package auth_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/auth"
)

// TestHostileTokens sends every kind of bad credential over real HTTP and
// checks the exact status and challenge.
func TestHostileTokens(t *testing.T) {
	t.Parallel()
	k := testKeys()
	srv := newApp(t, newVerifier(t, defaultOptions()))
	noErr := `Bearer resource_metadata="` + testMetadata + `"`
	badReq := challengeFor("invalid_request", "the Authorization header is malformed")
	invalid := func(desc string) string { return challengeFor("invalid_token", desc) }
	otherRSA := mustRSA(t)
	identity := `"` + testIssuer + `" "alice"`

	rows := []struct {
		name      string
		path      string
		authz     []string
		status    int
		challenge string // exact WWW-Authenticate; "" means none
		body      string // substring of the body
	}{
		{"no header", "/mcp", nil, 401, noErr, `"error":"unauthorized"`},
		{"basic scheme", "/mcp", []string{"Basic dXNlcjpwYXNz"}, 401, noErr, `"unauthorized"`},
		{"bearer with nothing", "/mcp", []string{"Bearer"}, 400, badReq, `"invalid_request"`},
		{"bearer with spaces only", "/mcp", []string{"Bearer    "}, 400, badReq, `"invalid_request"`},
		{"token with a space inside", "/mcp", []string{"Bearer abc def"}, 400, badReq, `"invalid_request"`},
		{"garbage", "/mcp", []string{"Bearer garbage"}, 401, invalid("the token is malformed"), `"invalid_token"`},
		{"two authorization headers", "/mcp", []string{"Bearer " + rsaToken(t), "Bearer " + rsaToken(t)}, 400, badReq, `"invalid_request"`},
		{"alg none", "/mcp", []string{"Bearer " + mint(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "", claims())},
			401, invalid("the token signature is invalid"), `"invalid_token"`},
		{"alg confusion: HS256 with the RSA public key bytes, kid of the RSA key", "/mcp",
			[]string{"Bearer " + mint(t, jwt.SigningMethodHS256, k.rsaPEM, "rsa1", claims())},
			401, invalid("the token is signed with an unknown key"), `"invalid_token"`},
		{"alg confusion: HS256 with the RSA public key bytes, no kid", "/mcp",
			[]string{"Bearer " + mint(t, jwt.SigningMethodHS256, k.rsaPEM, "", claims())},
			401, invalid("the token signature is invalid"), `"invalid_token"`},
		{"alg switched to RS512 on an RS256 key", "/mcp",
			[]string{"Bearer " + mint(t, jwt.SigningMethodRS512, k.rsa, "rsa1", claims())},
			401, invalid("the token signature is invalid"), `"invalid_token"`},
		{"wrong key", "/mcp", []string{"Bearer " + mint(t, jwt.SigningMethodRS256, otherRSA, "rsa1", claims())},
			401, invalid("the token signature is invalid"), `"invalid_token"`},
		{"unknown kid", "/mcp", []string{"Bearer " + mint(t, jwt.SigningMethodRS256, k.rsa, "nope", claims())},
			401, invalid("the token is signed with an unknown key"), `"invalid_token"`},
		{"expired", "/mcp", []string{"Bearer " + rsaToken(t, func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Hour).Unix() })},
			401, invalid("the token has expired"), `"the token has expired"`},
		{"nbf in the future", "/mcp", []string{"Bearer " + rsaToken(t, func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(time.Hour).Unix() })},
			401, invalid("the token is not valid yet"), `"invalid_token"`},
		{"iat in the future", "/mcp", []string{"Bearer " + rsaToken(t, func(c jwt.MapClaims) { c["iat"] = time.Now().Add(time.Hour).Unix() })},
			401, invalid("the token is not valid yet"), `"invalid_token"`},
		{"no exp", "/mcp", []string{"Bearer " + rsaToken(t, func(c jwt.MapClaims) { delete(c, "exp") })},
			401, invalid("the token lacks a required claim"), `"invalid_token"`},
		{"no sub", "/mcp", []string{"Bearer " + rsaToken(t, func(c jwt.MapClaims) { delete(c, "sub") })},
			401, invalid("the token lacks a required claim"), `"invalid_token"`},
		{"wrong iss", "/mcp", []string{"Bearer " + rsaToken(t, func(c jwt.MapClaims) { c["iss"] = "https://evil.example.com" })},
			401, invalid("the token is from another issuer"), `"invalid_token"`},
		{"wrong aud", "/mcp", []string{"Bearer " + rsaToken(t, func(c jwt.MapClaims) { c["aud"] = "https://other.example.com/mcp" })},
			401, invalid("the token is for another resource"), `"invalid_token"`},
		{"aud with trailing slash is another resource", "/mcp", []string{"Bearer " + rsaToken(t, func(c jwt.MapClaims) { c["aud"] = testResource + "/" })},
			401, invalid("the token is for another resource"), `"invalid_token"`},
		{"no aud", "/mcp", []string{"Bearer " + rsaToken(t, func(c jwt.MapClaims) { delete(c, "aud") })},
			401, invalid("the token lacks a required claim"), `"invalid_token"`},
		{"scope of the wrong type", "/mcp", []string{"Bearer " + rsaToken(t, func(c jwt.MapClaims) { c["scope"] = 42 })},
			401, invalid("the token is malformed"), `"invalid_token"`},
		{"token in the query string is ignored", "/mcp?access_token=" + rsaToken(t), nil, 401, noErr, `"unauthorized"`},
		{"64 KiB authorization header", "/mcp", []string{"Bearer " + strings.Repeat("a", 64<<10)},
			401, invalid("the token is malformed"), `"invalid_token"`},
		{"missing scope", "/admin", []string{"Bearer " + rsaToken(t)}, 403,
			`Bearer error="insufficient_scope", error_description="the token lacks a required scope", scope="tools:call tools:admin", resource_metadata="` + testMetadata + `"`,
			`"insufficient_scope"`},
		{"no token on a scoped route names the scopes", "/admin", nil, 401,
			`Bearer scope="tools:call tools:admin", resource_metadata="` + testMetadata + `"`, `"unauthorized"`},
		{"expired token on a scoped route names the scopes", "/tools",
			[]string{"Bearer " + rsaToken(t, func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Hour).Unix() })}, 401,
			`Bearer error="invalid_token", error_description="the token has expired", scope="tools:call", resource_metadata="` + testMetadata + `"`,
			`"invalid_token"`},

		// Accepted.
		{"valid RS256", "/mcp", []string{"Bearer " + rsaToken(t)}, 200, "", identity},
		{"lower-case scheme", "/mcp", []string{"bearer " + rsaToken(t)}, 200, "", identity},
		{"upper-case scheme, extra spaces", "/mcp", []string{"BEARER   " + rsaToken(t)}, 200, "", identity},
		{"aud list containing ours", "/mcp", []string{"Bearer " + rsaToken(t, func(c jwt.MapClaims) {
			c["aud"] = []string{"https://other.example.com", testResource}
		})}, 200, "", identity},
		{"expired within the leeway", "/mcp", []string{"Bearer " + rsaToken(t, func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-5 * time.Second).Unix() })},
			200, "", identity},
		{"RS256 without kid", "/mcp", []string{"Bearer " + mint(t, jwt.SigningMethodRS256, k.rsa, "", claims())}, 200, "", identity},
		{"ES256", "/mcp", []string{"Bearer " + mint(t, jwt.SigningMethodES256, k.ec, "ec1", claims())}, 200, "", identity},
		{"EdDSA", "/mcp", []string{"Bearer " + mint(t, jwt.SigningMethodEdDSA, k.ed, "ed1", claims())}, 200, "", identity},
		{"HS256", "/mcp", []string{"Bearer " + mint(t, jwt.SigningMethodHS256, k.secret, "hs1", claims())}, 200, "", identity},
		{"scoped route with the scope", "/tools", []string{"Bearer " + rsaToken(t)}, 200, "", identity},
		{"scope from scp array", "/tools", []string{"Bearer " + rsaToken(t, func(c jwt.MapClaims) {
			delete(c, "scope")
			c["scp"] = []string{"tools:call"}
		})}, 200, "", identity},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			got := get(t, srv, row.path, row.authz...)
			assert.Equal(t, row.status, got.status)
			assert.Equal(t, row.challenge, got.header.Get("WWW-Authenticate"))
			assert.Contains(t, got.body, row.body)
			for _, a := range row.authz {
				if tok, ok := strings.CutPrefix(a, "Bearer "); ok && len(tok) > 20 {
					assert.NotContains(t, got.body, tok, "the token must never be echoed")
				}
			}
			if row.status != 200 {
				assert.Equal(t, "application/json", got.header.Get("Content-Type"))
				assert.Equal(t, "no-store", got.header.Get("Cache-Control"))
			}
		})
	}

	// The server still serves after the hostile rows.
	assert.Equal(t, 200, get(t, srv, "/mcp", "Bearer "+rsaToken(t)).status)
}

// TestOversizedHeaderKeepsServing checks that a 64 KiB header gets a clean
// 4xx and the same connection pool keeps working.
func TestOversizedHeaderKeepsServing(t *testing.T) {
	t.Parallel()
	srv := newApp(t, newVerifier(t, defaultOptions()))
	for range 3 {
		got := get(t, srv, "/mcp", "Bearer "+strings.Repeat("x", 64<<10))
		assert.Equal(t, 401, got.status)
		assert.Equal(t, 200, get(t, srv, "/mcp", "Bearer "+rsaToken(t)).status)
	}
}

func TestOptionalRouteSeesError(t *testing.T) {
	t.Parallel()
	srv := newApp(t, newVerifier(t, defaultOptions()))

	got := get(t, srv, "/optional")
	assert.Equal(t, 200, got.status)
	assert.Equal(t, "anonymous: "+auth.ErrNoToken.Error(), got.body)

	got = get(t, srv, "/optional", "Bearer "+rsaToken(t))
	assert.Equal(t, "hello alice", got.body)

	got = get(t, srv, "/optional", "Bearer "+rsaToken(t, func(c jwt.MapClaims) { c["exp"] = 1 }))
	assert.True(t, strings.HasPrefix(got.body, "anonymous: "+auth.ErrExpired.Error()), got.body)
}

func TestVerifyErrors(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, defaultOptions())
	ctx := context.Background()
	cases := []struct {
		name  string
		token string
		want  error
		jwt   error // the golang-jwt sentinel that is also wrapped, if any
	}{
		{"expired", rsaToken(t, func(c jwt.MapClaims) { c["exp"] = 1 }), auth.ErrExpired, jwt.ErrTokenExpired},
		{"not yet valid", rsaToken(t, func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(time.Hour).Unix() }), auth.ErrNotYetValid, jwt.ErrTokenNotValidYet},
		{"issuer", rsaToken(t, func(c jwt.MapClaims) { c["iss"] = "x" }), auth.ErrIssuer, jwt.ErrTokenInvalidIssuer},
		{"audience", rsaToken(t, func(c jwt.MapClaims) { c["aud"] = "x" }), auth.ErrAudience, jwt.ErrTokenInvalidAudience},
		{"missing exp", rsaToken(t, func(c jwt.MapClaims) { delete(c, "exp") }), auth.ErrMissingClaim, jwt.ErrTokenRequiredClaimMissing},
		{"malformed", "a.b.c", auth.ErrMalformed, jwt.ErrTokenMalformed},
		{"empty", "", auth.ErrMalformed, jwt.ErrTokenMalformed},
		{"unknown kid", mint(t, jwt.SigningMethodES256, testKeys().ec, "zzz", claims()), auth.ErrUnknownKey, nil},
		{"kid not a string", mint(t, jwt.SigningMethodES256, testKeys().ec, "", claims()), nil, nil}, // replaced below
		{"expired and wrong audience: expiry wins", rsaToken(t, func(c jwt.MapClaims) { c["exp"] = 1; c["aud"] = "x" }), auth.ErrExpired, jwt.ErrTokenInvalidAudience},
	}
	// A kid that is a number is malformed.
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, claims())
	tok.Header["kid"] = 7
	s, err := tok.SignedString(testKeys().ec)
	require.NoError(t, err)
	cases[8].token, cases[8].want = s, auth.ErrMalformed

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := v.Verify(ctx, c.token)
			assert.Nil(t, got)
			require.Error(t, err)
			assert.ErrorIs(t, err, c.want)
			if c.jwt != nil {
				assert.ErrorIs(t, err, c.jwt)
			}
			for _, other := range []error{auth.ErrExpired, auth.ErrNotYetValid, auth.ErrIssuer, auth.ErrAudience, auth.ErrMissingClaim, auth.ErrMalformed, auth.ErrUnknownKey, auth.ErrSignature} {
				if other != c.want {
					assert.False(t, errors.Is(err, other), "%v must wrap only %v, also wraps %v", err, c.want, other)
				}
			}
		})
	}
}

func TestLeeway(t *testing.T) {
	t.Parallel()
	now := time.Now()
	tokenExpiredAgo := func(d time.Duration) string {
		return rsaToken(t, func(c jwt.MapClaims) { c["exp"] = now.Add(-d).Unix() })
	}
	def := newVerifier(t, defaultOptions())
	_, err := def.Verify(context.Background(), tokenExpiredAgo(10*time.Second))
	assert.NoError(t, err, "default leeway is 30s")
	_, err = def.Verify(context.Background(), tokenExpiredAgo(time.Minute))
	assert.ErrorIs(t, err, auth.ErrExpired)

	o := defaultOptions()
	o.Leeway = auth.NoLeeway
	strict := newVerifier(t, o)
	_, err = strict.Verify(context.Background(), tokenExpiredAgo(10*time.Second))
	assert.ErrorIs(t, err, auth.ErrExpired)

	o = defaultOptions()
	o.Leeway = 2 * time.Minute
	loose := newVerifier(t, o)
	_, err = loose.Verify(context.Background(), tokenExpiredAgo(time.Minute))
	assert.NoError(t, err)
}

func TestNowOption(t *testing.T) {
	t.Parallel()
	o := defaultOptions()
	o.Now = func() time.Time { return time.Now().Add(time.Hour) }
	v := newVerifier(t, o)
	_, err := v.Verify(context.Background(), rsaToken(t))
	assert.ErrorIs(t, err, auth.ErrExpired, "an hour later the 5-minute token has expired")
}

func TestMaxTokenBytes(t *testing.T) {
	t.Parallel()
	o := defaultOptions()
	o.MaxTokenBytes = 100
	v := newVerifier(t, o)
	_, err := v.Verify(context.Background(), rsaToken(t))
	assert.ErrorIs(t, err, auth.ErrMalformed)
}

func TestNewVerifierRejectsBadOptions(t *testing.T) {
	t.Parallel()
	k := testKeys()
	ok := func(edit func(*auth.Options)) *auth.Options {
		o := defaultOptions()
		edit(o)
		return o
	}
	cases := map[string]*auth.Options{
		"nil options":            nil,
		"no resource":            ok(func(o *auth.Options) { o.Resource = "" }),
		"relative resource":      ok(func(o *auth.Options) { o.Resource = "/mcp" }),
		"resource with fragment": ok(func(o *auth.Options) { o.Resource = testResource + "#x" }),
		"ftp resource":           ok(func(o *auth.Options) { o.Resource = "ftp://x/mcp" }),
		"no issuer":              ok(func(o *auth.Options) { o.Issuer = "" }),
		"issuer not a URL":       ok(func(o *auth.Options) { o.Issuer = "mysrv-dev" }),
		"relative issuer":        ok(func(o *auth.Options) { o.Issuer = "/login" }),
		"issuer without host":    ok(func(o *auth.Options) { o.Issuer = "https:///x" }),
		"ftp issuer":             ok(func(o *auth.Options) { o.Issuer = "ftp://login.example.com" }),
		"issuer with query":      ok(func(o *auth.Options) { o.Issuer = testIssuer + "?tenant=a" }),
		"issuer with fragment":   ok(func(o *auth.Options) { o.Issuer = testIssuer + "#a" }),
		"metadata URL not http":  ok(func(o *auth.Options) { o.ResourceMetadataURL = "mailto:a@example.com" }),
		"no keys":                ok(func(o *auth.Options) { o.Keys = nil }),
		"negative leeway":        ok(func(o *auth.Options) { o.Leeway = -time.Second }),
		"huge leeway":            ok(func(o *auth.Options) { o.Leeway = time.Hour }),
		"negative max token":     ok(func(o *auth.Options) { o.MaxTokenBytes = -1 }),
		"relative metadata URL":  ok(func(o *auth.Options) { o.ResourceMetadataURL = "/.well-known/x" }),
		"short HMAC secret":      ok(func(o *auth.Options) { o.Keys = []auth.Key{auth.HMACKey("HS256", []byte("short"))} }),
		"HMAC with RS256":        ok(func(o *auth.Options) { o.Keys = []auth.Key{auth.HMACKey("RS256", k.secret)} }),
		"RSA with ES256":         ok(func(o *auth.Options) { o.Keys = []auth.Key{auth.RSAKey("ES256", &k.rsa.PublicKey)} }),
		"nil RSA key":            ok(func(o *auth.Options) { o.Keys = []auth.Key{auth.RSAKey("RS256", nil)} }),
		"nil ECDSA key":          ok(func(o *auth.Options) { o.Keys = []auth.Key{auth.ECDSAKey(nil)} }),
		"short Ed25519 key":      ok(func(o *auth.Options) { o.Keys = []auth.Key{auth.Ed25519Key(ed25519.PublicKey{1, 2})} }),
		"bad JWKS URL":           ok(func(o *auth.Options) { o.JWKS = &auth.JWKSOptions{URL: "not a url"} }),
		"JWKS with HS256": ok(func(o *auth.Options) {
			o.JWKS = &auth.JWKSOptions{URL: "https://x/jwks", Algorithms: []string{"HS256"}}
		}),
		"JWKS negative timeout": ok(func(o *auth.Options) { o.JWKS = &auth.JWKSOptions{URL: "https://x/jwks", LookupTimeout: -1} }),
	}
	for name, o := range cases {
		t.Run(name, func(t *testing.T) {
			v, err := auth.NewVerifier(context.Background(), o)
			assert.Nil(t, v)
			assert.ErrorIs(t, err, auth.ErrOptions)
		})
	}
	var nilCtx context.Context
	_, err := auth.NewVerifier(nilCtx, defaultOptions())
	assert.ErrorIs(t, err, auth.ErrOptions)
}

func TestNewVerifierDoesNotMutateOptions(t *testing.T) {
	t.Parallel()
	o := defaultOptions()
	o.JWKS = &auth.JWKSOptions{URL: "http://127.0.0.1:1/jwks", FetchTimeout: 50 * time.Millisecond, OnRefreshError: func(context.Context, error) {}}
	before := *o
	jwksBefore := *o.JWKS
	newVerifier(t, o)
	assert.Equal(t, before.Leeway, o.Leeway)
	assert.Equal(t, before.MaxTokenBytes, o.MaxTokenBytes)
	assert.Equal(t, "", o.ResourceMetadataURL)
	assert.Equal(t, jwksBefore.LookupTimeout, o.JWKS.LookupTimeout)
	assert.Nil(t, o.JWKS.Algorithms)
	assert.Len(t, o.Keys, len(before.Keys))
}

func TestCustomResourceMetadataURL(t *testing.T) {
	t.Parallel()
	o := defaultOptions()
	o.ResourceMetadataURL = `https://meta.example.com/prm?"x"`
	srv := newApp(t, newVerifier(t, o))
	got := get(t, srv, "/mcp")
	assert.Equal(t, `Bearer resource_metadata="https://meta.example.com/prm?\"x\""`, got.header.Get("WWW-Authenticate"))
}

func TestCloseIsIdempotent(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, defaultOptions())
	assert.NoError(t, v.Close())
	assert.NoError(t, v.Close())
	_, err := v.Verify(context.Background(), rsaToken(t))
	assert.NoError(t, err, "static keys keep working after Close")
}

// TestNewVerifierIssuerIsAURL holds the promise that a verifier which
// builds also serves its metadata: an Issuer that is not a URL is refused
// by NewVerifier, naming the option, rather than by MountMetadata later.
func TestNewVerifierIssuerIsAURL(t *testing.T) {
	t.Parallel()
	o := defaultOptions()
	o.Issuer = "mysrv-dev"
	_, err := auth.NewVerifier(context.Background(), o)
	require.ErrorIs(t, err, auth.ErrOptions)
	assert.Contains(t, err.Error(), `Issuer "mysrv-dev"`)

	for _, iss := range []string{"https://login.example.com", "https://login.example.com/tenant/a", "http://127.0.0.1:8080"} {
		o := defaultOptions()
		o.Issuer = iss
		v, err := auth.NewVerifier(context.Background(), o)
		require.NoError(t, err, iss)
		md := v.ResourceMetadata()
		require.NoError(t, auth.MountMetadata(http.NewServeMux(), &md), "a verifier that builds serves its metadata")
		require.NoError(t, v.Close())
	}
}
