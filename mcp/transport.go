package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// transport is the Controller: it owns the HTTP side of MCP and hands
// every decoded message to the Engine.
type transport struct {
	engine   *Engine
	opts     Options
	log      *slog.Logger
	origins  map[string]bool
	anyOrig  bool
	hosts    map[string]bool
	allow    string // the Allow header of a 405
	sessions *sessionTable
	// changes fans registry changes out to subscriptions/listen streams:
	// this replica's own changes and, in a cluster, the other replicas'.
	changes changeHub
	// In a cluster: the endpoint itself (a relay that finds the owner
	// gone serves the request again here) and the relays' HTTP client.
	self  http.Handler
	relay *http.Transport
	// workers run the calls that get a goroutine of their own.
	workers workerPool
	// clientCaps keeps the decoded _meta clientCapabilities of 2026-07-28
	// requests, which clients resend unchanged with every request.
	clientCaps capsCache
}

// Controller returns the MCP endpoint as an http.Handler, ready to mount
// on a chi router:
//
//	r.Mount("/mcp", mcp.Controller(&mcp.Options{Handler: srv}))
//
// It panics when opts is nil or has no Handler: a configuration mistake
// that must stop the program at start-up, not fail every request.
//
// Requests are checked in this order, each failure answered at once:
// method (405 with Allow), Origin and Host (403), session (400 missing,
// 404 unknown or bound to another identity), headers (406 Accept, 415
// Content-Type, 400 MCP-Protocol-Version), body (413 over the limit, 400
// for a body that is not JSON-RPC). See the package documentation for the
// full table.
func Controller(opts *Options) *Endpoint {
	t := newTransport(opts)
	t.self = t.handler()
	e := &Endpoint{Handler: t.self, t: t}
	if c := t.opts.Cluster; c != nil {
		e.unwatch = c.Watch(t.notice)
	}
	return e
}

// newTransport checks and completes the options and builds the transport.
func newTransport(opts *Options) *transport {
	if opts == nil || opts.Handler == nil {
		panic("mcp: Controller needs Options with a Handler")
	}
	t := &transport{opts: *opts, workers: workerPool{work: make(chan job)}}
	if t.opts.Logger == nil {
		t.opts.Logger = slog.Default()
	}
	t.log = t.opts.Logger
	if t.opts.MaxBodyBytes <= 0 {
		t.opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	taskPrefix := ""
	if t.opts.Cluster != nil {
		taskPrefix = t.opts.Cluster.Self().ID + "."
	}
	t.engine = NewEngine(t.opts.Handler, &EngineOptions{Logger: t.log, StateKeys: t.opts.StateKeys,
		StateTTL: t.opts.StateTTL, CacheHints: t.opts.CacheHints, Tasks: t.opts.Tasks, TaskIDPrefix: taskPrefix})
	t.origins = map[string]bool{}
	for _, o := range t.opts.AllowedOrigins {
		if o == "*" {
			t.anyOrig = true
		}
		t.origins[strings.ToLower(strings.TrimRight(o, "/"))] = true
	}
	t.hosts = map[string]bool{}
	for _, h := range t.opts.AllowedHosts {
		t.hosts[strings.ToLower(h)] = true
	}
	t.allow = "POST"
	if t.opts.Cluster != nil && t.opts.Sessions == nil {
		t.opts.Sessions = &SessionOptions{}
	}
	if t.opts.Sessions != nil {
		t.allow = "GET, POST, DELETE"
		t.sessions = newSessionTable(t, t.opts.Sessions)
	}
	if t.opts.Cluster != nil {
		t.relay = newRelayTransport()
	}
	if n := t.engine.notifier; n != nil {
		n.OnChange(t.changed)
	}
	return t
}

// changed hears a change of this replica's registry.
func (t *transport) changed(c Change) {
	t.changes.fire(c)
	if t.sessions != nil {
		t.sessions.changed(c)
	}
}

// notice handles what the cluster tells this replica.
func (t *transport) notice(n Notice) {
	if n.Kind == NoticeChange {
		t.changes.fire(n.Change)
		return
	}
	if t.sessions != nil {
		t.sessions.notice(n)
	}
}

// changeHub is a set of change listeners.
type changeHub struct {
	mu   sync.Mutex
	next int
	fns  map[int]func(Change)
}

// OnChange registers fn; the returned function removes it.
func (h *changeHub) OnChange(fn func(Change)) (remove func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fns == nil {
		h.fns = map[int]func(Change){}
	}
	id := h.next
	h.next++
	h.fns[id] = fn
	return func() {
		h.mu.Lock()
		delete(h.fns, id)
		h.mu.Unlock()
	}
}

func (h *changeHub) fire(c Change) {
	h.mu.Lock()
	fns := make([]func(Change), 0, len(h.fns))
	for _, fn := range h.fns {
		fns = append(fns, fn)
	}
	h.mu.Unlock()
	for _, fn := range fns {
		fn(c)
	}
}

// handler serves the transport as a controller.
func (t *transport) handler() http.Handler {
	return controller.New(t, &controller.Options{
		Logger:       t.log,
		WriteTimeout: t.opts.WriteTimeout,
		MailboxSize:  256,
	})
}

// Handle routes one request.
func (t *transport) Handle(r *controller.Request) controller.Reply {
	switch r.Method {
	case http.MethodPost:
	case http.MethodGet, http.MethodDelete:
		if t.sessions == nil {
			return controller.MethodNotAllowed(t.allow)
		}
	default:
		return controller.MethodNotAllowed(t.allow)
	}
	if !t.originAllowed(r.Request) {
		return errorReply(http.StatusForbidden, wire.NewError(wire.InvalidRequest, "Forbidden: Origin or Host not allowed"))
	}
	switch r.Method {
	case http.MethodGet:
		return t.sessions.get(r)
	case http.MethodDelete:
		return t.sessions.delete(r)
	}
	return t.post(r)
}

// errorReply answers with an HTTP status and a JSON-RPC error with a null
// id, which MCP clients know how to read.
func errorReply(status int, e *wire.Error) controller.Reply {
	body := wire.AppendErrorResponse(nil, wire.ID{}, e)
	return controller.BufferedType(status, contentJSON, body)
}

// contentJSON is the Content-Type of a JSON answer (controller.BufferedType).
const contentJSON = "application/json"

func jsonHeader() http.Header {
	return http.Header{"Content-Type": {"application/json"}}
}

func (t *transport) attrs(ctx context.Context, attrs ...slog.Attr) {
	if t.opts.Attrs != nil {
		t.opts.Attrs(ctx, attrs...)
	}
}

// originAllowed applies the DNS-rebinding rules: on a loopback listener
// the Host must be a loopback name (or listed), and a present Origin must
// be the endpoint's own, listed, or loopback on a loopback listener.
func (t *transport) originAllowed(r *http.Request) bool {
	loopback := onLoopback(r)
	if loopback && !t.hostAllowed(r.Host) {
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" || t.anyOrig {
		return true
	}
	if t.origins[strings.ToLower(strings.TrimRight(origin, "/"))] {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if loopback && isLoopbackName(u.Hostname()) {
		return true
	}
	return strings.EqualFold(u.Host, r.Host)
}

func (t *transport) hostAllowed(host string) bool {
	h := strings.ToLower(host)
	if t.hosts[h] {
		return true
	}
	name := h
	if hn, _, err := net.SplitHostPort(h); err == nil {
		name = hn
		if t.hosts[name] {
			return true
		}
	}
	return isLoopbackName(strings.Trim(name, "[]"))
}

// onLoopback reports whether the request arrived on a loopback address.
func onLoopback(r *http.Request) bool {
	addr, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

func isLoopbackName(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// accepts reports whether an Accept header admits JSON and event streams.
func accepts(header []string) (json, stream bool) {
	for _, h := range header {
		for more := true; more; {
			var part string
			part, h, more = strings.Cut(h, ",")
			mt := strings.TrimSpace(part)
			if i := strings.IndexByte(mt, ';'); i >= 0 {
				mt = strings.TrimSpace(mt[:i])
			}
			switch strings.ToLower(mt) {
			case "*/*":
				json, stream = true, true
			case "application/json", "application/*":
				json = true
			case "text/event-stream", "text/*":
				stream = true
			}
		}
	}
	return json, stream
}

// checkHeaders applies the POST header rules and reads the revision the
// client states (zero when it states none).
func checkHeaders(r *http.Request) (Revision, controller.Reply) {
	json, stream := accepts(r.Header.Values("Accept"))
	if !json || !stream {
		return 0, errorReply(http.StatusNotAcceptable, wire.NewError(wire.InvalidRequest,
			"Not Acceptable: Accept must list application/json and text/event-stream"))
	}
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return 0, errorReply(http.StatusUnsupportedMediaType, wire.NewError(wire.InvalidRequest,
			"Unsupported Media Type: Content-Type must be application/json"))
	}
	return protocolHeader(r)
}

// protocolHeader reads MCP-Protocol-Version: absent is zero (2025-03-26);
// a version this server does not speak is 400.
func protocolHeader(r *http.Request) (Revision, controller.Reply) {
	v := r.Header.Values("Mcp-Protocol-Version")
	if len(v) == 0 {
		return 0, nil
	}
	if len(v) == 1 {
		if rev, ok := ParseRevision(v[0]); ok && rev.Legacy() {
			return rev, nil
		}
	}
	requested := strings.Join(v, ",")
	e := wire.NewError(wire.UnsupportedProtocolVersion, "Unsupported protocol version: "+strconv.Quote(requested))
	e.Data = json.RawMessage(unsupportedData(requested))
	return 0, errorReply(http.StatusBadRequest, e)
}

// unsupportedData is the data of an UnsupportedProtocolVersion error:
// {supported, requested}.
func unsupportedData(requested string) []byte {
	b := []byte(`{"supported":[`)
	for i, rev := range supportedRevisions() {
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendString(b, rev.String())
	}
	b = append(b, `],"requested":`...)
	b = wire.AppendString(b, requested)
	return append(b, '}')
}

// supportedRevisions lists the revisions served, newest first.
func supportedRevisions() []Revision {
	return []Revision{Rev20251125, Rev20250618, Rev20250326}
}
