package mcp

import (
	"strconv"
	"time"

	"github.com/saguaro-go/saguaro/internal/jsonstr"
)

// CacheScope says who may reuse a cached 2026-07-28 result.
type CacheScope string

// The cache scopes of the 2026-07-28 caching hints.
const (
	// CachePrivate: only the client that asked may reuse the result. It
	// is the default, and the only safe one when a result depends on who
	// is asking (lists filtered by the caller's scopes, say).
	CachePrivate CacheScope = "private"
	// CachePublic: any client, and shared caches, may reuse the result.
	CachePublic CacheScope = "public"
)

// CacheHint is the caching hint (ttlMs, cacheScope) a 2026-07-28 result
// of a cacheable method carries: server/discover, tools/list,
// prompts/list, resources/list, resources/templates/list, resources/read,
// skills/list and skills/get.
//
// The zero CacheHint, the default for every method, is {0, private}: "do
// not reuse" and correct for any server, since lists may change at run
// time. Raise TTL for lists that only change at deploys; choose
// CachePublic only for results that do not depend on the caller.
// Pitfall: a positive TTL means a client may not see a list change (or a
// revoked tool) for that long, even with listChanged notifications.
type CacheHint struct {
	TTL   time.Duration
	Scope CacheScope
}

// cacheable lists the methods whose modern results are CacheableResults.
var cacheable = map[string]bool{
	"server/discover":          true,
	"tools/list":               true,
	"prompts/list":             true,
	"resources/list":           true,
	"resources/templates/list": true,
	"resources/read":           true,
	"skills/list":              true,
	"skills/get":               true,
}

// appendCacheHint writes `"ttlMs":N,"cacheScope":"…"` for method.
func (e *engine) appendCacheHint(dst []byte, method string) []byte {
	h := e.cache[method]
	ms := h.TTL.Milliseconds()
	if ms < 0 {
		ms = 0
	}
	scope := h.Scope
	if scope != CachePublic {
		scope = CachePrivate
	}
	dst = append(dst, `"ttlMs":`...)
	dst = strconv.AppendInt(dst, ms, 10)
	dst = append(dst, `,"cacheScope":`...)
	return jsonstr.AppendString(dst, string(scope))
}
