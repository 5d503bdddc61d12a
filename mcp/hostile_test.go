package mcp

// Hostile and malformed input over real HTTP, stateless and with
// sessions: every row checks the exact status and JSON-RPC code, then
// that the server still serves.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileRow is one hostile request and the answer it must get.
type hostileRow struct {
	name   string
	method string // default POST
	body   string
	// bodyReader, when set, replaces body (e.g. a chunked body).
	bodyReader func() io.Reader
	hdr        []string
	status     int
	code       int // JSON-RPC error code; 0: no JSON-RPC error body expected
	// check, when set, looks at the response further (body already read).
	check func(t *testing.T, resp *http.Response, body []byte)
	// only restricts the row to one mode: "stateless" or "session".
	only string
}

// endlessReader yields n bytes of '[' without a length, so the request
// is sent chunked.
type endlessReader struct{ n int }

func (r *endlessReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range k {
		p[i] = ' '
	}
	r.n -= k
	return k, nil
}

func hostileRows() []hostileRow {
	deep := strings.Repeat("[", 100_000)
	deepObj := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":` + strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000) + `}}`
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 10<<20) + `"}}`
	tc := func(params string) string { return req("7", "tools/call", params) }
	noBodyCheck := func(allow string) func(t *testing.T, resp *http.Response, body []byte) {
		return func(t *testing.T, resp *http.Response, body []byte) {
			assert.Equal(t, allow, resp.Header.Get("Allow"))
		}
	}
	return []hostileRow{
		{name: "empty body", body: "", status: 400, code: -32700},
		{name: "empty batch", body: "[]", status: 400, code: -32600},
		{name: "empty object", body: "{}", status: 400, code: -32600},
		{name: "not an object", body: `"ping"`, status: 400, code: -32600},
		{name: "garbage", body: `{"jsonrpc":"2.0",`, status: 400, code: -32700},
		{name: "100k open brackets", body: deep, status: 400, code: -32700, only: "stateless"},
		{name: "100k open brackets in a session", body: deep, status: 400, code: -32600, only: "session"},
		{name: "20k nesting in params", body: deepObj, status: 400, code: -32700},
		{name: "10 MiB body", body: big, status: 413, code: -32600},
		{name: "chunked body over the limit", bodyReader: func() io.Reader { return &endlessReader{n: 5 << 20} }, status: 413, code: -32600},
		{name: "invalid UTF-8", body: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}", status: 400, code: -32700},
		{name: "invalid UTF-8 in method", body: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}", status: 400, code: -32700},
		{name: "params a string", body: `{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`, status: 400, code: -32600},
		{name: "jsonrpc 1.0", body: `{"jsonrpc":"1.0","id":1,"method":"ping"}`, status: 400, code: -32600},
		{name: "duplicate id member", body: `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, status: 400, code: -32600},
		{name: "method a number", body: `{"jsonrpc":"2.0","id":1,"method":7}`, status: 400, code: -32600},

		// Wrong JSON types for the params of every method.
		{name: "tools/call name a number", body: tc(`{"name":7}`), status: 200, code: -32602},
		{name: "tools/call arguments an array", body: tc(`{"name":"echo","arguments":[1]}`), status: 200, code: -32602},
		{name: "tools/call arguments a string", body: tc(`{"name":"echo","arguments":"x"}`), status: 200, code: -32602},
		{name: "tools/call no name", body: tc(`{}`), status: 200, code: -32602},
		{name: "tools/call params an array", body: tc(`[1,2]`), status: 200, code: -32602},
		{name: "tools/call _meta an array", body: tc(`{"name":"echo","arguments":{"text":"a"},"_meta":[1]}`), status: 200, code: -32602},
		{name: "tools/call progressToken an object", body: tc(`{"name":"echo","arguments":{"text":"a"},"_meta":{"progressToken":{}}}`), status: 200, code: -32602},
		{name: "tools/list cursor an object", body: req("7", "tools/list", `{"cursor":{}}`), status: 200, code: -32602},
		{name: "tools/list cursor forged", body: req("7", "tools/list", `{"cursor":"forged"}`), status: 200, code: -32602},
		{name: "resources/list cursor a number", body: req("7", "resources/list", `{"cursor":1}`), status: 200, code: -32602},
		{name: "resources/templates/list cursor a bool", body: req("7", "resources/templates/list", `{"cursor":true}`), status: 200, code: -32602},
		{name: "resources/read uri a bool", body: req("7", "resources/read", `{"uri":true}`), status: 200, code: -32602},
		{name: "resources/read no uri", body: req("7", "resources/read", `{}`), status: 200, code: -32602},
		{name: "resources/subscribe uri a number", body: req("7", "resources/subscribe", `{"uri":1}`), status: 200, code: -32602},
		{name: "resources/unsubscribe uri null", body: req("7", "resources/unsubscribe", `{"uri":null}`), status: 200, code: -32602},
		{name: "logging/setLevel level a number", body: req("7", "logging/setLevel", `{"level":3}`), status: 200, code: -32602},
		{name: "logging/setLevel unknown level", body: req("7", "logging/setLevel", `{"level":"loud"}`), status: 200, code: -32602},
		{name: "ping params an array", body: req("7", "ping", `[1]`), status: 200, code: -32602},
		{name: "initialize protocolVersion a number", body: req("7", "initialize", `{"protocolVersion":2025,"capabilities":{},"clientInfo":{"name":"c","version":"1"}}`), status: 200, code: -32602, only: "stateless"},
		{name: "initialize capabilities an array", body: req("7", "initialize", `{"protocolVersion":"2025-11-25","capabilities":[],"clientInfo":{"name":"c","version":"1"}}`), status: 200, code: -32602, only: "stateless"},

		{name: "unknown method", body: req("7", "tools/explode", ""), status: 200, code: -32601},
		{name: "request to a notification method", body: req("7", "notifications/initialized", ""), status: 200, code: -32601},
		{name: "unknown tool", body: toolCall("7", "nope", `{}`), status: 200, code: -32602},
		{name: "panicking tool", body: toolCall("7", "panic", `{}`), status: 200, code: -32603,
			check: func(t *testing.T, _ *http.Response, body []byte) {
				assert.NotContains(t, string(body), "secret")
				assert.NotContains(t, string(body), "goroutine")
			}},
		{name: "tool returning invalid UTF-8", body: toolCall("7", "badutf8", `{}`), status: 200, code: -32603,
			check: func(t *testing.T, _ *http.Response, body []byte) { assert.True(t, json.Valid(body)) }},

		{name: "null id", body: `{"jsonrpc":"2.0","id":null,"method":"ping"}`, status: 400, code: -32600},
		{name: "fraction id", body: `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, status: 400, code: -32600},
		{name: "exponent id", body: `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, status: 400, code: -32600},
		{name: "object id", body: `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, status: 400, code: -32600},
		{name: "array id", body: `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, status: 400, code: -32600},
		{name: "bool id", body: `{"jsonrpc":"2.0","id":true,"method":"ping"}`, status: 400, code: -32600},

		{name: "batch in 2025-06-18", body: `[` + req("1", "ping", "") + `]`, hdr: []string{"MCP-Protocol-Version", "2025-06-18"}, status: 400, code: -32600},
		{name: "batch in 2025-11-25", body: `[` + req("1", "ping", "") + `]`, hdr: []string{"MCP-Protocol-Version", "2025-11-25"}, status: 400, code: -32600},
		{name: "batch with initialize in 2025-03-26", only: "stateless",
			body: `[` + initBody("2025-03-26", "{}") + `,` + req("2", "ping", "") + `]`, hdr: []string{"MCP-Protocol-Version", "2025-03-26"}, status: 200,
			check: func(t *testing.T, _ *http.Response, body []byte) {
				var out []rpcMsg
				require.NoError(t, json.Unmarshal(body, &out), "%s", body)
				require.Len(t, out, 2)
				assert.Equal(t, "0", string(out[0].ID))
				require.NotNil(t, out[0].Error)
				assert.Equal(t, -32600, out[0].Error.Code)
				assert.Equal(t, "2", string(out[1].ID))
				assert.JSONEq(t, `{}`, string(out[1].Result))
			}},
		{name: "batch of notifications in 2025-03-26", only: "stateless",
			body: `[` + note("notifications/initialized", "") + `,` + note("notifications/progress", `{"progressToken":1,"progress":1}`) + `]`,
			hdr:  []string{"MCP-Protocol-Version", "2025-03-26"}, status: 202},
		{name: "batch of garbage elements in 2025-03-26", only: "stateless",
			body: `[1,"x",{}]`, hdr: []string{"MCP-Protocol-Version", "2025-03-26"}, status: 200,
			check: func(t *testing.T, _ *http.Response, body []byte) {
				var out []rpcMsg
				require.NoError(t, json.Unmarshal(body, &out), "%s", body)
				require.Len(t, out, 3)
				for _, m := range out {
					require.NotNil(t, m.Error)
					assert.Equal(t, -32600, m.Error.Code)
				}
			}},

		{name: "notification", body: note("notifications/progress", `{"progressToken":1,"progress":1}`), status: 202},
		{name: "unknown notification", body: note("notifications/whatever", `{}`), status: 202},
		{name: "malformed cancellation", body: note("notifications/cancelled", `{"requestId":{}}`), status: 202},
		{name: "stray response", body: `{"jsonrpc":"2.0","id":99,"result":{}}`, status: 400, code: -32600, only: "stateless"},
		{name: "stray error response", body: `{"jsonrpc":"2.0","id":99,"error":{"code":1,"message":"x"}}`, status: 400, code: -32600, only: "stateless"},
		{name: "stray response in a session", body: `{"jsonrpc":"2.0","id":99,"result":{}}`, status: 202, only: "session"},

		{name: "Accept json only", body: req("1", "ping", ""), hdr: []string{"Accept", "application/json"}, status: 406, code: -32600},
		{name: "Accept event-stream only", body: req("1", "ping", ""), hdr: []string{"Accept", "text/event-stream"}, status: 406, code: -32600},
		{name: "no Accept", body: req("1", "ping", ""), hdr: []string{"Accept", ""}, status: 406, code: -32600},
		{name: "Content-Type text/plain", body: req("1", "ping", ""), hdr: []string{"Content-Type", "text/plain"}, status: 415, code: -32600},
		{name: "no Content-Type", body: req("1", "ping", ""), hdr: []string{"Content-Type", ""}, status: 415, code: -32600},
		{name: "Content-Type with charset", body: req("1", "ping", ""), hdr: []string{"Content-Type", "application/json; charset=utf-8"}, status: 200},
		{name: "unsupported MCP-Protocol-Version", body: req("1", "ping", ""), hdr: []string{"MCP-Protocol-Version", "1999-01-01"}, status: 400, code: -32022,
			check: func(t *testing.T, _ *http.Response, body []byte) {
				var m rpcMsg
				require.NoError(t, json.Unmarshal(body, &m))
				var data struct {
					Supported []string `json:"supported"`
					Requested string   `json:"requested"`
				}
				require.NoError(t, json.Unmarshal(m.Error.Data, &data))
				assert.Equal(t, []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}, data.Supported)
				assert.Equal(t, "1999-01-01", data.Requested)
			}},
		{name: "MCP-Protocol-Version 2026-07-28 without _meta", body: req("1", "ping", ""), hdr: []string{"MCP-Protocol-Version", "2026-07-28"}, status: 400, code: -32602},

		{name: "GET stateless", method: http.MethodGet, status: 405, only: "stateless", check: noBodyCheck("POST")},
		{name: "DELETE stateless", method: http.MethodDelete, status: 405, only: "stateless", check: noBodyCheck("POST")},
		{name: "PUT", method: http.MethodPut, body: req("1", "ping", ""), status: 405, only: "stateless", check: noBodyCheck("POST")},
		{name: "PUT in a session", method: http.MethodPut, body: req("1", "ping", ""), status: 405, only: "session", check: noBodyCheck("GET, POST, DELETE")},
		{name: "PATCH", method: http.MethodPatch, body: req("1", "ping", ""), status: 405},
		{name: "Origin evil", body: req("1", "ping", ""), hdr: []string{"Origin", "http://evil.example.com"}, status: 403, code: -32600},
		{name: "Origin null", body: req("1", "ping", ""), hdr: []string{"Origin", "null"}, status: 403, code: -32600},
		{name: "Origin evil on a loopback port", body: req("1", "ping", ""), hdr: []string{"Origin", "http://evil.example.com:80"}, status: 403, code: -32600},
		{name: "Host evil on loopback", body: req("1", "ping", ""), hdr: []string{"Host", "evil.example.com"}, status: 403, code: -32600},
		{name: "Host evil with port on loopback", body: req("1", "ping", ""), hdr: []string{"Host", "evil.example.com:80"}, status: 403, code: -32600},
		{name: "Host localhost", body: req("1", "ping", ""), hdr: []string{"Host", "localhost"}, status: 200},
		{name: "Origin localhost", body: req("1", "ping", ""), hdr: []string{"Origin", "http://localhost:1234"}, status: 200},
	}
}

func TestHostileInput(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"stateless", "session"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			opts := &Options{}
			if mode == "session" {
				opts.Sessions = &SessionOptions{}
			}
			ts := startServer(t, opts)
			sid := ""
			if mode == "session" {
				sid = ts.open("2025-11-25", clientCapsAll)
			}
			for _, row := range hostileRows() {
				if row.only != "" && row.only != mode {
					continue
				}
				t.Run(row.name, func(t *testing.T) {
					method := row.method
					if method == "" {
						method = http.MethodPost
					}
					var body io.Reader
					if row.bodyReader != nil {
						body = row.bodyReader()
					} else if row.body != "" {
						body = strings.NewReader(row.body)
					}
					r := ts.newReq(context.Background(), method, sid, body, row.hdr...)
					if h := r.Header.Get("Host"); h != "" {
						r.Host = h
					}
					resp := ts.do(r)
					raw, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					require.NoError(t, err)
					require.Equal(t, row.status, resp.StatusCode, "body %s", raw)
					if row.code != 0 {
						require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
						var m rpcMsg
						require.NoError(t, json.Unmarshal(raw, &m), "body %s", raw)
						require.NotNil(t, m.Error, "body %s", raw)
						require.Equal(t, row.code, m.Error.Code, "body %s", raw)
						require.NotEmpty(t, m.Error.Message)
					}
					if row.status == http.StatusAccepted {
						require.Empty(t, raw)
					}
					if row.check != nil {
						row.check(t, resp, raw)
					}
					// The server still serves, and the session still works.
					m := ts.call(sid, req("8", "ping", ""))
					require.Nil(t, m.Error)
					require.JSONEq(t, `{}`, string(m.Result))
				})
			}
		})
	}
}

// TestHostileLoggedNotLeaked: a panic is logged with its stack on the
// server side and never reaches the client.
func TestHostilePanicLogged(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{})
	m := readError(t, ts.post("", toolCall("1", "panic", `{}`)), 200, -32603)
	require.Equal(t, "Internal error", m.Error.Message)
	require.Nil(t, m.Error.Data)
	require.Contains(t, ts.log.String(), "secret-panic-detail")
	require.Contains(t, ts.log.String(), "goroutine")
	// The server lives: another call is served.
	require.Equal(t, "hi", ts.call("", toolCall("2", "echo", `{"text":"hi"}`)).text(t))
}

// TestOwnHostAndOrigin: the server's own 127.0.0.1:PORT, as Host and as
// Origin, is served; the same port on another name is not.
func TestOwnHostAndOrigin(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{Sessions: &SessionOptions{}})
	u, err := url.Parse(ts.srv.URL)
	require.NoError(t, err)
	own := u.Host // 127.0.0.1:PORT
	resp := ts.post("", initBody("2025-11-25", "{}"), "Origin", "http://"+own)
	m := readJSON(t, resp, 200)
	require.Nil(t, m.Error)
	sid := resp.Header.Get("Mcp-Session-Id")
	r := ts.newReq(context.Background(), http.MethodPost, sid, strings.NewReader(req("1", "ping", "")), "Origin", "http://"+own)
	r.Host = own
	require.Nil(t, readJSON(t, ts.do(r), 200).Error)

	r = ts.newReq(context.Background(), http.MethodPost, sid, strings.NewReader(req("1", "ping", "")), "Origin", "http://evil.example.com:"+u.Port())
	readError(t, ts.do(r), 403, -32600)
	r = ts.newReq(context.Background(), http.MethodGet, sid, nil)
	r.Host = "evil.example.com:" + u.Port()
	readError(t, ts.do(r), 403, -32600)
	r = ts.newReq(context.Background(), http.MethodDelete, sid, nil, "Origin", "https://evil.example.com")
	readError(t, ts.do(r), 403, -32600)
	// A refused DELETE did not end the session.
	require.Nil(t, ts.call(sid, req("2", "ping", "")).Error)
}

// TestAllowedOriginsAndHosts: listed origins and hosts pass.
func TestAllowedOriginsAndHosts(t *testing.T) {
	t.Parallel()
	ts := startServer(t, &Options{AllowedOrigins: []string{"https://app.example.com/"}, AllowedHosts: []string{"mcp.example.com"}})
	r := ts.newReq(context.Background(), http.MethodPost, "", strings.NewReader(req("1", "ping", "")), "Origin", "https://APP.example.com")
	r.Host = "mcp.example.com"
	require.Nil(t, readJSON(t, ts.do(r), 200).Error)
	r = ts.newReq(context.Background(), http.MethodPost, "", strings.NewReader(req("1", "ping", "")), "Origin", "https://other.example.com")
	r.Host = "mcp.example.com"
	readError(t, ts.do(r), 403, -32600)
}
