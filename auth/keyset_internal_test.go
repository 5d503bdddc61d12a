package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"testing"

	"github.com/MicahParks/jwkset"
)

// The key set's generation grows when a refresh drops a key, and only
// then: the same set again, or a key added, keeps the cached tokens.
func TestKeySetGenerationGrowsWhenAKeyIsDropped(t *testing.T) {
	t.Parallel()
	newJWK := func(kid string) jwkset.JWK {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		j, err := jwkset.NewJWKFromKey(&k.PublicKey, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: kid}})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	a, b, a2 := newJWK("a"), newJWK("b"), newJWK("a")
	var ks keySet
	steps := []struct {
		set  []jwkset.JWK
		want uint64
		why  string
	}{
		{[]jwkset.JWK{a}, 0, "first set"},
		{[]jwkset.JWK{a}, 0, "the same set"},
		{[]jwkset.JWK{a, b}, 0, "a key added"},
		{[]jwkset.JWK{b}, 1, "a dropped"},
		{[]jwkset.JWK{b, a2}, 1, "a new key under an old kid is an addition"},
		{[]jwkset.JWK{a2}, 2, "b dropped"},
		{nil, 3, "everything dropped"},
	}
	for _, s := range steps {
		ks.replaced(s.set)
		if got := ks.gen.Load(); got != s.want {
			t.Fatalf("%s: generation %d, want %d", s.why, got, s.want)
		}
	}
}
