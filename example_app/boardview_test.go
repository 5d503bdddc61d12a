package main

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const uiCaps = `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`

// initializeWith opens a session whose client declares caps and returns
// its id and the initialize result.
func (ta *testApp) initializeWith(t *testing.T, token, caps string) (string, string) {
	t.Helper()
	res, body := ta.mcpPost(t, token, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+
		caps+`,"clientInfo":{"name":"host","version":"1"}}}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	id := res.Header.Get("Mcp-Session-Id")
	res, _ = ta.mcpPost(t, token, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	return id, body
}

type toolsList struct {
	Result struct {
		Tools []struct {
			Name string         `json:"name"`
			Meta map[string]any `json:"_meta"`
		} `json:"tools"`
	} `json:"result"`
}

func (ta *testApp) listTools(t *testing.T, token, sid string) map[string]map[string]any {
	t.Helper()
	_, body := ta.mcpPost(t, token, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var l toolsList
	require.NoError(t, json.Unmarshal([]byte(body), &l), body)
	out := map[string]map[string]any{}
	for _, tl := range l.Result.Tools {
		out[tl.Name] = tl.Meta
	}
	return out
}

// TestBoardViewNegotiation: a host that renders views is offered the
// board view on list_tasks and the app-only watch_board; a client that
// does not sees neither, and list_tasks as it always was.
func TestBoardViewNegotiation(t *testing.T) {
	ta := newTestApp(t)
	tok := ta.token(t, scopeRead)

	sid, init := ta.initializeWith(t, tok, uiCaps)
	assert.Contains(t, init, `"extensions":{"io.modelcontextprotocol/ui":{}}`)
	tools := ta.listTools(t, tok, sid)
	assert.Equal(t, map[string]any{"ui": map[string]any{"resourceUri": boardViewURI}}, tools["list_tasks"])
	assert.Equal(t, map[string]any{"ui": map[string]any{"resourceUri": boardViewURI, "visibility": []any{"app"}}}, tools["watch_board"])

	plain := ta.initialize(t, tok)
	tools = ta.listTools(t, tok, plain)
	assert.NotContains(t, tools, "watch_board")
	require.Contains(t, tools, "list_tasks")
	assert.Nil(t, tools["list_tasks"], "no _meta for a client without views")
	_, body := ta.mcpPost(t, tok, plain, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"watch_board","arguments":{}}}`)
	assert.Contains(t, body, `"code":-32602`, "watch_board is unknown to it")

	// The view itself: one document, its script and style inlined.
	_, body = ta.mcpPost(t, tok, sid, `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"`+boardViewURI+`"}}`)
	var read struct {
		Result struct {
			Contents []struct {
				MIMEType string         `json:"mimeType"`
				Text     string         `json:"text"`
				Meta     map[string]any `json:"_meta"`
			} `json:"contents"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &read), body)
	require.Len(t, read.Result.Contents, 1)
	c := read.Result.Contents[0]
	assert.Equal(t, "text/html;profile=mcp-app", c.MIMEType)
	assert.Contains(t, c.Text, `ui/initialize`, "board.js is inlined")
	assert.Contains(t, c.Text, `li.done .title`, "board.css is inlined")
	assert.Contains(t, c.Text, `<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;;`)
	assert.Equal(t, map[string]any{"ui": map[string]any{"prefersBorder": true}}, c.Meta)
}

// TestWatchBoard: watch_board answers at once for a stale version, and
// waits for the next change otherwise.
func TestWatchBoard(t *testing.T) {
	ta := newTestApp(t)
	tok := ta.token(t, scopeRead+" "+scopeWrite)
	sid, _ := ta.initializeWith(t, tok, uiCaps)
	type state struct {
		Result struct {
			StructuredContent boardState `json:"structuredContent"`
		} `json:"result"`
	}
	watch := func(since string) boardState {
		_, body := ta.mcpPost(t, tok, sid, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"watch_board","arguments":{"since":"`+since+`"}}}`)
		var s state
		require.NoError(t, json.Unmarshal([]byte(body), &s), body)
		return s.Result.StructuredContent
	}
	now := watch("")
	assert.Empty(t, now.Tasks)
	require.NotEmpty(t, now.Version)

	start := time.Now()
	go func() {
		time.Sleep(200 * time.Millisecond)
		_, _ = ta.mcpPost(t, tok, sid, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"add_task","arguments":{"title":"watched"}}}`)
	}()
	next := watch(now.Version)
	assert.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond, "it waited for the change")
	assert.Less(t, time.Since(start), watchWait, "and answered with it")
	require.Len(t, next.Tasks, 1)
	assert.Equal(t, "watched", next.Tasks[0].Title)
	assert.NotEqual(t, now.Version, next.Version)
}

// TestBoardViewCallsKeepTheCallersScopes: the view's calls are the
// host's, with its token: a reader's view cannot add a task.
func TestBoardViewCallsKeepTheCallersScopes(t *testing.T) {
	ta := newTestApp(t)
	reader := ta.token(t, scopeRead)
	sid, _ := ta.initializeWith(t, reader, uiCaps)
	res, body := ta.mcpPost(t, reader, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_task","arguments":{"title":"nope"}}}`)
	assert.Equal(t, http.StatusForbidden, res.StatusCode, body)
	assert.Empty(t, ta.tasks(t))
}
