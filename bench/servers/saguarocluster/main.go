// Command saguarocluster serves the echo tool with saguaro, as the
// saguaro-stateful configuration does (a typed tool registered with
// mcp.AddTool, mcp.Controller mounted on a chi router, sessions), for the
// cluster benchmark (cmd/clusterbench), which starts it in two modes:
//
//   - "memory": sessions in this process, nothing else (the baseline);
//   - "redis": the same, with Options.Cluster an mcpredis.Cluster on the
//     Redis at -redis, keys under -prefix, this replica's relay URL made
//     from -addr (which must then name a fixed port).
//
// The probe endpoint (CPU, allocations) and the ready line are
// internal/serve's, as for every benchmark server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcpredis"

	"github.com/saguaro-go/saguaro/bench/internal/serve"
)

var mode = "memory"

var (
	redisURL = flag.String("redis", "", "Redis URL (mode redis)")
	prefix   = flag.String("prefix", "saguaro-bench:", "key prefix of the cluster on Redis (mode redis); replicas of one cluster share it")
)

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo back"`
}

func echo(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.Text(in.Text)}}, nil
}

func build(o serve.Options) (serve.Built, error) {
	s := mcp.NewServer(mcp.Implementation{Name: "bench-saguaro-cluster", Version: "1.0.0"}, nil)
	if err := mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo the text back"}, echo); err != nil {
		return serve.Built{}, err
	}
	// The load generator plays many clients from one address: the
	// per-caller bounds, meant for the open internet, are off.
	opts := &mcp.Options{Handler: s, Sessions: &mcp.SessionOptions{IdleTimeout: o.IdleTimeout},
		Limits: &mcp.Limits{Calls: -1, Streams: -1, Sessions: -1}}
	notes := fmt.Sprintf("mcp.Controller, sessions with IdleTimeout %v", o.IdleTimeout)
	var closeFn func()
	switch o.Mode {
	case "memory":
		notes += ", in this process"
	case "redis":
		self, err := relayURL()
		if err != nil {
			return serve.Built{}, err
		}
		if *redisURL == "" {
			return serve.Built{}, errors.New("mode redis needs -redis")
		}
		rdb, err := mcpredis.NewClient(*redisURL)
		if err != nil {
			return serve.Built{}, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cl, err := mcpredis.New(ctx, rdb, &mcpredis.Options{URL: self, Prefix: *prefix})
		if err != nil {
			_ = rdb.Close()
			return serve.Built{}, err
		}
		opts.Cluster = cl
		notes += fmt.Sprintf(", Cluster: mcpredis (defaults), relay URL %s", self)
		closeFn = func() {
			_ = cl.Close()
			_ = rdb.Close()
		}
	default:
		return serve.Built{}, fmt.Errorf("unknown mode %q", o.Mode)
	}
	r := chi.NewRouter()
	r.Mount(serve.MCPPath, mcp.Controller(opts))
	return serve.Built{Handler: r, Notes: notes, Close: closeFn}, nil
}

// relayURL is this replica's endpoint as the other replicas reach it:
// serve.Main listens on -addr after build, so a replica of a cluster is
// given a fixed port.
func relayURL() (string, error) {
	addr := flag.Lookup("addr").Value.String()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("-addr %q: %w", addr, err)
	}
	if port == "0" || port == "" {
		return "", fmt.Errorf("mode redis needs a fixed port in -addr (got %q): it is this replica's relay URL", addr)
	}
	return "http://" + addr + serve.MCPPath, nil
}

func main() { serve.Main("saguaro-cluster", mode, build) }
