package mcp

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// PromptFunc renders a prompt. Required arguments are guaranteed present
// in req.Arguments.
type PromptFunc func(ctx context.Context, req *GetPromptRequest) (*GetPromptResult, error)

type promptEntry struct {
	prompt Prompt
	enc    *[nRevs][]byte
	h      PromptFunc
}

// AddPrompt registers a prompt under p.Name (non-empty, unique); its
// arguments need distinct non-empty names. The Server does not keep p.
func (s *Server) AddPrompt(p *Prompt, h PromptFunc) error {
	if p == nil || p.Name == "" || !utf8.ValidString(p.Name) {
		return fmt.Errorf("%w: prompt name", ErrName)
	}
	if h == nil {
		return fmt.Errorf("%w: prompt %q", ErrNilHandler, p.Name)
	}
	seen := map[string]bool{}
	for _, a := range p.Arguments {
		if a == nil || a.Name == "" || seen[a.Name] {
			return fmt.Errorf("%w: prompt %q: empty or repeated argument name", ErrName, p.Name)
		}
		seen[a.Name] = true
	}
	ent := &promptEntry{prompt: *p, h: h}
	var err error
	if ent.prompt.Access, err = cloneAccess(p.Access); err != nil {
		return fmt.Errorf("prompt %q: %w", p.Name, err)
	}
	if ent.enc, err = encodeItem(func(e *encoder, rev Revision) { e.prompt(rev, &ent.prompt) }); err != nil {
		return fmt.Errorf("%w: prompt %q: %v", ErrName, p.Name, err)
	}
	return s.update(func(sn *snapshot) (ChangeKind, error) {
		if _, dup := sn.prompts[p.Name]; dup {
			return 0, fmt.Errorf("%w: prompt %q", ErrDuplicate, p.Name)
		}
		m := cloneMap(sn.prompts)
		m[p.Name] = ent
		sn.prompts, sn.promptPages = m, s.promptPageSet(m)
		sn.caps.Prompts = &PromptsCapability{ListChanged: true}
		return PromptsChanged, nil
	})
}

// RemovePrompts unregisters prompts by name and reports how many existed.
func (s *Server) RemovePrompts(names ...string) int {
	n := 0
	_ = s.update(func(sn *snapshot) (ChangeKind, error) {
		m := cloneMap(sn.prompts)
		for _, name := range names {
			if _, ok := m[name]; ok {
				delete(m, name)
				n++
			}
		}
		if n == 0 {
			return 0, errNoChange
		}
		sn.prompts, sn.promptPages = m, s.promptPageSet(m)
		return PromptsChanged, nil
	})
	return n
}

func (s *Server) promptPageSet(m map[string]*promptEntry) *pageSet {
	keys := make([]string, 0, len(m))
	ents := make([]*promptEntry, 0, len(m))
	for k, v := range m {
		keys, ents = append(keys, k), append(ents, v)
	}
	return newPageSet('p', "prompts", s.opts.PageSize, s.keys, keys, func(i int) *[nRevs][]byte { return ents[i].enc },
		func(i int) *Access { return ents[i].prompt.Access })
}

// prompt is the prompt named name as the caller of req may use it: an
// unknown or hidden one is ErrUnknownPrompt, one the caller may only see
// its refusal.
func (sn *snapshot) prompt(ctx context.Context, req *Request, name string) (*promptEntry, error) {
	ent := sn.prompts[name]
	if ent != nil && ent.prompt.Access != nil {
		switch ent.prompt.Access.check(ctx, req) {
		case hidden:
			ent = nil
		case refused:
			return nil, refusal(ent.prompt.Access)
		}
	}
	if ent == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownPrompt, name)
	}
	return ent, nil
}

// ListPrompts implements PromptHandler.
func (s *Server) ListPrompts(ctx context.Context, req *ListRequest, state any) (*ListPromptsResult, any, error) {
	page, err := s.snap.Load().promptPages.page(ctx, req, s.keys)
	if err != nil {
		return nil, state, err
	}
	return &ListPromptsResult{encoded: page}, state, nil
}

// GetPrompt implements PromptHandler: unknown prompt and missing required
// arguments are InvalidParams before the PromptFunc runs.
func (s *Server) GetPrompt(ctx context.Context, req *GetPromptRequest, state any) (*GetPromptResult, any, error) {
	ent, err := s.snap.Load().prompt(ctx, &req.Request, req.Name)
	if err != nil {
		return nil, state, err
	}
	for _, a := range ent.prompt.Arguments {
		if _, ok := req.Arguments[a.Name]; a.Required && !ok {
			return nil, state, wire.Errorf(wire.InvalidParams, "Invalid params: prompt %s needs argument %q", req.Name, a.Name)
		}
	}
	res, err := ent.h(ctx, req)
	return res, state, err
}
