package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/saguaro-go/saguaro/internal/origin"
	"github.com/saguaro-go/saguaro/mcp/cluster"
	"github.com/saguaro-go/saguaro/mcp/internal/streamable"
)

// Endpoint is the MCP endpoint [Controller] returns: an http.Handler to
// mount on a router, plus its life cycle: [Endpoint.Ready] for a
// readiness probe, [Endpoint.Drain] and [Endpoint.Shutdown] to stop.
type Endpoint struct {
	http.Handler
	t       *streamable.Transport
	cluster cluster.Cluster
}

// ErrDraining is what [Endpoint.Ready] returns once [Endpoint.Drain] or
// [Endpoint.Shutdown] was called: the balancer should send the replica
// no more requests.
var ErrDraining = errors.New("mcp: the endpoint is draining")

// Controller returns the MCP endpoint, the Streamable HTTP transport of
// every revision, as an http.Handler ready to mount on a chi router:
//
//	r.Mount("/mcp", mcp.Controller(&mcp.Options{Handler: srv}))
//
// It panics when opts is nil, has no Handler, lists a malformed origin
// or host, or has a Telemetry whose meter refuses an instrument: a
// configuration mistake that must stop the program at start-up, not fail
// every request. [Options.Limits] bounds what each caller holds, and
// [Options.Cluster] what replicas answer; [Endpoint] is how it stops.
//
// Every stream is a controller loop (package controller). A call that
// emits progress, log messages or server→client requests before its
// result is answered as an event stream when the client accepts one; a
// quiet call is answered as JSON. Without sessions only a call that asks
// for progress (a progressToken) is run that way; other calls take the
// synchronous path and their notifications are dropped, since nothing
// could have asked for them. Session streams outlive their connections:
// events carry session-unique ids, each connection opens with a priming
// event (an id, empty data, and retry) in every revision, and GET with
// Last-Event-ID resumes exactly the stream the id belongs to.
// Request.CloseStream ends a connection on purpose (2025-11-25 polling).
//
// Where the transport specification is silent, a request is checked in
// this order, each failure answered at once:
//
//	method other than POST (GET, DELETE with sessions)   405, Allow
//	Origin present and not allowed, or Host not allowed  403 (see Options.AllowedOrigins)
//	POST from a caller with Limits.Calls in flight       429, Retry-After: 1, -32603
//	several Mcp-Session-Id headers                       400
//	unknown session, or bound to another identity        404 (its existence is not revealed)
//	Accept lacks application/json or text/event-stream   406
//	Content-Type not application/json                    415
//	MCP-Protocol-Version not served                      400, -32022 {supported, requested}
//	body over Options.MaxBodyBytes (4 MiB)               413
//	body not sent within Limits.BodyTimeout (30 s)       408, -32600, connection closed, logged
//	body not JSON, not UTF-8, or not JSON-RPC            400, -32700 or -32600
//	no Mcp-Session-Id on a non-initialize request        400 (sessions on)
//	initialize on an existing session                    400, -32600
//	batch outside 2025-03-26                             400, -32600
//	batch of more than Limits.MaxBatch (32) messages     400, -32600, nothing runs
//	notification or client response                      202
//	session store full (SessionOptions.MaxSessions)      503, Retry-After
//	caller holds Limits.Sessions sessions (initialize)   429, Retry-After: 30, -32603
//	a second GET stream on one session                   409
//	caller holds Limits.Streams streams (GET, listen)    429, Retry-After: 5, -32603
//	DELETE of a session                                  204
//	stateful callback queue full (QueueSize)             -32603 "Server overloaded"
//
// A session holds no goroutine while idle; it is reaped after
// SessionOptions.IdleTimeout, never while a call or stream holds it. A
// call's context ends with notifications/cancelled, the session's end,
// the request timeout, or, when its stream's client left, ResumeGrace
// later unless the client resumed.
//
// A POST is served as 2026-07-28 when its MCP-Protocol-Version header
// names a revision that is not a legacy one, or when its params carry
// _meta["io.modelcontextprotocol/protocolVersion"]; everything else
// follows the legacy rules, so clients of both eras share one endpoint
// and one set of handlers. Such a request is stateless: it ignores
// Mcp-Session-Id, carries its client capabilities in _meta, and is
// checked in this order, each failure answered with the request's id:
//
//	Accept 406, Content-Type 415, body 413 / 400 (-32700, -32600)
//	_meta without protocolVersion or clientCapabilities  400 -32602
//	  (400 -32022 when the header names no servable revision)
//	MCP-Protocol-Version missing, repeated or ≠ _meta    400 -32020
//	a revision other than 2026-07-28                    400 -32022 {supported, requested}
//	Mcp-Method missing or ≠ method                       400 -32020
//	method unknown, legacy-only or not offered          404 -32601
//	Mcp-Name, Mcp-Param-* missing, ≠ body, bad value     400 -32020
//	_meta fields of the wrong type                       400 -32602
//
// Then the call runs. Its answer is JSON, or an event stream when the
// call emits notifications (progress, log messages when the request set
// _meta logLevel) before its result; a client that closes either cancels
// the call's context. Errors keep the HTTP statuses the revision defines:
// -32601 404, -32020, -32021 and -32022 400, anything else 200.
func Controller(opts *Options) *Endpoint {
	if opts == nil || opts.Handler == nil {
		panic("mcp: Controller needs Options with a Handler")
	}
	o := *opts
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	rule, err := origin.New(o.AllowedOrigins, o.AllowedHosts)
	if err != nil {
		panic("mcp: Controller: " + err.Error())
	}
	cl := o.Cluster
	if cl != nil && o.Sessions == nil {
		o.Sessions = &SessionOptions{}
	}
	standalone := cl == nil
	if standalone {
		cl = cluster.NewMemory().Join("")
	}
	listen := o.Listen.withDefaults()
	tel, err := newTelemetry(o.Telemetry, transportTCP)
	if err != nil {
		panic("mcp: Controller: " + err.Error())
	}
	limits := o.Limits.config()
	eng := newEngine(o.Handler, engineOptions{Logger: o.Logger, Listen: listen, TaskIDPrefix: cl.Self().ID + ".", Telemetry: tel,
		MaxAnswer: limits.MaxAnswer, Scopes: o.Scopes})
	cfg := streamable.Config{
		Engine:       eng,
		Codec:        stateCodec{eng},
		Cluster:      cl,
		JSONResponse: o.JSONResponse,
		MaxBodyBytes: o.MaxBodyBytes,
		Allowed:      func(r *http.Request) bool { return rule.Check(r) == nil },
		Identity:     o.Identity,
		Authorize:    o.Authorize,
		Scopes:       o.Scopes,
		StepUp:       stepUpWriter(o),
		Attrs:        o.Attrs,
		Logger:       o.Logger,
		WriteTimeout: o.WriteTimeout,
		KeepAlive:    o.KeepAlive,
		MaxListeners: listen.MaxStreams,
		Limits:       limits,
		Standalone:   standalone,
	}
	if tel != nil {
		cfg.Observer = observer{tel}
	}
	if s := o.Sessions; s != nil {
		cfg.Sessions = s.config()
	}
	t := streamable.New(cfg)
	return &Endpoint{Handler: t, t: t, cluster: cl}
}

// Ready reports whether the endpoint should be sent new requests, for a
// readiness probe (such as an app's /readyz, next to the checks of the
// app's own stores): [ErrDraining] from the moment Drain or Shutdown is
// called, the store's error while Options.Cluster has a Healthy method
// (mcpredis's pings Redis) and it fails, nil otherwise. ctx bounds the
// store's check: give it a deadline of about a second, so that a store
// that does not answer at all turns the probe 503 in that second.
//
// Pitfall: it is readiness, not liveness. A store that is down makes
// every replica unready at once; a liveness probe that restarted them
// for it would not bring the store back.
func (e *Endpoint) Ready(ctx context.Context) error {
	if e.t.Draining() {
		return ErrDraining
	}
	hc, ok := e.cluster.(cluster.HealthChecker)
	if !ok {
		return nil
	}
	// The check runs apart, so that a store client that overruns ctx
	// (a read timeout longer than the probe's) cannot hold the probe up.
	done := make(chan error, 1)
	go func() { done <- hc.Healthy(ctx) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("mcp: the session store does not answer: %w", err)
	}
	return nil
}

// Drain makes [Endpoint.Ready] report [ErrDraining] while the endpoint
// goes on serving every request as before: call it when the process is
// told to stop, wait for the balancer to notice (a few of its probe
// periods), then call Shutdown. Shutdown drains too.
func (e *Endpoint) Drain() { e.t.Drain() }

// Shutdown stops the endpoint, bounded by ctx at every step, whatever
// the session store does. Call it when the server shuts down, before
// http.Server.Shutdown, so that event streams do not keep the server
// waiting. In order:
//
//  1. Ready reports ErrDraining. A request of a session that would start
//     something (a call, a stream, a new session, a DELETE) is answered
//     503 with Retry-After: 1 and Connection: close, so that its retry
//     reaches another replica; a client's answers to server→client
//     requests and its notifications (a cancellation) still reach the
//     calls that run. With a Cluster, this replica no longer takes a
//     session over or relays to its owner: it answers 503 the same way.
//  2. At once: with a Cluster, every session is released in the store
//     (the next request of each, on any replica, takes it over with its
//     record, saved state and GET stream log); the sessions' GET streams
//     and subscriptions/listen streams end (their clients reconnect);
//     the session calls in flight run on, and their answers go out.
//  3. When those calls are done, or ctx is about to end (a tenth of the
//     time left before its deadline, at most a second), a call still
//     running is cancelled: its client gets the JSON-RPC error -32603
//     "Request cancelled" on its POST (as JSON, or the last event of its
//     stream) if the connection is still there. Then every session ends
//     here (SessionOptions.OnClose hears CloseShutdown). Without a
//     Cluster, later requests for the sessions get 404. Pitfall: a ctx
//     without a deadline leaves no time for those answers when it is
//     cancelled.
//
// It returns nil when every session was released and every call
// finished. Otherwise the error says what was not, wrapping ctx's error
// or the store's. What a shutdown cut short loses is what a crash loses:
// sessions the store did not hear released are taken over once this
// replica's lease lapses (mcpredis.Options.ReplicaTTL after its last
// heartbeat, at once when its Close reached Redis), and the calls
// cancelled, with their streams and server→client requests, are gone; a
// stateful call that finished after another replica took its session
// over keeps its answer, but not its new state.
//
// Requests without a session (2026-07-28, an endpoint without sessions)
// are plain requests: http.Server.Shutdown waits for them, and
// cancelling their base context (http.Server.BaseContext) cancels them.
// The endpoint stops hearing the cluster and its handler's changes:
// Shutdown is its last call.
func (e *Endpoint) Shutdown(ctx context.Context) error { return e.t.Shutdown(ctx) }

// Sessions returns how many sessions are live (0 without sessions).
func (e *Endpoint) Sessions() int { return e.t.Sessions() }

// config is o with the defaults filled in, for the transport.
func (o *SessionOptions) config() *streamable.SessionConfig {
	c := &streamable.SessionConfig{
		IdleTimeout:    o.IdleTimeout,
		MaxSessions:    o.MaxSessions,
		QueueSize:      o.QueueSize,
		RequestTimeout: o.RequestTimeout,
		Retry:          o.Retry,
		ResumeGrace:    o.ResumeGrace,
		StreamEvents:   o.StreamEvents,
		OnOpen:         o.OnOpen,
	}
	if fn := o.OnClose; fn != nil {
		c.OnClose = func(id string, reason streamable.CloseReason) { fn(id, CloseReason(reason)) }
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 30 * time.Minute
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = 100_000
	}
	if c.QueueSize <= 0 {
		c.QueueSize = 64
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = 5 * time.Minute
	}
	if c.Retry <= 0 {
		c.Retry = time.Second
	}
	if c.ResumeGrace <= 0 {
		c.ResumeGrace = 10 * time.Second
	}
	if c.StreamEvents <= 0 {
		c.StreamEvents = 128
	}
	return c
}

// stateCodec saves the handler state of sessions that move between
// replicas: through the handler's StateCodec, or nothing to save for a
// handler that keeps no state.
type stateCodec struct{ e *engine }

func (c stateCodec) EncodeState(state any) ([]byte, bool, error) {
	if c.e.stateless {
		return nil, true, nil
	}
	codec, ok := c.e.h.(StateCodec)
	if !ok {
		return nil, false, nil
	}
	b, err := codec.EncodeState(state)
	return b, err == nil, err
}

func (c stateCodec) DecodeState(data []byte) (any, error) {
	if codec, ok := c.e.h.(StateCodec); ok {
		return codec.DecodeState(data)
	}
	return nil, errNoCodec
}

func (c stateCodec) Movable() bool {
	_, ok := c.e.h.(StateCodec)
	return ok && !c.e.stateless
}
