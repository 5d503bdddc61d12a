package mcp

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/saguaro-go/saguaro/internal/origin"
	"github.com/saguaro-go/saguaro/mcp/cluster"
	"github.com/saguaro-go/saguaro/mcp/internal/streamable"
)

// Endpoint is the MCP endpoint [Controller] returns: an http.Handler to
// mount on a router, plus Shutdown.
type Endpoint struct {
	http.Handler
	t *streamable.Transport
}

// Controller returns the MCP endpoint, the Streamable HTTP transport of
// every revision, as an http.Handler ready to mount on a chi router:
//
//	r.Mount("/mcp", mcp.Controller(&mcp.Options{Handler: srv}))
//
// It panics when opts is nil, has no Handler, lists a malformed origin
// or host, or has a Telemetry whose meter refuses an instrument: a
// configuration mistake that must stop the program at start-up, not fail
// every request.
//
// Requests are checked in this order, each failure answered at once:
// method (405 with Allow), Origin and Host (403), the caller's calls in
// flight (429), session (400 missing, 404 unknown or bound to another
// identity), headers (406 Accept, 415 Content-Type, 400
// MCP-Protocol-Version), body (413 over the limit, 408 too slow, 400 for
// a body that is not JSON-RPC). The package documentation has the full
// table; Options.Limits the bounds on each caller.
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
	if cl == nil {
		cl = cluster.NewMemory().Join("")
	}
	listen := o.Listen.withDefaults()
	tel, err := newTelemetry(o.Telemetry, transportTCP)
	if err != nil {
		panic("mcp: Controller: " + err.Error())
	}
	limits := o.Limits.config()
	eng := newEngine(o.Handler, engineOptions{Logger: o.Logger, Listen: listen, TaskIDPrefix: cl.Self().ID + ".", Telemetry: tel,
		MaxAnswer: limits.MaxAnswer})
	cfg := streamable.Config{
		Engine:       eng,
		Codec:        stateCodec{eng},
		Cluster:      cl,
		JSONResponse: o.JSONResponse,
		MaxBodyBytes: o.MaxBodyBytes,
		Allowed:      func(r *http.Request) bool { return rule.Check(r) == nil },
		Identity:     o.Identity,
		Authorize:    o.Authorize,
		Attrs:        o.Attrs,
		Logger:       o.Logger,
		WriteTimeout: o.WriteTimeout,
		KeepAlive:    o.KeepAlive,
		MaxListeners: listen.MaxStreams,
		Limits:       limits,
	}
	if tel != nil {
		cfg.Observer = observer{tel}
	}
	if s := o.Sessions; s != nil {
		cfg.Sessions = s.config()
	}
	t := streamable.New(cfg)
	return &Endpoint{Handler: t, t: t}
}

// Shutdown ends every session (SessionOptions.OnClose hears
// CloseShutdown): their calls are cancelled, their open streams end, and
// later requests for them get 404. Call it when the server shuts down,
// before http.Server.Shutdown, so that event streams do not keep the
// server waiting. ctx bounds the whole.
//
// With a Cluster, sessions are not ended for the client: each is released
// in the store, and the client's next request, on whichever replica,
// takes it over (with its record, saved state and GET stream log). The
// endpoint stops hearing the cluster and its handler's changes: Shutdown
// is its last call.
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
