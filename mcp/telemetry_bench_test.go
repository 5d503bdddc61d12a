package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// BenchmarkTelemetryToolsCall is a stateless tools/call through the
// endpoint (in process, httptest.ResponseRecorder) without telemetry,
// with metrics (the SDK aggregating in memory), and with metrics and
// every call traced (the SDK recording each span, then dropping it).
// It reports the process's CPU per call beside the wall time.
func BenchmarkTelemetryToolsCall(b *testing.B) {
	modes := []struct {
		name string
		tel  func(b *testing.B) *Telemetry
	}{
		{"off", func(*testing.B) *Telemetry { return nil }},
		{"metrics", func(b *testing.B) *Telemetry {
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
			return &Telemetry{MeterProvider: mp}
		}},
		{"metrics+traces", func(b *testing.B) *Telemetry {
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
				sdktrace.WithSyncer(tracetest.NewNoopExporter()))
			b.Cleanup(func() {
				_ = mp.Shutdown(context.Background())
				_ = tp.Shutdown(context.Background())
			})
			return &Telemetry{MeterProvider: mp, TracerProvider: tp}
		}},
	}
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			s := NewServer(Implementation{Name: "bench", Version: "1"}, nil)
			if err := AddTool(s, &Tool{Name: "echo"}, func(ctx context.Context, req *CallToolRequest, in EchoIn) (string, error) {
				return in.Text, nil
			}); err != nil {
				b.Fatal(err)
			}
			lg, _ := quietLogger()
			ep := Controller(&Options{Handler: s, Logger: lg, Telemetry: m.tel(b)})
			defer ep.Shutdown(context.Background())
			loopCPU(b, func() {
				r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(benchCall))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Accept", "application/json, text/event-stream")
				r.Header.Set("MCP-Protocol-Version", "2025-11-25")
				w := httptest.NewRecorder()
				ep.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					b.Fatal(w.Code, w.Body.String())
				}
			})
		})
	}
}

// BenchmarkTelemetryDispatch is the engine alone (decode, dispatch,
// encode) without telemetry and with metrics: what metrics add to a call,
// without the HTTP around it.
func BenchmarkTelemetryDispatch(b *testing.B) {
	for _, withMetrics := range []bool{false, true} {
		name := "off"
		if withMetrics {
			name = "metrics"
		}
		b.Run(name, func(b *testing.B) {
			e := benchEngine(b)
			if withMetrics {
				mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
				b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
				tel, err := newTelemetry(&Telemetry{MeterProvider: mp}, transportTCP)
				if err != nil {
					b.Fatal(err)
				}
				e.tel = tel
			}
			ctx := context.Background()
			var sink bytes.Buffer
			loopCPU(b, func() {
				sink.Reset()
				serveEngine(e, ctx, benchCall, &sink)
			})
		})
	}
}

// BenchmarkTelemetryOverhead is what telemetry adds to a call and nothing
// else: its wrapper around a call whose serving costs nothing, with
// metrics (the SDK aggregating in memory), and with metrics and traces.
// The engine's own work, which BenchmarkTelemetryDispatch includes, would
// hide a change of a few tens of nanoseconds in its noise.
func BenchmarkTelemetryOverhead(b *testing.B) {
	for _, traced := range []bool{false, true} {
		name := "metrics"
		if traced {
			name = "metrics+traces"
		}
		b.Run(name, func(b *testing.B) {
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
			o := &Telemetry{MeterProvider: mp}
			if traced {
				tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
					sdktrace.WithSyncer(tracetest.NewNoopExporter()))
				b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
				o.TracerProvider = tp
			}
			tel, err := newTelemetry(o, transportTCP)
			if err != nil {
				b.Fatal(err)
			}
			params := json.RawMessage(`{"name":"echo","arguments":{"text":"hello"}}`)
			next := func(context.Context, *protocol.Call, any) protocol.Reply { return protocol.Reply{Target: "echo"} }
			ctx := context.Background()
			call := &protocol.Call{Method: "tools/call", ID: wire.Int(1), Params: params, Revision: protocol.Rev20251125}
			loopCPU(b, func() {
				if r := tel.dispatch(ctx, call, nil, next); r.Err != nil {
					b.Fatal(r.Err)
				}
			})
		})
	}
}
