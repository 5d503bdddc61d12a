package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// EngineOptions configures an Engine. A nil *EngineOptions means defaults.
type EngineOptions struct {
	// Logger receives handler panics (with their stack) and handler
	// errors that are hidden from clients. nil means slog.Default(),
	// captured when the Engine is built: a swallowed panic is worse than
	// a noisy log.
	Logger *slog.Logger

	// StateKeys seal the requestState of 2026-07-28 input_required
	// results (AES-256-GCM): the first key seals, every key opens, so a
	// key is rotated by putting the new one first and dropping the old
	// one once StateTTL has passed. Keys should hold 32 random bytes.
	// nil means one random key per Engine: state then does not survive a
	// restart or move between replicas, so give every replica the same
	// keys behind a load balancer.
	StateKeys [][]byte
	// StateTTL bounds how long a client may take to answer an
	// input_required result; default 10 minutes.
	StateTTL time.Duration
	// CacheHints sets the caching hint of a cacheable 2026-07-28 method's
	// results, by method name ("tools/list"); methods not listed get the
	// zero CacheHint (ttlMs 0, private). See CacheHint.
	CacheHints map[string]CacheHint
	// Tasks enables the 2026-07-28 tasks extension
	// (io.modelcontextprotocol/tasks): tools registered with a
	// TaskSupport may then run as tasks, and tasks/get, tasks/update and
	// tasks/cancel are served. nil leaves the extension off: it is not
	// advertised and every tool runs synchronously.
	Tasks *TaskOptions
	// TaskIDPrefix starts every task id: a Controller with a Cluster
	// sets it to the replica's id and a dot, so that a task's requests
	// are relayed to the replica that runs it.
	TaskIDPrefix string
}

// Engine is the protocol engine: one method table, used by every
// transport. It holds no per-session data, so one Engine serves any number
// of sessions concurrently; it is safe for concurrent use.
type Engine struct {
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

	log     *slog.Logger
	methods map[string]*MethodInfo
	decoder *wire.Decoder

	// 2026-07-28
	infoOnce     sync.Once
	serverInfo   json.RawMessage
	instructions string
	cache        map[string]CacheHint
	state        *stateSealer
	tasks        *taskStore
	listeners    listenLimits
}

// NewEngine builds the engine for h, probing once which optional parts h
// implements. It panics if h is nil (a programming error).
func NewEngine(h Handler, opts *EngineOptions) *Engine {
	if h == nil {
		panic("mcp: NewEngine with a nil Handler")
	}
	e := &Engine{h: h, methods: map[string]*MethodInfo{}}
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
	var o EngineOptions
	if opts != nil {
		o = *opts
	}
	e.log = o.Logger
	if e.log == nil {
		e.log = slog.Default()
	}
	e.cache = o.CacheHints
	e.state = newStateSealer(o.StateKeys, o.StateTTL)
	if o.Tasks != nil {
		e.tasks = newTaskStore(e, o.Tasks)
		e.tasks.prefix = o.TaskIDPrefix
	}
	var names []string
	for _, m := range methodTable() {
		e.methods[m.Name] = m
		names = append(names, m.Name)
	}
	e.decoder = wire.NewDecoder(names...)
	return e
}

// Decoder returns a JSON-RPC decoder that interns this table's method
// names; transports should decode with it.
func (e *Engine) Decoder() *wire.Decoder { return e.decoder }

// Method returns the table entry for a method name.
func (e *Engine) Method(name string) (*MethodInfo, bool) {
	m, ok := e.methods[name]
	return m, ok
}

// Stateless reports whether the handler ignores its state, so that every
// call of a session may run concurrently.
func (e *Engine) Stateless() bool { return e.stateless }

// NewState returns the state for a call that has no session (a stateless
// transport): the state Initialize returns for a synthetic request with
// the given revision. A StatelessHandler's state is nil and costs nothing.
func (e *Engine) NewState(ctx context.Context, rev Revision) (any, error) {
	if e.stateless {
		return nil, nil
	}
	req := &InitializeRequest{}
	req.Method, req.Revision, req.out = "initialize", rev.orDefault(), DiscardOutbound{}
	req.Params.ProtocolVersion = rev.orDefault().String()
	_, st, err := e.h.Initialize(ctx, req, nil)
	return st, err
}

// Call is one decoded client→server message, with what the transport or
// session knows about its context.
type Call struct {
	// Method, ID and Params come from the decoded message; a zero ID means
	// a notification. Params may alias the body, which must stay intact
	// until Dispatch returns.
	Method string
	ID     wire.ID
	Params json.RawMessage
	// Revision is the session's negotiated revision, or the transport's
	// reading of MCP-Protocol-Version; zero means 2025-03-26. Ignored by
	// initialize, which negotiates.
	Revision Revision
	// Client is what the client declared; nil when unknown.
	Client *ClientCapabilities
	// LogLevel is the session's logging/setLevel threshold (zero: unset).
	LogLevel LogLevel
	// Outbound is this call's back channel; nil means DiscardOutbound.
	Outbound Outbound
	// Identity is who is calling ([Options.Identity]; "" for anonymous).
	// It binds 2026-07-28 requestState and tasks to their caller.
	Identity string

	mrtr *mrtrOutbound // 2026-07-28 input_required rounds of this call
	// owned: the transport's own Call, which it gives to Dispatch once
	// and writes the reply of with Engine.appendReply. Dispatch changes it
	// in place instead of copying it, and leaves the 2026-07-28 envelope
	// to appendReply, which writes it straight into the response instead
	// of Dispatch copying the result into it first.
	owned bool
	// noInput: the transport saw that params have neither inputResponses
	// nor requestState, so prepareModern need not look for them.
	noInput bool
	// tool: the tools/call params the transport already read (nil when
	// it did not), so that callTool need not read them again.
	tool *toolCallParams
}

// CallOf builds a Call from a decoded request or notification.
func CallOf(m *wire.Message, rev Revision) Call {
	return Call{Method: m.Method, ID: m.ID, Params: m.Params, Revision: rev}
}

// EffectKind says what the session layer must record after a call.
type EffectKind uint8

// The effects.
const (
	EffectNone         EffectKind = iota
	EffectInitialize              // a session starts: Revision, Client, ClientInfo
	EffectInitialized             // notifications/initialized arrived
	EffectSetLogLevel             // LogLevel
	EffectSubscribe               // URI
	EffectUnsubscribe             // URI
	EffectCancel                  // RequestID (and Reason): cancel that call's context
	EffectRootsChanged            // the client's roots changed
)

// Effect is the session-level consequence of a call, which Dispatch
// reports instead of performing (it has no session).
type Effect struct {
	Kind       EffectKind
	Revision   Revision
	Client     *ClientCapabilities
	ClientInfo *Implementation
	LogLevel   LogLevel
	URI        string
	RequestID  wire.ID
	Reason     string
}

// Reply is the outcome of Dispatch. For a request exactly one of Result
// and Err is set; for a notification neither is (notifications are never
// answered). State is the handler's new state: the one the callback
// returned, or the input state when it panicked or did not run.
//
// Pitfall: Result may be shared (pre-encoded lists, constants): never
// modify it.
type Reply struct {
	Result json.RawMessage
	Err    *wire.Error
	State  any
	Effect Effect

	resultType string // 2026-07-28: "" means complete
	// envelope is the method of a 2026-07-28 result whose envelope is
	// still to be added (Call.owned; Engine.appendReply adds it).
	envelope string
	// pooled is the pooled buffer that holds Result, for an owned call
	// (appendReply puts it back once it has copied Result).
	pooled *[]byte
}

// AppendTo appends the JSON-RPC response for this reply to dst (nothing for
// a notification's reply).
func (r *Reply) AppendTo(dst []byte, id wire.ID) []byte {
	switch {
	case r.Err != nil:
		return wire.AppendErrorResponse(dst, id, r.Err)
	case r.Result != nil:
		return wire.AppendResponse(dst, id, r.Result)
	}
	return dst
}

var (
	resultEmpty   = json.RawMessage(`{}`)
	errInternal   = wire.NewError(wire.InternalError, "Internal error")
	errCancelled  = wire.NewError(wire.InternalError, "Request cancelled")
	errTimeout    = wire.NewError(wire.InternalError, "Request timed out")
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

type methodFunc func(e *Engine, ctx context.Context, call *Call, rev Revision, state any) Reply

// Dispatch serves one call: the table lookup, the revision and capability
// gates, params validation, the handler callback under a crash guard, and
// the encoding of the result. It never panics and never blocks on
// anything but the handler.
//
// Gates, in order: an unknown method, a method the revision does not have,
// a method whose capability the handler does not offer, and a request
// sent to a notification method all answer MethodNotFound (-32601); a
// notification that is unknown, misnamed or malformed is dropped. Bad
// params answer InvalidParams (-32602) before the handler runs. A panic
// answers InternalError with a generic message, keeps the input state and
// logs the panic with its stack.
func (e *Engine) Dispatch(ctx context.Context, call *Call, state any) (reply Reply) {
	reply.State = state
	isNotification := call.ID.IsZero()
	m := e.methods[call.Method]
	if m == nil || m.Notification != isNotification {
		if !isNotification {
			reply.Err = methodNotFound(call.Method)
		}
		return reply
	}
	rev := call.Revision.orDefault()
	if rev >= revEnd {
		if !isNotification {
			reply.Err = errNotStarted
		}
		return reply
	}
	if !m.revisions.has(rev) || !e.offers(m.cap) {
		if !isNotification {
			reply.Err = methodNotFound(call.Method)
		}
		return reply
	}
	modern := rev == Rev20260728
	if modern && !isNotification {
		if !call.owned {
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
			reply = Reply{State: state}
			if !isNotification {
				reply.Err = errInternal
			}
		}
	}()
	return m.run(e, ctx, call, rev, state)
}

// offers reports whether the handler implements and reports a capability.
func (e *Engine) offers(c capability) bool {
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
func (e *Engine) Capabilities(rev Revision) ServerCapabilities {
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
	return c
}

// fill sets the common part of a request.
func (e *Engine) fill(r *Request, call *Call, rev Revision, meta RequestMeta) {
	r.Method, r.ID, r.Revision, r.Client = call.Method, call.ID, rev, call.Client
	r.Params, r.Meta, r.logLevel, r.out = call.Params, meta, call.LogLevel, call.Outbound
}

// handlerError maps a callback's error to the wire (see handler.go).
func (e *Engine) handlerError(ctx context.Context, call *Call, err error) *wire.Error {
	var je *wire.Error
	var ir *InputRequiredError
	var ce *capabilityError
	switch {
	case errors.As(err, &je):
		return je
	case errors.Is(err, ErrUnknownTool), errors.Is(err, ErrUnknownPrompt), errors.Is(err, ErrInvalidParams):
		return wire.NewError(wire.InvalidParams, "Invalid params: "+strings.TrimPrefix(err.Error(), "mcp: "))
	case errors.As(err, &ir):
		if call.mrtr != nil {
			return errInputRequired
		}
		e.log.ErrorContext(ctx, "mcp: input_required outside the 2026-07-28 era", slog.String("method", call.Method))
		return errInternal
	case call.Revision == Rev20260728 && errors.As(err, &ce):
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
func (e *Engine) result(ctx context.Context, call *Call, state any, err error, encode func() ([]byte, error)) Reply {
	r := Reply{State: state}
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

func (e *Engine) initialize(ctx context.Context, call *Call, _ Revision, state any) Reply {
	p, meta, perr := parseInitialize(call.Params)
	if perr != nil {
		return Reply{State: state, Err: perr}
	}
	rev := Negotiate(p.ProtocolVersion)
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
		r.Effect = Effect{Kind: EffectInitialize, Revision: rev, Client: &req.Params.Capabilities, ClientInfo: &req.Params.ClientInfo}
	}
	return r
}

func (e *Engine) ping(_ context.Context, call *Call, _ Revision, state any) Reply {
	if _, err := parsePlain(call.Params); err != nil {
		return Reply{State: state, Err: err}
	}
	return Reply{State: state, Result: resultEmpty}
}

func (e *Engine) listRequest(call *Call, rev Revision) (*ListRequest, *wire.Error) {
	cursor, meta, perr := parseList(call.Params)
	if perr != nil {
		return nil, perr
	}
	req := &ListRequest{Cursor: cursor}
	e.fill(&req.Request, call, rev, meta)
	return req, nil
}

func (e *Engine) listTools(ctx context.Context, call *Call, rev Revision, state any) Reply {
	req, perr := e.listRequest(call, rev)
	if perr != nil {
		return Reply{State: state, Err: perr}
	}
	res, st, err := e.tools.ListTools(ctx, req, state)
	return e.result(ctx, call, st, err, func() ([]byte, error) {
		if res == nil {
			res = &ListToolsResult{}
		}
		return encodeListTools(rev, res)
	})
}

func (e *Engine) callTool(ctx context.Context, call *Call, rev Revision, state any) Reply {
	var name string
	var args json.RawMessage
	var meta RequestMeta
	var perr *wire.Error
	if call.tool != nil {
		name, args, meta, perr = call.tool.result()
	} else {
		name, args, meta, perr = parseToolCall(call.Params)
	}
	if perr != nil {
		return Reply{State: state, Err: perr}
	}
	req := &CallToolRequest{Name: name, Arguments: args}
	e.fill(&req.Request, call, rev, meta)
	if rev == Rev20260728 {
		if r, done := e.taskCall(ctx, call, req, state); done {
			return r
		}
	}
	res, st, err := e.tools.CallTool(ctx, req, state)
	if err != nil && !isProtocolError(err) && !(rev == Rev20260728 && errors.Is(err, ErrClientCapability)) {
		res, err = ToolError(err), nil
	}
	var pooled *[]byte
	r := e.result(ctx, call, st, err, func() ([]byte, error) {
		if res == nil {
			res = &CallToolResult{}
		}
		if call.owned {
			// appendReply copies the result into the response and is
			// the last to read it: encode into a pooled buffer.
			pooled = wire.GetBuffer()
			out, err := appendCallTool(*pooled, res)
			*pooled = out
			return out, err
		}
		return encodeCallTool(res)
	})
	if r.Result != nil {
		r.pooled = pooled
	}
	return r
}

// isProtocolError reports whether a tools/call error must stay a JSON-RPC
// error rather than become an isError result.
func isProtocolError(err error) bool {
	var je *wire.Error
	var ir *InputRequiredError
	return errors.As(err, &je) || errors.As(err, &ir) ||
		errors.Is(err, ErrUnknownTool) || errors.Is(err, ErrInvalidParams) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// ToolError returns the isError result for a tool's failure: one text
// block with the error's text, which the model reads.
func ToolError(err error) *CallToolResult {
	return &CallToolResult{Content: []Content{Text(err.Error())}, IsError: true}
}

func (e *Engine) listResources(ctx context.Context, call *Call, rev Revision, state any) Reply {
	req, perr := e.listRequest(call, rev)
	if perr != nil {
		return Reply{State: state, Err: perr}
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

func (e *Engine) listTemplates(ctx context.Context, call *Call, rev Revision, state any) Reply {
	req, perr := e.listRequest(call, rev)
	if perr != nil {
		return Reply{State: state, Err: perr}
	}
	if e.templates == nil {
		return Reply{State: state, Result: resultNoTemplates}
	}
	res, st, err := e.templates.ListResourceTemplates(ctx, req, state)
	return e.result(ctx, call, st, err, func() ([]byte, error) {
		if res == nil {
			res = &ListResourceTemplatesResult{}
		}
		return encodeListTemplates(rev, res)
	})
}

func (e *Engine) readResource(ctx context.Context, call *Call, rev Revision, state any) Reply {
	uri, meta, perr := parseURI(call.Params)
	if perr != nil {
		return Reply{State: state, Err: perr}
	}
	req := &ReadResourceRequest{URI: uri}
	e.fill(&req.Request, call, rev, meta)
	res, st, err := e.resources.ReadResource(ctx, req, state)
	if errors.Is(err, ErrResourceNotFound) {
		return Reply{State: st, Err: resourceNotFound(rev, uri)}
	}
	return e.result(ctx, call, st, err, func() ([]byte, error) {
		if res == nil {
			res = &ReadResourceResult{}
		}
		return encodeReadResource(res)
	})
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

func (e *Engine) subscription(ctx context.Context, call *Call, rev Revision, state any, kind EffectKind) Reply {
	uri, meta, perr := parseURI(call.Params)
	if perr != nil {
		return Reply{State: state, Err: perr}
	}
	req := &SubscribeRequest{URI: uri}
	e.fill(&req.Request, call, rev, meta)
	var st any
	var err error
	if kind == EffectSubscribe {
		st, err = e.subs.Subscribe(ctx, req, state)
	} else {
		st, err = e.subs.Unsubscribe(ctx, req, state)
	}
	if errors.Is(err, ErrResourceNotFound) {
		return Reply{State: st, Err: resourceNotFound(rev, uri)}
	}
	r := e.result(ctx, call, st, err, func() ([]byte, error) { return resultEmpty, nil })
	if r.Err == nil {
		r.Effect = Effect{Kind: kind, URI: uri}
	}
	return r
}

func (e *Engine) subscribe(ctx context.Context, call *Call, rev Revision, state any) Reply {
	return e.subscription(ctx, call, rev, state, EffectSubscribe)
}

func (e *Engine) unsubscribe(ctx context.Context, call *Call, rev Revision, state any) Reply {
	return e.subscription(ctx, call, rev, state, EffectUnsubscribe)
}

func (e *Engine) listPrompts(ctx context.Context, call *Call, rev Revision, state any) Reply {
	req, perr := e.listRequest(call, rev)
	if perr != nil {
		return Reply{State: state, Err: perr}
	}
	res, st, err := e.prompts.ListPrompts(ctx, req, state)
	return e.result(ctx, call, st, err, func() ([]byte, error) {
		if res == nil {
			res = &ListPromptsResult{}
		}
		return encodeListPrompts(rev, res)
	})
}

func (e *Engine) getPrompt(ctx context.Context, call *Call, rev Revision, state any) Reply {
	name, args, meta, perr := parsePromptGet(call.Params)
	if perr != nil {
		return Reply{State: state, Err: perr}
	}
	req := &GetPromptRequest{Name: name, Arguments: args}
	e.fill(&req.Request, call, rev, meta)
	res, st, err := e.prompts.GetPrompt(ctx, req, state)
	return e.result(ctx, call, st, err, func() ([]byte, error) {
		if res == nil {
			return nil, errors.New("mcp: GetPrompt returned no result")
		}
		return encodeGetPrompt(res)
	})
}

func (e *Engine) complete(ctx context.Context, call *Call, rev Revision, state any) Reply {
	ref, name, value, ctxArgs, meta, perr := parseComplete(call.Params)
	if perr != nil {
		return Reply{State: state, Err: perr}
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

func (e *Engine) setLevel(ctx context.Context, call *Call, rev Revision, state any) Reply {
	level, meta, perr := parseSetLevel(call.Params)
	if perr != nil {
		return Reply{State: state, Err: perr}
	}
	req := &SetLogLevelRequest{Level: level}
	e.fill(&req.Request, call, rev, meta)
	st, err := e.logging.SetLogLevel(ctx, req, state)
	r := e.result(ctx, call, st, err, func() ([]byte, error) { return resultEmpty, nil })
	if r.Err == nil {
		r.Effect = Effect{Kind: EffectSetLogLevel, LogLevel: level}
	}
	return r
}

func (e *Engine) initialized(_ context.Context, _ *Call, _ Revision, state any) Reply {
	return Reply{State: state, Effect: Effect{Kind: EffectInitialized}}
}

func (e *Engine) cancelled(_ context.Context, call *Call, _ Revision, state any) Reply {
	id, reason, ok := parseCancelled(call.Params)
	if !ok {
		return Reply{State: state} // invalid cancellations SHOULD be ignored
	}
	return Reply{State: state, Effect: Effect{Kind: EffectCancel, RequestID: id, Reason: reason}}
}

func (e *Engine) ignore(_ context.Context, _ *Call, _ Revision, state any) Reply {
	return Reply{State: state}
}

func (e *Engine) rootsChanged(ctx context.Context, call *Call, rev Revision, state any) Reply {
	r := Reply{State: state, Effect: Effect{Kind: EffectRootsChanged}}
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

// String formats a Call for logs.
func (c *Call) String() string { return fmt.Sprintf("%s id=%s", c.Method, c.ID) }
