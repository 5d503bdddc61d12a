package auth

import (
	"crypto/sha256"
	"sync"
	"time"
	"unsafe"
)

// tokenCache remembers tokens that verified, so a client that sends the
// same token on every request pays for the signature check once per
// CacheTTL instead of every time (an RS256 check costs tens of
// microseconds, more than the rest of a request). It is keyed by the
// token's SHA-256, holds at most max entries (evicting an arbitrary one
// when full), and never keeps an entry past the token's exp.
type tokenCache struct {
	mu  sync.Mutex
	m   map[[sha256.Size]byte]cacheEntry
	max int
	ttl time.Duration
	now func() time.Time
	// gen is the generation of the key set (nil: keys never change): an
	// entry of an older generation, verified before a key was dropped, is
	// checked again.
	gen func() uint64
}

type cacheEntry struct {
	st    *state // what Handler leaves in the context: the claims, no error
	until time.Time
	gen   uint64
}

func newTokenCache(size int, ttl time.Duration, now func() time.Time) *tokenCache {
	if size <= 0 || ttl <= 0 {
		return nil
	}
	if now == nil {
		now = time.Now
	}
	return &tokenCache{m: make(map[[sha256.Size]byte]cacheEntry, min(size, 1024)), max: size, ttl: ttl, now: now}
}

// get returns the claims of a token that verified within the TTL and has
// not expired since.
func (c *tokenCache) get(token string) (*state, [sha256.Size]byte, bool) {
	// Hashed in place: a []byte(token) copy would be an allocation per
	// request (tokens are far longer than the stack's 32-byte buffer), and
	// Sum256 neither keeps nor changes its input.
	key := sha256.Sum256(unsafe.Slice(unsafe.StringData(token), len(token)))
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok {
		return nil, key, false
	}
	if !c.now().Before(e.until) || e.gen != c.generation() {
		delete(c.m, key)
		return nil, key, false
	}
	return e.st, key, true
}

// generation is the key set's generation, 0 when it never changes.
func (c *tokenCache) generation() uint64 {
	if c.gen == nil {
		return 0
	}
	return c.gen()
}

// put remembers a token verified with the keys of generation gen (read
// before the verification began) until its exp or the TTL, whichever is
// first.
func (c *tokenCache) put(key [sha256.Size]byte, st *state, gen uint64) {
	until := c.now().Add(c.ttl)
	if exp := st.claims.ExpiresAt; !exp.IsZero() && exp.Before(until) {
		until = exp
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; !ok && len(c.m) >= c.max {
		for k := range c.m { // an arbitrary victim: O(1), no bookkeeping
			delete(c.m, k)
			break
		}
	}
	c.m[key] = cacheEntry{st: st, until: until, gen: gen}
}
