package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"

	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// ToolFunc is a typed tool: In is decoded from the validated arguments,
// Out becomes the result. Out may be *CallToolResult (sent as is), string
// (one text block), or any other type, whose JSON is sent as
// structuredContent (checked against the output schema, and mirrored as
// JSON in a text block for clients that predate structured output).
// structuredContent is always a JSON object: a struct or a map is sent as
// itself, and any Out whose JSON is not an object (a number, a bool, a
// named string type, a slice, an array, time.Time or another type with its
// own MarshalJSON or MarshalText) as {"result": value}, with an output
// schema that says so. A nil slice or map is sent as [] or {}, as its
// schema says; a nil pointer as null.
//
// A returned error becomes a result with isError and the error's text
// (the model sees it), except a *wire.Error, ErrInvalidParams or an
// *InputRequiredError, which stay protocol-level.
type ToolFunc[In, Out any] func(ctx context.Context, req *CallToolRequest, in In) (Out, error)

// RawToolFunc is an untyped tool: it reads req.Arguments itself.
type RawToolFunc func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error)

type toolEntry struct {
	tool    Tool
	headers []protocol.ParamHeader // x-mcp-header annotations
	enc     *[nRevs][]byte         // as a client that renders no view sees it
	encUI   *[nRevs][]byte         // with _meta.ui, for one that does (enc when ui is nil)
	ui      *ToolUI                // its view, from Meta["ui"]
	input   *compiledSchema
	output  *compiledSchema
	call    RawToolFunc
}

// argError marks arguments that passed the schema but not decoding into
// the Go type: treated like a schema failure.
type argError struct{ err error }

func (e *argError) Error() string { return e.err.Error() }

var emptyObject = json.RawMessage(`{}`)

func validToolName(name string) bool {
	if len(name) == 0 || len(name) > 128 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// AddTool registers a typed tool. The input schema is t.InputSchema when
// set, else inferred from In once, here: exported fields by their json
// names, fields without omitempty/omitzero and not pointers required,
// additionalProperties false, a `jsonschema:"…"` tag as description,
// recursive types through $defs; a slice is an "array" and a map an
// "object", never null. The output schema likewise from Out (none for
// *CallToolResult and string; for an Out whose JSON is not an object, the
// object {"result": …} it is sent as, see [ToolFunc]). A t.OutputSchema
// given instead describes the value as sent, wrapped or not. Out of an
// interface type or json.RawMessage has no inferred schema, and a value
// of it that is not a JSON object is wrapped the same way. Arguments are
// validated against the input schema before h runs: invalid ones are an
// isError result from 2025-11-25 on and InvalidParams before. The Server
// does not keep t.
func AddTool[In, Out any](s *Server, t *Tool, h ToolFunc[In, Out]) error {
	if t == nil {
		return fmt.Errorf("%w: nil tool", ErrName)
	}
	if h == nil {
		return fmt.Errorf("%w: tool %q", ErrNilHandler, t.Name)
	}
	tool := *t
	inType, outType := reflect.TypeFor[In](), reflect.TypeFor[Out]()
	if tool.InputSchema == nil {
		switch {
		case inType.Kind() == reflect.Interface, inType == typeRawMessage:
			tool.InputSchema = json.RawMessage(`{"type":"object"}`)
		default:
			raw, err := inferSchema(inType, false)
			if err != nil {
				return fmt.Errorf("%w: tool %q input %s: %v", ErrInvalidSchema, t.Name, inType, err)
			}
			tool.InputSchema = raw
		}
	}
	structured := outType != typeCallToolRes && outType != typeString
	var shape *outputShape
	if structured {
		shape = newOutputShape(outType)
	}
	if tool.OutputSchema == nil && structured && !shape.dynamic {
		raw, err := inferOutputSchema(outType, shape.wrap)
		if err != nil {
			return fmt.Errorf("%w: tool %q output %s: %v", ErrInvalidSchema, t.Name, outType, err)
		}
		tool.OutputSchema = raw
	}
	var output *compiledSchema // set by addTool; read by the closure
	assign := newAssigner(inType)
	call := func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		var in In
		if err := decodeArguments(assign, req, &in); err != nil {
			return nil, &argError{err: errors.New(typeErrorText(err))}
		}
		out, err := h(ctx, req, in)
		if err != nil {
			return nil, err
		}
		switch v := any(out).(type) {
		case *CallToolResult:
			return v, nil
		case string:
			return &CallToolResult{Content: []Content{Text(v)}}, nil
		}
		raw, err := wire.Marshal(out)
		if err != nil {
			return nil, errUnencoded
		}
		raw = shape.structured(raw)
		if output != nil {
			if err := output.validate(raw); err != nil {
				return nil, errToolOutput
			}
		}
		return &CallToolResult{Content: []Content{Text(string(raw))}, structured: raw}, nil
	}
	ent, err := s.addTool(&tool, call)
	if err != nil {
		return err
	}
	output = ent.output
	return nil
}

// decodeArguments sets *in from req's arguments: from the validated tree
// when in's type has an assigner, else (or when the tree does not fit) by
// json.Unmarshal, whose errors the caller reports.
func decodeArguments[In any](assign assigner, req *CallToolRequest, in *In) error {
	if assign != nil && req.args != nil {
		if assign(reflect.ValueOf(in).Elem(), req.args) == nil {
			return nil
		}
		var zero In
		*in = zero
	}
	return json.Unmarshal(req.Arguments, in)
}

var errToolOutput = wire.NewError(wire.InternalError, "Internal error: the tool's output does not match its output schema")

// AddToolRaw registers an untyped tool. t.InputSchema (nil: an object
// with no constraints) is still enforced before h runs; t.OutputSchema is
// advertised but h's structuredContent is not checked against it.
func (s *Server) AddToolRaw(t *Tool, h RawToolFunc) error {
	if t == nil {
		return fmt.Errorf("%w: nil tool", ErrName)
	}
	if h == nil {
		return fmt.Errorf("%w: tool %q", ErrNilHandler, t.Name)
	}
	tool := *t
	if tool.InputSchema == nil {
		tool.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	_, err := s.addTool(&tool, h)
	return err
}

func (s *Server) addTool(t *Tool, call RawToolFunc) (*toolEntry, error) {
	if !validToolName(t.Name) {
		return nil, fmt.Errorf("%w: %q", ErrToolName, t.Name)
	}
	ent := &toolEntry{tool: *t, call: call}
	var err error
	if ent.tool.Access, err = cloneAccess(t.Access); err != nil {
		return nil, fmt.Errorf("tool %q: %w", t.Name, err)
	}
	in, err := schemaBytes(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %q input: %w", t.Name, err)
	}
	if ent.input, err = compileSchema(in, true); err != nil {
		return nil, fmt.Errorf("tool %q input: %w", t.Name, err)
	}
	ent.tool.InputSchema = in
	if ent.headers, err = scanParamHeaders(in); err != nil {
		return nil, fmt.Errorf("%w: tool %q input: %v", ErrInvalidSchema, t.Name, err)
	}
	var out json.RawMessage
	if t.OutputSchema != nil {
		if out, err = schemaBytes(t.OutputSchema); err != nil {
			return nil, fmt.Errorf("tool %q output: %w", t.Name, err)
		}
		if ent.output, err = compileSchema(out, true); err != nil {
			return nil, fmt.Errorf("tool %q output: %w", t.Name, err)
		}
		ent.tool.OutputSchema = out
	}
	if ent.ui, err = toolUI(t.Meta, s.snap.Load().isView); err != nil {
		return nil, fmt.Errorf("tool %q: %w", t.Name, err)
	}
	plain := ent.tool
	if ent.ui != nil {
		ent.tool.Meta = maps.Clone(t.Meta)
		ent.tool.Meta["ui"] = ent.ui
		plain.Meta = withoutUI(t.Meta)
	}
	ent.enc, err = encodeItem(func(e *encoder, rev Revision) { e.tool(rev, &plain, in, out) })
	if err != nil {
		return nil, fmt.Errorf("%w: tool %q: %v", ErrName, t.Name, err)
	}
	ent.encUI = ent.enc
	if ent.ui != nil {
		if ent.encUI, err = encodeItem(func(e *encoder, rev Revision) { e.tool(rev, &ent.tool, in, out) }); err != nil {
			return nil, fmt.Errorf("%w: tool %q: %v", ErrName, t.Name, err)
		}
	}
	err = s.update(func(sn *snapshot) (ChangeKind, error) {
		if _, dup := sn.tools[t.Name]; dup {
			return 0, fmt.Errorf("%w: tool %q", ErrDuplicate, t.Name)
		}
		tools := cloneMap(sn.tools)
		tools[t.Name] = ent
		sn.tools, sn.toolPages = tools, s.toolPageSet(tools)
		sn.caps.Tools = &ToolsCapability{ListChanged: true}
		return ToolsChanged, nil
	})
	return ent, err
}

// RemoveTools unregisters tools by name and reports how many existed.
// Calls already running finish normally.
func (s *Server) RemoveTools(names ...string) int {
	n := 0
	_ = s.update(func(sn *snapshot) (ChangeKind, error) {
		tools := cloneMap(sn.tools)
		for _, name := range names {
			if _, ok := tools[name]; ok {
				delete(tools, name)
				n++
			}
		}
		if n == 0 {
			return 0, errNoChange
		}
		sn.tools, sn.toolPages = tools, s.toolPageSet(tools)
		return ToolsChanged, nil
	})
	return n
}

var errNoChange = errors.New("no change")

func cloneMap[K comparable, V any](m map[K]V) map[K]V {
	c := make(map[K]V, len(m)+1)
	for k, v := range m {
		c[k] = v
	}
	return c
}

// toolPageSet builds tools/list; when a tool is linked to a view, the
// list for clients that render views (with _meta.ui and app-only tools)
// is its ui.
func (s *Server) toolPageSet(tools map[string]*toolEntry) *pageSet {
	keys := make([]string, 0, len(tools))
	ents := make([]*toolEntry, 0, len(tools))
	linked := false
	for k, v := range tools {
		if !v.ui.appOnly() {
			keys, ents = append(keys, k), append(ents, v)
		}
		linked = linked || v.ui != nil
	}
	p := newPageSet('t', "tools", s.opts.PageSize, s.keys, keys, func(i int) *[nRevs][]byte { return ents[i].enc },
		func(i int) *Access { return ents[i].tool.Access })
	if linked {
		keys, ents = keys[:0], ents[:0]
		for k, v := range tools {
			keys, ents = append(keys, k), append(ents, v)
		}
		p.ui = newPageSet('t', "tools", s.opts.PageSize, s.keys, keys, func(i int) *[nRevs][]byte { return ents[i].encUI },
			func(i int) *Access { return ents[i].tool.Access })
	}
	return p
}

// ListTools implements ToolHandler with pre-encoded pages.
func (s *Server) ListTools(ctx context.Context, req *ListRequest, state any) (*ListToolsResult, any, error) {
	page, err := s.snap.Load().toolPages.page(ctx, req, s.keys)
	if err != nil {
		return nil, state, err
	}
	return &ListToolsResult{encoded: page}, state, nil
}

// CallTool implements ToolHandler: lookup, argument validation, the tool.
func (s *Server) CallTool(ctx context.Context, req *CallToolRequest, state any) (*CallToolResult, any, error) {
	ent, v := s.toolFor(ctx, &req.Request, req.Name)
	if v == refused {
		return nil, state, refusal(ent.tool.Access)
	}
	if ent == nil {
		return nil, state, fmt.Errorf("%w: %q", ErrUnknownTool, req.Name)
	}
	if req.Arguments == nil {
		req.Arguments = emptyObject
	}
	args, err := ent.input.checkOn(req.tape, req.Arguments)
	if err != nil {
		return badArguments(req, state, err)
	}
	req.args = args
	res, err := ent.call(ctx, req)
	var ae *argError
	if errors.As(err, &ae) {
		return badArguments(req, state, ae.err)
	}
	return res, state, err
}

// badArguments: an isError result from 2025-11-25 (SEP-1303: the model
// can correct itself), InvalidParams before.
func badArguments(req *CallToolRequest, state any, err error) (*CallToolResult, any, error) {
	msg := fmt.Sprintf("Invalid arguments for tool %s: %v", req.Name, err)
	if req.Revision.orDefault() >= Rev20251125 {
		return &CallToolResult{Content: []Content{Text(msg)}, IsError: true}, state, nil
	}
	return nil, state, wire.NewError(wire.InvalidParams, msg)
}

// toolFor returns the tool named name as the caller of req meets it:
// nil when it is unknown or hidden from that caller (an app-only tool to
// a client that renders no view, an Access it does not pass with Hidden
// set), with the verdict refused when the caller must step up. Every path
// that could tell a tool apart from an unknown one asks it.
func (s *Server) toolFor(ctx context.Context, req *Request, name string) (*toolEntry, verdict) {
	ent := s.snap.Load().tools[name]
	if ent == nil || hiddenTool(ent, req) {
		return nil, hidden
	}
	switch v := ent.tool.Access.check(ctx, req); v {
	case hidden:
		return nil, v
	case refused:
		return ent, v
	}
	return ent, allowed
}

// paramHeaders implements paramHeaderer: the tool's x-mcp-header
// annotations, checked against Mcp-Param-* headers in 2026-07-28; none
// for a tool the caller of req (made on demand, since most tools have no
// such annotation) does not see.
func (s *Server) paramHeaders(ctx context.Context, tool string, req func() *Request) []protocol.ParamHeader {
	ent := s.snap.Load().tools[tool]
	if ent == nil || len(ent.headers) == 0 {
		return nil
	}
	if ent.tool.Access != nil || ent.ui.appOnly() {
		if ent, _ = s.toolFor(ctx, req(), tool); ent == nil {
			return nil // as an unknown tool: a header mismatch would reveal it
		}
	}
	return ent.headers
}

// toolTaskSupport implements taskSupporter: TaskForbidden for a tool
// the caller of req does not see or must step up for, whose call then
// answers as an unknown or refused tool does instead of starting a task.
func (s *Server) toolTaskSupport(ctx context.Context, req *Request, tool string) (TaskSupport, bool) {
	if ent, v := s.toolFor(ctx, req, tool); ent != nil && v == allowed {
		return ent.tool.TaskSupport, ent.tool.DeferTask
	}
	return TaskForbidden, false
}
