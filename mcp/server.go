package mcp

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/saguaro-go/saguaro/mcp/internal/seal"
)

// ServerOptions configures a Server. A nil *ServerOptions means defaults;
// the Server copies the struct and never modifies the caller's.
//
// StateTTL, CacheHints and Tasks concern the 2026-07-28 revision, which
// every transport serves the same way. A request carries its revision and
// client capabilities in its _meta and is served on its own, with no
// session ([Controller] says how an HTTP request is checked).
// server/discover answers initialize's questions; every result carries
// resultType and _meta serverInfo, and the cacheable ones ttlMs and
// cacheScope (CacheHints). A handler's Elicit, CreateMessage and
// ListRoots become an input_required result ([InputRequiredError]),
// answered within StateTTL. Request.Log sends only what the request's
// _meta logLevel asks for. subscriptions/listen streams list changes and
// resource updates ([ListenOptions]). Extensions are advertised under
// capabilities.extensions only when enabled: tasks (Tasks,
// Tool.TaskSupport) and skills (Server.AddSkill).
type ServerOptions struct {
	// Instructions is sent in initialize (a hint for the model).
	Instructions string
	// PageSize is the number of items per list page (DefaultPageSize
	// when 0).
	PageSize int
	// Keys seal what the server hands clients to give back: list cursors
	// and the requestState of 2026-07-28 input_required results. The
	// first key seals and every key opens, so a key is rotated by putting
	// the new one first and dropping the old one once StateTTL has
	// passed. Each should hold 32 random bytes. nil means one random key
	// per Server: what it sealed then does not survive a restart or cross
	// replicas, so give every replica of a cluster the same keys.
	Keys [][]byte

	// The 2026-07-28 revision; every transport serves it the same way.

	// StateTTL bounds how long a client may take to answer an
	// input_required result; default 10 minutes.
	StateTTL time.Duration
	// CacheHints sets the caching hints (ttlMs, cacheScope) of cacheable
	// results by method; default ttlMs 0, private. See CacheHint.
	CacheHints map[string]CacheHint
	// Tasks enables the tasks extension (io.modelcontextprotocol/tasks);
	// nil leaves it off. See TaskOptions and Tool.TaskSupport. Each
	// endpoint that serves the Server keeps its own tasks.
	Tasks *TaskOptions

	// Middleware wraps the handling of every method the Server serves,
	// on every transport (Streamable HTTP, stdio, mcptest): the first is
	// the outermost. Each sees the request (method, params, the caller's
	// Identity and Session) before the method runs, and its result or
	// error after: tracing, audit logs, rate limits or authorization per
	// tool. It runs after the protocol's own checks (an unknown method,
	// one the revision or the capabilities do not allow), which never
	// reach it, and inside the crash guard. See MethodHandler. None, the
	// default, costs nothing.
	Middleware []func(next MethodHandler) MethodHandler
}

// Server is the registry most users write against: tools, resources,
// resource templates, prompts and completions registered up front or at
// run time, and served by [Controller] over HTTP (as Options.Handler), by
// [ServeStdio] or [ServeConn], or in tests by mcptest.Dial. It implements
// Handler and every optional handler interface, ignores the handler state
// (it is a StatelessHandler, so sessions may run its calls concurrently),
// and advertises a feature once something of that kind has been
// registered.
//
// Registration validates everything (names, URIs, schemas, templates) and
// fails with an Err… sentinel. Changes are copy-on-write: a call in flight
// keeps the snapshot it started with, list pages are re-encoded once per
// change, and OnChange observers hear of every change. A Server is safe
// for concurrent use.
//
// Where the specification leaves room, the engine that serves a Server
// (and any [Handler]) on every transport decides:
//
//   - Revisions: 2025-03-26, 2025-06-18 and 2025-11-25 (initialize and
//     sessions), and 2026-07-28 (stateless) on the same endpoint.
//     initialize echoes a supported version and otherwise offers
//     2025-11-25. A call that states no revision is served as 2025-03-26.
//   - A request to a method that exists only as a notification, and a
//     notification named after a request method, are MethodNotFound and
//     dropped respectively.
//   - Params must be an object (or absent); member names match
//     case-sensitively; unknown members are ignored.
//   - A tool's own error, and invalid arguments from 2025-11-25 on, are a
//     result with isError; in 2025-03-26 and 2025-06-18 invalid arguments
//     are InvalidParams. An unknown tool or prompt is InvalidParams.
//   - A panic is InternalError "Internal error" with no detail; the
//     previous state is kept and the panic is logged with its stack.
//     Other hidden handler errors are logged the same way.
//   - A result holding invalid UTF-8 is InternalError: it is never
//     silently altered.
//   - Until the client sets a log level, Request.Log sends every level.
//   - List pages are ordered by name (URI for resources) and cursors name
//     the last item of the previous page, signed with ServerOptions.Keys:
//     a page survives insertions and removals, and a tampered cursor is
//     InvalidParams.
type Server struct {
	info Implementation
	opts ServerOptions
	keys *seal.Keys

	mu       sync.Mutex // serializes writers; readers use snap
	snap     atomic.Pointer[snapshot]
	hooks    map[int]func(Change)
	nextHook int

	skillSet skillSet
}

// snapshot is the immutable state readers see.
type snapshot struct {
	tools     map[string]*toolEntry
	toolPages *pageSet

	resources     map[string]*resourceEntry
	resourcePages *pageSet

	templates     []*templateEntry // registration order: the match order
	templatePages *pageSet

	prompts     map[string]*promptEntry
	promptPages *pageSet

	completions map[completionKey]CompleteFunc

	caps ServerCapabilities
}

// NewServer returns an empty Server. info is its serverInfo; with an
// empty Name the server is named "saguaro" at the library's release.
func NewServer(info Implementation, opts *ServerOptions) *Server {
	if info.Name == "" {
		info = defaultImplementation()
	}
	s := &Server{info: info, hooks: map[int]func(Change){}}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.PageSize <= 0 {
		s.opts.PageSize = DefaultPageSize
	}
	s.keys = seal.New(s.opts.Keys)
	s.opts.Keys = nil
	s.opts.Middleware = slices.Clone(s.opts.Middleware)
	sn := &snapshot{
		tools:       map[string]*toolEntry{},
		resources:   map[string]*resourceEntry{},
		prompts:     map[string]*promptEntry{},
		completions: map[completionKey]CompleteFunc{},
		caps:        ServerCapabilities{Logging: &struct{}{}},
	}
	sn.toolPages = s.toolPageSet(sn.tools)
	sn.resourcePages = s.resourcePageSet(sn.resources)
	sn.templatePages = s.templatePageSet(nil)
	sn.promptPages = s.promptPageSet(sn.prompts)
	s.snap.Store(sn)
	return s
}

// update applies a change to a copy of the snapshot under the writer lock
// and then tells the observers. f returns the change to announce, or an
// error to abandon the copy.
func (s *Server) update(f func(sn *snapshot) (ChangeKind, error)) error {
	s.mu.Lock()
	sn := *s.snap.Load()
	kind, err := f(&sn)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	s.snap.Store(&sn)
	hooks := slices.Collect(maps.Values(s.hooks))
	s.mu.Unlock()
	if kind != 0 {
		for _, h := range hooks {
			h(Change{Kind: kind})
		}
	}
	return nil
}

// OnChange registers fn to hear every change of the tool, resource and
// prompt lists, and every ResourceUpdated. fn runs on the goroutine that
// made the change, after the change is visible; it must not block (hand
// the event to a channel or a mailbox). The returned function removes it.
func (s *Server) OnChange(fn func(Change)) (remove func()) {
	s.mu.Lock()
	id := s.nextHook
	s.nextHook++
	s.hooks[id] = fn
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.hooks, id)
		s.mu.Unlock()
	}
}

// ResourceUpdated announces that the contents of uri changed; sessions
// subscribed to it are told. It does not check that uri exists.
func (s *Server) ResourceUpdated(uri string) {
	s.mu.Lock()
	hooks := slices.Collect(maps.Values(s.hooks))
	s.mu.Unlock()
	for _, h := range hooks {
		h(Change{Kind: ResourceUpdated, URI: uri})
	}
}

// Capabilities implements CapabilityReporter.
func (s *Server) Capabilities() *ServerCapabilities { return &s.snap.Load().caps }

// Stateless implements StatelessHandler: the Server ignores handler state.
func (s *Server) Stateless() bool { return true }

// Initialize implements Handler.
func (s *Server) Initialize(ctx context.Context, req *InitializeRequest, state any) (*InitializeResult, any, error) {
	return &InitializeResult{ServerInfo: s.info, Instructions: s.opts.Instructions}, nil, nil
}

// SetLogLevel implements LoggingHandler; the level itself is applied by
// the session from what the engine reports.
func (s *Server) SetLogLevel(ctx context.Context, req *SetLogLevelRequest, state any) (any, error) {
	return state, nil
}

// Subscribe implements SubscriptionHandler: any URI may be subscribed to;
// the session records it. A resource hidden from the caller is answered
// alike but not recorded, so its updates do not reveal it.
func (s *Server) Subscribe(ctx context.Context, req *SubscribeRequest, state any) (any, error) {
	if s.snap.Load().hiddenResource(ctx, &req.Request, req.URI) {
		return state, errNotRecorded
	}
	return state, nil
}

// Unsubscribe implements SubscriptionHandler.
func (s *Server) Unsubscribe(ctx context.Context, req *SubscribeRequest, state any) (any, error) {
	return state, nil
}

func encodeItem(f func(e *encoder, rev Revision)) (*[nRevs][]byte, error) {
	var out [nRevs][]byte
	for i, rev := range encodeRevs {
		var e encoder
		f(&e, rev)
		if e.err != nil {
			return nil, e.err
		}
		out[i] = e.b
	}
	return &out, nil
}

// sealKeys is the key set the engine seals requestState with.
func (s *Server) sealKeys() *seal.Keys { return s.keys }

// settings is how the engine serves this Server.
func (s *Server) settings() *ServerOptions { return &s.opts }
