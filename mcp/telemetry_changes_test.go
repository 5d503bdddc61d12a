package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/saguaro-go/saguaro/mcp/cluster"
)

// The spans of what the server sends outside any call: list changes and
// resource updates on legacy sessions' GET streams (one replica or
// several) and on stdio, and subscriptions/listen streams.

// traceparentOf is the traceparent in a message's params._meta.
func traceparentOf(t testing.TB, params json.RawMessage) string {
	t.Helper()
	var p struct {
		Meta struct{ Traceparent string } `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(params, &p), "%s", params)
	require.NotEmpty(t, p.Meta.Traceparent, "no trace context in %s", params)
	return p.Meta.Traceparent
}

// spanOf waits for the ended span whose context traceparent carries.
func (r *otelRecorder) spanOf(t testing.TB, traceparent string) tracetest.SpanStub {
	t.Helper()
	var found tracetest.SpanStub
	eventually(t, func() bool {
		for _, s := range r.spans.GetSpans() {
			if fmt.Sprintf("00-%s-%s-01", s.SpanContext.TraceID(), s.SpanContext.SpanID()) == traceparent {
				found = s
				return true
			}
		}
		return false
	}, "no span for %s", traceparent)
	return found
}

// named returns the ended spans named name.
func (r *otelRecorder) named(name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range r.spans.GetSpans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// TestTelemetryGETStreamChanges: each session's GET stream gets its own
// copy of a list change, with its own root CLIENT span whose context is
// in the delivered message's _meta; a resource update names its resource;
// a resumed stream replays the message as first delivered, with no new
// span.
func TestTelemetryGETStreamChanges(t *testing.T) {
	t.Parallel()
	ts, rec, f := telemetryFixture(t)
	sid := ts.open("2025-11-25", "{}")
	other := ts.open("2025-11-25", "{}")
	require.Nil(t, ts.call(sid, req("1", "resources/subscribe", `{"uri":"test://watched"}`)).Error)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := openStream(t, ts.get(ctx, sid))
	g.priming()
	o := openStream(t, ts.get(ctx, other))
	o.priming()

	f.srv.ResourceUpdated("test://watched")
	up, _ := g.msg()
	require.Equal(t, "notifications/resources/updated", up.Method)
	var p struct{ URI string }
	require.NoError(t, json.Unmarshal(up.Params, &p))
	assert.Equal(t, "test://watched", p.URI, "the params are kept")
	s := rec.spanOf(t, traceparentOf(t, up.Params))
	assert.Equal(t, "notifications/resources/updated", s.Name)
	assert.Equal(t, trace.SpanKindClient, s.SpanKind)
	assert.False(t, s.Parent.IsValid(), "a change has no parent")
	assert.Equal(t, map[string]string{
		"mcp.method.name": "notifications/resources/updated", "network.transport": "tcp",
		"mcp.protocol.version": "2025-11-25", "mcp.session.id": sid, "mcp.resource.uri": "test://watched",
	}, attrMap(s.Attributes))

	require.NoError(t, AddTool(f.srv, &Tool{Name: "late"}, func(context.Context, *CallToolRequest, fixtureArgs) (string, error) { return "", nil }))
	mine, _ := g.msg()
	theirs, _ := o.msg()
	require.Equal(t, "notifications/tools/list_changed", mine.Method)
	require.Equal(t, "notifications/tools/list_changed", theirs.Method)
	s1 := rec.spanOf(t, traceparentOf(t, mine.Params))
	s2 := rec.spanOf(t, traceparentOf(t, theirs.Params))
	assert.NotEqual(t, s1.SpanContext.SpanID(), s2.SpanContext.SpanID(), "each session's copy has a span of its own")
	assert.NotEqual(t, s1.SpanContext.TraceID(), s2.SpanContext.TraceID(), "both are roots")
	assert.Equal(t, sid, attrMap(s1.Attributes)["mcp.session.id"])
	assert.Equal(t, other, attrMap(s2.Attributes)["mcp.session.id"])
	assert.NotContains(t, attrMap(s1.Attributes), "mcp.resource.uri")
	assert.Equal(t, "notifications/tools/list_changed", attrMap(s1.Attributes)["mcp.method.name"])

	// Resumed from the start, the stream replays both messages as they
	// were delivered.
	g.close()
	eventually(t, func() bool { return !attached(ts, sid, 0) }, "the GET stream is still attached")
	r := openStream(t, ts.get(ctx, sid, "Last-Event-ID", "0-0"))
	r.priming()
	again, _ := r.msg()
	assert.JSONEq(t, string(up.Params), string(again.Params))
	again, _ = r.msg()
	assert.JSONEq(t, string(mine.Params), string(again.Params))
	r.close()
	o.close()
	assert.Len(t, rec.named("notifications/resources/updated"), 1, "a replay makes no span")
	assert.Len(t, rec.named("notifications/tools/list_changed"), 2)
}

// telReplica is one replica of a cluster under test, with its own
// handler, tracer provider and exporter.
type telReplica struct {
	srv *httptest.Server
	ep  *Endpoint
	rec *otelRecorder
	ts  *tserver
	h   *Server
}

// startTelReplica starts a replica of store's cluster; it stops with the
// test.
func startTelReplica(t *testing.T, store *cluster.Memory) *telReplica {
	rp := &telReplica{rec: newOtelRecorder(t), h: newFixture(t).srv}
	rp.srv = httptest.NewUnstartedServer(nil)
	lg, buf := quietLogger()
	rp.ep = Controller(&Options{
		Handler:   rp.h,
		Cluster:   store.Join("http://" + rp.srv.Listener.Addr().String()),
		Logger:    lg,
		Telemetry: rp.rec.telemetry(),
	})
	rp.srv.Config.Handler = rp.ep
	rp.srv.Start()
	rp.ts = &tserver{t: t, ep: rp.ep, srv: rp.srv, url: rp.srv.URL, hc: rp.srv.Client(), log: buf}
	t.Cleanup(func() {
		_ = rp.ep.Shutdown(context.Background())
		rp.srv.CloseClientConnections()
		rp.srv.Close()
	})
	return rp
}

// TestTelemetryClusterChange: a list change made on one replica reaches a
// session another replica owns, and a subscriptions/listen stream open on
// that replica, through the cluster; the replica that delivers it makes
// its spans, and each client's copy carries its span's context.
func TestTelemetryClusterChange(t *testing.T) {
	store := cluster.NewMemory()
	a, b := startTelReplica(t, store), startTelReplica(t, store)
	sid := a.ts.open("2025-11-25", "{}")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := openStream(t, a.ts.get(ctx, sid))
	g.priming()
	defer g.close()
	l := openStream(t, a.ts.post("", `{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{`+
		`"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
		`"io.modelcontextprotocol/clientCapabilities":{}}}}`,
		"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen"))
	defer l.close()
	ack, _ := l.msg()
	require.Equal(t, "notifications/subscriptions/acknowledged", ack.Method)
	require.Contains(t, string(ack.Params), `"toolsListChanged":true`)

	require.NoError(t, AddTool(b.h, &Tool{Name: "late"}, func(context.Context, *CallToolRequest, fixtureArgs) (string, error) { return "", nil }))
	m, _ := g.msg()
	require.Equal(t, "notifications/tools/list_changed", m.Method)
	s := a.rec.spanOf(t, traceparentOf(t, m.Params))
	assert.Equal(t, trace.SpanKindClient, s.SpanKind)
	assert.Equal(t, "notifications/tools/list_changed", s.Name)
	assert.Equal(t, sid, attrMap(s.Attributes)["mcp.session.id"])
	assert.Equal(t, "2025-11-25", attrMap(s.Attributes)["mcp.protocol.version"])

	// The replica's subscriptions/listen stream hears the change too.
	m, _ = l.msg()
	require.Equal(t, "notifications/tools/list_changed", m.Method)
	s = a.rec.spanOf(t, traceparentOf(t, m.Params))
	assert.Equal(t, "2026-07-28", attrMap(s.Attributes)["mcp.protocol.version"])
	assert.NotContains(t, attrMap(s.Attributes), "mcp.session.id")
	assert.Empty(t, b.rec.named("notifications/tools/list_changed"), "the announcing replica delivers nothing")
}

// TestTelemetryListen: what a subscriptions/listen stream sends gets a
// CLIENT span each, a child of the listen request's _meta trace context,
// whose context joins the subscription id in the message's _meta.
func TestTelemetryListen(t *testing.T) {
	t.Parallel()
	rec := newOtelRecorder(t)
	m := startModern(t, &Options{Telemetry: rec.telemetry()})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := mreq{method: "subscriptions/listen", id: "sub",
		params: map[string]any{"notifications": map[string]any{"toolsListChanged": true, "resourceSubscriptions": []any{"test://r"}}},
		meta: map[string]any{metaProtocol: "2026-07-28", metaClientCaps: modDefaultCaps(),
			metaClientInfo: map[string]any{"name": "t", "version": "1"}, "traceparent": clientParent}}
	resp, err := m.hc.Do(m.build(q).WithContext(ctx))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	br := bufio.NewReader(resp.Body)
	next := func() rpcMsg {
		for {
			line, err := br.ReadString('\n')
			require.NoError(t, err)
			if d, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
				var msg rpcMsg
				require.NoError(t, json.Unmarshal([]byte(d), &msg))
				return msg
			}
		}
	}
	check := func(msg rpcMsg, method string) map[string]string {
		t.Helper()
		require.Equal(t, method, msg.Method)
		var p struct {
			Meta map[string]any `json:"_meta"`
		}
		require.NoError(t, json.Unmarshal(msg.Params, &p))
		assert.Equal(t, "sub", p.Meta[metaSubscriptionID], "the subscription id is kept")
		s := rec.spanOf(t, traceparentOf(t, msg.Params))
		assert.Equal(t, method, s.Name)
		assert.Equal(t, trace.SpanKindClient, s.SpanKind)
		assert.Equal(t, clientTrace, s.SpanContext.TraceID().String(), "the listen request's trace")
		assert.Equal(t, clientSpan, s.Parent.SpanID().String())
		a := attrMap(s.Attributes)
		assert.Equal(t, method, a["mcp.method.name"])
		assert.Equal(t, "2026-07-28", a["mcp.protocol.version"])
		assert.Equal(t, "tcp", a["network.transport"])
		assert.NotContains(t, a, "mcp.session.id")
		return a
	}
	check(next(), "notifications/subscriptions/acknowledged")
	require.NoError(t, m.srv.AddToolRaw(&Tool{Name: "new_tool"}, func(context.Context, *CallToolRequest) (*CallToolResult, error) { return nil, nil }))
	check(next(), "notifications/tools/list_changed")
	m.srv.ResourceUpdated("test://r")
	up := next()
	assert.Equal(t, "test://r", check(up, "notifications/resources/updated")["mcp.resource.uri"])
	assert.Contains(t, string(up.Params), `"uri":"test://r"`)
}

// TestTelemetryStdioChanges: on stdio, the session's list changes and
// resource updates, and what a subscriptions/listen sends, get their
// spans, with network.transport "pipe", and their context in the written
// line's _meta.
func TestTelemetryStdioChanges(t *testing.T) {
	t.Parallel()
	rec := newOtelRecorder(t)
	f := newFixture(t)
	c := startStdio(t, f.srv, &ConnOptions{Telemetry: rec.telemetry()})
	c.open("2025-11-25", "{}")
	c.send(req("1", "resources/subscribe", `{"uri":"test://watched"}`))
	c.reply("1")
	f.srv.ResourceUpdated("test://watched")
	n := c.next()
	require.Equal(t, "notifications/resources/updated", n.Method, n.raw)
	s := rec.spanOf(t, traceparentOf(t, n.Params))
	assert.Equal(t, trace.SpanKindClient, s.SpanKind)
	assert.False(t, s.Parent.IsValid(), "ServeConn's context has no span")
	assert.Equal(t, map[string]string{
		"mcp.method.name": "notifications/resources/updated", "network.transport": "pipe",
		"mcp.protocol.version": "2025-11-25", "mcp.resource.uri": "test://watched",
	}, attrMap(s.Attributes))

	require.NoError(t, AddTool(f.srv, &Tool{Name: "late"}, func(context.Context, *CallToolRequest, fixtureArgs) (string, error) { return "", nil }))
	n = c.next()
	require.Equal(t, "notifications/tools/list_changed", n.Method, n.raw)
	s = rec.spanOf(t, traceparentOf(t, n.Params))
	assert.Equal(t, "notifications/tools/list_changed", s.Name)
	assert.Equal(t, "pipe", attrMap(s.Attributes)["network.transport"])

	// A subscriptions/listen on the same connection continues the trace
	// of its request's _meta.
	c.send(`{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"traceparent":"` + clientParent + `"}}}`)
	n = c.next()
	require.Equal(t, "notifications/subscriptions/acknowledged", n.Method, n.raw)
	s = rec.spanOf(t, traceparentOf(t, n.Params))
	assert.Equal(t, clientSpan, s.Parent.SpanID().String())
	assert.Equal(t, clientTrace, s.SpanContext.TraceID().String())
	assert.Equal(t, map[string]string{
		"mcp.method.name": "notifications/subscriptions/acknowledged", "network.transport": "pipe",
		"mcp.protocol.version": "2026-07-28",
	}, attrMap(s.Attributes))
}
