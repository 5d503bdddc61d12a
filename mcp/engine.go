package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/seal"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// engineOptions configures an engine.
type engineOptions struct {
	// Logger receives handler panics (with their stack) and handler
	// errors that are hidden from clients.
	Logger *slog.Logger
	// Listen bounds subscriptions/listen filters.
	Listen ListenOptions
	// TaskIDPrefix starts every task id: a replica's id and a dot, so
	// that a task's requests are relayed to the replica that runs it.
	TaskIDPrefix string
	// Telemetry records spans and metrics; nil records nothing.
	Telemetry *telemetry
	// Scopes reports the scopes a call's caller holds (Access.Scopes);
	// nil: none.
	Scopes func(context.Context) []string
	// MaxAnswer bounds a result's encoded bytes; 0 is none.
	MaxAnswer int
}

// engine is the protocol engine: the one method table every transport
// uses, through protocol.Engine. It holds no per-session data, so one
// engine serves any number of sessions concurrently.
type engine struct {
	h          Handler
	tools      ToolHandler
	resources  ResourceHandler
	templates  ResourceTemplateHandler
	subs       SubscriptionHandler
	prompts    PromptHandler
	completion CompletionHandler
	logging    LoggingHandler
	roots      RootsHandler
	reporter   CapabilityReporter
	notifier   ChangeNotifier
	stateless  bool

	skills    skillLister
	taskTools taskSupporter
	params    paramHeaderer

	log       *slog.Logger
	tel       *telemetry    // nil: no telemetry
	maxAnswer int           // 0: no bound
	handle    MethodHandler // the middleware around each method's run; nil for none
	scopes    func(context.Context) []string
	access    accessChecker
	methods   map[string]*methodInfo
	decoder   *wire.Decoder

	// 2026-07-28
	infoOnce     sync.Once
	serverInfo   json.RawMessage
	instructions string
	cache        map[string]CacheHint
	state        *stateSealer
	tasks        *taskStore
	clientCaps   capsCache
	listen       ListenOptions
}

var _ protocol.Engine = (*engine)(nil)

// newEngine builds the engine for h, probing once which optional parts h
// implements.
func newEngine(h Handler, o engineOptions) *engine {
	e := &engine{h: h, methods: map[string]*methodInfo{}}
	e.tools, _ = h.(ToolHandler)
	e.resources, _ = h.(ResourceHandler)
	e.templates, _ = h.(ResourceTemplateHandler)
	e.subs, _ = h.(SubscriptionHandler)
	e.prompts, _ = h.(PromptHandler)
	e.completion, _ = h.(CompletionHandler)
	e.logging, _ = h.(LoggingHandler)
	e.roots, _ = h.(RootsHandler)
	e.reporter, _ = h.(CapabilityReporter)
	e.notifier, _ = h.(ChangeNotifier)
	if s, ok := h.(StatelessHandler); ok {
		e.stateless = s.Stateless()
	}
	e.skills, _ = h.(skillLister)
	e.taskTools, _ = h.(taskSupporter)
	e.params, _ = h.(paramHeaderer)
	e.access, _ = h.(accessChecker)
	e.scopes = o.Scopes
	e.log, e.tel, e.maxAnswer = o.Logger, o.Telemetry, o.MaxAnswer
	if e.log == nil {
		e.log = slog.Default()
	}
	// What the 2026-07-28 revision serves is the Server's to say (a
	// handler that is no Server gets the defaults, tasks off).
	var so ServerOptions
	if sv, ok := h.(interface{ settings() *ServerOptions }); ok {
		so = *sv.settings()
	}
	e.cache = so.CacheHints
	if len(so.Middleware) > 0 {
		e.handle = e.chain(so.Middleware)
	}
	e.listen = o.Listen.withDefaults()
	e.state = newStateSealer(sealKeysOf(h), so.StateTTL)
	if so.Tasks != nil {
		e.tasks = newTaskStore(e, so.Tasks)
		e.tasks.prefix = o.TaskIDPrefix
	}
	var names []string
	for _, m := range methodTable() {
		e.methods[m.name] = m
		names = append(names, m.name)
	}
	e.decoder = wire.NewDecoder(names...)
	return e
}

// Decoder implements protocol.Engine.
func (e *engine) Decoder() *wire.Decoder { return e.decoder }

// Method implements protocol.Engine: the table's entry with what this
// handler makes of it. A handler that keeps no state takes no turns, so
// its stateful methods are fast.
func (e *engine) Method(name string) (protocol.Method, bool) {
	m, ok := e.methods[name]
	if !ok {
		return protocol.Method{}, false
	}
	mode := m.mode
	if mode == protocol.ModeStateful && e.stateless {
		mode = protocol.ModeFast
	}
	return protocol.Method{Name: m.name, Notification: m.notification, Mode: mode,
		Revisions: m.revisions, Offered: e.offers(m.cap)}, true
}

// NewState implements protocol.Engine: the state Initialize returns for a
// synthetic request with the given revision. A StatelessHandler's state
// is nil and costs nothing.
func (e *engine) NewState(ctx context.Context, rev protocol.Revision) (any, error) {
	if e.stateless {
		return nil, nil
	}
	r := Revision(rev.OrDefault())
	req := &InitializeRequest{}
	req.Method, req.Revision, req.out = "initialize", r, protocol.Discard{}
	req.Params.ProtocolVersion = r.String()
	_, st, err := e.h.Initialize(ctx, req, nil)
	return st, err
}

// Client implements protocol.Engine.
func (e *engine) Client(raw []byte) any {
	if c := e.clientCaps.get(raw); c != nil {
		return c
	}
	return nil
}

// clientOf is the client capabilities a call carries (nil when unknown).
func clientOf(call *protocol.Call) *ClientCapabilities {
	c, _ := call.Client.(*ClientCapabilities)
	return c
}

// ParamHeaders implements protocol.Engine.
func (e *engine) ParamHeaders(ctx context.Context, tool, identity string, client any) []protocol.ParamHeader {
	if e.params == nil {
		return nil
	}
	return e.params.paramHeaders(ctx, tool, func() *Request {
		call := protocol.Call{Method: "tools/call", Revision: protocol.Rev20260728, Identity: identity, Client: client}
		req := &Request{}
		e.fill(req, &call, Rev20260728, RequestMeta{})
		return req
	})
}

// OnChange implements protocol.Engine.
func (e *engine) OnChange(fn func(protocol.Change)) (remove func()) {
	if e.notifier == nil {
		return func() {}
	}
	return e.notifier.OnChange(func(c Change) { fn(protocol.Change{Kind: protocol.ChangeKind(c.Kind), URI: c.URI}) })
}

var (
	resultEmpty   = json.RawMessage(`{}`)
	errInternal   = protocol.ErrInternal
	errCancelled  = protocol.ErrCancelled
	errTimeout    = protocol.ErrTimeout
	errUnencoded  = wire.NewError(wire.InternalError, "Internal error: the result could not be encoded")
	errNotStarted = wire.NewError(wire.UnsupportedProtocolVersion, "Unsupported protocol version")
	// errInputRequired marks (by identity) a handler that asked the
	// client for input in a 2026-07-28 call; finishModern turns it into
	// an input_required result.
	errInputRequired = wire.NewError(wire.InternalError, "input required")
)

func methodNotFound(method string) *wire.Error {
	return wire.NewError(wire.MethodNotFound, "Method not found: "+method)
}

type methodFunc func(e *engine, ctx context.Context, call *protocol.Call, rev Revision, state any) protocol.Reply

// Dispatch implements protocol.Engine.
//
// Gates, in order: an unknown method, a method the revision does not have,
// a method whose capability the handler does not offer, and a request
// sent to a notification method all answer MethodNotFound (-32601); a
// notification that is unknown, misnamed or malformed is dropped. Bad
// params answer InvalidParams (-32602) before the handler runs. A panic
// answers InternalError with a generic message, keeps the input state and
// logs the panic with its stack.
func (e *engine) Dispatch(ctx context.Context, call *protocol.Call, state any) protocol.Reply {
	if e.tel != nil {
		return e.tel.dispatch(ctx, call, state, e.dispatch)
	}
	return e.dispatch(ctx, call, state)
}

// dispatch is Dispatch without telemetry.
func (e *engine) dispatch(ctx context.Context, call *protocol.Call, state any) (reply protocol.Reply) {
	reply.State = state
	isNotification := call.ID.IsZero()
	m := e.methods[call.Method]
	if m == nil || m.notification != isNotification || m.run == nil {
		if !isNotification {
			reply.Err = methodNotFound(call.Method)
		}
		return reply
	}
	rev := Revision(call.Revision.OrDefault())
	if rev >= revEnd {
		if !isNotification {
			reply.Err = errNotStarted
		}
		return reply
	}
	if !m.revisions.Has(protocol.Revision(rev)) || !e.offers(m.cap) {
		if !isNotification {
			reply.Err = methodNotFound(call.Method)
		}
		return reply
	}
	modern := rev == Rev20260728
	if modern && !isNotification {
		if !call.Owned {
			c := *call
			call = &c
		}
		if jerr := e.prepareModern(call); jerr != nil {
			reply.Err = jerr
			return reply
		}
		defer func() { e.finishModern(call, &reply) }()
	}
	defer func() {
		if p := recover(); p != nil {
			e.log.ErrorContext(ctx, "mcp: handler panicked",
				slog.String("method", call.Method), slog.String("id", call.ID.String()),
				slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
			if e.tel != nil {
				e.tel.panicked(ctx, p)
			}
			reply = protocol.Reply{State: state}
			if !isNotification {
				reply.Err = errInternal
			}
		}
	}()
	if e.handle != nil {
		reply = e.through(ctx, m, call, rev, state)
	} else {
		reply = m.run(e, ctx, call, rev, state)
	}
	if e.overBound(len(reply.Result)) {
		dropResult(&reply)
		effect := reply.Effect
		reply = e.tooBig(ctx, call, reply.State, len(reply.Result))
		reply.Effect = effect
	}
	return reply
}

// offers reports whether the handler implements and reports a capability.
func (e *engine) offers(c capability) bool {
	var rep *ServerCapabilities
	if e.reporter != nil {
		rep = e.reporter.Capabilities()
	}
	switch c {
	case capNone:
		return true
	case capTools:
		return e.tools != nil && (e.reporter == nil || rep != nil && rep.Tools != nil)
	case capResources:
		return e.resources != nil && (e.reporter == nil || rep != nil && rep.Resources != nil)
	case capSubscribe:
		return e.resources != nil && e.subs != nil && (e.reporter == nil || rep != nil && rep.Resources != nil && rep.Resources.Subscribe)
	case capPrompts:
		return e.prompts != nil && (e.reporter == nil || rep != nil && rep.Prompts != nil)
	case capCompletions:
		return e.completion != nil && (e.reporter == nil || rep != nil && rep.Completions != nil)
	case capLogging:
		return e.logging != nil && (e.reporter == nil || rep != nil && rep.Logging != nil)
	case capTasks:
		return e.tasks != nil && e.tools != nil
	case capSkills:
		return e.skills != nil && e.skills.hasSkills() && e.offers(capResources)
	}
	return false
}

// Capabilities returns what initialize advertises for revision rev: what
// the handler implements, narrowed by its CapabilityReporter.
func (e *engine) Capabilities(rev Revision) ServerCapabilities {
	var c ServerCapabilities
	listChanged := e.notifier != nil
	var rep *ServerCapabilities
	if e.reporter != nil {
		rep = e.reporter.Capabilities()
	}
	if e.offers(capTools) {
		c.Tools = &ToolsCapability{ListChanged: listChanged}
		if rep != nil {
			c.Tools.ListChanged = rep.Tools.ListChanged
		}
	}
	if e.offers(capResources) {
		c.Resources = &ResourcesCapability{ListChanged: listChanged, Subscribe: e.offers(capSubscribe)}
		if rep != nil {
			c.Resources.ListChanged = rep.Resources.ListChanged
		}
	}
	if e.offers(capPrompts) {
		c.Prompts = &PromptsCapability{ListChanged: listChanged}
		if rep != nil {
			c.Prompts.ListChanged = rep.Prompts.ListChanged
		}
	}
	if e.offers(capLogging) {
		c.Logging = &struct{}{}
	}
	if e.offers(capCompletions) {
		c.Completions = &struct{}{}
	}
	if rep != nil && len(rep.Experimental) > 0 {
		c.Experimental = rep.Experimental
	}
	if rev == Rev20260728 {
		c.Extensions = e.extensions()
	}
	c.Extensions = uiCapability(rev, rep, c.Extensions)
	return c
}

// fill sets the common part of a request.
func (e *engine) fill(r *Request, call *protocol.Call, rev Revision, meta RequestMeta) {
	r.Method, r.ID, r.Revision, r.Client, r.eng = call.Method, call.ID, rev, clientOf(call), e
	r.Identity, r.Session = call.Identity, call.Session
	r.Params, r.Meta, r.logLevel, r.out = call.Params, meta, LogLevel(call.LogLevel), call.Outbound
}

// handlerError maps a callback's error to the wire (see Handler).
func (e *engine) handlerError(ctx context.Context, call *protocol.Call, err error) *wire.Error {
	var je *wire.Error
	var ir *InputRequiredError
	var ce *capabilityError
	var ae *accessError
	switch {
	case errors.As(err, &je):
		return je
	case errors.As(err, &ae):
		return ae.rpcError()
	case errors.Is(err, ErrUnknownTool), errors.Is(err, ErrUnknownPrompt), errors.Is(err, ErrInvalidParams):
		return wire.NewError(wire.InvalidParams, "Invalid params: "+strings.TrimPrefix(err.Error(), "mcp: "))
	case errors.As(err, &ir):
		if _, ok := call.Outbound.(*mrtrOutbound); ok {
			return errInputRequired
		}
		e.log.ErrorContext(ctx, "mcp: input_required outside the 2026-07-28 era", slog.String("method", call.Method))
		return errInternal
	case call.Revision == protocol.Rev20260728 && errors.As(err, &ce):
		return ce.rpcError()
	case errors.Is(err, context.Canceled):
		return errCancelled
	case errors.Is(err, context.DeadlineExceeded):
		return errTimeout
	}
	e.log.ErrorContext(ctx, "mcp: handler failed", slog.String("method", call.Method),
		slog.String("id", call.ID.String()), slog.Any("err", err))
	return errInternal
}

// result finishes a callback: error mapping, or encoding with the
// UTF-8 guard. The returned state is kept either way.
func (e *engine) result(ctx context.Context, call *protocol.Call, state any, err error, encode func() ([]byte, error)) protocol.Reply {
	r := protocol.Reply{State: state}
	if err != nil {
		r.Err = e.handlerError(ctx, call, err)
		return r
	}
	out, eerr := encode()
	if eerr != nil {
		e.log.ErrorContext(ctx, "mcp: result not encodable", slog.String("method", call.Method),
			slog.String("id", call.ID.String()), slog.Any("err", eerr))
		r.Err = errUnencoded
		return r
	}
	r.Result = out
	return r
}

func (e *engine) initialize(ctx context.Context, call *protocol.Call, _ Revision, state any) protocol.Reply {
	p, meta, perr := parseInitialize(call.Params)
	if perr != nil {
		return protocol.Reply{State: state, Err: perr}
	}
	rev := negotiate(p.ProtocolVersion)
	req := &InitializeRequest{Params: p}
	e.fill(&req.Request, call, rev, meta)
	req.Client = &req.Params.Capabilities
	res, st, err := e.h.Initialize(ctx, req, state)
	r := e.result(ctx, call, st, err, func() ([]byte, error) {
		var out InitializeResult
		if res != nil {
			out = *res
		}
		out.ProtocolVersion = rev.String()
		out.Capabilities = e.Capabilities(rev)
		return wire.Marshal(&out)
	})
	if r.Err == nil {
		r.Effect = protocol.Effect{Kind: protocol.EffectInitialize, Revision: protocol.Revision(rev), Client: &req.Params.Capabilities}
	}
	return r
}

func (e *engine) ping(_ context.Context, call *protocol.Call, _ Revision, state any) protocol.Reply {
	if _, err := parsePlain(call.Params); err != nil {
		return protocol.Reply{State: state, Err: err}
	}
	return protocol.Reply{State: state, Result: resultEmpty}
}

func (e *engine) listRequest(call *protocol.Call, rev Revision) (*ListRequest, *wire.Error) {
	cursor, meta, perr := parseList(call.Params)
	if perr != nil {
		return nil, perr
	}
	req := &ListRequest{Cursor: cursor}
	e.fill(&req.Request, call, rev, meta)
	return req, nil
}

func (e *engine) listTools(ctx context.Context, call *protocol.Call, rev Revision, state any) protocol.Reply {
	req, perr := e.listRequest(call, rev)
	if perr != nil {
		return protocol.Reply{State: state, Err: perr}
	}
	res, st, err := e.tools.ListTools(ctx, req, state)
	return e.result(ctx, call, st, err, func() ([]byte, error) {
		if res == nil {
			res = &ListToolsResult{}
		}
		return encodeListTools(rev, res)
	})
}

func (e *engine) callTool(ctx context.Context, call *protocol.Call, rev Revision, state any) protocol.Reply {
	var name string
	var args json.RawMessage
	var meta RequestMeta
	var perr *wire.Error
	if call.Tool != nil {
		name, args, meta, perr = toolCallOf(call.Tool)
	} else {
		name, args, meta, perr = parseToolCall(call.Tape, call.Params)
	}
	if perr != nil {
		return protocol.Reply{State: state, Err: perr}
	}
	req := &CallToolRequest{Name: name, Arguments: args, tape: call.Tape}
	e.fill(&req.Request, call, rev, meta)
	if rev == Rev20260728 {
		if r, done := e.taskCall(ctx, call, req, state); done {
			r.Target = name
			return r
		}
	}
	res, st, err := e.tools.CallTool(ctx, req, state)
	if err != nil && !isProtocolError(err) && !(rev == Rev20260728 && errors.Is(err, ErrClientCapability)) {
		res, err = ToolError(err), nil
	}
	if n := callToolMinSize(res); err == nil && e.overBound(n) {
		return e.tooBig(ctx, call, st, n)
	}
	var pooled *[]byte
	var room []byte
	r := e.result(ctx, call, st, err, func() ([]byte, error) {
		if res == nil {
			res = &CallToolResult{}
		}
		hint := contentSize(res.Content) + len(res.structured)
		if room = resultBuffer(hint); room != nil {
			out, err := appendCallTool(room, res)
			room = out
			return out[replyHead:], err
		}
		if call.Owned {
			// appendReply copies the result into the response and is
			// the last to read it: encode into a pooled buffer.
			pooled = wire.GetBuffer()
			out, err := appendCallTool(*pooled, res)
			*pooled = out
			return out, err
		}
		return appendCallTool(smallBuffer(hint), res)
	})
	if r.Result != nil {
		r.Pooled = pooled
		r.ToolError = res.IsError
	}
	r.Target = name
	keepRoom(&r, room, res != nil && res.Meta == nil)
	return r
}

// isProtocolError reports whether a tools/call error must stay a JSON-RPC
// error rather than become an isError result.
func isProtocolError(err error) bool {
	var je *wire.Error
	var ir *InputRequiredError
	var ae *accessError
	return errors.As(err, &je) || errors.As(err, &ir) || errors.As(err, &ae) ||
		errors.Is(err, ErrUnknownTool) || errors.Is(err, ErrInvalidParams) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// ToolError returns the isError result for a tool's failure: one text
// block with the error's text, which the model reads.
func ToolError(err error) *CallToolResult {
	return &CallToolResult{Content: []Content{Text(err.Error())}, IsError: true}
}

func (e *engine) listResources(ctx context.Context, call *protocol.Call, rev Revision, state any) protocol.Reply {
	req, perr := e.listRequest(call, rev)
	if perr != nil {
		return protocol.Reply{State: state, Err: perr}
	}
	res, st, err := e.resources.ListResources(ctx, req, state)
	return e.result(ctx, call, st, err, func() ([]byte, error) {
		if res == nil {
			res = &ListResourcesResult{}
		}
		return encodeListResources(rev, res)
	})
}

var resultNoTemplates = json.RawMessage(`{"resourceTemplates":[]}`)

func (e *engine) listTemplates(ctx context.Context, call *protocol.Call, rev Revision, state any) protocol.Reply {
	req, perr := e.listRequest(call, rev)
	if perr != nil {
		return protocol.Reply{State: state, Err: perr}
	}
	if e.templates == nil {
		return protocol.Reply{State: state, Result: resultNoTemplates}
	}
	res, st, err := e.templates.ListResourceTemplates(ctx, req, state)
	return e.result(ctx, call, st, err, func() ([]byte, error) {
		if res == nil {
			res = &ListResourceTemplatesResult{}
		}
		return encodeListTemplates(rev, res)
	})
}

func (e *engine) readResource(ctx context.Context, call *protocol.Call, rev Revision, state any) protocol.Reply {
	uri, meta, perr := parseURI(call.Params)
	if perr != nil {
		return protocol.Reply{State: state, Err: perr}
	}
	req := &ReadResourceRequest{URI: uri}
	e.fill(&req.Request, call, rev, meta)
	res, st, err := e.resources.ReadResource(ctx, req, state)
	if errors.Is(err, ErrResourceNotFound) {
		return protocol.Reply{State: st, Err: resourceNotFound(rev, uri)}
	}
	if n := readResourceMinSize(res); err == nil && e.overBound(n) {
		return e.tooBig(ctx, call, st, n)
	}
	var room []byte
	r := e.result(ctx, call, st, err, func() ([]byte, error) {
		if res == nil {
			res = &ReadResourceResult{}
		}
		n := 0
		for _, c := range res.Contents {
			if c != nil {
				n += resourceSize(c)
			}
		}
		if room = resultBuffer(n); room != nil {
			out, err := appendReadResource(room, res)
			room = out
			return out[replyHead:], err
		}
		return appendReadResource(smallBuffer(n), res)
	})
	keepRoom(&r, room, res != nil && res.Meta == nil)
	return r
}

// resourceNotFound is -32002 with data {uri} in legacy revisions, -32602
// in 2026-07-28.
func resourceNotFound(rev Revision, uri string) *wire.Error {
	code := wire.ResourceNotFound
	if !rev.Legacy() {
		code = wire.InvalidParams
	}
	return &wire.Error{Code: code, Message: "Resource not found", Data: map[string]string{"uri": uri}}
}

func (e *engine) subscription(ctx context.Context, call *protocol.Call, rev Revision, state any, kind protocol.EffectKind) protocol.Reply {
	uri, meta, perr := parseURI(call.Params)
	if perr != nil {
		return protocol.Reply{State: state, Err: perr}
	}
	req := &SubscribeRequest{URI: uri}
	e.fill(&req.Request, call, rev, meta)
	var st any
	var err error
	if kind == protocol.EffectSubscribe {
		st, err = e.subs.Subscribe(ctx, req, state)
	} else {
		st, err = e.subs.Unsubscribe(ctx, req, state)
	}
	if errors.Is(err, ErrResourceNotFound) {
		return protocol.Reply{State: st, Err: resourceNotFound(rev, uri)}
	}
	if errors.Is(err, errNotRecorded) {
		return protocol.Reply{State: st, Result: resultEmpty}
	}
	r := e.result(ctx, call, st, err, func() ([]byte, error) { return resultEmpty, nil })
	if r.Err == nil {
		r.Effect = protocol.Effect{Kind: kind, URI: uri}
	}
	return r
}

func (e *engine) subscribe(ctx context.Context, call *protocol.Call, rev Revision, state any) protocol.Reply {
	return e.subscription(ctx, call, rev, state, protocol.EffectSubscribe)
}

func (e *engine) unsubscribe(ctx context.Context, call *protocol.Call, rev Revision, state any) protocol.Reply {
	return e.subscription(ctx, call, rev, state, protocol.EffectUnsubscribe)
}

func (e *engine) listPrompts(ctx context.Context, call *protocol.Call, rev Revision, state any) protocol.Reply {
	req, perr := e.listRequest(call, rev)
	if perr != nil {
		return protocol.Reply{State: state, Err: perr}
	}
	res, st, err := e.prompts.ListPrompts(ctx, req, state)
	return e.result(ctx, call, st, err, func() ([]byte, error) {
		if res == nil {
			res = &ListPromptsResult{}
		}
		return encodeListPrompts(rev, res)
	})
}

func (e *engine) getPrompt(ctx context.Context, call *protocol.Call, rev Revision, state any) protocol.Reply {
	name, args, meta, perr := parsePromptGet(call.Params)
	if perr != nil {
		return protocol.Reply{State: state, Err: perr}
	}
	req := &GetPromptRequest{Name: name, Arguments: args}
	e.fill(&req.Request, call, rev, meta)
	res, st, err := e.prompts.GetPrompt(ctx, req, state)
	r := e.result(ctx, call, st, err, func() ([]byte, error) {
		if res == nil {
			return nil, errors.New("mcp: GetPrompt returned no result")
		}
		return encodeGetPrompt(res)
	})
	r.Target = name
	return r
}

func (e *engine) complete(ctx context.Context, call *protocol.Call, rev Revision, state any) protocol.Reply {
	ref, name, value, ctxArgs, meta, perr := parseComplete(call.Params)
	if perr != nil {
		return protocol.Reply{State: state, Err: perr}
	}
	req := &CompleteRequest{Ref: ref, ArgumentName: name, ArgumentValue: value, Context: ctxArgs}
	e.fill(&req.Request, call, rev, meta)
	res, st, err := e.completion.Complete(ctx, req, state)
	return e.result(ctx, call, st, err, func() ([]byte, error) {
		if res == nil {
			res = &CompleteResult{}
		}
		return encodeComplete(res)
	})
}

func (e *engine) setLevel(ctx context.Context, call *protocol.Call, rev Revision, state any) protocol.Reply {
	level, meta, perr := parseSetLevel(call.Params)
	if perr != nil {
		return protocol.Reply{State: state, Err: perr}
	}
	req := &SetLogLevelRequest{Level: level}
	e.fill(&req.Request, call, rev, meta)
	st, err := e.logging.SetLogLevel(ctx, req, state)
	r := e.result(ctx, call, st, err, func() ([]byte, error) { return resultEmpty, nil })
	if r.Err == nil {
		r.Effect = protocol.Effect{Kind: protocol.EffectSetLogLevel, LogLevel: protocol.LogLevel(level)}
	}
	return r
}

func (e *engine) initialized(_ context.Context, _ *protocol.Call, _ Revision, state any) protocol.Reply {
	return protocol.Reply{State: state, Effect: protocol.Effect{Kind: protocol.EffectInitialized}}
}

func (e *engine) cancelled(_ context.Context, call *protocol.Call, _ Revision, state any) protocol.Reply {
	id, _, ok := parseCancelled(call.Params)
	if !ok {
		return protocol.Reply{State: state} // invalid cancellations SHOULD be ignored
	}
	return protocol.Reply{State: state, Effect: protocol.Effect{Kind: protocol.EffectCancel, RequestID: id}}
}

func (e *engine) ignore(_ context.Context, _ *protocol.Call, _ Revision, state any) protocol.Reply {
	return protocol.Reply{State: state}
}

func (e *engine) rootsChanged(ctx context.Context, call *protocol.Call, rev Revision, state any) protocol.Reply {
	r := protocol.Reply{State: state, Effect: protocol.Effect{Kind: protocol.EffectRootsChanged}}
	if e.roots == nil {
		return r
	}
	req := &Request{}
	e.fill(req, call, rev, RequestMeta{})
	st, err := e.roots.RootsListChanged(ctx, req, state)
	if err != nil {
		e.log.ErrorContext(ctx, "mcp: roots handler failed", slog.Any("err", err))
	}
	r.State = st
	return r
}

// sealKeysOf is the key set a handler seals with: a Server's Keys (also
// when embedded), else a random one for this engine.
func sealKeysOf(h Handler) *seal.Keys {
	if k, ok := h.(interface{ sealKeys() *seal.Keys }); ok {
		return k.sealKeys()
	}
	return seal.New(nil)
}
