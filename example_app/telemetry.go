package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/sse"
)

// telemetry is the app's OpenTelemetry: the MCP endpoint's metrics on
// /metrics (Prometheus text), on the dashboard's chart, and over OTLP with
// its traces when the standard OTEL_EXPORTER_OTLP_* variables say where.
//
// The metrics go out through OpenTelemetry's Prometheus exporter rather
// than client_golang instruments: the library reports through the
// OpenTelemetry API, so one set of instruments feeds the scrape, OTLP and
// the chart alike, under the semantic conventions' names.
type telemetry struct {
	mcp      *mcp.Telemetry
	metrics  http.Handler
	chart    *sdkmetric.ManualReader
	shutdown []func(context.Context) error
	// lastChart is the data of the last "tools" event, which a feed
	// that opens later sends after its snapshot: the chart shows the
	// calls made before the page opened, not only those after. chartMu
	// orders it with the publishing (see subscribeFeed).
	chartMu   sync.Mutex
	lastChart []byte
}

// otlpConfigured reports whether the environment names an OTLP endpoint
// for signal ("TRACES" or "METRICS").
func otlpConfigured(signal string) bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") != ""
}

// newTelemetry sets up the providers; Close flushes and stops them.
func newTelemetry(ctx context.Context) (*telemetry, error) {
	t := &telemetry{}
	res := resource.NewSchemaless(semconv.ServiceName("saguaro-example"))
	reg := prometheus.NewRegistry()
	prom, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, fmt.Errorf("telemetry: prometheus exporter: %w", err)
	}
	t.metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	t.chart = sdkmetric.NewManualReader()
	opts := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithReader(prom), sdkmetric.WithReader(t.chart)}
	if otlpConfigured("METRICS") {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("telemetry: OTLP metrics: %w", err)
		}
		opts = append(opts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	}
	mp := sdkmetric.NewMeterProvider(opts...)
	t.shutdown = append(t.shutdown, mp.Shutdown)
	t.mcp = &mcp.Telemetry{MeterProvider: mp,
		Propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}
	if otlpConfigured("TRACES") {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			t.Close(ctx)
			return nil, fmt.Errorf("telemetry: OTLP traces: %w", err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(exp))
		t.shutdown = append(t.shutdown, tp.Shutdown)
		t.mcp.TracerProvider = tp
	}
	return t, nil
}

// Close flushes what is pending and stops the providers.
func (t *telemetry) Close(ctx context.Context) {
	for _, fn := range t.shutdown {
		_ = fn(ctx)
	}
}

// toolStat is one tool's row of the dashboard's chart.
type toolStat struct {
	Tool   string  `json:"tool"`
	Calls  uint64  `json:"calls"`
	Errors uint64  `json:"errors"`
	MeanMS float64 `json:"meanMs"`
}

// toolStats reads the per-tool calls and latency from
// mcp.server.operation.duration.
func (t *telemetry) toolStats(ctx context.Context) ([]toolStat, error) {
	var rm metricdata.ResourceMetrics
	if err := t.chart.Collect(ctx, &rm); err != nil {
		return nil, err
	}
	type acc struct {
		calls, errors uint64
		sum           float64
	}
	by := map[string]*acc{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "mcp.server.operation.duration" {
				continue
			}
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok {
				continue
			}
			for _, dp := range h.DataPoints {
				tool, ok := dp.Attributes.Value("gen_ai.tool.name")
				if !ok {
					continue
				}
				a := by[tool.AsString()]
				if a == nil {
					a = &acc{}
					by[tool.AsString()] = a
				}
				a.calls += dp.Count
				a.sum += dp.Sum
				if _, failed := dp.Attributes.Value("error.type"); failed {
					a.errors += dp.Count
				}
			}
		}
	}
	out := make([]toolStat, 0, len(by))
	for name, a := range by {
		s := toolStat{Tool: name, Calls: a.calls, Errors: a.errors}
		if a.calls > 0 {
			s.MeanMS = a.sum / float64(a.calls) * 1000
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tool < out[j].Tool })
	return out, nil
}

// chartInterval is how often the chart's figures are read.
const chartInterval = time.Second

// chartFeed publishes the per-tool figures on the live feed as "tools"
// events whenever they change, until ctx ends; stop waits for it.
func (a *app) chartFeed(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(chartInterval)
		defer tk.Stop()
		var last uint64
		for {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
			}
			stats, err := a.tel.toolStats(ctx)
			if err != nil {
				if !errors.Is(err, context.Canceled) {
					a.logger.Warn("example_app: reading the chart's metrics", "err", err)
				}
				continue
			}
			var total uint64
			for _, s := range stats {
				total += s.Calls
			}
			if total == last {
				continue
			}
			last = total
			if data, err := json.Marshal(map[string]any{"tools": stats}); err == nil {
				a.publishChart(data)
			}
		}
	}()
	return func() {
		cancel()
		wg.Wait()
	}
}

// publishChart puts the chart's figures on the feed and keeps them for
// the feeds that open later.
func (a *app) publishChart(data []byte) {
	a.tel.chartMu.Lock()
	defer a.tel.chartMu.Unlock()
	a.tel.lastChart = data
	_, _ = a.hub.Publish(feedTopic, sse.Event{Event: "tools", Data: data})
}

// subscribeFeed subscribes a feed's mailbox to the hub after lastID and,
// for a new feed, sends it the chart's last figures. Under chartMu, figures
// published meanwhile reach it either as the ones it is sent or through
// the hub after them, never lost and never before older ones.
func (a *app) subscribeFeed(lastID string, mb *controller.Mailbox) error {
	a.tel.chartMu.Lock()
	defer a.tel.chartMu.Unlock()
	if _, err := a.hub.SubscribeMailbox(feedTopic, lastID, mb); err != nil {
		return err
	}
	if lastID == "" && a.tel.lastChart != nil {
		_ = mb.Send(sse.Event{Event: "tools", Data: a.tel.lastChart})
	}
	return nil
}
