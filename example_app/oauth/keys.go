package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/saguaro-go/saguaro/example_app/database"
)

// signingKey is the ES256 key every replica signs access tokens with. It
// implements op.SigningKey.
type signingKey struct {
	id  string
	key *ecdsa.PrivateKey
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.ES256 }
func (k *signingKey) Key() any                                    { return k.key }
func (k *signingKey) ID() string                                  { return k.id }

// publicKey implements op.Key.
type publicKey struct {
	id  string
	key *ecdsa.PublicKey
}

func (k *publicKey) ID() string                         { return k.id }
func (k *publicKey) Algorithm() jose.SignatureAlgorithm { return jose.ES256 }
func (k *publicKey) Use() string                        { return "sig" }
func (k *publicKey) Key() any                           { return k.key }

func (k *signingKey) public() *publicKey { return &publicKey{id: k.id, key: &k.key.PublicKey} }

// writeKeySet writes keys as a JWKS document.
func writeKeySet(w io.Writer, keys []op.Key) error {
	set := jose.JSONWebKeySet{}
	for _, k := range keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.Key(), KeyID: k.ID(), Algorithm: string(k.Algorithm()), Use: k.Use()})
	}
	return json.NewEncoder(w).Encode(set)
}

// sharedSecret returns the value stored under name, storing make()'s
// first: replicas that start together all end up with the first one
// written.
func sharedSecret(ctx context.Context, db *database.DB, name string, make func() (string, error)) (string, error) {
	v, err := make()
	if err != nil {
		return "", err
	}
	if _, err := db.ExecContext(ctx, db.Rebind(`INSERT INTO oauth_secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`), name, v); err != nil {
		return "", fmt.Errorf("oauth: secret %s: %w", name, err)
	}
	if err := db.QueryRowContext(ctx, db.Rebind(`SELECT value FROM oauth_secrets WHERE name = ?`), name).Scan(&v); err != nil {
		return "", fmt.Errorf("oauth: secret %s: %w", name, err)
	}
	return v, nil
}

// loadSigningKey returns the shared ES256 key, generating it on the first
// start. Its id is a hash of the public key.
func loadSigningKey(ctx context.Context, db *database.DB) (*signingKey, error) {
	v, err := sharedSecret(ctx, db, "signing-key-es256", func() (string, error) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return "", err
		}
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			return "", err
		}
		return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), nil
	})
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode([]byte(v))
	if block == nil {
		return nil, errors.New("oauth: stored signing key is not PEM")
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("oauth: stored signing key: %w", err)
	}
	k, ok := parsed.(*ecdsa.PrivateKey)
	if !ok || k.Curve != elliptic.P256() {
		return nil, errors.New("oauth: stored signing key is not P-256")
	}
	pub, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	sum := sha256.Sum256(pub)
	return &signingKey{id: hex.EncodeToString(sum[:8]), key: k}, nil
}

// loadCryptoKey returns the shared key op encrypts its codes with.
func loadCryptoKey(ctx context.Context, db *database.DB) ([32]byte, error) {
	var k [32]byte
	v, err := sharedSecret(ctx, db, "code-key", func() (string, error) {
		b := make([]byte, 32)
		_, err := rand.Read(b)
		return base64.StdEncoding.EncodeToString(b), err
	})
	if err != nil {
		return k, err
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(b) != 32 {
		return k, errors.New("oauth: stored code key is not 32 bytes")
	}
	copy(k[:], b)
	return k, nil
}
