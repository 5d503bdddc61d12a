package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/example_app/oauth"
)

// mcpPost sends one JSON-RPC message to /mcp and returns the response and
// its body (the last data line when it is an event stream).
func (ta *testApp) mcpPost(t *testing.T, token, session, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, ta.srv.URL+"/mcp", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	out := string(b)
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		lines := strings.Split(strings.TrimSpace(out), "\n")
		out = strings.TrimPrefix(lines[len(lines)-1], "data: ")
	}
	return res, out
}

func (ta *testApp) initialize(t *testing.T, token string) string {
	t.Helper()
	res, body := ta.mcpPost(t, token, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	id := res.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, id)
	res, _ = ta.mcpPost(t, token, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	return id
}

func TestMCPNeedsAToken(t *testing.T) {
	ta := newTestApp(t)
	res, _ := ta.mcpPost(t, "", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
	assert.Contains(t, res.Header.Get("WWW-Authenticate"), `resource_metadata="`+ta.cfg.BaseURL+`/.well-known/oauth-protected-resource/mcp"`)

	res, body := ta.do(t, http.MethodGet, "/.well-known/oauth-protected-resource/mcp", "", "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	var md map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &md))
	assert.Equal(t, ta.cfg.BaseURL+"/mcp", md["resource"])
	assert.ElementsMatch(t, []any{scopeRead, scopeWrite}, md["scopes_supported"])
	assert.Equal(t, []any{ta.cfg.BaseURL}, md["authorization_servers"], "the metadata names the authorization server")

	res, body = ta.do(t, http.MethodGet, "/.well-known/oauth-authorization-server", "", "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, body, `"issuer":"`+ta.cfg.BaseURL+`"`)
}

// TestMCPRefusesATokenForAnotherAudience: a token signed by the same
// authorization server, with the same key, but for another resource is
// refused (RFC 8707).
func TestMCPRefusesATokenForAnotherAudience(t *testing.T) {
	ta := newTestApp(t)
	other, err := oauth.New(context.Background(), ta.db, oauth.Options{Issuer: ta.cfg.BaseURL,
		Resource: "http://other.example/mcp", Scopes: []string{scopeRead}})
	require.NoError(t, err)
	defer other.Close()
	tok, err := other.DevToken(context.Background(), "tester", scopeRead+" "+scopeWrite, time.Hour)
	require.NoError(t, err)
	res, _ := ta.mcpPost(t, tok, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
	assert.Contains(t, res.Header.Get("WWW-Authenticate"), `error="invalid_token"`)
	res, _ = ta.do(t, http.MethodGet, "/api/tasks", tok, "")
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
}

func TestMCPWriteToolsNeedTheWriteScope(t *testing.T) {
	ta := newTestApp(t)
	reader := ta.token(t, scopeRead)
	sid := ta.initialize(t, reader)

	// The write tools are listed to a reader: a client learns it can ask
	// for the scope.
	res, body := ta.mcpPost(t, reader, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, body, `"name":"add_task"`)

	res, body = ta.mcpPost(t, reader, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_task","arguments":{"title":"nope"}}}`)
	assert.Equal(t, http.StatusForbidden, res.StatusCode, body)
	assert.Equal(t, `Bearer error="insufficient_scope", error_description="the token lacks a required scope", scope="tasks:write", resource_metadata="`+
		ta.cfg.BaseURL+`/.well-known/oauth-protected-resource/mcp"`, res.Header.Get("WWW-Authenticate"))
	assert.Empty(t, ta.tasks(t), "the refused call did not run")

	res, body = ta.mcpPost(t, reader, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_tasks","arguments":{}}}`)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, body, `"structuredContent":{"tasks":[]}`)

	// The same session id with another subject's token is not found.
	other, err := ta.oauth.DevToken(context.Background(), "someone-else", scopeRead, time.Hour)
	require.NoError(t, err)
	res, _ = ta.mcpPost(t, other, sid, `{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
}

func TestMCPToolChangesTheBoardAndTheFeed(t *testing.T) {
	ta := newTestApp(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	feedRes, rd := openFeed(t, ctx, ta.srv.URL, "")
	defer feedRes.Body.Close()
	nextOf(t, rd, "snapshot")

	writer := ta.token(t, scopeRead+" "+scopeWrite)
	sid := ta.initialize(t, writer)
	opened := nextOf(t, rd, "mcp")
	assert.Contains(t, string(opened.Data), `"kind":"session opened"`)
	assert.Contains(t, string(opened.Data), `"session":"`+sessionTag(sid)+`"`, "the public feed names a session by a hash")
	assert.NotContains(t, string(opened.Data), sid)

	res, body := ta.mcpPost(t, writer, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_task","arguments":{"title":"From MCP","tags":["mcp"]}}}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"title":"From MCP"`)
	ev := nextOf(t, rd, "task")
	assert.Contains(t, string(ev.Data), `"From MCP"`)
	ev = nextOf(t, rd, "mcp")
	assert.JSONEq(t, `{"kind":"tool","tool":"add_task","ok":true}`, string(ev.Data))

	// The REST API sees the same store.
	_, list := ta.do(t, http.MethodGet, "/api/tasks", writer, "")
	assert.Contains(t, list, `"From MCP"`)

	// import_tasks reports progress on an event stream.
	res, body = ta.mcpPost(t, writer, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"import_tasks","arguments":{"titles":["a","b","c"]},"_meta":{"progressToken":7}}}`)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	assert.Contains(t, body, `"structuredContent":{"imported":3}`)
	assert.Len(t, ta.tasks(t), 4)

	// summarize_tasks falls back when the client offers no sampling.
	res, body = ta.mcpPost(t, writer, sid, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"summarize_tasks","arguments":{}}}`)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, body, `"source":"fallback"`)
	assert.Contains(t, body, "4 open task(s)")

	res, _ = ta.mcpPost(t, writer, sid, "")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	req, _ := http.NewRequest(http.MethodDelete, ta.srv.URL+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+writer)
	req.Header.Set("Mcp-Session-Id", sid)
	del, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	del.Body.Close()
	assert.Equal(t, http.StatusNoContent, del.StatusCode)
	for {
		ev := nextOf(t, rd, "mcp")
		if strings.Contains(string(ev.Data), `"session closed"`) {
			assert.Contains(t, string(ev.Data), `"reason":"deleted"`)
			assert.Contains(t, string(ev.Data), sessionTag(sid))
			break
		}
	}
}
