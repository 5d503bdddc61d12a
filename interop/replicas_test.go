package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/sse"
)

// modernCall sends one stateless 2026-07-28 request through the
// balancer, with the headers that revision requires, and returns the
// JSON-RPC result.
func modernCall(t *testing.T, rs replicaSet, method, name string, params map[string]any) map[string]any {
	t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequest(http.MethodPost, rs.base+"/mcp", strings.NewReader(string(body)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+rs.token)
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", b)
	var out struct {
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	require.NoError(t, json.Unmarshal(b, &out), "%s", b)
	require.Nil(t, out.Error, "%s", b)
	return out.Result
}

// TestReplicasShareTheBoard: three replicas behind the balancer keep one
// board in PostgreSQL. A 2026-07-28 client, each of whose requests lands
// on the next replica, adds a task and then lists and reads it; eight
// writers spread over the replicas add tasks and complete one shared task
// at once, and no update is lost; every replica's own /events feed shows
// every change, whichever replica made it.
func TestReplicasShareTheBoard(t *testing.T) {
	rs := startReplicas(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// One feed on each replica, counting task events.
	type counts struct {
		sync.Mutex
		created, updated int
	}
	feeds := make([]*counts, len(rs.replicas))
	for i, r := range rs.replicas {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r+"/events", nil)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		rd := sse.NewReader(res.Body)
		ev, err := rd.Next()
		require.NoError(t, err)
		require.Equal(t, "snapshot", ev.Event)
		c := &counts{}
		feeds[i] = c
		go func() {
			for {
				ev, err := rd.Next()
				if err != nil {
					return
				}
				if ev.Event != "task" {
					continue
				}
				c.Lock()
				switch {
				case strings.Contains(string(ev.Data), `"kind":"created"`):
					c.created++
				case strings.Contains(string(ev.Data), `"kind":"updated"`):
					c.updated++
				}
				c.Unlock()
			}
		}()
	}

	// The 2026-07-28 client: three requests, three replicas.
	res := modernCall(t, rs, "tools/call", "add_task", map[string]any{"name": "add_task", "arguments": map[string]any{"title": "Seen by every replica"}})
	added := res["structuredContent"].(map[string]any)
	id := added["id"].(string)
	res = modernCall(t, rs, "tools/call", "list_tasks", map[string]any{"name": "list_tasks", "arguments": map[string]any{}})
	listed, _ := json.Marshal(res["structuredContent"])
	assert.Contains(t, string(listed), "Seen by every replica", "list_tasks on the next replica shows the task")
	res = modernCall(t, rs, "resources/read", "tasks://"+id, map[string]any{"uri": "tasks://" + id})
	read, _ := json.Marshal(res["contents"])
	assert.Contains(t, string(read), "Seen by every replica", "resources/read on the third replica finds it")

	// Eight writers through the balancer.
	api := func(method, path, body string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, method, rs.base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+rs.token)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	const writers, each = 8, 10
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				status, body := api(http.MethodPost, "/api/tasks", fmt.Sprintf(`{"title":"w%d-%d"}`, w, i))
				assert.Equal(t, http.StatusCreated, status, body)
				status, body = api(http.MethodPost, "/api/tasks/"+id+"/complete", "")
				assert.Equal(t, http.StatusOK, status, body)
			}
		})
	}
	wg.Wait()

	status, body := api(http.MethodGet, "/api/tasks/"+id, "")
	require.Equal(t, http.StatusOK, status)
	var shared struct{ Version int }
	require.NoError(t, json.Unmarshal([]byte(body), &shared))
	assert.Equal(t, 1+writers*each, shared.Version, "every completion counted: no lost update")
	status, body = api(http.MethodGet, "/api/tasks", "")
	require.Equal(t, http.StatusOK, status)
	var all struct{ Tasks []json.RawMessage }
	require.NoError(t, json.Unmarshal([]byte(body), &all))
	assert.Len(t, all.Tasks, 1+writers*each)

	for i, c := range feeds {
		require.Eventually(t, func() bool {
			c.Lock()
			defer c.Unlock()
			return c.created == 1+writers*each && c.updated == writers*each
		}, 20*time.Second, 50*time.Millisecond, "replica %d's feed shows every change", i)
	}
}
