package mcp

import (
	"context"
	"fmt"
	"slices"

	"github.com/yosida95/uritemplate/v3"
)

type templateEntry struct {
	tmpl  ResourceTemplate
	parse *uritemplate.Template
	vars  []string
	enc   *[nRevs][]byte
	h     ResourceFunc
}

// match reports whether uri is an expansion of the template and returns
// its variables.
func (t *templateEntry) match(uri string) (map[string]string, bool) {
	values := t.parse.Match(uri)
	if values == nil {
		return nil, false
	}
	vars := make(map[string]string, len(t.vars))
	for _, name := range t.vars {
		if v := values.Get(name); v.Valid() {
			vars[name] = v.String()
		}
	}
	return vars, true
}

// AddResourceTemplate registers a family of resources described by an RFC
// 6570 URI template (levels 1–3: {var}, {+var}, {#var}, {.var}, {/var},
// {;var}, {?var}, {&var}); resources/read of a matching URI calls h with
// req.Vars set. Templates are tried in registration order, after static
// resources. The template string must be unique; Name must be set.
func (s *Server) AddResourceTemplate(t *ResourceTemplate, h ResourceFunc) error {
	if t == nil || t.URITemplate == "" {
		return fmt.Errorf("%w: empty template", ErrTemplate)
	}
	parsed, err := uritemplate.New(t.URITemplate)
	if err != nil {
		return fmt.Errorf("%w: %q: %v", ErrTemplate, t.URITemplate, err)
	}
	if t.Name == "" {
		return fmt.Errorf("%w: template %q has no name", ErrName, t.URITemplate)
	}
	if h == nil {
		return fmt.Errorf("%w: template %q", ErrNilHandler, t.URITemplate)
	}
	ent := &templateEntry{tmpl: *t, parse: parsed, vars: parsed.Varnames(), h: h}
	if ent.tmpl.Access, err = cloneAccess(t.Access); err != nil {
		return fmt.Errorf("template %q: %w", t.URITemplate, err)
	}
	if ent.enc, err = encodeItem(func(e *encoder, rev Revision) { e.resourceTemplate(rev, &ent.tmpl) }); err != nil {
		return fmt.Errorf("%w: template %q: %v", ErrName, t.URITemplate, err)
	}
	return s.update(func(sn *snapshot) (ChangeKind, error) {
		for _, x := range sn.templates {
			if x.tmpl.URITemplate == t.URITemplate {
				return 0, fmt.Errorf("%w: template %q", ErrDuplicate, t.URITemplate)
			}
		}
		ts := append(slices.Clip(sn.templates), ent)
		sn.templates, sn.templatePages = ts, s.templatePageSet(ts)
		sn.caps.Resources = &ResourcesCapability{Subscribe: true, ListChanged: true}
		return ResourcesChanged, nil
	})
}

// RemoveResourceTemplates unregisters templates by template string and
// reports how many existed.
func (s *Server) RemoveResourceTemplates(templates ...string) int {
	n := 0
	_ = s.update(func(sn *snapshot) (ChangeKind, error) {
		ts := slices.DeleteFunc(slices.Clone(sn.templates), func(e *templateEntry) bool {
			return slices.Contains(templates, e.tmpl.URITemplate)
		})
		n = len(sn.templates) - len(ts)
		if n == 0 {
			return 0, errNoChange
		}
		sn.templates, sn.templatePages = ts, s.templatePageSet(ts)
		return ResourcesChanged, nil
	})
	return n
}

func (s *Server) templatePageSet(ts []*templateEntry) *pageSet {
	keys := make([]string, len(ts))
	for i, t := range ts {
		keys[i] = t.tmpl.URITemplate
	}
	return newPageSet('u', "resourceTemplates", s.opts.PageSize, s.keys, keys, func(i int) *[nRevs][]byte { return ts[i].enc },
		func(i int) *Access { return ts[i].tmpl.Access })
}

func (sn *snapshot) template(uriTemplate string) *templateEntry {
	for _, t := range sn.templates {
		if t.tmpl.URITemplate == uriTemplate {
			return t
		}
	}
	return nil
}

// ListResourceTemplates implements ResourceTemplateHandler.
func (s *Server) ListResourceTemplates(ctx context.Context, req *ListRequest, state any) (*ListResourceTemplatesResult, any, error) {
	page, err := s.snap.Load().templatePages.page(ctx, req, s.keys)
	if err != nil {
		return nil, state, err
	}
	return &ListResourceTemplatesResult{encoded: page}, state, nil
}
