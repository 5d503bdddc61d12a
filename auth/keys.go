package auth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"fmt"
	"slices"
)

// Key is one static verification key pinned to one JWS algorithm. Build it
// with [HMACKey], [RSAKey], [ECDSAKey] or [Ed25519Key], optionally name it
// with [Key.WithID], and list it in Options.Keys. [NewVerifier] validates
// every key and refuses the whole configuration if one is wrong.
//
// The algorithm is pinned per key: a token is checked only against keys whose
// algorithm equals its alg header, and the parser accepts only the union of
// the configured algorithms. This is what defeats alg confusion (a token
// signed HS256 with the bytes of an RSA public key finds no HS256 key) and
// alg "none" (never accepted).
type Key struct {
	id  string
	alg string
	key any
}

// HMACKey returns a key that verifies HS256, HS384 or HS512 tokens with a
// shared secret. The secret is copied. NewVerifier rejects a secret shorter
// than the hash output (32, 48 or 64 bytes; RFC 7518 §3.2).
//
// Pitfall: whoever holds the secret can mint tokens. Use it only when this
// server and the issuer really share one secret; an authorization server
// normally signs asymmetrically and publishes a JWKS.
func HMACKey(alg string, secret []byte) Key {
	return Key{alg: alg, key: slices.Clone(secret)}
}

// RSAKey returns a key that verifies RS256/384/512 or PS256/384/512 tokens.
// NewVerifier rejects moduli under 2048 bits. Pitfall: pass the parsed
// public key (jwt.ParseRSAPublicKeyFromPEM reads a PEM file), never the PEM
// bytes themselves: bytes are what an HMAC secret looks like.
func RSAKey(alg string, pub *rsa.PublicKey) Key {
	return Key{alg: alg, key: pub}
}

// ECDSAKey returns a key that verifies ES256, ES384 or ES512 tokens; the
// algorithm follows from the curve (P-256, P-384, P-521), so a key cannot be
// paired with the wrong hash. Any other curve is refused by NewVerifier.
// jwt.ParseECPublicKeyFromPEM reads a PEM file.
func ECDSAKey(pub *ecdsa.PublicKey) Key {
	alg := ""
	if pub != nil && pub.Curve != nil {
		alg = ecdsaAlg(pub.Curve)
	}
	return Key{alg: alg, key: pub}
}

// Ed25519Key returns a key that verifies EdDSA (Ed25519) tokens.
func Ed25519Key(pub ed25519.PublicKey) Key {
	return Key{alg: "EdDSA", key: slices.Clone(pub)}
}

// WithID returns a copy of k with key id kid. A token whose kid header names
// a static key with that id is checked against that key only. Keys without
// an id are tried for any token of their algorithm.
func (k Key) WithID(kid string) Key {
	k.id = kid
	return k
}

// ID returns the key id given with [Key.WithID], or "".
func (k Key) ID() string { return k.id }

// Algorithm returns the JWS algorithm the key is pinned to.
func (k Key) Algorithm() string { return k.alg }

var (
	hmacAlgs  = []string{"HS256", "HS384", "HS512"}
	rsaAlgs   = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}
	ecdsaAlgs = []string{"ES256", "ES384", "ES512"}
	// asymmetricAlgs is what a JWKS may use: a published key set must never
	// be able to verify HMAC tokens.
	asymmetricAlgs = slices.Concat(rsaAlgs, ecdsaAlgs, []string{"EdDSA"})
)

func ecdsaAlg(c elliptic.Curve) string {
	switch c {
	case elliptic.P256():
		return "ES256"
	case elliptic.P384():
		return "ES384"
	case elliptic.P521():
		return "ES512"
	}
	return ""
}

// validate checks that the key material fits its algorithm.
func (k Key) validate() error {
	switch key := k.key.(type) {
	case []byte:
		i := slices.Index(hmacAlgs, k.alg)
		if i < 0 {
			return fmt.Errorf("key %q: a secret verifies only %v, not %q", k.id, hmacAlgs, k.alg)
		}
		if want := 32 + 16*i; len(key) < want {
			return fmt.Errorf("key %q: %s secret is %d bytes, want at least %d", k.id, k.alg, len(key), want)
		}
	case *rsa.PublicKey:
		if key == nil || key.N == nil {
			return fmt.Errorf("key %q: nil RSA key", k.id)
		}
		if !slices.Contains(rsaAlgs, k.alg) {
			return fmt.Errorf("key %q: an RSA key verifies only %v, not %q", k.id, rsaAlgs, k.alg)
		}
		if key.N.BitLen() < 2048 {
			return fmt.Errorf("key %q: RSA key is %d bits, want at least 2048", k.id, key.N.BitLen())
		}
	case *ecdsa.PublicKey:
		if key == nil || k.alg == "" {
			return fmt.Errorf("key %q: nil ECDSA key or unsupported curve", k.id)
		}
	case ed25519.PublicKey:
		if len(key) != ed25519.PublicKeySize {
			return fmt.Errorf("key %q: Ed25519 key is %d bytes, want %d", k.id, len(key), ed25519.PublicKeySize)
		}
	default:
		return fmt.Errorf("key %q: unsupported key type %T", k.id, k.key)
	}
	return nil
}

// fits reports whether key (from a JWKS, or static) can verify alg. It is
// the per-key pin for JWKS entries that carry no "alg" of their own.
func fits(key any, alg string) bool {
	switch key := key.(type) {
	case *rsa.PublicKey:
		return slices.Contains(rsaAlgs, alg) && key.N != nil && key.N.BitLen() >= 2048
	case *ecdsa.PublicKey:
		return key.Curve != nil && ecdsaAlg(key.Curve) == alg
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	// []byte (an "oct" JWK) and anything else: never from a key set.
	return false
}
