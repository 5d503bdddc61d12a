package main

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMetricsScrape: after a tool call, /metrics is Prometheus text that
// the Prometheus parser reads, with the MCP operation histogram labelled
// by method and tool, and the open session counted.
func TestMetricsScrape(t *testing.T) {
	ta := newTestApp(t)
	writer := ta.token(t, scopeRead+" "+scopeWrite)
	sid := ta.initialize(t, writer)
	res, body := ta.mcpPost(t, writer, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_task","arguments":{"title":"Scraped"}}}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)

	resp, err := http.Get(ta.srv.URL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/plain")
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)

	op := families["mcp_server_operation_duration_seconds"]
	require.NotNil(t, op, "families: %v", keys(families))
	var calls uint64
	for _, m := range op.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["mcp_method_name"] == "tools/call" && labels["gen_ai_tool_name"] == "add_task" {
			calls += m.GetHistogram().GetSampleCount()
			assert.Equal(t, "execute_tool", labels["gen_ai_operation_name"])
			assert.Equal(t, "2025-11-25", labels["mcp_protocol_version"])
		}
	}
	assert.Equal(t, uint64(1), calls)
	sessions := families["mcp_server_session_active"]
	require.NotNil(t, sessions, "families: %v", keys(families))
	require.Len(t, sessions.GetMetric(), 1)
	assert.Equal(t, 1.0, sessions.GetMetric()[0].GetGauge().GetValue())
}

// TestChartFeed: a tool call reaches the dashboard's feed as a "tools"
// event with the tool's calls and mean latency.
func TestChartFeed(t *testing.T) {
	ta := newTestApp(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	feedRes, rd := openFeed(t, ctx, ta.srv.URL, "")
	defer feedRes.Body.Close()
	nextOf(t, rd, "snapshot")

	writer := ta.token(t, scopeRead+" "+scopeWrite)
	sid := ta.initialize(t, writer)
	for i := range 2 {
		res, body := ta.mcpPost(t, writer, sid, `{"jsonrpc":"2.0","id":`+string(rune('2'+i))+`,"method":"tools/call","params":{"name":"list_tasks","arguments":{}}}`)
		require.Equal(t, http.StatusOK, res.StatusCode, body)
	}
	var got struct{ Tools []toolStat }
	for {
		ev := nextOf(t, rd, "tools")
		require.NoError(t, json.Unmarshal(ev.Data, &got))
		if len(got.Tools) == 1 && got.Tools[0].Calls == 2 {
			break
		}
	}
	assert.Equal(t, "list_tasks", got.Tools[0].Tool)
	assert.Greater(t, got.Tools[0].MeanMS, 0.0)
	assert.Zero(t, got.Tools[0].Errors)

	// A dashboard that opens now gets the figures right after the
	// snapshot, not at the next call.
	lateRes, late := openFeed(t, ctx, ta.srv.URL, "")
	defer lateRes.Body.Close()
	ev, err := late.Next()
	require.NoError(t, err)
	require.Equal(t, "snapshot", ev.Event)
	ev, err = late.Next()
	require.NoError(t, err)
	require.Equal(t, "tools", ev.Event, "a new feed's second event is the chart's figures")
	var now struct{ Tools []toolStat }
	require.NoError(t, json.Unmarshal(ev.Data, &now))
	require.Len(t, now.Tools, 1)
	assert.Equal(t, uint64(2), now.Tools[0].Calls)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
