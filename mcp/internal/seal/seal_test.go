package seal

import (
	"encoding/base64"
	"errors"
	"testing"
)

func TestSignRotationAndTampering(t *testing.T) {
	t.Parallel()
	old := New([][]byte{[]byte("old")})
	rotated := New([][]byte{[]byte("new"), []byte("old")})
	retired := New([][]byte{[]byte("new")})

	tok := old.Sign('t', "item-7")
	if got, err := rotated.Verify('t', tok); err != nil || got != "item-7" {
		t.Errorf("an old key still verifies: %q %v", got, err)
	}
	if _, err := retired.Verify('t', tok); !errors.Is(err, ErrOpen) {
		t.Errorf("a retired key verified: %v", err)
	}
	if _, err := old.Verify('p', tok); !errors.Is(err, ErrOpen) {
		t.Error("a token of one kind opened as another")
	}
	if _, err := old.Verify('t', rotated.Sign('t', "x")); !errors.Is(err, ErrOpen) {
		t.Error("the new key must sign")
	}
	raw, _ := base64.RawURLEncoding.DecodeString(tok)
	for i := range raw {
		b := append([]byte(nil), raw...)
		b[i] ^= 1
		if _, err := old.Verify('t', base64.RawURLEncoding.EncodeToString(b)); err == nil {
			t.Errorf("byte %d flipped and the token still verified", i)
		}
	}
	for _, bad := range []string{"", "!!", "AAAA", tok + "A"} {
		if _, err := old.Verify('t', bad); err == nil {
			t.Errorf("%q verified", bad)
		}
	}
}

func TestSealRotationAndBinding(t *testing.T) {
	t.Parallel()
	old := New([][]byte{[]byte("old")})
	rotated := New([][]byte{[]byte("new"), []byte("old")})
	tok := old.Seal([]byte("secret"), []byte("aad"))
	if pt, err := rotated.Open(tok, []byte("aad")); err != nil || string(pt) != "secret" {
		t.Errorf("an old key still opens: %q %v", pt, err)
	}
	if _, err := old.Open(tok, []byte("other")); !errors.Is(err, ErrOpen) {
		t.Error("opened with other additional data")
	}
	if _, err := New(nil).Open(tok, []byte("aad")); !errors.Is(err, ErrOpen) {
		t.Error("a random key set opened another's token")
	}
	if a, b := old.Seal([]byte("x"), nil), old.Seal([]byte("x"), nil); a == b {
		t.Error("two seals of one plaintext are equal: the nonce is not fresh")
	}
	raw, _ := base64.RawURLEncoding.DecodeString(tok)
	raw[len(raw)-1] ^= 1
	if _, err := old.Open(base64.RawURLEncoding.EncodeToString(raw), []byte("aad")); !errors.Is(err, ErrOpen) {
		t.Error("a damaged token opened")
	}
}

func TestUsesDoNotShareKeys(t *testing.T) {
	t.Parallel()
	k := New([][]byte{[]byte("one secret")})
	if string(k.keys[0].mac) == "" || len(k.keys[0].mac) != 32 {
		t.Fatal("no MAC key")
	}
	// The AEAD key is derived under another label; a MAC key equal to
	// it would make the two uses share material.
	other := New([][]byte{[]byte("one secret")})
	if string(k.keys[0].mac) != string(other.keys[0].mac) || k.keys[0].id != other.keys[0].id {
		t.Error("derivation is not deterministic")
	}
}
