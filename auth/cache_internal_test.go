package auth

import (
	"testing"
	"time"
)

// TestTokenCacheKeyIsOnlyAnIndex checks that an entry is returned only for
// its own token: a token that lands on another token's key (a hash
// collision, forced here) is a miss, not that token's claims.
func TestTokenCacheKeyIsOnlyAnIndex(t *testing.T) {
	c := newTokenCache(8, time.Minute, nil)
	st := &state{claims: &Claims{Subject: "alice", ExpiresAt: time.Now().Add(time.Hour)}}
	c.put(c.key("other"), "alice-token", st, 0)
	if got, _, ok := c.get("other"); ok || got != nil {
		t.Fatalf("a token on another token's key got %v, want a miss", got)
	}
	c.put(c.key("alice-token"), "alice-token", st, 0)
	if got, _, ok := c.get("alice-token"); !ok || got != st {
		t.Fatalf("the cached token got %v, %v; want its state", got, ok)
	}
}
