package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// Access says which callers may see and use a tool, resource, resource
// template or prompt (their Access field); nil lets every caller. A
// caller has access when it holds every one of Scopes and Allow, when
// set, approves it. Its author chooses what a caller without access
// meets:
//
//   - Hidden: the item is left out of every list for that caller, and a
//     call of it is refused exactly as one of an unknown item is
//     (unknown tool, unknown prompt, resource not found), so no answer
//     reveals that it exists; a subscription to a hidden resource is
//     answered as any other and not recorded, so no update reveals it.
//   - Not Hidden (the default): everyone sees it listed, and a call
//     without the scopes is refused with the MCP authorization spec's
//     step-up answer, which names the scopes to ask for: over HTTP,
//     where Options.Scopes reports the caller's token, 403 with
//     WWW-Authenticate: Bearer error="insufficient_scope",
//     scope="<Scopes>" (see Options.StepUp); elsewhere, and when only
//     Allow refused, an InvalidRequest error "Forbidden".
//
// The caller's scopes are what Options.Scopes (HTTP) or ConnOptions.Scopes
// (stdio, mcptest) report; with neither, a caller holds none, so an item
// with Scopes is refused to everyone.
//
// Pitfalls: list pages are built per caller when an item is Hidden, so the
// pre-encoded lists lose their speed there (the items themselves stay
// pre-encoded). A change to any item tells every session that the list
// changed, including callers who cannot see it: the notice names nothing,
// and re-listing shows each only what it may see. A session whose caller
// comes back with other scopes (a token that stepped up) is told that the
// lists which hide items changed; one whose Allow verdict changes is not. A 2026-07-28 result is
// cacheable: keep the tools/list and friends' CacheHint scope private when
// lists depend on the caller (the default).
type Access struct {
	// Scopes are the scopes the caller must hold, every one of them (as
	// the auth package grants them from the token's scope claim).
	Scopes []string
	// Allow, when set, must approve the caller too. It is asked with the
	// request that lists or uses the item (req.Method says which:
	// tools/list, tools/call, …), whose Identity, Client and Revision it
	// may read, and must not block: it runs once per hidden item and
	// caller of every list.
	Allow func(ctx context.Context, req *Request) bool
	// Hidden hides the item from callers without access instead of
	// answering them with step-up.
	Hidden bool
}

// verdict is what a caller meets at an item.
type verdict uint8

const (
	allowed verdict = iota
	hidden          // as if the item did not exist
	refused         // seen, but not for this caller: step-up
)

// check returns what the caller of req meets at an item with access a.
func (a *Access) check(ctx context.Context, req *Request) verdict {
	if a == nil {
		return allowed
	}
	var granted []string
	if len(a.Scopes) > 0 {
		granted = req.grantedScopes(ctx)
	}
	return a.checkWith(ctx, req, granted)
}

// checkWith is check with the scopes the caller holds already read (a
// list reads them once for all its items).
func (a *Access) checkWith(ctx context.Context, req *Request, granted []string) verdict {
	if a == nil {
		return allowed
	}
	ok := true
	if len(a.Scopes) > 0 {
		ok = holds(granted, a.Scopes)
	}
	if ok && a.Allow != nil {
		ok = a.Allow(ctx, req)
	}
	switch {
	case ok:
		return allowed
	case a.Hidden:
		return hidden
	}
	return refused
}

// holds reports whether granted has every scope of need.
func holds(granted, need []string) bool {
	for _, s := range need {
		found := false
		for _, g := range granted {
			if g == s {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// grantedScopes is what the transport reports the caller holds.
func (r *Request) grantedScopes(ctx context.Context) []string {
	if r.eng == nil || r.eng.scopes == nil {
		return nil
	}
	return r.eng.scopes(ctx)
}

// accessError refuses a caller a listed item: the step-up answer, naming
// the scopes it needs (none when only Access.Allow refused).
type accessError struct{ scopes []string }

func (e *accessError) Error() string {
	if len(e.scopes) == 0 {
		return "mcp: forbidden"
	}
	return "mcp: insufficient scope: needs " + strings.Join(e.scopes, " ")
}

var errForbidden = wire.NewError(wire.InvalidRequest, "Forbidden")

// rpcError is the JSON-RPC error of the refusal, for transports that
// cannot answer with an HTTP status (and over HTTP without a token).
func (e *accessError) rpcError() *wire.Error {
	if len(e.scopes) == 0 {
		return errForbidden
	}
	scope := strings.Join(e.scopes, " ")
	return &wire.Error{Code: wire.InvalidRequest, Message: "Forbidden: insufficient scope, needs " + scope,
		Data: map[string]string{"error": "insufficient_scope", "scope": scope}}
}

// refusal is the error a caller without access to a listed item gets.
func refusal(a *Access) error { return &accessError{scopes: a.Scopes} }

// accessChecker is a handler that keeps items with Access (a Server): the
// HTTP transport asks it before dispatching a call whether the caller
// needs to step up.
type accessChecker interface {
	// gated reports whether any item has an Access.
	gated() bool
	// hiddenLists reports the lists that hide an item from some callers.
	hiddenLists() []protocol.Change
	stepUp(ctx context.Context, req *Request, name string) []string
}

// StepUp implements protocol.Engine: the scopes the caller of a
// tools/call, prompts/get or resources/read must add to use the item it
// names, which it may see; nil when it may use it, may not see it, or no
// scope would help.
func (e *engine) StepUp(ctx context.Context, call *protocol.Call) []string {
	switch call.Method {
	case "tools/call", "prompts/get", "resources/read":
	default:
		return nil
	}
	if e.access == nil || !e.access.gated() {
		return nil
	}
	req := &Request{}
	e.fill(req, call, Revision(call.Revision.OrDefault()), RequestMeta{})
	name := req.Target()
	if name == "" {
		return nil
	}
	return e.access.stepUp(ctx, req, name)
}

// gated implements accessChecker.
func (s *Server) gated() bool {
	sn := s.snap.Load()
	return sn.toolPages.isGated() || sn.promptPages.gated || sn.resourcePages.isGated() || sn.templatePages.gated
}

// hiddenLists implements accessChecker.
func (s *Server) hiddenLists() []protocol.Change {
	sn := s.snap.Load()
	var out []protocol.Change
	if sn.toolPages.hides() {
		out = append(out, protocol.Change{Kind: protocol.ToolsChanged})
	}
	if sn.promptPages.access != nil {
		out = append(out, protocol.Change{Kind: protocol.PromptsChanged})
	}
	if sn.resourcePages.hides() || sn.templatePages.access != nil {
		out = append(out, protocol.Change{Kind: protocol.ResourcesChanged})
	}
	return out
}

// HiddenLists implements protocol.Engine.
func (e *engine) HiddenLists() []protocol.Change {
	if e.access == nil {
		return nil
	}
	return e.access.hiddenLists()
}

// stepUp implements accessChecker.
func (s *Server) stepUp(ctx context.Context, req *Request, name string) []string {
	sn := s.snap.Load()
	var a *Access
	switch req.Method {
	case "tools/call":
		if ent := sn.tools[name]; ent != nil && !hiddenTool(ent, req) {
			a = ent.tool.Access
		}
	case "prompts/get":
		if ent := sn.prompts[name]; ent != nil {
			a = ent.prompt.Access
		}
	case "resources/read":
		a = sn.resourceAccess(ctx, req, name)
	}
	if a == nil || len(a.Scopes) == 0 || a.check(ctx, req) != refused {
		return nil
	}
	return a.Scopes
}

// errNotRecorded answers a subscription as accepted without recording it
// (a resource hidden from the caller).
var errNotRecorded = errors.New("mcp: subscription not recorded")

// hiddenResource reports whether uri is hidden from the caller of req: a
// static resource hidden from it, or, for no static resource, a URI
// matched only by templates hidden from it.
func (sn *snapshot) hiddenResource(ctx context.Context, req *Request, uri string) bool {
	if ent := sn.resources[uri]; ent != nil && ent.res.Access.check(ctx, req) != hidden {
		return false
	}
	found := sn.resources[uri] != nil
	for _, t := range sn.templates {
		if _, ok := t.match(uri); ok {
			if t.tmpl.Access.check(ctx, req) != hidden {
				return false
			}
			found = true
		}
	}
	return found
}

// resourceAccess is the Access of what resources/read of uri reads: the
// static resource, else the first template that matches it and that the
// caller may see.
func (sn *snapshot) resourceAccess(ctx context.Context, req *Request, uri string) *Access {
	if ent := sn.resources[uri]; ent != nil {
		return ent.res.Access
	}
	for _, t := range sn.templates {
		if _, ok := t.match(uri); ok && t.tmpl.Access.check(ctx, req) != hidden {
			return t.tmpl.Access
		}
	}
	return nil
}

// stepUpWriter is how the endpoint answers a call that needs more scopes:
// o.StepUp, or the spec's challenge; nil without Options.Scopes (no token
// in play: the call's JSON-RPC error answers).
func stepUpWriter(o Options) func(w http.ResponseWriter, r *http.Request, id wire.ID, scopes []string) {
	switch {
	case o.Scopes == nil:
		return nil
	case o.StepUp != nil:
		return func(w http.ResponseWriter, r *http.Request, _ wire.ID, scopes []string) { o.StepUp(w, r, scopes) }
	}
	return writeStepUp
}

// writeStepUp answers 403 with the insufficient_scope challenge (RFC 6750
// §3.1, as the MCP authorization spec asks), and the call's JSON-RPC
// error for clients that read the body.
func writeStepUp(w http.ResponseWriter, _ *http.Request, id wire.ID, scopes []string) {
	h := w.Header()
	h.Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+strings.Join(scopes, " ")+
		`", error_description="the token lacks a required scope"`)
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write(wire.AppendErrorResponse(nil, id, (&accessError{scopes: scopes}).rpcError()))
}

// cloneAccess copies an item's Access at registration, checking its
// scopes: each a scope token (RFC 6749 §3.3: printable ASCII, no space,
// '"' or '\'), which the step-up challenge quotes.
func cloneAccess(a *Access) (*Access, error) {
	if a == nil {
		return nil, nil
	}
	c := *a
	c.Scopes = slices.Clone(a.Scopes)
	for _, s := range c.Scopes {
		if !isScopeToken(s) {
			return nil, fmt.Errorf("%w: access scope %q is not a scope token", ErrName, s)
		}
	}
	return &c, nil
}

func isScopeToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
