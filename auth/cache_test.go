package auth_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/auth"
)

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestTokenCache checks the verified-token cache through what it may
// change: a token that verified is trusted for CacheTTL even after its key
// is gone, never past its exp, and a cache that is off (or too small to
// hold it) checks the signature again.
func TestTokenCache(t *testing.T) {
	t.Parallel()
	k := testKeys()
	c := &clock{t: time.Now()}
	mkOpts := func(size int, ttl time.Duration) *auth.Options {
		return &auth.Options{Resource: testResource, Issuer: testIssuer, Now: c.now, CacheSize: size, CacheTTL: ttl,
			Keys: []auth.Key{auth.ECDSAKey(&k.ec.PublicKey).WithID("e")}}
	}
	tok := mint(t, jwt.SigningMethodES256, k.ec, "e", claims(func(m jwt.MapClaims) {
		m["exp"] = c.now().Add(90 * time.Second).Unix()
	}))
	ctx := context.Background()

	v := newVerifier(t, mkOpts(0, time.Minute))
	first, err := v.Verify(ctx, tok)
	require.NoError(t, err)
	again, err := v.Verify(ctx, tok)
	require.NoError(t, err)
	assert.Same(t, first, again, "within the TTL the cached claims are returned")

	// The cache is the only way a token whose key is unknown can pass:
	// a second verifier with another key shows what a miss does.
	other := newVerifier(t, &auth.Options{Resource: testResource, Issuer: testIssuer, Now: c.now,
		Keys: []auth.Key{auth.ECDSAKey(&mustEC(t).PublicKey).WithID("e")}})
	_, err = other.Verify(ctx, tok)
	assert.ErrorIs(t, err, auth.ErrSignature)

	c.add(61 * time.Second)
	third, err := v.Verify(ctx, tok)
	require.NoError(t, err, "after the TTL the token is checked again, and still good")
	assert.NotSame(t, first, third)

	c.add(30 * time.Second) // past exp (90 s), though within the entry's TTL
	fourth, err := v.Verify(ctx, tok)
	require.NoError(t, err, "still within the 30 s leeway")
	assert.NotSame(t, third, fourth, "a cache entry never outlives the token's exp: checked again")
	c.add(30 * time.Second) // past exp and leeway
	_, err = v.Verify(ctx, tok)
	assert.ErrorIs(t, err, auth.ErrExpired)

	off := newVerifier(t, mkOpts(-1, time.Minute))
	tok2 := mint(t, jwt.SigningMethodES256, k.ec, "e", claims(func(m jwt.MapClaims) { m["exp"] = c.now().Add(time.Hour).Unix() }))
	a, err := off.Verify(ctx, tok2)
	require.NoError(t, err)
	b, err := off.Verify(ctx, tok2)
	require.NoError(t, err)
	assert.NotSame(t, a, b, "with the cache off every call verifies")

	tiny := newVerifier(t, mkOpts(1, time.Minute))
	tok3 := mint(t, jwt.SigningMethodES256, k.ec, "e", claims(func(m jwt.MapClaims) {
		m["exp"] = c.now().Add(time.Hour).Unix()
		m["jti"] = "3"
	}))
	x, _ := tiny.Verify(ctx, tok2)
	_, _ = tiny.Verify(ctx, tok3) // evicts tok2: the cache holds one
	y, err := tiny.Verify(ctx, tok2)
	require.NoError(t, err)
	assert.NotSame(t, x, y, "an evicted token is verified again")
}

func BenchmarkVerify(b *testing.B) {
	k := testKeys()
	for _, tc := range []struct {
		name string
		ttl  time.Duration
	}{{"cached", time.Minute}, {"uncached", -1}} {
		b.Run(tc.name, func(b *testing.B) {
			v, err := auth.NewVerifier(context.Background(), &auth.Options{Resource: testResource, Issuer: testIssuer,
				CacheTTL: tc.ttl, Keys: []auth.Key{auth.RSAKey("RS256", &k.rsa.PublicKey)}})
			require.NoError(b, err)
			tok := mint(b, jwt.SigningMethodRS256, k.rsa, "", claims())
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := v.Verify(context.Background(), tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
