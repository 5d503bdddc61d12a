// Command saguaro serves the echo tool with saguaro itself: a typed tool
// registered with mcp.AddTool on an mcp.Server, served by mcp.Controller
// mounted on a chi router.
//
// Modes: "stateless" (no sessions), "stateful" (sessions, idle timeout from
// -idle-timeout), "stack" (stateful, behind the realistic production
// stack of internal/stack: request logging and JWT bearer auth, sessions
// bound to the token's identity, MCP attributes on the log line),
// "metrics" (stateful, with OpenTelemetry metrics aggregated by the SDK,
// as between two Prometheus scrapes) and "traced" (metrics, and every
// call traced: the SDK records each span and a batch processor hands it
// to an exporter that drops it); "token" is "stateful" sent a bearer token
// like the stack's, which nothing checks: the stack's larger request
// without its layers.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/httplog/v3"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/saguaro-go/saguaro/auth"
	"github.com/saguaro-go/saguaro/mcp"

	"github.com/saguaro-go/saguaro/bench/internal/serve"
	"github.com/saguaro-go/saguaro/bench/internal/stack"
)

var mode = "stateless"

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo back"`
}

func echo(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.Text(in.Text)}}, nil
}

// progress sends serve.ProgressSteps progress notifications for the call's
// token (Request.Progress does nothing without one), then answers like
// echo.
func progress(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, error) {
	for i := 1; i <= serve.ProgressSteps; i++ {
		if err := req.Progress(ctx, float64(i), serve.ProgressSteps, ""); err != nil {
			return nil, err
		}
	}
	return echo(ctx, req, in)
}

func build(o serve.Options) (serve.Built, error) {
	s := mcp.NewServer(mcp.Implementation{Name: "bench-saguaro", Version: "1.0.0"}, nil)
	if err := mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo the text back"}, echo); err != nil {
		return serve.Built{}, err
	}
	if err := mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "report progress, then echo the text back"}, progress); err != nil {
		return serve.Built{}, err
	}
	if err := addDocs(s, o.PayloadDocs); err != nil {
		return serve.Built{}, err
	}
	// The load generator plays many clients from one address: the
	// per-caller bounds, meant for the open internet, are off.
	opts := &mcp.Options{Handler: s, Limits: &mcp.Limits{Calls: -1, Streams: -1, Sessions: -1}}
	var notes string
	switch o.Mode {
	case "stdio":
		// The stdio workload's server: mcp.ServeStdio on standard input
		// and output.
		return serve.Built{
			Stdio: func(ctx context.Context) error {
				return mcp.ServeStdio(ctx, s, &mcp.ConnOptions{Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
			},
			Notes: "mcp.ServeStdio",
		}, nil
	case "stateless":
		notes = "mcp.Controller, no sessions"
	case "stateful", "stack", "metrics", "traced", "token":
		opts.Sessions = &mcp.SessionOptions{IdleTimeout: o.IdleTimeout}
		notes = fmt.Sprintf("mcp.Controller, sessions with IdleTimeout %v", o.IdleTimeout)
	default:
		return serve.Built{}, fmt.Errorf("unknown mode %q", o.Mode)
	}
	var closeTel func()
	if o.Mode == "metrics" || o.Mode == "traced" {
		var tnotes string
		opts.Telemetry, tnotes, closeTel = telemetry(o.Mode == "traced")
		notes += "; " + tnotes
	}
	if o.Mode != "stack" {
		r := chi.NewRouter()
		r.Mount(serve.MCPPath, mcp.Controller(opts))
		b := serve.Built{Handler: r, Notes: notes, Close: closeTel}
		if o.Mode == "token" {
			tok, err := stack.Token()
			if err != nil {
				return serve.Built{}, err
			}
			b.Headers = map[string]string{"Authorization": "Bearer " + tok}
			b.Notes += "; sent saguaro-stack's RS256 bearer token on every request, unchecked"
		}
		return b, nil
	}
	opts.Identity = auth.Identity
	opts.Attrs = httplog.SetAttrs
	st, err := stack.Wrap(serve.MCPPath, mcp.Controller(opts), io.Discard)
	if err != nil {
		return serve.Built{}, err
	}
	return serve.Built{
		Handler: st.Handler,
		Headers: map[string]string{"Authorization": "Bearer " + st.Token},
		Notes:   notes + "; chi RequestID, middleware.Logging (httplog's RequestLogger, every line, slog.JSONHandler with the ECS schema to io.Discard), Recoverer, auth RS256 verifier + Required, sessions bound to auth.Identity, Attrs = httplog.SetAttrs",
		Close:   st.Close,
	}, nil
}

// telemetry is the OpenTelemetry SDK as a service would run it: metrics
// aggregated in memory for a reader (a Prometheus scrape) that collects
// now and then, and with traced every call sampled and recorded, its span
// batched to an exporter that drops it.
func telemetry(traced bool) (*mcp.Telemetry, string, func()) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	t := &mcp.Telemetry{MeterProvider: mp}
	notes := "Telemetry: SDK MeterProvider (manual reader)"
	closers := []func(context.Context) error{mp.Shutdown}
	if traced {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
			sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		t.TracerProvider = tp
		notes += ", SDK TracerProvider sampling every call, batch processor, no-op exporter"
		closers = append(closers, tp.Shutdown)
	}
	return t, notes, func() {
		for _, c := range closers {
			_ = c(context.Background())
		}
	}
}

func main() { serve.Main("saguaro", mode, build) }
