package oauth

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// How signing keys live.
const (
	// defaultKeyLifetime is how long one key signs before the server
	// rotates to a new one (Options.SigningKeyLifetime).
	defaultKeyLifetime = 30 * 24 * time.Hour
	// retiredKeyGrace is how long a retired key stays published: longer
	// than any access token (accessTokenTTL) or development token (an
	// hour) it signed, plus keyCacheTTL, during which another replica may
	// still sign with it.
	retiredKeyGrace = 2 * time.Hour
	// keyCacheTTL is how long a replica signs with the key it last read
	// before reading which key signs again.
	keyCacheTTL = 30 * time.Second
	// sealedPrefix marks a key stored encrypted with Options.KeySecret.
	sealedPrefix = "sealed:v1:"
)

// ErrKeySecret is returned by New when the stored signing keys cannot be
// opened: they are encrypted and Options.KeySecret is missing or not the
// one they were encrypted with.
var ErrKeySecret = errors.New("oauth: the stored signing keys cannot be opened with this KeySecret")

// signingKey is an ES256 key the server signs access tokens with. It
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

// keyID names a key by a hash of its public half, so that every replica
// that reads one key gives it one id.
func keyID(k *ecdsa.PrivateKey) string {
	pub, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

func newSigningKey() (*signingKey, string, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, "", err
	}
	return &signingKey{id: keyID(k), key: k}, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), nil
}

func parseSigningKey(text string) (*signingKey, error) {
	block, _ := pem.Decode([]byte(text))
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
	return &signingKey{id: keyID(k), key: k}, nil
}

// keyAEAD is the cipher Options.KeySecret seals keys with (nil without a
// secret): AES-256-GCM under a key derived from the secret by HKDF-SHA256.
func keyAEAD(secret string) (cipher.AEAD, error) {
	if secret == "" {
		return nil, nil
	}
	k, err := hkdf.Key(sha256.New, []byte(secret), nil, "saguaro example_app oauth signing keys", 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// seal returns how a key's PEM text is stored: encrypted, bound to its id,
// when the server has a KeySecret, as itself otherwise.
func (s *Server) seal(id, text string) string {
	if s.aead == nil {
		return text
	}
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return sealedPrefix + base64.StdEncoding.EncodeToString(s.aead.Seal(nonce, nonce, []byte(text), []byte(id)))
}

// openKey reverses seal.
func (s *Server) openKey(id, stored string) (*signingKey, error) {
	text := stored
	if rest, ok := strings.CutPrefix(stored, sealedPrefix); ok {
		if s.aead == nil {
			return nil, fmt.Errorf("%w: they are encrypted and no KeySecret is set", ErrKeySecret)
		}
		b, err := base64.StdEncoding.DecodeString(rest)
		n := s.aead.NonceSize()
		if err != nil || len(b) < n {
			return nil, fmt.Errorf("%w: key %s is damaged", ErrKeySecret, id)
		}
		plain, err := s.aead.Open(nil, b[:n], b[n:], []byte(id))
		if err != nil {
			return nil, fmt.Errorf("%w: key %s", ErrKeySecret, id)
		}
		text = string(plain)
	}
	k, err := parseSigningKey(text)
	if err != nil {
		return nil, err
	}
	if k.id != id {
		return nil, fmt.Errorf("oauth: stored signing key %s has id %s", id, k.id)
	}
	return k, nil
}

// keyRing caches the key this server signs with for keyCacheTTL.
type keyRing struct {
	mu      sync.Mutex
	current *signingKey
	read    time.Time
}

// initKeys prepares the signing keys at start: it moves the key of
// schema version 1 (kept among oauth_secrets) into oauth_signing_keys,
// drops the code key version 1 kept (codes are random and stored as
// hashes: no key needs sharing), makes sure a key signs, checks that
// every stored key opens, and encrypts the ones stored in plaintext when
// a KeySecret is set. Replicas that start together may each create a
// key; the newest signs and the others are retired by the next rotation.
func (s *Server) initKeys(ctx context.Context) error {
	db := s.db
	var old string
	err := db.QueryRowContext(ctx, `SELECT value FROM oauth_secrets WHERE name = 'signing-key-es256'`).Scan(&old)
	switch {
	case err == nil:
		k, err := parseSigningKey(old)
		if err != nil {
			return err
		}
		if _, err := db.ExecContext(ctx, db.Rebind(`INSERT INTO oauth_signing_keys (id, private_key, created_at) VALUES (?, ?, ?)
			ON CONFLICT (id) DO NOTHING`), k.id, s.seal(k.id, old), time.Now().Unix()); err != nil {
			return fmt.Errorf("oauth: signing key: %w", err)
		}
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("oauth: signing key: %w", err)
	}
	if _, err := db.ExecContext(ctx, `DELETE FROM oauth_secrets WHERE name IN ('signing-key-es256', 'code-key')`); err != nil {
		return fmt.Errorf("oauth: signing key: %w", err)
	}
	if _, err := s.activeKey(ctx); errors.Is(err, errNotFound) {
		if err := s.addKey(ctx, ""); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	rows, err := db.QueryContext(ctx, `SELECT id, private_key FROM oauth_signing_keys`)
	if err != nil {
		return fmt.Errorf("oauth: signing keys: %w", err)
	}
	plain := map[string]string{}
	for rows.Next() {
		var id, stored string
		if err := rows.Scan(&id, &stored); err != nil {
			_ = rows.Close()
			return fmt.Errorf("oauth: signing keys: %w", err)
		}
		if _, err := s.openKey(id, stored); err != nil {
			_ = rows.Close()
			return err
		}
		if s.aead != nil && !strings.HasPrefix(stored, sealedPrefix) {
			plain[id] = stored
		}
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("oauth: signing keys: %w", err)
	}
	for id, text := range plain {
		if _, err := db.ExecContext(ctx, db.Rebind(`UPDATE oauth_signing_keys SET private_key = ? WHERE id = ? AND private_key = ?`),
			s.seal(id, text), id, text); err != nil {
			return fmt.Errorf("oauth: signing keys: %w", err)
		}
	}
	return nil
}

// addKey stores a new signing key, which signs from now on. With retire
// set it first retires that key, in the same transaction, and does
// nothing when another replica retired it first (errRotated).
func (s *Server) addKey(ctx context.Context, retire string) error {
	k, text, err := newSigningKey()
	if err != nil {
		return fmt.Errorf("oauth: signing key: %w", err)
	}
	db := s.db
	now := time.Now().Unix()
	err = db.Tx(ctx, func(tx *sql.Tx) error {
		if retire != "" {
			res, err := tx.ExecContext(ctx, db.Rebind(`UPDATE oauth_signing_keys SET retired_at = ? WHERE id = ? AND retired_at = 0`), now, retire)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n != 1 {
				return errRotated
			}
		}
		_, err := tx.ExecContext(ctx, db.Rebind(`INSERT INTO oauth_signing_keys (id, private_key, created_at) VALUES (?, ?, ?)`),
			k.id, s.seal(k.id, text), now)
		return err
	})
	if err != nil {
		if errors.Is(err, errRotated) {
			return err
		}
		return fmt.Errorf("oauth: signing key: %w", err)
	}
	s.ring.mu.Lock()
	s.ring.current, s.ring.read = k, time.Now()
	s.ring.mu.Unlock()
	return nil
}

// errRotated: another replica rotated the key first.
var errRotated = errors.New("oauth: the signing key was rotated already")

// RotateSigningKey makes a new key the one that signs. The key it
// replaces stays in the published key set (/oauth/keys) for two hours,
// so that the tokens it signed stay valid until they expire; then it is
// deleted. The server also rotates by itself once a key is older than
// Options.SigningKeyLifetime. Replicas sharing the database sign with the
// new key within 30 seconds.
//
// Pitfall: a leaked key is still accepted until it leaves the key set;
// rotation is for keeping keys young, not for revoking one.
func (s *Server) RotateSigningKey(ctx context.Context) error {
	cur, err := s.activeKey(ctx)
	if err != nil {
		return err
	}
	if err := s.addKey(ctx, cur.id); err != nil && !errors.Is(err, errRotated) {
		return err
	}
	return nil
}

// rotateIfOld rotates the signing key once it is older than the
// lifetime.
func (s *Server) rotateIfOld(ctx context.Context) error {
	if s.opts.SigningKeyLifetime < 0 {
		return nil
	}
	var id string
	var created int64
	err := s.db.QueryRowContext(ctx, `SELECT id, created_at FROM oauth_signing_keys WHERE retired_at = 0
		ORDER BY created_at DESC, id DESC LIMIT 1`).Scan(&id, &created)
	if err != nil {
		return fmt.Errorf("oauth: signing key: %w", err)
	}
	if time.Since(time.Unix(created, 0)) < s.opts.SigningKeyLifetime {
		return nil
	}
	if err := s.addKey(ctx, id); err != nil && !errors.Is(err, errRotated) {
		return err
	}
	return nil
}

// activeKey reads the key that signs: the newest one not retired.
func (s *Server) activeKey(ctx context.Context) (*signingKey, error) {
	var id, stored string
	err := s.db.QueryRowContext(ctx, `SELECT id, private_key FROM oauth_signing_keys WHERE retired_at = 0
		ORDER BY created_at DESC, id DESC LIMIT 1`).Scan(&id, &stored)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("oauth: signing key: %w", err)
	}
	return s.openKey(id, stored)
}

// signer returns the key to sign with, read at most keyCacheTTL ago.
func (s *Server) signer(ctx context.Context) (*signingKey, error) {
	s.ring.mu.Lock()
	defer s.ring.mu.Unlock()
	if s.ring.current != nil && time.Since(s.ring.read) < keyCacheTTL {
		return s.ring.current, nil
	}
	k, err := s.activeKey(ctx)
	if err != nil {
		return nil, err
	}
	s.ring.current, s.ring.read = k, time.Now()
	return k, nil
}

// publishedKeys reads the key set: the keys that sign, and those retired
// less than retiredKeyGrace ago. It reads the database every time, so
// that a verifier that meets an unknown key id and fetches the set again
// finds a key another replica has just started signing with.
func (s *Server) publishedKeys(ctx context.Context) ([]op.Key, error) {
	db := s.db
	rows, err := db.QueryContext(ctx, db.Rebind(`SELECT id, private_key FROM oauth_signing_keys
		WHERE retired_at = 0 OR retired_at >= ? ORDER BY created_at DESC, id DESC`), time.Now().Add(-retiredKeyGrace).Unix())
	if err != nil {
		return nil, fmt.Errorf("oauth: signing keys: %w", err)
	}
	defer rows.Close()
	var keys []op.Key
	for rows.Next() {
		var id, stored string
		if err := rows.Scan(&id, &stored); err != nil {
			return nil, fmt.Errorf("oauth: signing keys: %w", err)
		}
		k, err := s.openKey(id, stored)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k.public())
	}
	return keys, rows.Err()
}
