package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// accessServer has an item of every kind open to all, one that asks the
// caller to step up, and one hidden from callers without access.
func accessServer(t *testing.T, so *ServerOptions) (*Server, *atomic.Int32) {
	t.Helper()
	srv := NewServer(Implementation{Name: "access", Version: "1"}, so)
	var ran atomic.Int32
	tool := func(name string, a *Access) {
		require.NoError(t, AddTool(srv, &Tool{Name: name, Access: a}, func(context.Context, *CallToolRequest, struct{}) (string, error) {
			ran.Add(1)
			return "ran " + name, nil
		}))
	}
	tool("open", nil)
	tool("write", &Access{Scopes: []string{"tasks:write"}})
	tool("admin", &Access{Scopes: []string{"admin"}, Hidden: true})
	tool("bobs", &Access{Allow: func(_ context.Context, r *Request) bool { return r.Identity == "bob" }, Hidden: true})
	tool("picky", &Access{Allow: func(_ context.Context, r *Request) bool { return r.Identity == "bob" }})
	prompt := func(name string, a *Access) {
		require.NoError(t, srv.AddPrompt(&Prompt{Name: name, Access: a, Arguments: []*PromptArgument{{Name: "x"}}},
			func(context.Context, *GetPromptRequest) (*GetPromptResult, error) {
				return &GetPromptResult{Messages: []*PromptMessage{{Role: RoleUser, Content: Text(name)}}}, nil
			}))
	}
	prompt("open_prompt", nil)
	prompt("admin_prompt", &Access{Scopes: []string{"admin"}, Hidden: true})
	read := func(_ context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
		return &ReadResourceResult{Contents: []*ResourceContents{{URI: req.URI, Text: "read"}}}, nil
	}
	require.NoError(t, srv.AddResource(&Resource{URI: "res://open", Name: "open"}, read))
	require.NoError(t, srv.AddResource(&Resource{URI: "res://admin", Name: "admin", Access: &Access{Scopes: []string{"admin"}, Hidden: true}}, read))
	require.NoError(t, srv.AddResource(&Resource{URI: "res://write", Name: "write", Access: &Access{Scopes: []string{"tasks:write"}}}, read))
	require.NoError(t, srv.AddResourceTemplate(&ResourceTemplate{URITemplate: "admin://{id}", Name: "admin_tmpl",
		Access: &Access{Scopes: []string{"admin"}, Hidden: true}}, read))
	require.NoError(t, srv.AddTemplateCompletion("admin://{id}", "id", func(context.Context, *CompleteRequest) (*CompleteResult, error) {
		return &CompleteResult{Values: []string{"1"}}, nil
	}))
	return srv, &ran
}

func names(t *testing.T, m rpcMsg, list, key string) []string {
	t.Helper()
	require.Nil(t, m.Error)
	var r map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(m.Result, &r))
	var items []map[string]any
	require.NoError(t, json.Unmarshal(r[list], &items))
	var out []string
	for _, it := range items {
		out = append(out, it[key].(string))
	}
	slices.Sort(out)
	return out
}

// A caller sees what it may use and the step-up items; what is hidden
// from it is answered exactly as what does not exist, on every transport.
func TestAccessPerCaller(t *testing.T) {
	srv, ran := accessServer(t, nil)
	reader := caller{identity: "ann", scopes: []string{"tasks:read"}}
	for _, c := range rawClients(t, srv, reader, nil) {
		t.Run(c.name, func(t *testing.T) {
			_, _, m := c.call(t, req("2", "tools/list", ""))
			assert.Equal(t, []string{"open", "picky", "write"}, names(t, m, "tools", "name"))
			_, _, m = c.call(t, req("2", "prompts/list", ""))
			assert.Equal(t, []string{"open_prompt"}, names(t, m, "prompts", "name"))
			_, _, m = c.call(t, req("2", "resources/list", ""))
			assert.Equal(t, []string{"res://open", "res://write"}, names(t, m, "resources", "uri"))
			_, _, m = c.call(t, req("2", "resources/templates/list", ""))
			assert.Empty(t, names(t, m, "resourceTemplates", "uriTemplate"))

			// Hidden: the same answer as for what does not exist, but
			// for the name the caller sent.
			same := func(hidden, unknown string, name, none string) {
				t.Helper()
				_, _, h := c.call(t, hidden)
				_, _, u := c.call(t, unknown)
				require.NotNil(t, h.Error, hidden)
				require.NotNil(t, u.Error, unknown)
				assert.Equal(t, u.Error.Code, h.Error.Code)
				assert.Equal(t, strings.ReplaceAll(u.Error.Message, none, name), h.Error.Message)
				assert.Equal(t, strings.ReplaceAll(string(u.Error.Data), none, name), string(h.Error.Data))
			}
			same(toolCall("3", "admin", `{}`), toolCall("3", "nosuch", `{}`), "admin", "nosuch")
			same(toolCall("3", "bobs", `{}`), toolCall("3", "nosuc", `{}`), "bobs", "nosuc")
			same(req("3", "prompts/get", `{"name":"admin_prompt"}`), req("3", "prompts/get", `{"name":"nosuch_prompt"}`), "admin_prompt", "nosuch_prompt")
			same(req("3", "resources/read", `{"uri":"res://admin"}`), req("3", "resources/read", `{"uri":"res://nosuch"}`), "res://admin", "res://nosuch")
			same(req("3", "resources/read", `{"uri":"admin://1"}`), req("3", "resources/read", `{"uri":"nosuch://1"}`), "admin://1", "nosuch://1")
			same(req("3", "completion/complete", `{"ref":{"type":"ref/prompt","name":"admin_prompt"},"argument":{"name":"x","value":""}}`),
				req("3", "completion/complete", `{"ref":{"type":"ref/prompt","name":"nosuch_prompt"},"argument":{"name":"x","value":""}}`), "admin_prompt", "nosuch_prompt")
			same(req("3", "completion/complete", `{"ref":{"type":"ref/resource","uri":"admin://{id}"},"argument":{"name":"id","value":""}}`),
				req("3", "completion/complete", `{"ref":{"type":"ref/resource","uri":"nosuch://{id}"},"argument":{"name":"id","value":""}}`), "admin://{id}", "nosuch://{id}")

			// Listed but not for this caller: step-up over HTTP (a 403
			// challenge naming the scope), a JSON-RPC error elsewhere.
			for _, body := range []string{toolCall("4", "write", `{}`), req("4", "resources/read", `{"uri":"res://write"}`)} {
				status, hdr, m := c.call(t, body)
				require.NotNil(t, m.Error, body)
				assert.Equal(t, wire.InvalidRequest, m.Error.Code)
				assert.Equal(t, `4`, string(m.ID))
				assert.JSONEq(t, `{"error":"insufficient_scope","scope":"tasks:write"}`, string(m.Error.Data))
				if c.name == "stdio" {
					continue
				}
				assert.Equal(t, http.StatusForbidden, status)
				assert.Equal(t, `Bearer error="insufficient_scope", scope="tasks:write", error_description="the token lacks a required scope"`,
					hdr.Get("WWW-Authenticate"))
			}
			_, _, m = c.call(t, toolCall("5", "picky", `{}`))
			require.NotNil(t, m.Error)
			assert.Equal(t, "Forbidden", m.Error.Message, "a predicate's refusal names no scope")
			assert.Zero(t, ran.Load(), "no refused call ran")

			_, _, m = c.call(t, toolCall("6", "open", `{}`))
			assert.Equal(t, "ran open", m.text(t))
			ran.Store(0)
		})
	}

	bob := caller{identity: "bob", scopes: []string{"admin", "tasks:write"}}
	for _, c := range rawClients(t, srv, bob, nil) {
		t.Run(c.name+"-bob", func(t *testing.T) {
			_, _, m := c.call(t, req("2", "tools/list", ""))
			assert.Equal(t, []string{"admin", "bobs", "open", "picky", "write"}, names(t, m, "tools", "name"))
			_, _, m = c.call(t, req("2", "resources/templates/list", ""))
			assert.Equal(t, []string{"admin://{id}"}, names(t, m, "resourceTemplates", "uriTemplate"))
			for _, tool := range []string{"admin", "bobs", "picky", "write"} {
				_, _, m = c.call(t, toolCall("3", tool, `{}`))
				assert.Equal(t, "ran "+tool, m.text(t))
			}
			_, _, m = c.call(t, req("4", "resources/read", `{"uri":"admin://7"}`))
			require.Nil(t, m.Error)
			assert.Contains(t, string(m.Result), `"uri":"admin://7"`)
			_, _, m = c.call(t, req("5", "prompts/get", `{"name":"admin_prompt"}`))
			require.Nil(t, m.Error)
		})
	}
}

// Pages are cut from what the caller may see: a caller's walk through the
// list meets each of its items once and no other.
func TestAccessPaging(t *testing.T) {
	srv := NewServer(Implementation{Name: "pages", Version: "1"}, &ServerOptions{PageSize: 2})
	var want []string
	for i := range 9 {
		name := fmt.Sprintf("t%d", i)
		var a *Access
		if i%3 != 0 {
			a = &Access{Scopes: []string{"x"}, Hidden: true}
		} else {
			want = append(want, name)
		}
		require.NoError(t, srv.AddToolRaw(&Tool{Name: name, Access: a}, func(context.Context, *CallToolRequest) (*CallToolResult, error) { return nil, nil }))
	}
	for _, c := range rawClients(t, srv, caller{identity: "ann"}, nil) {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			cursor := ""
			for pages := 0; ; pages++ {
				require.Less(t, pages, 5)
				params := ""
				if cursor != "" {
					params = fmt.Sprintf(`{"cursor":%q}`, cursor)
				}
				_, _, m := c.call(t, req("2", "tools/list", params))
				got = append(got, names(t, m, "tools", "name")...)
				var r struct {
					NextCursor string `json:"nextCursor"`
				}
				require.NoError(t, json.Unmarshal(m.Result, &r))
				if cursor = r.NextCursor; cursor == "" {
					break
				}
			}
			assert.Equal(t, want, got)
		})
	}
}

// Without Options.Scopes no token is in play: a step-up refusal is the
// call's JSON-RPC error, and every Access.Scopes item is refused; with
// Options.StepUp the app writes the challenge.
func TestAccessStepUpAnswers(t *testing.T) {
	srv, _ := accessServer(t, nil)
	ts := startServer(t, &Options{Handler: srv})
	resp := ts.post("", toolCall("1", "write", `{}`))
	m := readJSON(t, resp, http.StatusOK)
	require.NotNil(t, m.Error)
	assert.Equal(t, wire.InvalidRequest, m.Error.Code)
	assert.Empty(t, resp.Header.Get("WWW-Authenticate"))

	var asked []string
	ts = startServer(t, &Options{Handler: srv, Scopes: func(context.Context) []string { return []string{"tasks:read"} },
		StepUp: func(w http.ResponseWriter, r *http.Request, scopes []string) {
			asked = scopes
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="tasks:write", resource_metadata="https://x.example/m"`)
			w.WriteHeader(http.StatusForbidden)
		}})
	resp = ts.post("", toolCall("1", "write", `{}`))
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("WWW-Authenticate"), "resource_metadata")
	assert.Equal(t, []string{"tasks:write"}, asked)
}

// A 2026-07-28 call's Mcp-Param-* headers are not checked against a tool
// hidden from its caller: a mismatch would reveal it.
func TestAccessParamHeadersOfHiddenTools(t *testing.T) {
	srv := NewServer(Implementation{Name: "h", Version: "1"}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)
	require.NoError(t, srv.AddToolRaw(&Tool{Name: "geo", InputSchema: schema, Access: &Access{Scopes: []string{"geo"}, Hidden: true}},
		func(context.Context, *CallToolRequest) (*CallToolResult, error) { return nil, nil }))
	e := newEngine(srv, engineOptions{Scopes: scopesFrom})
	none := context.Background()
	geo := context.WithValue(none, scopesKey{}, []string{"geo"})
	assert.Nil(t, e.ParamHeaders(none, "geo", "ann", nil))
	assert.Len(t, e.ParamHeaders(geo, "geo", "ann", nil), 1)
}

// Access is checked when an item is registered and copied then.
func TestAccessRegistration(t *testing.T) {
	srv := NewServer(Implementation{Name: "r", Version: "1"}, nil)
	nop := func(context.Context, *CallToolRequest) (*CallToolResult, error) { return nil, nil }
	for _, bad := range []string{"", "a b", `q"`, `back\slash`, "tab\t"} {
		assert.ErrorIs(t, srv.AddToolRaw(&Tool{Name: "t", Access: &Access{Scopes: []string{bad}}}, nop), ErrName, "%q", bad)
	}
	a := &Access{Scopes: []string{"x"}, Hidden: true}
	require.NoError(t, srv.AddToolRaw(&Tool{Name: "t", Access: a}, nop))
	a.Scopes[0], a.Hidden = "y", false
	page, _, err := srv.ListTools(context.Background(), &ListRequest{}, nil)
	require.NoError(t, err)
	b, _ := json.Marshal(page)
	assert.Equal(t, `{"tools":[]}`, string(b), "the Server kept its own copy")
}

// A session whose caller steps up (same identity, a token with more
// scopes) hears that its lists changed: what it may see did.
func TestAccessStepUpChangesTheSessionsLists(t *testing.T) {
	srv, _ := accessServer(t, nil)
	lg, buf := quietLogger()
	ep := Controller(&Options{Handler: srv, Sessions: &SessionOptions{}, Logger: lg, Scopes: scopesFrom,
		Identity: func(r *http.Request) string { return r.Header.Get("X-User") }})
	hs := httptest.NewServer(withScopes(ep))
	ts := &tserver{t: t, ep: ep, srv: hs, url: hs.URL, hc: hs.Client(), log: buf}
	t.Cleanup(func() {
		ts.endAll()
		hs.CloseClientConnections()
		hs.Close()
	})
	reader := []string{"X-User", "ann", "X-Scopes", "tasks:read"}
	admin := []string{"X-User", "ann", "X-Scopes", "tasks:read admin"}
	sid := ts.open("2025-11-25", `{}`, reader...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	get := openStream(t, ts.get(ctx, sid, reader...))
	get.priming()

	assert.NotContains(t, names(t, ts.call(sid, req("2", "tools/list", ""), reader...), "tools", "name"), "admin")
	assert.Nil(t, ts.call(sid, req("3", "ping", ""), reader...).Error, "the same scopes: nothing to tell")
	assert.Contains(t, names(t, ts.call(sid, req("4", "tools/list", ""), admin...), "tools", "name"), "admin")
	var told []string
	for range 3 { // tools, prompts and resources hide items
		m, _ := get.msg()
		told = append(told, m.Method)
	}
	assert.ElementsMatch(t, []string{"notifications/tools/list_changed", "notifications/prompts/list_changed",
		"notifications/resources/list_changed"}, told)
}

// A caller who may see everything gets the very bytes a server without
// Access sends, page by page.
func TestAccessAllSeeingCallerGetsTheSameBytes(t *testing.T) {
	build := func(gated bool) *Server {
		srv := NewServer(Implementation{Name: "same", Version: "1"}, &ServerOptions{PageSize: 3, Keys: [][]byte{make([]byte, 32)}})
		for i := range 7 {
			var a *Access
			if gated && i%2 == 0 {
				a = &Access{Scopes: []string{"s"}, Hidden: i%4 == 0}
			}
			require.NoError(t, srv.AddToolRaw(&Tool{Name: fmt.Sprintf("t%d", i), Description: "d", Access: a},
				func(context.Context, *CallToolRequest) (*CallToolResult, error) { return nil, nil }))
		}
		return srv
	}
	plain, gated := build(false), build(true)
	ep := newEngine(plain, engineOptions{})
	eg := newEngine(gated, engineOptions{Scopes: func(context.Context) []string { return []string{"s"} }})
	for _, rev := range []Revision{Rev20250326, Rev20250618, Rev20251125, Rev20260728} {
		cursor := ""
		for page := 0; page < 3; page++ {
			params := "{}"
			if cursor != "" {
				params = fmt.Sprintf(`{"cursor":%q}`, cursor)
			}
			if rev == Rev20260728 {
				params = modernBody(t, req("1", "tools/list", params))
			} else {
				params = req("1", "tools/list", params)
			}
			m, derr := ep.Decoder().Decode([]byte(params))
			require.Nil(t, derr)
			cp, cg := testCall(&m, rev), testCall(&m, rev)
			rp, rg := ep.Dispatch(context.Background(), &cp, nil), eg.Dispatch(context.Background(), &cg, nil)
			require.Nil(t, rp.Err)
			a, b := string(ep.AppendReply(nil, m.ID, rp)), string(eg.AppendReply(nil, m.ID, rg))
			assert.Equal(t, a, b, "%s page %d", rev, page)
			var r struct {
				Result struct {
					NextCursor string `json:"nextCursor"`
				} `json:"result"`
			}
			require.NoError(t, json.Unmarshal([]byte(a), &r))
			if cursor = r.Result.NextCursor; cursor == "" {
				break
			}
		}
	}
}

// A subscription to a resource hidden from the caller is answered as any
// other and not recorded: its updates do not reveal it.
func TestAccessSubscriptionToAHiddenResource(t *testing.T) {
	srv, _ := accessServer(t, nil)
	sc := startStdio(t, srv, &ConnOptions{Identity: "ann"})
	sc.open("2025-11-25", `{}`)
	for i, uri := range []string{"res://admin", "res://open", "admin://9"} {
		sc.send(req(fmt.Sprint(10+i), "resources/subscribe", fmt.Sprintf(`{"uri":%q}`, uri)))
		m, _ := sc.reply(fmt.Sprint(10 + i))
		require.Nil(t, m.Error, m.raw)
		assert.JSONEq(t, `{}`, string(m.Result))
	}
	srv.ResourceUpdated("res://admin")
	srv.ResourceUpdated("admin://9")
	srv.ResourceUpdated("res://open")
	m := sc.next()
	assert.Equal(t, "notifications/resources/updated", m.Method)
	assert.JSONEq(t, `{"uri":"res://open"}`, string(m.Params), "the hidden resources' updates were not sent")
}

// A tool its caller does not see starts no task and has no Mcp-Param-*
// headers checked: its call is answered as an unknown tool's, whether
// Access hides it or it is app-only and the client renders no view.
func TestHiddenToolsStartNoTaskAndCheckNoHeaders(t *testing.T) {
	srv := NewServer(Implementation{Name: "hidden", Version: "1"}, &ServerOptions{Tasks: &TaskOptions{}})
	var ran atomic.Int32
	schema := json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)
	run := func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		ran.Add(1)
		return &CallToolResult{Content: []Content{Text("ran")}}, nil
	}
	require.NoError(t, srv.AddView(&View{URI: "ui://h/view", Name: "view", HTML: "<!DOCTYPE html><p>v</p>"}))
	require.NoError(t, srv.AddToolRaw(&Tool{Name: "secret", InputSchema: schema, TaskSupport: TaskOptional,
		Access: &Access{Scopes: []string{"admin"}, Hidden: true}}, run))
	require.NoError(t, srv.AddToolRaw(&Tool{Name: "apponly", InputSchema: schema, TaskSupport: TaskOptional,
		Meta: Meta{"ui": &ToolUI{ResourceURI: "ui://h/view", Visibility: []Visibility{VisibilityApp}}}}, run))
	hs := httptest.NewServer(Controller(&Options{Handler: srv, Logger: modQuietLog()}))
	t.Cleanup(hs.Close)
	m := &modernServer{t: t, url: hs.URL, srv: srv, hc: hs.Client()}
	caps := map[string]any{"extensions": map[string]any{ExtTasks: map[string]any{}}}
	for _, name := range []string{"secret", "apponly", "nosuch"} {
		for _, hdr := range []map[string]string{{"Mcp-Param-Region": "eu"}, {"Mcp-Param-Region": "us"}} {
			r := m.do(mreq{method: "tools/call", caps: caps, hdr: hdr,
				params: map[string]any{"name": name, "arguments": map[string]any{"region": "eu"}}})
			require.NotNil(t, r.err, "%s: %v", name, r.result)
			assert.Equal(t, http.StatusOK, r.status, name)
			assert.Equal(t, -32602, r.err.Code, name)
			assert.Equal(t, strings.ReplaceAll(`Invalid params: unknown tool: "X"`, "X", name), r.err.Message)
		}
	}
	assert.Zero(t, ran.Load(), "no hidden tool ran, as a call or a task")
}
