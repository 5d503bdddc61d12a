package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// The skills extension (io.modelcontextprotocol/skills, SEP-2640): Agent
// Skills served as resources under skill://<path>/, listed with their
// frontmatter and a manifest of their files (skills/list, skills/get).

// ExtSkills is the identifier of the skills extension.
const ExtSkills = "io.modelcontextprotocol/skills"

// ErrSkill: a skill that cannot be served (bad path, no SKILL.md, bad
// frontmatter, a name that does not match its path).
var ErrSkill = errors.New("mcp: invalid skill")

// Skill is an Agent Skill: a SKILL.md and the files beside it. AddSkill
// serves each file as the resource skill://<Path>/<file> and advertises
// the skills extension.
//
// Experimental: the skills extension still changes, and this API may
// change with it in a minor release (docs/policies/protocol.md).
type Skill struct {
	// Path is where the skill lives under skill://: "pdf-processing" or
	// "acme/pdf-processing". Its last segment must equal the name in the
	// SKILL.md frontmatter.
	Path string
	// Files maps paths relative to the skill's root ("SKILL.md",
	// "references/FORMS.md") to their bytes. SKILL.md is required and
	// must begin with YAML frontmatter holding name and description.
	// Only simple frontmatter is understood: "key: value" lines with
	// plain or quoted scalars, and one level of nested "key:" mappings.
	Files map[string][]byte
}

// skillLister is a handler that serves skills (the Server).
type skillLister interface {
	hasSkills() bool
	skillEntries() []json.RawMessage
	skillEntry(uri string) (json.RawMessage, bool)
}

type skillSet struct {
	mu      sync.RWMutex
	entries map[string]json.RawMessage // by SKILL.md URI
}

// parseFrontmatter reads the leading ---…--- block of a SKILL.md.
func parseFrontmatter(b []byte) (map[string]any, error) {
	s := strings.TrimPrefix(string(b), "\ufeff")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if !strings.HasPrefix(s, "---\n") {
		return nil, errors.New("SKILL.md does not begin with --- frontmatter")
	}
	body, _, ok := strings.Cut(s[4:], "\n---")
	if !ok {
		return nil, errors.New("SKILL.md frontmatter is not closed with ---")
	}
	out := map[string]any{}
	var nested map[string]any
	for _, line := range strings.Split(body, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		indented := line[0] == ' ' || line[0] == '\t'
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || k == "" {
			return nil, fmt.Errorf("frontmatter line %q is not key: value", line)
		}
		v = strings.TrimSpace(v)
		if indented {
			if nested == nil {
				return nil, fmt.Errorf("frontmatter line %q is indented outside a mapping", line)
			}
			nested[k] = scalar(v)
			continue
		}
		if v == "" {
			nested = map[string]any{}
			out[k] = nested
			continue
		}
		nested = nil
		out[k] = scalar(v)
	}
	return out, nil
}

// scalar reads a plain or quoted YAML scalar as a string.
func scalar(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		if v[0] == '"' {
			var s string
			if json.Unmarshal([]byte(v), &s) == nil {
				return s
			}
		}
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	}
	return v
}

func validSkillName(n string) bool {
	if n == "" || len(n) > 64 || n[0] == '-' || n[len(n)-1] == '-' || strings.Contains(n, "--") {
		return false
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func skillMIME(name string, b []byte) string {
	switch {
	case strings.HasSuffix(name, ".md"):
		return "text/markdown"
	case strings.HasSuffix(name, ".json"):
		return "application/json"
	case utf8.Valid(b):
		return "text/plain"
	}
	return "application/octet-stream"
}

// AddSkill serves a skill: its files become resources under
// skill://<Path>/ (SKILL.md named and described by its frontmatter), and
// skills/list and skills/get list it with its manifest (each file's
// sha256 digest and size). The first skill turns on the skills extension
// for 2026-07-28 clients. Errors wrap ErrSkill, ErrName or ErrDuplicate.
func (s *Server) AddSkill(sk *Skill) error {
	if sk == nil || sk.Path == "" || strings.Trim(sk.Path, "/") != sk.Path || strings.Contains(sk.Path, "//") {
		return fmt.Errorf("%w: path", ErrSkill)
	}
	md, ok := sk.Files["SKILL.md"]
	if !ok {
		return fmt.Errorf("%w: %q has no SKILL.md", ErrSkill, sk.Path)
	}
	fm, err := parseFrontmatter(md)
	if err != nil {
		return fmt.Errorf("%w: %q: %v", ErrSkill, sk.Path, err)
	}
	name, _ := fm["name"].(string)
	desc, _ := fm["description"].(string)
	if !validSkillName(name) || desc == "" || path.Base(sk.Path) != name {
		return fmt.Errorf("%w: %q: frontmatter needs a name equal to the last path segment (lowercase letters, digits, hyphens) and a description", ErrSkill, sk.Path)
	}
	root := "skill://" + sk.Path
	skillURI := root + "/SKILL.md"
	files := make([]string, 0, len(sk.Files))
	for f := range sk.Files {
		if f == "" || strings.HasPrefix(f, "/") || path.Clean(f) != f || strings.HasPrefix(f, "..") {
			return fmt.Errorf("%w: %q: file %q", ErrSkill, sk.Path, f)
		}
		files = append(files, f)
	}
	sort.Slice(files, func(i, j int) bool {
		if (files[i] == "SKILL.md") != (files[j] == "SKILL.md") {
			return files[i] == "SKILL.md"
		}
		return files[i] < files[j]
	})
	type manifestEntry struct {
		URI    string `json:"uri"`
		Digest string `json:"digest"`
		Size   int    `json:"size"`
	}
	manifest := make([]manifestEntry, 0, len(files))
	for _, f := range files {
		b := append([]byte(nil), sk.Files[f]...)
		sum := sha256.Sum256(b)
		uri := root + "/" + f
		manifest = append(manifest, manifestEntry{URI: uri, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: len(b)})
		mime := skillMIME(f, b)
		r := &Resource{URI: uri, Name: f, MIMEType: mime}
		if f == "SKILL.md" {
			r.Name, r.Description = name, desc
		}
		read := func(_ context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
			c := &ResourceContents{URI: req.URI, MIMEType: mime}
			if utf8.Valid(b) && mime != "application/octet-stream" {
				c.Text = string(b)
			} else {
				c.Blob = b
			}
			return &ReadResourceResult{Contents: []*ResourceContents{c}}, nil
		}
		if err := s.AddResource(r, read); err != nil {
			return err
		}
	}
	entry, err := wire.Marshal(map[string]any{"uri": skillURI, "frontmatter": fm, "resources": manifest})
	if err != nil {
		return fmt.Errorf("%w: %q: %v", ErrSkill, sk.Path, err)
	}
	s.skillSet.mu.Lock()
	if s.skillSet.entries == nil {
		s.skillSet.entries = map[string]json.RawMessage{}
	}
	s.skillSet.entries[skillURI] = entry
	s.skillSet.mu.Unlock()
	return nil
}

func (s *Server) hasSkills() bool {
	s.skillSet.mu.RLock()
	defer s.skillSet.mu.RUnlock()
	return len(s.skillSet.entries) > 0
}

func (s *Server) skillEntries() []json.RawMessage {
	s.skillSet.mu.RLock()
	defer s.skillSet.mu.RUnlock()
	uris := make([]string, 0, len(s.skillSet.entries))
	for u := range s.skillSet.entries {
		uris = append(uris, u)
	}
	sort.Strings(uris)
	out := make([]json.RawMessage, len(uris))
	for i, u := range uris {
		out[i] = s.skillSet.entries[u]
	}
	return out
}

func (s *Server) skillEntry(uri string) (json.RawMessage, bool) {
	s.skillSet.mu.RLock()
	defer s.skillSet.mu.RUnlock()
	e, ok := s.skillSet.entries[uri]
	return e, ok
}

// listSkills answers skills/list: every skill in one page.
func (e *engine) listSkills(_ context.Context, call *protocol.Call, _ Revision, state any) protocol.Reply {
	cursor, _, perr := parseList(call.Params)
	if perr != nil {
		return protocol.Reply{State: state, Err: perr}
	}
	if cursor != "" {
		return protocol.Reply{State: state, Err: errBadCursor}
	}
	b := []byte(`{"skills":[`)
	for i, ent := range e.skills.skillEntries() {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, ent...)
	}
	return protocol.Reply{State: state, Result: append(b, "]}"...)}
}

// getSkill answers skills/get {uri}: the skill's entry.
func (e *engine) getSkill(_ context.Context, call *protocol.Call, _ Revision, state any) protocol.Reply {
	uri, _, perr := parseURI(call.Params)
	if perr != nil {
		return protocol.Reply{State: state, Err: perr}
	}
	ent, ok := e.skills.skillEntry(uri)
	if !ok {
		return protocol.Reply{State: state, Err: &wire.Error{Code: wire.InvalidParams,
			Message: "Invalid params: unknown skill", Data: map[string]string{"uri": uri}}}
	}
	b := append([]byte(`{"skill":`), ent...)
	return protocol.Reply{State: state, Result: append(b, '}')}
}
