// Package reqscope lets the layers of one request hand values down without
// each wrapping the request's context again: every r.WithContext copies the
// whole *http.Request (about 250 bytes) and every context.WithValue adds an
// allocation and a node that each later lookup walks past.
//
// The request logger (saguaro/middleware.RequestLogger) already puts one
// node of its own in the context. That node answers for [ScopeKey] with a
// per-request [Scope], and for [AuthKey] with what the scope holds, so a
// layer below it (auth.Verifier.Handler) fills the scope and passes the
// request on unchanged. Without the logger, or when the scope is taken,
// the layer falls back to context.WithValue under the same key, and a
// lookup finds whichever is nearer, as with any context value.
package reqscope

import (
	"context"
	"sync/atomic"
)

// ScopeKey is the context key of a request's *Scope.
type ScopeKey struct{}

// AuthKey is the context key of the auth package's verification outcome,
// whether it sits in a Scope or in a context.WithValue node of its own.
// Being internal, no package outside this module can set it.
type AuthKey struct{}

// Scope is the per-request holder. Its zero value is empty and ready.
type Scope struct {
	auth atomic.Value
}

// From returns the scope of ctx, or nil.
func From(ctx context.Context) *Scope {
	s, _ := ctx.Value(ScopeKey{}).(*Scope)
	return s
}

// SetAuth stores the auth outcome v (never nil), once: it reports false,
// storing nothing, when one is there already.
func (s *Scope) SetAuth(v any) bool {
	return s.auth.CompareAndSwap(nil, v)
}

// Auth returns the stored auth outcome, or nil. Safe from any goroutine.
func (s *Scope) Auth() any {
	return s.auth.Load()
}
