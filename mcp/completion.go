package mcp

import (
	"context"
	"fmt"
	"slices"
	"strconv"
)

// MaxCompletionValues is the most values one completion/complete answer
// may carry (the spec's limit); the engine truncates longer lists.
const MaxCompletionValues = 100

// CompletionRef says what is being completed: a prompt argument
// (Type "ref/prompt", Name) or a resource template variable (Type
// "ref/resource", URI = the template).
type CompletionRef struct {
	Type  string `json:"type"`
	Name  string `json:"name,omitempty"`
	Title string `json:"title,omitempty"` // of a prompt, since 2025-06-18
	URI   string `json:"uri,omitempty"`
}

// CompleteRequest is the request of completion/complete.
type CompleteRequest struct {
	Request
	Ref CompletionRef
	// ArgumentName and ArgumentValue are the argument being completed and
	// what the user typed so far.
	ArgumentName  string
	ArgumentValue string
	// Context holds already-resolved arguments (since 2025-06-18); never nil.
	Context map[string]string
}

// CompleteResult is a completion/complete answer. Values beyond
// MaxCompletionValues are cut; when Total is 0 the engine sets it to the
// untruncated count, and HasMore is set when values were cut. On the wire
// its members sit inside "completion" (MarshalJSON), and _meta beside it.
type CompleteResult struct {
	Values  []string `json:"values"`
	Total   int      `json:"total"`
	HasMore bool     `json:"hasMore"`
	Meta    Meta     `json:"_meta,omitempty"`
}

// completeSent is what the engine sends for r: at most
// MaxCompletionValues values, Total the untruncated count when r leaves it
// 0, HasMore set when values were cut.
func completeSent(r *CompleteResult) CompleteResult {
	out := *r
	if out.Total == 0 {
		out.Total = len(out.Values)
	}
	if len(out.Values) > MaxCompletionValues {
		out.Values, out.HasMore = out.Values[:MaxCompletionValues], true
	}
	return out
}

// encodeComplete encodes what the engine sends for r (completeSent).
func encodeComplete(r *CompleteResult) ([]byte, error) {
	sent := completeSent(r)
	values, total, more := sent.Values, sent.Total, sent.HasMore
	return marshalWith(func(e *encoder) {
		e.open()
		e.key("completion")
		e.open()
		e.key("values")
		e.b = append(e.b, '[')
		for i, v := range values {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.str(v)
		}
		e.b = append(e.b, ']')
		e.key("total")
		e.b = strconv.AppendInt(e.b, int64(total), 10)
		e.boolField("hasMore", more)
		e.close()
		e.meta(r.Meta)
		e.close()
	})
}

// CompleteFunc suggests values for one prompt argument or template
// variable; req.ArgumentValue is what the user typed so far.
type CompleteFunc func(ctx context.Context, req *CompleteRequest) (*CompleteResult, error)

type completionKey struct {
	kind   byte // 'p' prompt, 'r' resource template
	target string
	arg    string
}

// AddPromptCompletion registers completion for argument arg of a
// registered prompt; it advertises the completions capability.
func (s *Server) AddPromptCompletion(prompt, arg string, fn CompleteFunc) error {
	return s.addCompletion(completionKey{'p', prompt, arg}, fn, func(sn *snapshot) bool {
		p := sn.prompts[prompt]
		if p == nil {
			return false
		}
		for _, a := range p.prompt.Arguments {
			if a.Name == arg {
				return true
			}
		}
		return false
	})
}

// AddTemplateCompletion registers completion for variable name of a
// registered resource template (by its template string).
func (s *Server) AddTemplateCompletion(uriTemplate, name string, fn CompleteFunc) error {
	return s.addCompletion(completionKey{'r', uriTemplate, name}, fn, func(sn *snapshot) bool {
		t := sn.template(uriTemplate)
		return t != nil && slices.Contains(t.vars, name)
	})
}

func (s *Server) addCompletion(k completionKey, fn CompleteFunc, exists func(*snapshot) bool) error {
	if fn == nil {
		return fmt.Errorf("%w: completion of %q", ErrNilHandler, k.arg)
	}
	return s.update(func(sn *snapshot) (ChangeKind, error) {
		if !exists(sn) {
			return 0, fmt.Errorf("%w: no argument %q on %q", ErrName, k.arg, k.target)
		}
		if _, dup := sn.completions[k]; dup {
			return 0, fmt.Errorf("%w: completion of %q on %q", ErrDuplicate, k.arg, k.target)
		}
		m := cloneMap(sn.completions)
		m[k] = fn
		sn.completions = m
		sn.caps.Completions = &struct{}{}
		return 0, nil
	})
}

// Complete implements CompletionHandler: the target and argument must
// exist (InvalidParams otherwise); with no CompleteFunc the answer is an
// empty list.
func (s *Server) Complete(ctx context.Context, req *CompleteRequest, state any) (*CompleteResult, any, error) {
	sn := s.snap.Load()
	var k completionKey
	switch req.Ref.Type {
	case "ref/prompt":
		p, err := sn.prompt(ctx, &req.Request, req.Ref.Name)
		if err != nil {
			return nil, state, err
		}
		if !slices.ContainsFunc(p.prompt.Arguments, func(a *PromptArgument) bool { return a.Name == req.ArgumentName }) {
			return nil, state, fmt.Errorf("%w: prompt %s has no argument %q", ErrInvalidParams, req.Ref.Name, req.ArgumentName)
		}
		k = completionKey{'p', req.Ref.Name, req.ArgumentName}
	default:
		t := sn.template(req.Ref.URI)
		if t != nil {
			switch t.tmpl.Access.check(ctx, &req.Request) {
			case hidden:
				t = nil
			case refused:
				return nil, state, refusal(t.tmpl.Access)
			}
		}
		if t == nil {
			return nil, state, fmt.Errorf("%w: no resource template %q", ErrInvalidParams, req.Ref.URI)
		}
		if !slices.Contains(t.vars, req.ArgumentName) {
			return nil, state, fmt.Errorf("%w: template %s has no variable %q", ErrInvalidParams, req.Ref.URI, req.ArgumentName)
		}
		k = completionKey{'r', req.Ref.URI, req.ArgumentName}
	}
	fn := sn.completions[k]
	if fn == nil {
		return &CompleteResult{}, state, nil
	}
	res, err := fn(ctx, req)
	return res, state, err
}
