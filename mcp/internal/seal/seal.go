// Package seal protects what an MCP server hands a client to give back
// later: list cursors (authenticated, readable) and 2026-07-28
// requestState (authenticated and encrypted). Both use one key set, so a
// deployment configures one secret: the first key seals, every key opens,
// and a key is rotated by putting the new one first and dropping the old
// one once what it sealed has expired.
//
// Each secret, of any length, is stretched into separate keys per use
// (HMAC-SHA-256 for cursors, AES-256-GCM for state), so the two uses never
// share key material; a short digest names the key in every token.
package seal

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
)

// Keys is a key set; it is safe for concurrent use.
type Keys struct {
	keys []key
}

type key struct {
	id   [4]byte
	mac  []byte
	aead cipher.AEAD
}

// New derives a key set from secrets, the first of which seals. No
// secrets means one random secret: what is sealed then opens only in this
// process.
func New(secrets [][]byte) *Keys {
	if len(secrets) == 0 {
		s := make([]byte, 32)
		_, _ = rand.Read(s)
		secrets = [][]byte{s}
	}
	k := &Keys{}
	for _, s := range secrets {
		enc := sha256.Sum256(append([]byte("mcp-request-state-key:"), s...))
		block, err := aes.NewCipher(enc[:])
		if err != nil {
			panic("seal: " + err.Error()) // a 32-byte key is always valid
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			panic("seal: " + err.Error())
		}
		mac := sha256.Sum256(append([]byte("mcp-cursor-key:"), s...))
		id := sha256.Sum256(enc[:])
		var one key
		copy(one.id[:], id[:4])
		one.mac, one.aead = mac[:], aead
		k.keys = append(k.keys, one)
	}
	return k
}

const macLen = 16

// ErrOpen reports a token that no key opens: forged, damaged, or sealed
// with a key that is no longer in the set.
var ErrOpen = errors.New("seal: the token does not open")

func (k *key) sum(kind byte, data []byte) []byte {
	m := hmac.New(sha256.New, k.mac)
	m.Write([]byte{kind})
	m.Write(data)
	return m.Sum(nil)[:macLen]
}

// Sign returns data readable but authenticated, for kind (a byte that
// keeps tokens of one use from being accepted by another):
// base64url(kind | key id | data | MAC).
func (k *Keys) Sign(kind byte, data string) string {
	first := &k.keys[0]
	b := make([]byte, 0, 1+4+len(data)+macLen)
	b = append(b, kind)
	b = append(b, first.id[:]...)
	b = append(b, data...)
	b = append(b, first.sum(kind, b[5:])...)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Verify returns the data of a token Sign made for kind with any key of
// the set.
func (k *Keys) Verify(kind byte, token string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) < 1+4+macLen || b[0] != kind {
		return "", ErrOpen
	}
	data, mac := b[5:len(b)-macLen], b[len(b)-macLen:]
	for i := range k.keys {
		if bytes.Equal(k.keys[i].id[:], b[1:5]) && hmac.Equal(mac, k.keys[i].sum(kind, data)) {
			return string(data), nil
		}
	}
	return "", ErrOpen
}

const version = 1

// Seal encrypts and authenticates plaintext with the first key, bound to
// aad (which Open must be given again): base64url(version | key id |
// nonce | ciphertext and tag).
func (k *Keys) Seal(plaintext, aad []byte) string {
	first := &k.keys[0]
	out := make([]byte, 0, 1+4+12+len(plaintext)+16)
	out = append(out, version)
	out = append(out, first.id[:]...)
	nonce := make([]byte, first.aead.NonceSize())
	_, _ = rand.Read(nonce)
	out = append(out, nonce...)
	out = first.aead.Seal(out, nonce, plaintext, aad)
	return base64.RawURLEncoding.EncodeToString(out)
}

// Open returns the plaintext of a token Seal made with any key of the set
// and the same aad.
func (k *Keys) Open(token string, aad []byte) ([]byte, error) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) < 1+4+12+16 || raw[0] != version {
		return nil, ErrOpen
	}
	for i := range k.keys {
		kk := &k.keys[i]
		if !bytes.Equal(kk.id[:], raw[1:5]) {
			continue
		}
		ns := kk.aead.NonceSize()
		if pt, err := kk.aead.Open(nil, raw[5:5+ns], raw[5+ns:], aad); err == nil {
			return pt, nil
		}
	}
	return nil, ErrOpen
}
