package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

func withTasks() map[string]any {
	c := modDefaultCaps()
	c["extensions"] = map[string]any{ExtTasks: map[string]any{}}
	return c
}

func (m *modernServer) taskDo(method string, params map[string]any) mresp {
	return m.do(mreq{method: method, params: params, caps: withTasks()})
}

// waitTask polls tasks/get until the task leaves status from.
func (m *modernServer) waitTask(id string, from ...string) map[string]any {
	m.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		r := m.taskDo("tasks/get", map[string]any{"taskId": id})
		require.Nil(m.t, r.err)
		st := r.result["status"].(string)
		still := false
		for _, f := range from {
			still = still || st == f
		}
		if !still {
			return r.result
		}
		time.Sleep(10 * time.Millisecond)
	}
	m.t.Fatalf("task %s stayed %v", id, from)
	return nil
}

func TestTasks(t *testing.T) {
	m := startModern(t, nil)

	t.Run("lifecycle", func(t *testing.T) {
		r := m.taskDo("tools/call", map[string]any{"name": "task_sleep", "arguments": map[string]any{"ms": 50}})
		require.Nil(t, r.err)
		assert.Equal(t, "task", r.result["resultType"])
		id := r.result["taskId"].(string)
		replica, random, ok := strings.Cut(id, ".")
		assert.True(t, ok && replica != "", "a task id names its replica: %q", id)
		assert.Len(t, random, 32)
		assert.Equal(t, "working", r.result["status"])
		for _, k := range []string{"createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} {
			assert.Contains(t, r.result, k)
		}
		for _, k := range []string{"result", "requestState", "task", "ttl"} {
			assert.NotContains(t, r.result, k)
		}
		g := m.taskDo("tasks/get", map[string]any{"taskId": id})
		assert.Equal(t, "complete", g.result["resultType"])
		done := m.waitTask(id, "working")
		assert.Equal(t, "completed", done["status"])
		res := done["result"].(map[string]any)
		assert.Equal(t, "slept", res["content"].([]any)[0].(map[string]any)["text"])
		c := m.taskDo("tasks/cancel", map[string]any{"taskId": id})
		require.Nil(t, c.err, "cancelling an ended task is an ack")
		assert.NotContains(t, c.result, "status")
	})

	t.Run("tool error is completed with isError", func(t *testing.T) {
		r := m.taskDo("tools/call", map[string]any{"name": "task_required"})
		done := m.waitTask(r.result["taskId"].(string), "working")
		assert.Equal(t, "completed", done["status"])
		assert.Equal(t, true, done["result"].(map[string]any)["isError"])
	})

	t.Run("cancel", func(t *testing.T) {
		r := m.taskDo("tools/call", map[string]any{"name": "task_sleep", "arguments": map[string]any{"ms": 60000}})
		id := r.result["taskId"].(string)
		c := m.taskDo("tasks/cancel", map[string]any{"taskId": id})
		require.Nil(t, c.err)
		assert.Equal(t, "complete", c.result["resultType"])
		g := m.taskDo("tasks/get", map[string]any{"taskId": id})
		assert.Equal(t, "cancelled", g.result["status"])
	})

	t.Run("input through tasks/update", func(t *testing.T) {
		r := m.taskDo("tools/call", map[string]any{"name": "task_ask"})
		id := r.result["taskId"].(string)
		g := m.waitTask(id, "working")
		require.Equal(t, "input_required", g["status"])
		reqs := g["inputRequests"].(map[string]any)
		require.Contains(t, reqs, "who")
		u := m.taskDo("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
			"who": modAccept(map[string]any{"name": "Tia"}), "unknown": map[string]any{"x": true}}})
		require.Nil(t, u.err)
		assert.Equal(t, "complete", u.result["resultType"])
		done := m.waitTask(id, "working", "input_required")
		assert.Equal(t, "hi Tia", done["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"])
	})

	t.Run("input first, then a task", func(t *testing.T) {
		reqs, state := modInputRequired(t, m.do(mreq{method: "tools/call", params: map[string]any{"name": "task_deferred"}, caps: withTasks()}))
		require.Contains(t, reqs, "who")
		r := m.do(mreq{method: "tools/call", caps: withTasks(), params: map[string]any{"name": "task_deferred", "requestState": state,
			"inputResponses": map[string]any{"who": modAccept(map[string]any{"name": "Al"})}}})
		require.Nil(t, r.err)
		assert.Equal(t, "task", r.result["resultType"])
		assert.NotContains(t, r.result, "requestState")
		done := m.waitTask(r.result["taskId"].(string), "working")
		assert.Contains(t, done["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"], "Al")
	})

	t.Run("gates", func(t *testing.T) {
		r := m.do(mreq{method: "tasks/get", params: map[string]any{"taskId": "x"}})
		assert.Equal(t, -32021, r.code(), "tasks/* need the extension")
		assert.Equal(t, 400, r.status)
		r = m.taskDo("tasks/get", map[string]any{"taskId": "nope"})
		assert.Equal(t, -32602, r.code())
		r = m.do(mreq{method: "tools/call", params: map[string]any{"name": "task_required"}})
		assert.Equal(t, -32021, r.code())
		assert.JSONEq(t, `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`, string(r.err.Data))
		r = m.do(mreq{method: "tools/call", params: map[string]any{"name": "task_sleep", "arguments": map[string]any{"ms": 0}}})
		assert.Equal(t, "slept", modText(t, r), "optional: synchronous without the extension")
		r = m.taskDo("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{}, "task": map[string]any{"ttl": 1000}})
		assert.Equal(t, "complete", r.result["resultType"], "a legacy task param does not make a task")
		r = m.taskDo("tasks/list", nil)
		assert.Equal(t, -32601, r.code())
	})
}

func TestTasksBoundToIdentity(t *testing.T) {
	m := startModern(t, &Options{Identity: func(r *http.Request) string { return r.Header.Get("X-User") }})
	q := mreq{method: "tools/call", params: map[string]any{"name": "task_sleep", "arguments": map[string]any{"ms": 10}}, caps: withTasks(), hdr: map[string]string{"X-User": "a"}}
	r := m.do(q)
	id := r.result["taskId"].(string)
	q = mreq{method: "tasks/get", params: map[string]any{"taskId": id}, caps: withTasks(), hdr: map[string]string{"X-User": "b"}}
	assert.Equal(t, -32602, m.do(q).code(), "another caller's task is unknown")
}

// listen opens subscriptions/listen and returns a reader of its messages.
func (m *modernServer) listen(ctx context.Context, filter map[string]any, hdr map[string]string, caps ...map[string]any) (*http.Response, func() map[string]any) {
	m.t.Helper()
	q := mreq{method: "subscriptions/listen", params: map[string]any{"notifications": filter}, hdr: hdr}
	if len(caps) > 0 {
		q.caps = caps[0]
	}
	req := m.build(q).WithContext(ctx)
	resp, err := m.hc.Do(req)
	require.NoError(m.t, err)
	br := bufio.NewReader(resp.Body)
	return resp, func() map[string]any {
		for {
			line, err := br.ReadString('\n')
			require.NoError(m.t, err)
			if d, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
				var msg map[string]any
				require.NoError(m.t, json.Unmarshal([]byte(d), &msg))
				return msg
			}
		}
	}
}

func TestListen(t *testing.T) {
	m := startModern(t, &Options{Limits: &Limits{Streams: 2}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, next := m.listen(ctx, map[string]any{"toolsListChanged": true, "resourceSubscriptions": []any{"test://r"}}, nil)
	defer resp.Body.Close()
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	ack := next()
	assert.Equal(t, "notifications/subscriptions/acknowledged", ack["method"])
	params := ack["params"].(map[string]any)
	assert.Equal(t, map[string]any{"toolsListChanged": true, "resourceSubscriptions": []any{"test://r"}}, params["notifications"])
	assert.EqualValues(t, 7, params["_meta"].(map[string]any)[metaSubscriptionID])

	_, nextPrompts := m.listen(ctx, map[string]any{"promptsListChanged": true}, nil)
	assert.Equal(t, "notifications/subscriptions/acknowledged", nextPrompts()["method"])

	require.NoError(t, m.srv.AddToolRaw(&Tool{Name: "new_tool"}, func(context.Context, *CallToolRequest) (*CallToolResult, error) { return nil, nil }))
	n := next()
	assert.Equal(t, "notifications/tools/list_changed", n["method"])
	assert.EqualValues(t, 7, n["params"].(map[string]any)["_meta"].(map[string]any)[metaSubscriptionID])
	m.srv.ResourceUpdated("test://other")
	m.srv.ResourceUpdated("test://r")
	n = next()
	assert.Equal(t, "notifications/resources/updated", n["method"])
	assert.Equal(t, "test://r", n["params"].(map[string]any)["uri"])

	require.NoError(t, m.srv.AddPrompt(&Prompt{Name: "new_prompt"}, func(context.Context, *GetPromptRequest) (*GetPromptResult, error) { return nil, nil }))
	assert.Equal(t, "notifications/prompts/list_changed", nextPrompts()["method"], "the prompts stream saw no tools change first")

	r := m.do(mreq{method: "subscriptions/listen", params: map[string]any{"notifications": map[string]any{}}})
	assert.Equal(t, http.StatusTooManyRequests, r.status, "two streams per caller")
	r = m.do(mreq{method: "subscriptions/listen", params: map[string]any{}})
	assert.Equal(t, -32602, r.code())
}

func TestSkills(t *testing.T) {
	s := NewServer(Implementation{Name: "s", Version: "1"}, nil)
	md := []byte("---\nname: pdf-tools\ndescription: \"Works with PDFs\"\nmetadata:\n  owner: docs\n---\nBody\n")
	require.NoError(t, s.AddSkill(&Skill{Path: "acme/pdf-tools", Files: map[string][]byte{"SKILL.md": md, "ref/A.md": []byte("a")}}))
	for name, sk := range map[string]*Skill{
		"no SKILL.md":          {Path: "x", Files: map[string][]byte{"a": nil}},
		"name is not the path": {Path: "other", Files: map[string][]byte{"SKILL.md": md}},
		"no frontmatter":       {Path: "pdf-tools", Files: map[string][]byte{"SKILL.md": []byte("hi")}},
		"escaping file":        {Path: "pdf-tools", Files: map[string][]byte{"SKILL.md": md, "../x": nil}},
	} {
		assert.ErrorIs(t, s.AddSkill(sk), ErrSkill, name)
	}
	e := newEngine(s, engineOptions{})
	caps := e.Capabilities(Rev20260728)
	assert.Contains(t, caps.Extensions, ExtSkills)
	assert.Empty(t, e.Capabilities(Rev20251125).Extensions)
	r := e.Dispatch(context.Background(), &protocol.Call{Method: "skills/list", ID: wire.Int(1), Revision: protocol.Rev20260728}, nil)
	require.Nil(t, r.Err)
	var list struct {
		Skills []struct {
			URI         string         `json:"uri"`
			Frontmatter map[string]any `json:"frontmatter"`
			Resources   []struct {
				URI    string `json:"uri"`
				Digest string `json:"digest"`
				Size   int    `json:"size"`
			} `json:"resources"`
		} `json:"skills"`
		TTL *int `json:"ttlMs"`
	}
	require.NoError(t, json.Unmarshal(r.Result, &list))
	require.Len(t, list.Skills, 1)
	sk := list.Skills[0]
	assert.Equal(t, "skill://acme/pdf-tools/SKILL.md", sk.URI)
	assert.Equal(t, map[string]any{"name": "pdf-tools", "description": "Works with PDFs", "metadata": map[string]any{"owner": "docs"}}, sk.Frontmatter)
	require.Len(t, sk.Resources, 2)
	assert.Equal(t, sk.URI, sk.Resources[0].URI)
	assert.Equal(t, len(md), sk.Resources[0].Size)
	assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, sk.Resources[0].Digest)
	assert.NotNil(t, list.TTL)

	r = e.Dispatch(context.Background(), &protocol.Call{Method: "skills/get", ID: wire.Int(2), Revision: protocol.Rev20260728,
		Params: json.RawMessage(`{"uri":"skill://acme/pdf-tools/SKILL.md"}`)}, nil)
	require.Nil(t, r.Err)
	assert.Contains(t, string(r.Result), `"uri":"skill://acme/pdf-tools/SKILL.md"}`)
	r = e.Dispatch(context.Background(), &protocol.Call{Method: "skills/get", ID: wire.Int(3), Revision: protocol.Rev20260728,
		Params: json.RawMessage(`{"uri":"skill://nope/SKILL.md"}`)}, nil)
	require.NotNil(t, r.Err)
	assert.Equal(t, -32602, r.Err.Code)
	r = e.Dispatch(context.Background(), &protocol.Call{Method: "resources/read", ID: wire.Int(4), Revision: protocol.Rev20260728,
		Params: json.RawMessage(`{"uri":"skill://acme/pdf-tools/SKILL.md"}`)}, nil)
	require.Nil(t, r.Err)
	assert.Contains(t, string(r.Result), `"mimeType":"text/markdown"`)
}

func TestTaskStatusNotifications(t *testing.T) {
	m := startModern(t, nil)
	r := m.taskDo("tools/call", map[string]any{"name": "task_ask"})
	id := r.result["taskId"].(string)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, next := m.listen(ctx, map[string]any{"taskIds": []any{id, "someone-elses"}}, nil, withTasks())
	defer resp.Body.Close()
	ack := next()
	assert.Equal(t, []any{id, "someone-elses"}, ack["params"].(map[string]any)["notifications"].(map[string]any)["taskIds"])
	g := m.waitTask(id, "working")
	require.Equal(t, "input_required", g["status"])
	var p map[string]any
	for p == nil || p["status"] == "working" { // the state at subscription time comes first
		n := next()
		require.Equal(t, "notifications/tasks", n["method"])
		p = n["params"].(map[string]any)
	}
	assert.Equal(t, id, p["taskId"])
	assert.Equal(t, "input_required", p["status"])
	assert.Contains(t, p["inputRequests"], "who")
	assert.EqualValues(t, 7, p["_meta"].(map[string]any)[metaSubscriptionID])
	m.taskDo("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"who": modAccept(map[string]any{"name": "N"})}})
	for {
		p = next()["params"].(map[string]any)
		if p["status"] == "completed" {
			break
		}
		require.Equal(t, "working", p["status"])
	}
	assert.Contains(t, p, "result")

	_, plain := m.listen(ctx, map[string]any{"taskIds": []any{id}}, nil)
	ack = plain()
	assert.NotContains(t, ack["params"].(map[string]any)["notifications"], "taskIds", "taskIds need the tasks extension")
}
