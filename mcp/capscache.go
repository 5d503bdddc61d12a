package mcp

import (
	"bytes"
	"encoding/json"
	"sync/atomic"
)

// capsCache remembers the last few distinct clientCapabilities objects of
// 2026-07-28 requests, decoded, by their exact bytes: a client sends the
// same object with every request, and decoding it each time was a fixed
// cost of every call. The decoded values are shared by every request that
// sent those bytes, concurrently, so they are read-only: nothing in the
// package writes to a Request's or a Call's Client, and Request.Client
// says so to handlers (sessions have always shared theirs the same way).
//
// Lookups are lock-free: the entries are an immutable slice behind an
// atomic pointer, replaced whole on a miss (copy on write); the newest
// entry comes first and the oldest falls off past capsCacheSize. Objects
// larger than capsCacheMaxLen are decoded every time and not kept, which
// bounds the memory to capsCacheSize × capsCacheMaxLen plus the decoded
// values.
type capsCache struct {
	entries atomic.Pointer[[]capsEntry]
}

type capsEntry struct {
	raw  []byte
	caps *ClientCapabilities
}

const (
	capsCacheSize   = 8
	capsCacheMaxLen = 4 << 10
)

// get returns raw decoded, or nil when it is not a ClientCapabilities
// object.
func (c *capsCache) get(raw []byte) *ClientCapabilities {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var cur []capsEntry
	if p := c.entries.Load(); p != nil {
		cur = *p
		for i := range cur {
			if bytes.Equal(cur[i].raw, raw) {
				return cur[i].caps
			}
		}
	}
	caps := &ClientCapabilities{}
	if json.Unmarshal(raw, caps) != nil {
		return nil
	}
	if len(raw) > capsCacheMaxLen {
		return caps
	}
	next := make([]capsEntry, 0, min(len(cur)+1, capsCacheSize))
	next = append(next, capsEntry{raw: bytes.Clone(raw), caps: caps})
	next = append(next, cur[:min(len(cur), capsCacheSize-1)]...)
	c.entries.Store(&next) // a concurrent miss may win instead: either is right
	return caps
}
