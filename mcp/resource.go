package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"unicode/utf8"
)

// ResourceFunc reads a resource (static or from a template). Return
// ErrResourceNotFound (possibly wrapped) for a URI it cannot serve; other
// errors are InternalError, logged but not sent.
type ResourceFunc func(ctx context.Context, req *ReadResourceRequest) (*ReadResourceResult, error)

type resourceEntry struct {
	res  Resource
	enc  *[nRevs][]byte
	h    ResourceFunc
	view bool // an MCP App view: listed to clients that render views
}

// validURI accepts an absolute URI (RFC 3986: a scheme).
func validURI(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme != ""
}

// AddResource registers a static resource under r.URI (an absolute URI,
// unique) with a non-empty Name. The Server does not keep r.
func (s *Server) AddResource(r *Resource, h ResourceFunc) error { return s.addResource(r, h, false) }

func (s *Server) addResource(r *Resource, h ResourceFunc, view bool) error {
	if r == nil || !validURI(r.URI) {
		return fmt.Errorf("%w: resource URI", ErrName)
	}
	if r.Name == "" {
		return fmt.Errorf("%w: resource %q has no name", ErrName, r.URI)
	}
	if h == nil {
		return fmt.Errorf("%w: resource %q", ErrNilHandler, r.URI)
	}
	ent := &resourceEntry{res: *r, h: h, view: view}
	var err error
	if ent.res.Access, err = cloneAccess(r.Access); err != nil {
		return fmt.Errorf("resource %q: %w", r.URI, err)
	}
	if ent.enc, err = encodeItem(func(e *encoder, rev Revision) { e.resource(rev, &ent.res) }); err != nil {
		return fmt.Errorf("%w: resource %q: %v", ErrName, r.URI, err)
	}
	return s.update(func(sn *snapshot) (ChangeKind, error) {
		if _, dup := sn.resources[r.URI]; dup {
			return 0, fmt.Errorf("%w: resource %q", ErrDuplicate, r.URI)
		}
		m := cloneMap(sn.resources)
		m[r.URI] = ent
		sn.resources, sn.resourcePages = m, s.resourcePageSet(m)
		sn.caps.Resources = &ResourcesCapability{Subscribe: true, ListChanged: true}
		if view {
			sn.caps.Extensions = map[string]json.RawMessage{ExtUI: json.RawMessage(`{}`)}
		}
		return ResourcesChanged, nil
	})
}

// RemoveResources unregisters static resources by URI and reports how
// many existed.
func (s *Server) RemoveResources(uris ...string) int {
	n := 0
	_ = s.update(func(sn *snapshot) (ChangeKind, error) {
		m := cloneMap(sn.resources)
		for _, u := range uris {
			if _, ok := m[u]; ok {
				delete(m, u)
				n++
			}
		}
		if n == 0 {
			return 0, errNoChange
		}
		sn.resources, sn.resourcePages = m, s.resourcePageSet(m)
		return ResourcesChanged, nil
	})
	return n
}

// resourcePageSet builds resources/list; with views, the list for
// clients that render them is its ui.
func (s *Server) resourcePageSet(m map[string]*resourceEntry) *pageSet {
	keys := make([]string, 0, len(m))
	ents := make([]*resourceEntry, 0, len(m))
	views := false
	for k, v := range m {
		if !v.view {
			keys, ents = append(keys, k), append(ents, v)
		}
		views = views || v.view
	}
	p := newPageSet('r', "resources", s.opts.PageSize, s.keys, keys, func(i int) *[nRevs][]byte { return ents[i].enc },
		func(i int) *Access { return ents[i].res.Access })
	if views {
		keys, ents = keys[:0], ents[:0]
		for k, v := range m {
			keys, ents = append(keys, k), append(ents, v)
		}
		p.ui = newPageSet('r', "resources", s.opts.PageSize, s.keys, keys, func(i int) *[nRevs][]byte { return ents[i].enc },
			func(i int) *Access { return ents[i].res.Access })
	}
	return p
}

// ListResources implements ResourceHandler.
func (s *Server) ListResources(ctx context.Context, req *ListRequest, state any) (*ListResourcesResult, any, error) {
	page, err := s.snap.Load().resourcePages.page(ctx, req, s.keys)
	if err != nil {
		return nil, state, err
	}
	return &ListResourcesResult{encoded: page}, state, nil
}

// ReadResource implements ResourceHandler: a static resource first, then
// the templates in registration order; ErrResourceNotFound otherwise.
func (s *Server) ReadResource(ctx context.Context, req *ReadResourceRequest, state any) (*ReadResourceResult, any, error) {
	sn := s.snap.Load()
	if ent := sn.resources[req.URI]; ent != nil {
		switch ent.res.Access.check(ctx, &req.Request) {
		case allowed:
			res, err := ent.h(ctx, req)
			return res, state, err
		case refused:
			return nil, state, refusal(ent.res.Access)
		}
		// Hidden: as if it did not exist, a template may match.
	}
	for _, t := range sn.templates {
		if vars, ok := t.match(req.URI); ok {
			switch t.tmpl.Access.check(ctx, &req.Request) {
			case hidden:
				continue
			case refused:
				return nil, state, refusal(t.tmpl.Access)
			}
			req.Vars = vars
			res, err := t.h(ctx, req)
			return res, state, err
		}
	}
	return nil, state, fmt.Errorf("%w: %q", ErrResourceNotFound, req.URI)
}
