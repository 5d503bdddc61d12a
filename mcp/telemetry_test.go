package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/saguaro-go/saguaro/internal/version"
	"github.com/saguaro-go/saguaro/mcp/cluster"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// otelRecorder holds the SDK side of a test: spans in memory, metrics on
// demand.
type otelRecorder struct {
	spans  *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newOtelRecorder(t testing.TB) *otelRecorder {
	r := &otelRecorder{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader()}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(r.spans))
	r.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	t.Cleanup(func() {
		_ = r.tp.Shutdown(context.Background())
		_ = r.mp.Shutdown(context.Background())
	})
	return r
}

func (r *otelRecorder) telemetry() *Telemetry {
	return &Telemetry{TracerProvider: r.tp, MeterProvider: r.mp}
}

// span waits for the one ended span named name and returns it.
func (r *otelRecorder) span(t testing.TB, name string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	eventually(t, func() bool {
		found = found[:0]
		for _, s := range r.spans.GetSpans() {
			if s.Name == name {
				found = append(found, s)
			}
		}
		return len(found) > 0
	}, "no span %q", name)
	require.Len(t, found, 1, "spans named %q", name)
	return found[0]
}

// attrMap maps a span's attributes by key.
func attrMap(kv []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, a := range kv {
		m[string(a.Key)] = a.Value.String()
	}
	return m
}

// telemetryFixture is the transport tests' server with two more tools
// and telemetry on, behind a middleware that starts an HTTP span the way
// otelhttp does.
func telemetryFixture(t *testing.T) (*tserver, *otelRecorder, *fixture) {
	t.Helper()
	rec := newOtelRecorder(t)
	f := newFixture(t)
	require.NoError(t, AddTool(f.srv, &Tool{Name: "fail"}, func(ctx context.Context, r *CallToolRequest, in fixtureArgs) (string, error) {
		return "", errors.New("the tool failed")
	}))
	lg, buf := quietLogger()
	ep := Controller(&Options{Handler: f.srv, Sessions: &SessionOptions{}, Logger: lg, Telemetry: rec.telemetry()})
	httpTracer := rec.tp.Tracer("http")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, span := httpTracer.Start(r.Context(), "HTTP "+r.Method, trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		ep.ServeHTTP(w, r.WithContext(ctx))
	}))
	ts := &tserver{t: t, ep: ep, srv: srv, url: srv.URL + "/mcp", hc: srv.Client(), log: buf}
	t.Cleanup(func() {
		ts.endAll()
		srv.CloseClientConnections()
		srv.Close()
	})
	return ts, rec, f
}

const (
	clientTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpan   = "00f067aa0ba902b7"
	clientParent = "00-" + clientTrace + "-" + clientSpan + "-01"
)

func TestTelemetryLegacySpans(t *testing.T) {
	t.Parallel()
	ts, rec, f := telemetryFixture(t)
	sid := ts.open("2025-11-25", clientCapsAll)

	init := rec.span(t, "initialize")
	assert.Equal(t, trace.SpanKindServer, init.SpanKind)
	assert.Equal(t, instrumentationName, init.InstrumentationScope.Name)
	assert.Equal(t, version.Version, init.InstrumentationScope.Version, "the scope names the library's release")
	a := attrMap(init.Attributes)
	assert.Equal(t, "initialize", a["mcp.method.name"])
	assert.Equal(t, "0", a["jsonrpc.request.id"])
	assert.Equal(t, "tcp", a["network.transport"])
	assert.Equal(t, "HTTP POST", spanName(rec, init.Parent.SpanID()), "initialize is a child of its HTTP request's span")

	inited := rec.span(t, "notifications/initialized")
	a = attrMap(inited.Attributes)
	assert.NotContains(t, a, "jsonrpc.request.id", "a notification has no id")
	assert.Equal(t, sid, a["mcp.session.id"])

	t.Run("tool call with trace context in _meta", func(t *testing.T) {
		body := req("5", "tools/call", `{"name":"echo","arguments":{"text":"hi"},"_meta":{"traceparent":"`+clientParent+`","tracestate":"k=v"}}`)
		m := ts.call(sid, body)
		require.Nil(t, m.Error)
		s := rec.span(t, "tools/call echo")
		assert.Equal(t, clientTrace, s.SpanContext.TraceID().String())
		assert.Equal(t, clientSpan, s.Parent.SpanID().String(), "the parent is _meta's")
		assert.True(t, s.Parent.IsRemote())
		assert.Equal(t, "k=v", s.SpanContext.TraceState().String())
		require.Len(t, s.Links, 1, "the HTTP request's span is linked")
		assert.Equal(t, "HTTP POST", spanName(rec, s.Links[0].SpanContext.SpanID()))
		a := attrMap(s.Attributes)
		assert.Equal(t, map[string]string{
			"mcp.method.name": "tools/call", "network.transport": "tcp", "mcp.protocol.version": "2025-11-25",
			"gen_ai.tool.name": "echo", "gen_ai.operation.name": "execute_tool", "jsonrpc.request.id": "5",
			"mcp.session.id": sid,
		}, a)
		assert.Equal(t, codes.Unset, s.Status.Code)
	})

	t.Run("tool error", func(t *testing.T) {
		m := ts.call(sid, toolCall("6", "fail", `{}`))
		require.True(t, m.isToolError(t))
		s := rec.span(t, "tools/call fail")
		assert.Equal(t, "tool_error", attrMap(s.Attributes)["error.type"])
		assert.NotContains(t, attrMap(s.Attributes), "rpc.response.status_code")
		assert.Equal(t, codes.Error, s.Status.Code)
		assert.Equal(t, "HTTP POST", spanName(rec, s.Parent.SpanID()), "without _meta the HTTP span is the parent")
	})

	t.Run("JSON-RPC error", func(t *testing.T) {
		m := ts.call(sid, toolCall("7", "nosuch", `{}`))
		require.NotNil(t, m.Error)
		s := rec.span(t, "tools/call nosuch")
		a := attrMap(s.Attributes)
		assert.Equal(t, "-32602", a["error.type"])
		assert.Equal(t, "-32602", a["rpc.response.status_code"])
		assert.Equal(t, codes.Error, s.Status.Code)
		assert.Equal(t, m.Error.Message, s.Status.Description)
	})

	t.Run("panicking tool", func(t *testing.T) {
		m := ts.call(sid, toolCall("8", "panic", `{}`))
		require.NotNil(t, m.Error)
		s := rec.span(t, "tools/call panic")
		assert.Equal(t, "-32603", attrMap(s.Attributes)["error.type"])
		assert.Equal(t, codes.Error, s.Status.Code)
		require.Len(t, s.Events, 1)
		assert.Equal(t, "exception", s.Events[0].Name)
		assert.Equal(t, "secret-panic-detail", attrMap(s.Events[0].Attributes)["exception.message"])
	})

	t.Run("cancellation", func(t *testing.T) {
		done := make(chan *http.Response, 1)
		go func() { done <- ts.post(sid, toolCall("9", "block", `{}`)) }()
		<-f.started
		readEmpty(t, ts.post(sid, note("notifications/cancelled", `{"requestId":9}`)), http.StatusAccepted)
		resp := <-done
		resp.Body.Close()
		s := rec.span(t, "tools/call block")
		assert.Equal(t, codes.Error, s.Status.Code)
		assert.Equal(t, "Request cancelled", s.Status.Description)
		assert.Equal(t, "-32603", attrMap(s.Attributes)["error.type"])
		c := rec.span(t, "notifications/cancelled")
		assert.Equal(t, codes.Unset, c.Status.Code)
	})

	t.Run("resource", func(t *testing.T) {
		m := ts.call(sid, req("10", "resources/read", `{"uri":"test://watched"}`))
		require.Nil(t, m.Error)
		s := rec.span(t, "resources/read")
		assert.Equal(t, "test://watched", attrMap(s.Attributes)["mcp.resource.uri"])
	})

	t.Run("every method", func(t *testing.T) {
		for i, c := range []struct{ method, params string }{
			{"ping", ""}, {"tools/list", ""}, {"resources/list", ""}, {"resources/templates/list", ""},
			{"prompts/list", ""}, {"logging/setLevel", `{"level":"info"}`},
		} {
			m := ts.call(sid, req(fmt.Sprint(100+i), c.method, c.params))
			s := rec.span(t, c.method)
			a := attrMap(s.Attributes)
			assert.Equal(t, c.method, a["mcp.method.name"])
			assert.Equal(t, fmt.Sprint(100+i), a["jsonrpc.request.id"])
			if m.Error != nil {
				assert.Equal(t, fmt.Sprint(m.Error.Code), a["error.type"], c.method)
			} else {
				assert.NotContains(t, a, "error.type", c.method)
			}
		}
	})
}

// spanName is the name of the ended span with id, "" when none.
func spanName(rec *otelRecorder, id trace.SpanID) string {
	for _, s := range rec.spans.GetSpans() {
		if s.SpanContext.SpanID() == id {
			return s.Name
		}
	}
	return ""
}

func TestTelemetryServerToClient(t *testing.T) {
	t.Parallel()
	ts, rec, _ := telemetryFixture(t)
	sid := ts.open("2025-11-25", clientCapsAll)
	s := openStream(t, ts.post(sid, toolCallToken("2", "progress", `{"n":1}`, `"tok"`)))
	s.priming()
	msgs := s.rest()
	require.Len(t, msgs, 2)
	require.Equal(t, "notifications/progress", msgs[0].Method)
	var p struct {
		Meta struct{ Traceparent string } `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(msgs[0].Params, &p))
	call := rec.span(t, "tools/call progress")
	prog := rec.span(t, "notifications/progress")
	assert.Equal(t, trace.SpanKindClient, prog.SpanKind)
	assert.Equal(t, call.SpanContext.SpanID(), prog.Parent.SpanID(), "the notification's span is a child of the call's")
	assert.Equal(t, fmt.Sprintf("00-%s-%s-01", prog.SpanContext.TraceID(), prog.SpanContext.SpanID()), p.Meta.Traceparent)

	st := openStream(t, ts.post(sid, toolCall("3", "sample", `{"text":"hi"}`)))
	st.priming()
	q := answerOn(t, ts, sid, st, "sampling/createMessage", `{"role":"assistant","content":{"type":"text","text":"HELLO"},"model":"m1"}`)
	st.rest()
	require.NoError(t, json.Unmarshal(q.Params, &p))
	sample := rec.span(t, "sampling/createMessage")
	assert.Equal(t, rec.span(t, "tools/call sample").SpanContext.SpanID(), sample.Parent.SpanID())
	assert.Equal(t, fmt.Sprintf("00-%s-%s-01", sample.SpanContext.TraceID(), sample.SpanContext.SpanID()), p.Meta.Traceparent)
	assert.Equal(t, codes.Unset, sample.Status.Code)
}

func TestTelemetryModernEra(t *testing.T) {
	t.Parallel()
	ts, rec, _ := telemetryFixture(t)
	body := `{"jsonrpc":"2.0","id":"m1","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"traceparent":"` + clientParent + `"}}}`
	resp := ts.post("", body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "echo")
	m := readJSON(t, resp, http.StatusOK)
	require.Nil(t, m.Error, "%s", m.Result)
	s := rec.span(t, "tools/call echo")
	a := attrMap(s.Attributes)
	assert.Equal(t, "2026-07-28", a["mcp.protocol.version"])
	assert.Equal(t, "m1", a["jsonrpc.request.id"])
	assert.NotContains(t, a, "mcp.session.id")
	assert.Equal(t, clientTrace, s.SpanContext.TraceID().String())
	assert.Equal(t, clientSpan, s.Parent.SpanID().String())
}

func TestTelemetryMetrics(t *testing.T) {
	t.Parallel()
	ts, rec, _ := telemetryFixture(t)
	sid := ts.open("2025-11-25", clientCapsAll)
	for i := range 3 {
		ts.call(sid, toolCall(fmt.Sprint(i+1), "echo", `{"text":"x"}`))
	}
	ts.call(sid, toolCall("9", "fail", `{}`))

	var rm metricdata.ResourceMetrics
	require.NoError(t, rec.reader.Collect(context.Background(), &rm))
	var op *metricdata.Metrics
	for _, sm := range rm.ScopeMetrics {
		for i := range sm.Metrics {
			if sm.Metrics[i].Name == "mcp.server.operation.duration" {
				op = &sm.Metrics[i]
				assert.Equal(t, instrumentationName, sm.Scope.Name)
				assert.Equal(t, version.Version, sm.Scope.Version, "the scope names the library's release")
			}
		}
	}
	require.NotNil(t, op)
	assert.Equal(t, "s", op.Unit)
	h, ok := op.Data.(metricdata.Histogram[float64])
	require.True(t, ok)
	counts := map[string]uint64{}
	for _, dp := range h.DataPoints {
		tool, _ := dp.Attributes.Value("gen_ai.tool.name")
		et, _ := dp.Attributes.Value("error.type")
		method, _ := dp.Attributes.Value("mcp.method.name")
		_, hasID := dp.Attributes.Value("jsonrpc.request.id")
		assert.False(t, hasID, "no per-request attribute on a metric")
		counts[method.AsString()+" "+tool.AsString()+" "+et.AsString()] += dp.Count
		assert.Greater(t, dp.Sum, 0.0)
	}
	assert.Equal(t, uint64(3), counts["tools/call echo "])
	assert.Equal(t, uint64(1), counts["tools/call fail tool_error"])
	assert.Equal(t, uint64(1), counts["initialize  "])

	// Sessions and streams open, then a session's duration once it ends.
	ctx, cancel := context.WithCancel(context.Background())
	st := openStream(t, ts.get(ctx, sid))
	st.priming()
	assert.Equal(t, int64(1), rec.sum(t, "mcp.server.session.active"))
	assert.Equal(t, int64(1), rec.sum(t, "mcp.server.stream.active"))
	cancel()
	st.close()
	eventually(t, func() bool { return rec.sum(t, "mcp.server.stream.active") == 0 }, "the stream is still counted")
	readEmpty(t, ts.del(sid), http.StatusNoContent)
	assert.Equal(t, int64(0), rec.sum(t, "mcp.server.session.active"))
	m := rec.metric(t, "mcp.server.session.duration")
	assert.Equal(t, "s", m.Unit)
	sd, ok := m.Data.(metricdata.Histogram[float64])
	require.True(t, ok)
	require.Len(t, sd.DataPoints, 1)
	assert.Equal(t, uint64(1), sd.DataPoints[0].Count)
	v, _ := sd.DataPoints[0].Attributes.Value("mcp.protocol.version")
	assert.Equal(t, "2025-11-25", v.AsString())
}

// metric collects the metrics and returns the one named name.
func (r *otelRecorder) metric(t testing.TB, name string) metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.reader.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m
			}
		}
	}
	require.FailNow(t, "no metric "+name)
	return metricdata.Metrics{}
}

// sum is an integer sum metric's total over its data points.
func (r *otelRecorder) sum(t testing.TB, name string) int64 {
	t.Helper()
	s, ok := r.metric(t, name).Data.(metricdata.Sum[int64])
	require.True(t, ok, name)
	var n int64
	for _, dp := range s.DataPoints {
		n += dp.Value
	}
	return n
}

// TestTelemetryOffCostsNothing: without a provider, Dispatch allocates
// exactly what the engine's own dispatch does; with metrics too (their
// attribute sets are built once); tracing allocates its spans.
func TestTelemetryOffCostsNothing(t *testing.T) {
	srv := NewServer(Implementation{Name: "t", Version: "1"}, nil)
	require.NoError(t, AddTool(srv, &Tool{Name: "echo"}, func(ctx context.Context, r *CallToolRequest, in EchoIn) (string, error) {
		return in.Text, nil
	}))
	tel, err := newTelemetry(&Telemetry{}, transportTCP)
	require.NoError(t, err)
	require.Nil(t, tel, "a Telemetry with no provider is off")
	off := newEngine(srv, engineOptions{})
	rec := newOtelRecorder(t)
	engineWith := func(o *Telemetry) *engine {
		tel, err := newTelemetry(o, transportTCP)
		require.NoError(t, err)
		return newEngine(srv, engineOptions{Telemetry: tel})
	}
	metrics := engineWith(&Telemetry{MeterProvider: rec.mp})
	traced := engineWith(&Telemetry{MeterProvider: rec.mp, TracerProvider: sdktrace.NewTracerProvider()})
	params := json.RawMessage(`{"name":"echo","arguments":{"text":"hello"}}`)
	run := func(dispatch func(context.Context, *protocol.Call, any) protocol.Reply) float64 {
		return testing.AllocsPerRun(500, func() {
			call := protocol.Call{Method: "tools/call", ID: wire.Int(1), Params: params, Revision: protocol.Rev20251125}
			r := dispatch(context.Background(), &call, nil)
			require.Nil(t, r.Err)
			_ = off.AppendReply(nil, call.ID, r)
		})
	}
	inner, outer, withMetrics, withTraces := run(off.dispatch), run(off.Dispatch), run(metrics.Dispatch), run(traced.Dispatch)
	t.Logf("allocations per tools/call: engine %.0f, Dispatch without telemetry %.0f, with metrics %.0f, with metrics and traces %.0f",
		inner, outer, withMetrics, withTraces)
	assert.Equal(t, inner, outer)
	assert.Equal(t, inner, withMetrics)
	assert.Greater(t, withTraces, outer, "the measure sees what telemetry adds")

	// A list change sent outside a call is the very message, and costs
	// nothing, unless something traces it.
	change := []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	for _, e := range []*engine{off, metrics} {
		allocs := testing.AllocsPerRun(100, func() {
			out, end := e.TraceChange(context.Background(), protocol.Rev20251125, "sess", change)
			if end != nil || &out[0] != &change[0] {
				t.Error("an untraced change was copied or given a span")
			}
		})
		assert.Zero(t, allocs)
	}
	out, end := traced.TraceChange(context.Background(), protocol.Rev20251125, "sess", change)
	require.NotNil(t, end)
	end()
	assert.Contains(t, string(out), `"traceparent":"00-`)
	assert.NotContains(t, string(change), "traceparent", "the shared message is left as it was")
}

// TestTelemetryRelayIsOneTrace: three replicas, each with its own tracer
// provider and exporter; a session owned by the first, called through
// the other two. Each relayed call is one trace: the relaying replica's
// span a child of the client's, the owner's span a child of the relay's.
func TestTelemetryRelayIsOneTrace(t *testing.T) {
	store := cluster.NewMemory()
	a, b, c := startTelReplica(t, store), startTelReplica(t, store), startTelReplica(t, store)
	sid := a.ts.open("2025-11-25", "{}")

	// Through b, with the client's trace context in _meta.
	body := req("1", "tools/call", `{"name":"echo","arguments":{"text":"via b"},"_meta":{"traceparent":"`+clientParent+`"}}`)
	assert.Equal(t, "via b", b.ts.call(sid, body).text(t))
	relay := b.rec.span(t, "tools/call echo")
	assert.Equal(t, trace.SpanKindClient, relay.SpanKind)
	assert.Equal(t, clientTrace, relay.SpanContext.TraceID().String())
	assert.Equal(t, clientSpan, relay.Parent.SpanID().String(), "the relay continues the client's trace")
	assert.Equal(t, "m1", attrMap(relay.Attributes)["saguaro.relay.owner"])
	owner := a.rec.span(t, "tools/call echo")
	assert.Equal(t, trace.SpanKindServer, owner.SpanKind)
	assert.Equal(t, clientTrace, owner.SpanContext.TraceID().String(), "one trace")
	assert.Equal(t, relay.SpanContext.SpanID(), owner.Parent.SpanID(), "the owner's span is a child of the relay's")
	assert.Equal(t, sid, attrMap(owner.Attributes)["mcp.session.id"])

	// Through c, with no trace context at all: c's relay span starts the
	// trace, the owner's continues it.
	assert.Equal(t, "via c", c.ts.call(sid, toolCall("2", "echo", `{"text":"via c"}`)).text(t))
	relay = c.rec.span(t, "tools/call echo")
	assert.False(t, relay.Parent.IsValid(), "a root span")
	var owned []tracetest.SpanStub
	eventually(t, func() bool {
		owned = owned[:0]
		for _, s := range a.rec.spans.GetSpans() {
			if s.SpanContext.TraceID() == relay.SpanContext.TraceID() {
				owned = append(owned, s)
			}
		}
		return len(owned) > 0
	}, "the owner has no span in the relay's trace")
	require.Len(t, owned, 1)
	assert.Equal(t, "tools/call echo", owned[0].Name)
	assert.Equal(t, relay.SpanContext.SpanID(), owned[0].Parent.SpanID())
}

// TestTelemetryStdio: the stdio transport reports the same spans, with
// network.transport "pipe" and the client's _meta trace context as parent.
func TestTelemetryStdio(t *testing.T) {
	rec := newOtelRecorder(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	lg, _ := quietLogger()
	done := make(chan error, 1)
	go func() {
		err := ServeConn(context.Background(), newFixture(t).srv, newTestLines(inR, outW, 1<<16),
			&ConnOptions{Logger: lg, Telemetry: rec.telemetry()})
		outW.Close()
		done <- err
	}()
	out := bufio.NewReader(outR)
	send := func(line string) {
		_, err := io.WriteString(inW, line+"\n")
		require.NoError(t, err)
	}
	read := func() string {
		line, err := out.ReadString('\n')
		require.NoError(t, err)
		return line
	}
	send(initBody("2025-11-25", "{}"))
	read()
	send(note("notifications/initialized", ""))
	send(req("2", "tools/call", `{"name":"echo","arguments":{"text":"pipe"},"_meta":{"traceparent":"`+clientParent+`"}}`))
	assert.Contains(t, read(), `"pipe"`)
	require.NoError(t, inW.Close())
	go func() { _, _ = io.Copy(io.Discard, out) }()
	require.NoError(t, <-done)

	s := rec.span(t, "tools/call echo")
	a := attrMap(s.Attributes)
	assert.Equal(t, "pipe", a["network.transport"])
	assert.Equal(t, "2", a["jsonrpc.request.id"])
	assert.Equal(t, clientSpan, s.Parent.SpanID().String())
	assert.Equal(t, "pipe", attrMap(rec.span(t, "initialize").Attributes)["network.transport"])
}

// TestTelemetryQueueOverflow: a stateful call refused for a full queue is
// counted.
func TestTelemetryQueueOverflow(t *testing.T) {
	t.Parallel()
	rec := newOtelRecorder(t)
	h := newSlowHandler()
	ts := startServer(t, &Options{Handler: h, Sessions: &SessionOptions{QueueSize: 1}, Telemetry: rec.telemetry()})
	sid := ts.open("2025-11-25", "{}")
	answers := make(chan rpcMsg, 4)
	send := func(id string) {
		go func() { answers <- readJSON(t, ts.post(sid, req(id, "logging/setLevel", `{"level":"info"}`)), 200) }()
	}
	send("1")
	require.Equal(t, "1", <-h.entered)
	send("2")
	eventually(t, func() bool { info, _ := ts.session(sid); return info.Waiting == 1 }, "one call queued")
	m := readError(t, ts.post(sid, req("3", "logging/setLevel", `{"level":"info"}`)), 200, -32603)
	require.Contains(t, m.Error.Message, "Server overloaded")
	assert.Equal(t, int64(1), rec.sum(t, "mcp.server.queue.overflows"))
	h.release <- struct{}{}
	require.Equal(t, "2", <-h.entered)
	h.release <- struct{}{}
	for range 2 {
		assert.Nil(t, (<-answers).Error)
	}
}
