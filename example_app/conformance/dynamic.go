package main

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/saguaro-go/saguaro/mcp"
)

// dynamic is what the diagnostic hooks test_trigger_tool_change and
// test_trigger_prompt_change change: whether test_dynamic_tool and
// test_dynamic_prompt exist.
//
// One process keeps that in itself. Replicas keep it in Redis, as a real
// app keeps its configuration where every replica reads it: each hook
// call flips a counter there (odd: the tool or prompt exists), and every
// request first brings this replica's registry to what the counters say
// (middleware). Otherwise a hook call would change the one replica it
// landed on, and a 2026-07-28 client, whose requests go to any replica,
// would see the tool list change from one request to the next.
type dynamic struct {
	srv    *mcp.Server
	logger *slog.Logger
	shared redis.UniversalClient // replicas: where the counters live; nil for one process
	key    string                // the hash of the counters, under the cluster's prefix

	// mu serialises flips and syncs on this replica, Redis round trip
	// included, so that a sync never undoes a later flip.
	mu     sync.Mutex
	tool   bool // test_dynamic_tool is registered here
	prompt bool // test_dynamic_prompt is registered here
}

// What a counter counts: the fields of the hash.
const (
	dynamicTool   = "tool"
	dynamicPrompt = "prompt"
)

// flip adds what is absent or removes what is there, everywhere, and
// reports which.
func (d *dynamic) flip(ctx context.Context, what string) (on bool, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.shared == nil {
		on = !d.has(what)
	} else {
		n, err := d.shared.HIncrBy(ctx, d.key, what, 1).Result()
		if err != nil {
			return false, err
		}
		on = n%2 == 1
	}
	return on, d.set(what, on)
}

// sync brings this replica's registry to the shared counters. One
// process has nothing to do.
func (d *dynamic) sync(ctx context.Context) error {
	if d.shared == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	vals, err := d.shared.HMGet(ctx, d.key, dynamicTool, dynamicPrompt).Result()
	if err != nil {
		return err
	}
	for i, what := range []string{dynamicTool, dynamicPrompt} {
		var n int64
		if s, ok := vals[i].(string); ok {
			n, _ = strconv.ParseInt(s, 10, 64)
		}
		if err := d.set(what, n%2 == 1); err != nil {
			return err
		}
	}
	return nil
}

// middleware syncs before every request it passes on. A Redis that does
// not answer leaves the registry as it is, after a short wait: the
// request itself will meet the cluster's own answer to that (503).
func (d *dynamic) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 250*time.Millisecond)
		err := d.sync(ctx)
		cancel()
		if err != nil {
			d.logger.Warn("syncing test_dynamic_tool and test_dynamic_prompt", slog.Any("error", err))
		}
		next.ServeHTTP(w, r)
	})
}

func (d *dynamic) has(what string) bool {
	if what == dynamicTool {
		return d.tool
	}
	return d.prompt
}

// set registers or removes one of them; d.mu is held.
func (d *dynamic) set(what string, on bool) error {
	if d.has(what) == on {
		return nil
	}
	switch {
	case what == dynamicTool && on:
		err := mcp.AddTool(d.srv, &mcp.Tool{Name: "test_dynamic_tool", Description: "Appears and disappears"},
			func(context.Context, *mcp.CallToolRequest, noArgs) (string, error) { return "dynamic", nil })
		if err != nil {
			return err
		}
	case what == dynamicTool:
		d.srv.RemoveTools("test_dynamic_tool")
	case on:
		err := d.srv.AddPrompt(&mcp.Prompt{Name: "test_dynamic_prompt", Description: "Appears and disappears"},
			func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.Text("dynamic")}}}, nil
			})
		if err != nil {
			return err
		}
	default:
		d.srv.RemovePrompts("test_dynamic_prompt")
	}
	if what == dynamicTool {
		d.tool = on
	} else {
		d.prompt = on
	}
	return nil
}

// trigger is the handler of a hook: it flips what and says what it did.
func (d *dynamic) trigger(what, name string) func(context.Context, *mcp.CallToolRequest, noArgs) (string, error) {
	return func(ctx context.Context, _ *mcp.CallToolRequest, _ noArgs) (string, error) {
		on, err := d.flip(ctx, what)
		if err != nil {
			return "", err
		}
		if on {
			return "added " + name, nil
		}
		return "removed " + name, nil
	}
}
