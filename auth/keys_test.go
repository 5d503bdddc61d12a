package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/auth"
)

func TestKeyConstructors(t *testing.T) {
	t.Parallel()
	k := testKeys()
	p521, err := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	require.NoError(t, err)
	assert.Equal(t, "ES256", auth.ECDSAKey(&k.ec.PublicKey).Algorithm())
	assert.Equal(t, "ES384", auth.ECDSAKey(&k.ec384.PublicKey).Algorithm())
	assert.Equal(t, "ES512", auth.ECDSAKey(&p521.PublicKey).Algorithm())
	assert.Equal(t, "EdDSA", auth.Ed25519Key(k.ed.Public().(ed25519.PublicKey)).Algorithm())
	assert.Equal(t, "PS384", auth.RSAKey("PS384", &k.rsa.PublicKey).Algorithm())
	key := auth.HMACKey("HS256", k.secret)
	assert.Equal(t, "", key.ID())
	assert.Equal(t, "kid-1", key.WithID("kid-1").ID())
	assert.Equal(t, "", key.ID(), "WithID returns a copy")
}

func TestHMACKeyCopiesSecret(t *testing.T) {
	t.Parallel()
	secret := []byte("0123456789abcdef0123456789abcdef")
	o := defaultOptions()
	o.Keys = []auth.Key{auth.HMACKey("HS256", secret)}
	v := newVerifier(t, o)
	tok := mint(t, jwt.SigningMethodHS256, []byte("0123456789abcdef0123456789abcdef"), "", claims())
	secret[0] = 'X' // the caller reuses its buffer
	_, err := v.Verify(context.Background(), tok)
	assert.NoError(t, err)
}

func TestKeyFamilies(t *testing.T) {
	t.Parallel()
	k := testKeys()
	o := defaultOptions()
	o.Keys = []auth.Key{
		auth.RSAKey("PS256", &k.rsa.PublicKey),
		auth.ECDSAKey(&k.ec384.PublicKey),
		auth.HMACKey("HS512", append(k.secret, k.secret...)),
	}
	v := newVerifier(t, o)
	ok := map[string]string{
		"PS256": mint(t, jwt.SigningMethodPS256, k.rsa, "", claims()),
		"ES384": mint(t, jwt.SigningMethodES384, k.ec384, "", claims()),
		"HS512": mint(t, jwt.SigningMethodHS512, append(k.secret, k.secret...), "", claims()),
	}
	for name, tok := range ok {
		_, err := v.Verify(context.Background(), tok)
		assert.NoError(t, err, name)
	}
	bad := map[string]string{
		"RS256 on a PS256 key": mint(t, jwt.SigningMethodRS256, k.rsa, "", claims()),
		"ES256 not configured": mint(t, jwt.SigningMethodES256, k.ec, "", claims()),
		"HS256 not configured": mint(t, jwt.SigningMethodHS256, k.secret, "", claims()),
	}
	for name, tok := range bad {
		_, err := v.Verify(context.Background(), tok)
		assert.ErrorIs(t, err, auth.ErrSignature, name)
	}
}

func TestKeyValidation(t *testing.T) {
	t.Parallel()
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	require.NoError(t, err)
	k := testKeys()
	for name, key := range map[string]auth.Key{
		"RSA 1024":       auth.RSAKey("RS256", &small.PublicKey),
		"HS384 32 bytes": auth.HMACKey("HS384", k.secret),
		"HMAC none":      auth.HMACKey("none", k.secret),
		"RSA with HS256": auth.RSAKey("HS256", &k.rsa.PublicKey),
		"zero Key":       {},
	} {
		o := defaultOptions()
		o.Keys = []auth.Key{key}
		_, err := auth.NewVerifier(context.Background(), o)
		assert.ErrorIs(t, err, auth.ErrOptions, name)
	}
}

func TestKidSelectsStaticKey(t *testing.T) {
	t.Parallel()
	k := testKeys()
	other := mustEC(t)
	o := defaultOptions()
	o.Keys = []auth.Key{auth.ECDSAKey(&k.ec.PublicKey).WithID("one"), auth.ECDSAKey(&other.PublicKey).WithID("two")}
	v := newVerifier(t, o)
	ctx := context.Background()
	_, err := v.Verify(ctx, mint(t, jwt.SigningMethodES256, other, "two", claims()))
	assert.NoError(t, err)
	_, err = v.Verify(ctx, mint(t, jwt.SigningMethodES256, other, "", claims()))
	assert.NoError(t, err, "without kid every key of the alg is tried")
	_, err = v.Verify(ctx, mint(t, jwt.SigningMethodES256, other, "one", claims()))
	assert.ErrorIs(t, err, auth.ErrSignature, "kid one pins the check to key one")
}
