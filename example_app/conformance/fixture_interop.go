package main

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/saguaro-go/saguaro/mcp"
)

// addInteropTools registers tools the conformance suite does not call but
// the peer clients' tests in interop/ do: roots, a resource update on
// demand, and a probe that proves a cancelled call stops.
func addInteropTools(srv *mcp.Server) {
	must(mcp.AddTool(srv, &mcp.Tool{Name: "test_list_roots", Description: "Asks the client for its roots (roots/list)"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (string, error) {
			res, err := req.ListRoots(ctx)
			if err != nil {
				return "", err
			}
			b, _ := json.Marshal(res.Roots)
			return "Roots: " + string(b), nil
		}))

	type uriIn struct {
		URI string `json:"uri" jsonschema:"the resource that changed"`
	}
	must(mcp.AddTool(srv, &mcp.Tool{Name: "test_trigger_resource_update", Description: "Announces that a resource changed (notifications/resources/updated to its subscribers)"},
		func(_ context.Context, _ *mcp.CallToolRequest, in uriIn) (string, error) {
			srv.ResourceUpdated(in.URI)
			return "updated", nil
		}))

	// The probe: test_cancellation_probe waits up to 5 s, honouring its
	// context, and records how it ended under its id;
	// test_cancellation_result reports that record.
	var mu sync.Mutex
	outcomes := map[string]string{}
	type probeIn struct {
		ID string `json:"id" jsonschema:"a name to look the outcome up by"`
	}
	must(mcp.AddTool(srv, &mcp.Tool{Name: "test_cancellation_probe", Description: "Waits up to 5 s; records whether it was cancelled or completed"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in probeIn) (string, error) {
			outcome := "completed"
			if err := pause(ctx, 5*time.Second); err != nil {
				outcome = "cancelled"
			}
			mu.Lock()
			outcomes[in.ID] = outcome
			mu.Unlock()
			return outcome, nil
		}))
	must(mcp.AddTool(srv, &mcp.Tool{Name: "test_cancellation_result", Description: "Reports how test_cancellation_probe with this id ended (pending while it runs)"},
		func(_ context.Context, _ *mcp.CallToolRequest, in probeIn) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			if o, ok := outcomes[in.ID]; ok {
				return o, nil
			}
			return "pending", nil
		}))
}
