// Command saguarocluster serves the echo tool with saguaro, as the
// saguaro-stateful configuration does (a typed tool registered with
// mcp.AddTool, mcp.Controller mounted on a chi router, sessions), for the
// cluster benchmark (cmd/clusterbench), which starts it in two modes:
//
//   - "memory": sessions in this process, nothing else (the baseline);
//   - "redis": the same, with Options.Cluster an mcpredis.Cluster on the
//     Redis at -redis (one server, or a cluster in go-redis's URL form),
//     keys under -prefix, this replica's relay URL made from -addr (which
//     must then name a fixed port).
//
// For the cluster-at-scale measurements it also serves a resource,
// scaleURI, that sessions subscribe to, and two routes beside MCP:
// announcePath (POST ?kind=list|update&n=N&every=D: N registry changes,
// D apart, a tool added and removed in turn, or scaleURI updated) and
// noticesPath (GET: how many notices of each kind this replica heard
// from the cluster, JSON).
//
// The probe endpoint (CPU, allocations) and the ready line are
// internal/serve's, as for every benchmark server.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcp/cluster"
	"github.com/saguaro-go/saguaro/mcpredis"

	"github.com/saguaro-go/saguaro/bench/internal/serve"
)

var mode = "memory"

var (
	redisURL     = flag.String("redis", "", "Redis URL (mode redis)")
	prefix       = flag.String("prefix", "saguaro-bench:", "key prefix of the cluster on Redis (mode redis); replicas of one cluster share it")
	changeWindow = flag.Duration("change-window", 0, "mcpredis.Options.ChangeWindow (mode redis; 0: the default, negative: none)")
)

// The routes and the resource of the cluster-at-scale measurements.
const (
	announcePath = "/announce"
	noticesPath  = "/notices"
	scaleURI     = "bench://scale"
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
	if err := s.AddResource(&mcp.Resource{URI: scaleURI, Name: "scale"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: scaleURI, Text: "x"}}}, nil
	}); err != nil {
		return serve.Built{}, err
	}
	var heard notices
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
		cl, err := mcpredis.New(ctx, rdb, &mcpredis.Options{URL: self, Prefix: *prefix, ChangeWindow: *changeWindow})
		if err != nil {
			_ = rdb.Close()
			return serve.Built{}, err
		}
		unwatch := cl.Watch(heard.add)
		opts.Cluster = cl
		notes += fmt.Sprintf(", Cluster: mcpredis (defaults), relay URL %s", self)
		closeFn = func() {
			unwatch()
			_ = cl.Close()
			_ = rdb.Close()
		}
	default:
		return serve.Built{}, fmt.Errorf("unknown mode %q", o.Mode)
	}
	r := chi.NewRouter()
	r.Mount(serve.MCPPath, mcp.Controller(opts))
	routes := map[string]http.Handler{announcePath: announce(s), noticesPath: &heard}
	return serve.Built{Handler: r, Routes: routes, Notes: notes, Close: closeFn}, nil
}

// announce makes registry changes on s: ?kind=list adds and removes a
// tool in turn (tools/list_changed), ?kind=update updates scaleURI; n of
// them (default 1), every apart (default none). It answers once they are
// made (the cluster sends their notices in the background).
func announce(s *mcp.Server) http.Handler {
	var mu sync.Mutex
	added := false
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		q := r.URL.Query()
		n, err := strconv.Atoi(q.Get("n"))
		if err != nil || n < 1 {
			n = 1
		}
		every, _ := time.ParseDuration(q.Get("every"))
		kind := q.Get("kind")
		for i := range n {
			if i > 0 && every > 0 {
				time.Sleep(every)
			}
			switch kind {
			case "list":
				mu.Lock()
				if added {
					s.RemoveTools("late")
				} else if err := mcp.AddTool(s, &mcp.Tool{Name: "late"}, echo); err != nil {
					mu.Unlock()
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
				added = !added
				mu.Unlock()
			case "update":
				s.ResourceUpdated(scaleURI)
			default:
				http.Error(w, "kind must be list or update", http.StatusBadRequest)
				return
			}
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// notices counts what this replica hears from the cluster, by kind, and
// serves the counts as JSON.
type notices struct {
	change, moved, reset atomic.Int64
}

func (n *notices) add(x cluster.Notice) {
	switch x.Kind {
	case cluster.NoticeChange:
		n.change.Add(1)
	case cluster.NoticeMoved:
		n.moved.Add(1)
	case cluster.NoticeReset:
		n.reset.Add(1)
	}
}

// noticeCounts is what noticesPath answers.
type noticeCounts struct {
	Change int64 `json:"change"`
	Moved  int64 `json:"moved"`
	Reset  int64 `json:"reset"`
}

func (n *notices) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(noticeCounts{Change: n.change.Load(), Moved: n.moved.Load(), Reset: n.reset.Load()})
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
