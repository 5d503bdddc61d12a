package auth

import (
	"hash/maphash"
	"sync"
	"time"
)

// tokenCache remembers tokens that verified, so a client that sends the
// same token on every request pays for the signature check once per
// CacheTTL instead of every time (an RS256 check costs tens of
// microseconds, more than the rest of a request). It holds at most max
// entries (evicting an arbitrary one when full), and never keeps an entry
// past the token's exp.
//
// It is keyed by a seeded 64-bit hash of the token (hash/maphash, AES
// based where the CPU has it): a hit costs one pass over the token at
// memory speed, where a SHA-256 of a typical 800-byte JWT costs more than
// the rest of the lookup together. The hash is only an index: an entry
// keeps its token, and a hit requires the token to equal it, so a
// collision (which a client cannot aim for, the seed being random and
// private to the process) is a miss and a full verification, never a
// wrong identity. The token's bytes are compared only once the 64-bit
// hash has matched, so the comparison tells a caller nothing about a
// token it does not already have. Keeping a JWT costs no memory of its
// own: the cached Claims keep its payload, a substring of it.
type tokenCache struct {
	mu   sync.Mutex
	m    map[uint64]cacheEntry
	seed maphash.Seed
	max  int
	ttl  time.Duration
	now  func() time.Time
	// gen is the generation of the key set (nil: keys never change): an
	// entry of an older generation, verified before a key was dropped, is
	// checked again.
	gen func() uint64
}

type cacheEntry struct {
	token string
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
	return &tokenCache{m: make(map[uint64]cacheEntry, min(size, 1024)), seed: maphash.MakeSeed(),
		max: size, ttl: ttl, now: now}
}

// key is the index of token in the cache.
func (c *tokenCache) key(token string) uint64 {
	return maphash.String(c.seed, token)
}

// get returns the state of a token that verified within the TTL and has
// not expired since, and the token's key for put.
func (c *tokenCache) get(token string) (*state, uint64, bool) {
	key := c.key(token)
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok || e.token != token {
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

// put remembers token, of key key, verified with the keys of generation
// gen (read before the verification began) until its exp or the TTL,
// whichever is first. A token of the same key replaces the entry.
func (c *tokenCache) put(key uint64, token string, st *state, gen uint64) {
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
	c.m[key] = cacheEntry{token: token, st: st, until: until, gen: gen}
}
