package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/saguaro-go/saguaro/internal/jsonstr"
	"github.com/saguaro-go/saguaro/internal/version"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/streamable"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// Telemetry turns on OpenTelemetry traces and metrics, named by the
// OpenTelemetry semantic conventions for MCP ([Options.Telemetry],
// [ConnOptions.Telemetry]). A nil *Telemetry, the default, reports
// nothing and costs nothing; so does a nil provider, for its signal. To
// use the process's global providers, pass them:
//
//	Telemetry: &mcp.Telemetry{
//		TracerProvider: otel.GetTracerProvider(),
//		MeterProvider:  otel.GetMeterProvider(),
//	}
//
// Traces: a SERVER span for every request and notification a client
// sends, named "{mcp.method.name} {target}" ("tools/call add_task",
// "prompts/get review", else the method alone), with mcp.method.name,
// jsonrpc.request.id, mcp.session.id, mcp.protocol.version,
// gen_ai.tool.name and gen_ai.operation.name ("execute_tool"),
// gen_ai.prompt.name, mcp.resource.uri and network.transport. Its parent
// is the trace context in params._meta (traceparent, tracestate, baggage)
// when the client sent one, linked to the context of the transport (the
// HTTP request's span, from middleware such as otelhttp); else the
// transport's context. A JSON-RPC error sets error.type and
// rpc.response.status_code to its code and the span's status to its
// message (a cancelled call: "Request cancelled"; one past its deadline:
// "Request timed out"; a panicking handler: "Internal error", with an
// exception event); a tool's isError result sets error.type "tool_error".
// What the server sends the client during a call (sampling/createMessage,
// elicitation/create, roots/list, progress and log notifications) gets a
// CLIENT span, child of the call's, whose context is injected into the
// message's params._meta. So does each message it sends outside any
// call, once per client: the list changes and resource updates a legacy
// session hears (on its GET stream, spanned by the replica that owns the
// session, also when another replica announced the change; on stdio, on
// the connection), and what a subscriptions/listen stream sends (its
// acknowledgement, list changes, resource updates, notifications/tasks).
// Such a span is named by the method, with mcp.method.name,
// mcp.session.id (legacy sessions over HTTP), mcp.protocol.version,
// mcp.resource.uri (notifications/resources/updated) and
// network.transport. A change carries no context of its own, so the spans
// of a session's GET stream are roots; those of a connection are
// children of the context ServeConn was given; those of a
// subscriptions/listen stream are children of the listen request's _meta
// trace context, else of its transport's (the HTTP request's span), since
// the stream is that request's answer. Each span ends once its message is
// queued or written for the client. A session's GET stream keeps its
// messages with their trace context for a client that resumes it; the
// cluster's log keeps them as announced, so the messages a replica that
// took a session over replays from there have none.
//
// A request one replica relays to its session's owner carries the trace
// context in its HTTP headers: the owner's span is a child of the
// relaying replica's, so a relayed call is one trace.
//
// Metrics: the convention's mcp.server.operation.duration and
// mcp.server.session.duration histograms (seconds), and, in the same
// style, mcp.server.session.active (sessions open),
// mcp.server.stream.active (event streams open) and
// mcp.server.queue.overflows (stateful calls refused because their
// session's queue was full).
type Telemetry struct {
	// TracerProvider makes the spans; nil means no spans.
	TracerProvider trace.TracerProvider
	// MeterProvider makes the instruments; nil means no metrics.
	MeterProvider metric.MeterProvider
	// Propagator reads trace context from params._meta and relayed
	// requests' headers and writes it into server→client messages and
	// relays; nil means W3C Trace Context and Baggage.
	Propagator propagation.TextMapPropagator
}

// instrumentationName names the tracer and meter.
const instrumentationName = "github.com/saguaro-go/saguaro/mcp"

// Attribute values the convention defines.
const (
	errorTypeTool = "tool_error"
	opExecuteTool = "execute_tool"
	transportTCP  = "tcp"
	transportPipe = "pipe"
)

// telemetry is a Telemetry ready to record: its tracer and instruments.
// nil means off.
type telemetry struct {
	tracer    trace.Tracer // nil: no spans
	prop      propagation.TextMapPropagator
	transport string // network.transport

	metrics    bool
	sets       setCache
	opDuration mcpconv.ServerOperationDuration
	sessDur    mcpconv.ServerSessionDuration
	sessions   metric.Int64UpDownCounter
	streams    metric.Int64UpDownCounter
	overflows  metric.Int64Counter
}

// newTelemetry prepares t for a transport; nil when t turns nothing on.
func newTelemetry(t *Telemetry, transport string) (*telemetry, error) {
	if t == nil || (t.TracerProvider == nil && t.MeterProvider == nil) {
		return nil, nil
	}
	tel := &telemetry{prop: t.Propagator, transport: transport}
	if tel.prop == nil {
		tel.prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	if t.TracerProvider != nil {
		tel.tracer = t.TracerProvider.Tracer(instrumentationName, trace.WithInstrumentationVersion(version.Version))
	}
	if t.MeterProvider != nil {
		m := t.MeterProvider.Meter(instrumentationName, metric.WithInstrumentationVersion(version.Version))
		var err error
		if tel.opDuration, err = mcpconv.NewServerOperationDuration(m); err != nil {
			return nil, fmt.Errorf("mcp: telemetry: %w", err)
		}
		if tel.sessDur, err = mcpconv.NewServerSessionDuration(m); err != nil {
			return nil, fmt.Errorf("mcp: telemetry: %w", err)
		}
		if tel.sessions, err = m.Int64UpDownCounter("mcp.server.session.active",
			metric.WithDescription("MCP sessions open on the server."), metric.WithUnit("{session}")); err != nil {
			return nil, fmt.Errorf("mcp: telemetry: %w", err)
		}
		if tel.streams, err = m.Int64UpDownCounter("mcp.server.stream.active",
			metric.WithDescription("MCP event streams open on the server (session GET streams, call streams, subscriptions/listen)."),
			metric.WithUnit("{stream}")); err != nil {
			return nil, fmt.Errorf("mcp: telemetry: %w", err)
		}
		if tel.overflows, err = m.Int64Counter("mcp.server.queue.overflows",
			metric.WithDescription("MCP stateful calls refused because their session's queue was full."),
			metric.WithUnit("{call}")); err != nil {
			return nil, fmt.Errorf("mcp: telemetry: %w", err)
		}
		tel.metrics = true
	}
	return tel, nil
}

// metaCarrier is the trace context of a params._meta object, as the
// propagator reads and writes it.
type metaCarrier struct {
	traceparent, tracestate, baggage string
}

var _ propagation.TextMapCarrier = (*metaCarrier)(nil)

// Get implements propagation.TextMapCarrier.
func (c *metaCarrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.traceparent
	case "tracestate":
		return c.tracestate
	case "baggage":
		return c.baggage
	}
	return ""
}

// Set implements propagation.TextMapCarrier.
func (c *metaCarrier) Set(key, value string) {
	switch key {
	case "traceparent":
		c.traceparent = value
	case "tracestate":
		c.tracestate = value
	case "baggage":
		c.baggage = value
	}
}

// Keys implements propagation.TextMapCarrier.
func (c *metaCarrier) Keys() []string { return []string{"traceparent", "tracestate", "baggage"} }

// empty reports whether the carrier holds no trace context.
func (c *metaCarrier) empty() bool { return c.traceparent == "" && c.baggage == "" }

// readMeta fills c from a _meta object.
func (c *metaCarrier) readMeta(val []byte) {
	if len(val) == 0 || val[0] != '{' {
		return
	}
	_ = wire.EachMember(val, func(k, v []byte) error {
		var dst *string
		switch {
		case wire.KeyIs(k, "traceparent"):
			dst = &c.traceparent
		case wire.KeyIs(k, "tracestate"):
			dst = &c.tracestate
		case wire.KeyIs(k, "baggage"):
			dst = &c.baggage
		default:
			return nil
		}
		if s, ok := wire.Unquote(v); ok {
			*dst = s
		}
		return nil
	})
}

// callTarget is what a call's params say about what it is about.
type callTarget struct {
	name string // tool or prompt
	uri  string
	meta metaCarrier
}

// targetOf reads a call's tool or prompt name, resource URI and _meta
// trace context.
func targetOf(call *protocol.Call) callTarget {
	var t callTarget
	if call.Tool != nil && call.Method == "tools/call" {
		t.name = call.Tool.Name
		t.meta.readMeta(call.Tool.Meta)
		return t
	}
	_ = protocol.EachParamOn(call.Tape, call.Params, func(key, val []byte) *wire.Error {
		switch {
		case wire.KeyIs(key, "name"):
			t.name, _ = wire.Unquote(val)
		case wire.KeyIs(key, "uri"):
			t.uri, _ = wire.Unquote(val)
		case wire.KeyIs(key, "_meta"):
			t.meta.readMeta(val)
		}
		return nil
	})
	return t
}

// relayedKey marks a context whose span context came from a relaying
// replica's headers: it is the parent of the call's span even when
// params._meta has a trace context, which the relaying replica's span
// already continues.
type relayedKey struct{}

// requestID is jsonrpc.request.id: a string id as it is, a number in
// decimal.
func requestID(id wire.ID) string {
	if s, ok := id.StringValue(); ok {
		return s
	}
	return id.String()
}

// opKey is what an operation's metric attributes depend on.
type opKey struct {
	method, target string
	rev            Revision
	code           int // the JSON-RPC error's, 0 for none
	toolError      bool
}

// maxCachedSets bounds the attribute sets kept for reuse: tool names come
// from clients, and unknown ones must not grow the cache without end.
const maxCachedSets = 4096

// setCache keeps the metric options of each opKey, so that recording an
// operation builds no attribute set. Reads take no lock: the map is
// replaced, never changed, when a new key arrives (rarely, once the
// server's tools have been called).
type setCache struct {
	m  atomic.Pointer[map[opKey][]metric.RecordOption]
	mu sync.Mutex // serializes writers
}

// get returns k's options, false when they are not built yet.
func (c *setCache) get(k opKey) ([]metric.RecordOption, bool) {
	if m := c.m.Load(); m != nil {
		o, ok := (*m)[k]
		return o, ok
	}
	return nil, false
}

// put builds k's options from attrs and keeps them while there is room.
func (c *setCache) put(k opKey, attrs []attribute.KeyValue) []metric.RecordOption {
	o := []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	n := 0
	if old != nil {
		n = len(*old)
	}
	if n >= maxCachedSets {
		return o
	}
	m := make(map[opKey][]metric.RecordOption, n+1)
	if old != nil {
		for key, v := range *old {
			m[key] = v
		}
	}
	m[k] = o
	c.m.Store(&m)
	return o
}

// operationAttrs are the attributes of an operation's span and metric.
func (t *telemetry) operationAttrs(dst []attribute.KeyValue, k opKey) []attribute.KeyValue {
	dst = append(dst, semconv.McpMethodNameKey.String(k.method))
	if t.transport != "" {
		dst = append(dst, semconv.NetworkTransportKey.String(t.transport))
	}
	if k.rev < revEnd && k.method != "initialize" {
		dst = append(dst, semconv.McpProtocolVersionKey.String(k.rev.String()))
	}
	if k.target != "" {
		if k.method == "tools/call" {
			dst = append(dst, semconv.GenAIToolName(k.target), semconv.GenAIOperationNameExecuteTool)
		} else {
			dst = append(dst, semconv.GenAIPromptName(k.target))
		}
	}
	return dst
}

// errorAttrs are the attributes of an operation's outcome.
func errorAttrs(dst []attribute.KeyValue, k opKey) []attribute.KeyValue {
	switch {
	case k.code != 0:
		code := strconv.Itoa(k.code)
		dst = append(dst, semconv.ErrorTypeKey.String(code), semconv.RPCResponseStatusCode(code))
	case k.toolError:
		dst = append(dst, semconv.ErrorTypeKey.String(errorTypeTool))
	}
	return dst
}

// monoEpoch is where monoNow counts from.
var monoEpoch = time.Now()

// monoNow reads the monotonic clock alone: time.Now reads the wall clock
// too, which a duration does not need, and a clock read costs about
// 50 ns on a virtual machine.
func monoNow() time.Duration { return time.Since(monoEpoch) }

// dispatch serves call through next inside the call's span and records
// its duration.
func (t *telemetry) dispatch(ctx context.Context, call *protocol.Call, state any,
	next func(context.Context, *protocol.Call, any) protocol.Reply) protocol.Reply {
	var start time.Duration
	if t.metrics {
		start = monoNow()
	}
	k := opKey{method: call.Method, rev: Revision(call.Revision.OrDefault())}
	named := k.method == "tools/call" || k.method == "prompts/get"

	var span trace.Span
	if t.tracer != nil {
		tg := targetOf(call)
		if named {
			k.target = tg.name
		}
		var buf [10]attribute.KeyValue
		attrs := t.operationAttrs(buf[:0], k)
		if tg.uri != "" {
			attrs = append(attrs, semconv.McpResourceURI(tg.uri))
		}
		if !call.ID.IsZero() {
			attrs = append(attrs, semconv.JSONRPCRequestID(requestID(call.ID)))
		}
		if call.Session != "" {
			attrs = append(attrs, semconv.McpSessionID(call.Session))
		}
		name := k.method
		if k.target != "" {
			name = k.method + " " + k.target
		}
		parent := ctx
		opts := make([]trace.SpanStartOption, 0, 3)
		opts = append(opts, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
		if !tg.meta.empty() && ctx.Value(relayedKey{}) == nil {
			parent = t.prop.Extract(ctx, &tg.meta)
			if ambient := trace.SpanContextFromContext(ctx); ambient.IsValid() {
				opts = append(opts, trace.WithLinks(trace.Link{SpanContext: ambient}))
			}
		}
		ctx, span = t.tracer.Start(parent, name, opts...)
	}

	reply := next(ctx, call, state)
	if named && span == nil {
		// The engine read the name: no second walk over the params.
		k.target = reply.Target
	}

	if reply.Err != nil {
		k.code = reply.Err.Code
		if k.code == 0 {
			k.code = wire.InternalError
		}
	} else {
		k.toolError = reply.ToolError
	}
	if span != nil {
		if k.code != 0 || k.toolError {
			var buf [2]attribute.KeyValue
			span.SetAttributes(errorAttrs(buf[:0], k)...)
			if reply.Err != nil {
				span.SetStatus(codes.Error, reply.Err.Message)
			} else {
				span.SetStatus(codes.Error, errorTypeTool)
			}
		}
		span.End()
	}
	if t.metrics {
		opts, ok := t.sets.get(k)
		if !ok {
			opts = t.sets.put(k, errorAttrs(t.operationAttrs(nil, k), k))
		}
		t.opDuration.Inst().Record(ctx, (monoNow() - start).Seconds(), opts...)
	}
	return reply
}

// panicked records a handler's panic on the call's span.
func (t *telemetry) panicked(ctx context.Context, p any) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("exception", trace.WithAttributes(
			semconv.ExceptionType(fmt.Sprintf("%T", p)),
			semconv.ExceptionMessage(fmt.Sprint(p)),
		))
	}
}

// send wraps what the server sends the client during a call (a request
// when request is true, else a notification) in a CLIENT span, and
// injects its context into params._meta. end ends the span with the
// send's outcome.
func (t *telemetry) send(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, func(error)) {
	if t.tracer == nil {
		return params, func(error) {}
	}
	ctx, span := t.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(semconv.McpMethodNameKey.String(method)))
	var c metaCarrier
	t.prop.Inject(ctx, &c)
	params = injectMeta(params, &c)
	return params, func(err error) {
		var ir *InputRequiredError
		var je *wire.Error
		switch {
		case err == nil, errors.As(err, &ir):
		case errors.As(err, &je):
			code := strconv.Itoa(je.Code)
			span.SetAttributes(semconv.ErrorTypeKey.String(code), semconv.RPCResponseStatusCode(code))
			span.SetStatus(codes.Error, je.Message)
		default:
			span.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

// TraceChange implements protocol.Engine.
func (e *engine) TraceChange(ctx context.Context, rev protocol.Revision, session string, msg []byte) ([]byte, func()) {
	if e.tel == nil || e.tel.tracer == nil {
		return msg, nil
	}
	msg, span := e.tel.unprompted(ctx, rev, session, msg, true)
	if span == nil {
		return msg, nil
	}
	return msg, func() { span.End() }
}

// unprompted starts the CLIENT span of a notification the server sends
// outside any call (msg, a JSON-RPC notification), named by its method,
// and returns a copy of msg with the span's trace context in
// params._meta. A message that is no notification, or (changesOnly) no
// list change or resource update, is returned as it is, without a span.
// The tracer must be set.
func (t *telemetry) unprompted(ctx context.Context, rev protocol.Revision, session string, msg []byte,
	changesOnly bool) ([]byte, trace.Span) {
	var method string
	var params []byte
	request := false
	if len(msg) == 0 || msg[0] != '{' {
		return msg, nil
	}
	_ = wire.EachMember(msg, func(k, v []byte) error {
		switch {
		case wire.KeyIs(k, "method"):
			method, _ = wire.Unquote(v)
		case wire.KeyIs(k, "params"):
			params = v
		case wire.KeyIs(k, "id"):
			request = true
		}
		return nil
	})
	if method == "" || request {
		return msg, nil
	}
	if _, ok := protocol.ChangeOf(method, ""); changesOnly && !ok {
		return msg, nil
	}
	var buf [6]attribute.KeyValue
	attrs := append(buf[:0], semconv.McpMethodNameKey.String(method))
	if t.transport != "" {
		attrs = append(attrs, semconv.NetworkTransportKey.String(t.transport))
	}
	if v := rev.OrDefault().String(); v != "" {
		attrs = append(attrs, semconv.McpProtocolVersionKey.String(v))
	}
	if session != "" {
		attrs = append(attrs, semconv.McpSessionID(session))
	}
	if method == "notifications/resources/updated" && len(params) > 0 && params[0] == '{' {
		_ = wire.EachMember(params, func(k, v []byte) error {
			if wire.KeyIs(k, "uri") {
				if uri, ok := wire.Unquote(v); ok {
					attrs = append(attrs, semconv.McpResourceURI(uri))
				}
			}
			return nil
		})
	}
	ctx, span := t.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	var c metaCarrier
	t.prop.Inject(ctx, &c)
	if c.empty() {
		return msg, span
	}
	return wire.AppendNotification(nil, method, injectMeta(params, &c)), span
}

// errorType is error.type for an error that is no JSON-RPC error.
func errorType(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return "_OTHER"
}

// injectMeta returns params with c's trace context in its _meta object
// (created when absent; members already there are kept, and win).
func injectMeta(params json.RawMessage, c *metaCarrier) json.RawMessage {
	if c.empty() {
		return params
	}
	var meta []byte
	var rest [][2][]byte
	if len(params) > 0 && params[0] == '{' {
		_ = wire.EachMember(params, func(k, v []byte) error {
			if wire.KeyIs(k, "_meta") && len(v) > 0 && v[0] == '{' {
				meta = v
				return nil
			}
			rest = append(rest, [2][]byte{k, v})
			return nil
		})
	}
	var have metaCarrier
	have.readMeta(meta)
	out := make([]byte, 0, len(params)+len(c.traceparent)+len(c.tracestate)+len(c.baggage)+64)
	out = append(out, `{"_meta":{`...)
	n := 0
	add := func(key, val, had string) {
		if val == "" || had != "" {
			return
		}
		if n > 0 {
			out = append(out, ',')
		}
		out = jsonstr.AppendString(append(jsonstr.AppendString(out, key), ':'), val)
		n++
	}
	add("traceparent", c.traceparent, have.traceparent)
	add("tracestate", c.tracestate, have.tracestate)
	add("baggage", c.baggage, have.baggage)
	if inner := bytes.TrimSpace(meta[min(1, len(meta)):max(len(meta)-1, 0)]); len(inner) > 0 {
		if n > 0 {
			out = append(out, ',')
		}
		out = append(out, inner...)
	}
	out = append(out, '}')
	for _, kv := range rest {
		out = append(out, ',')
		out = append(out, kv[0]...)
		out = append(out, ':')
		out = append(out, kv[1]...)
	}
	return append(out, '}')
}

// observer is what telemetry hears of the Streamable HTTP transport.
type observer struct{ t *telemetry }

var _ streamable.Observer = observer{}

// revisionAttrs are a session metric's attributes.
func (o observer) revisionAttrs(rev protocol.Revision) metric.MeasurementOption {
	return metric.WithAttributes(semconv.McpProtocolVersion(Revision(rev.OrDefault()).String()),
		semconv.NetworkTransportKey.String(o.t.transport))
}

// SessionOpened implements streamable.Observer.
func (o observer) SessionOpened(rev protocol.Revision) {
	if o.t.metrics {
		o.t.sessions.Add(context.Background(), 1, o.revisionAttrs(rev))
	}
}

// SessionClosed implements streamable.Observer. A session that moved to
// another replica goes on there: its duration is not recorded here.
func (o observer) SessionClosed(rev protocol.Revision, d time.Duration, reason streamable.CloseReason) {
	if !o.t.metrics {
		return
	}
	o.t.sessions.Add(context.Background(), -1, o.revisionAttrs(rev))
	if reason != streamable.CloseReason(CloseMoved) {
		o.t.sessDur.Inst().Record(context.Background(), d.Seconds(), o.revisionAttrs(rev))
	}
}

// StreamOpened implements streamable.Observer.
func (o observer) StreamOpened() {
	if o.t.metrics {
		o.t.streams.Add(context.Background(), 1)
	}
}

// StreamClosed implements streamable.Observer.
func (o observer) StreamClosed() {
	if o.t.metrics {
		o.t.streams.Add(context.Background(), -1)
	}
}

// QueueOverflow implements streamable.Observer.
func (o observer) QueueOverflow() {
	if o.t.metrics {
		o.t.overflows.Add(context.Background(), 1)
	}
}

// attrRelayOwner names the replica a relayed request went to.
const attrRelayOwner = "saguaro.relay.owner"

// Relay implements streamable.Observer: a CLIENT span for the hop to the
// session's owner, named as the call's own span is, its parent the call's
// _meta trace context when present, else ctx's.
func (o observer) Relay(ctx context.Context, body []byte, owner string) (context.Context, func(http.Header), func(int)) {
	if o.t.tracer == nil {
		return ctx, nil, func(int) {}
	}
	var call protocol.Call
	if len(body) > 0 && body[0] == '{' {
		_ = wire.EachMember(body, func(k, v []byte) error {
			switch {
			case wire.KeyIs(k, "method"):
				call.Method, _ = wire.Unquote(v)
			case wire.KeyIs(k, "params"):
				call.Params = v
			}
			return nil
		})
	}
	tg := targetOf(&call)
	name := call.Method
	if name == "" {
		name = "relay"
	}
	attrs := []attribute.KeyValue{attribute.String(attrRelayOwner, owner)}
	if call.Method != "" {
		attrs = append(attrs, semconv.McpMethodNameKey.String(call.Method))
	}
	if tg.name != "" && (call.Method == "tools/call" || call.Method == "prompts/get") {
		name += " " + tg.name
	}
	parent := ctx
	if !tg.meta.empty() {
		parent = o.t.prop.Extract(ctx, &tg.meta)
	}
	ctx, span := o.t.tracer.Start(parent, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	inject := func(h http.Header) { o.t.prop.Inject(ctx, propagation.HeaderCarrier(h)) }
	return ctx, inject, func(status int) {
		if status >= http.StatusInternalServerError || status == 0 {
			code := strconv.Itoa(status)
			span.SetAttributes(semconv.ErrorTypeKey.String(code))
			span.SetStatus(codes.Error, http.StatusText(status))
		}
		span.End()
	}
}

// Relayed implements streamable.Observer.
func (o observer) Relayed(ctx context.Context, h http.Header) context.Context {
	rctx := o.t.prop.Extract(ctx, propagation.HeaderCarrier(h))
	if !trace.SpanContextFromContext(rctx).IsValid() {
		return ctx
	}
	return context.WithValue(rctx, relayedKey{}, true)
}
