package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// rawClient speaks JSON-RPC to a Server over one real transport, as one
// caller, so that a test can hold every transport to the same behaviour.
type rawClient struct {
	name string
	// call sends one request and returns its response; over HTTP also
	// the response's status and header (200 and nil over stdio).
	call func(t *testing.T, body string) (int, http.Header, rpcMsg)
	// notify sends one notification.
	notify func(t *testing.T, body string)
	// session is the session's id where there is one.
	session string
}

// caller is who the clients of a test are: the identity and scopes
// their transport reports for them.
type caller struct {
	identity string
	scopes   []string
}

type scopesKey struct{}

// withScopes is an app's auth middleware in small: it puts the scopes of
// the X-Scopes header where Options.Scopes reads them.
func withScopes(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s := r.Header.Get("X-Scopes"); s != "" {
			r = r.WithContext(context.WithValue(r.Context(), scopesKey{}, strings.Fields(s)))
		}
		h.ServeHTTP(w, r)
	})
}

func scopesFrom(ctx context.Context) []string {
	s, _ := ctx.Value(scopesKey{}).([]string)
	return s
}

// rawClients connects who to srv over Streamable HTTP (stateless, with a
// session, 2026-07-28) and stdio. opts are the HTTP endpoint's options
// (Handler, Identity and Scopes are set here).
func rawClients(t *testing.T, srv *Server, who caller, opts *Options) []rawClient {
	t.Helper()
	hdr := func(r *http.Request) {
		r.Header.Set("X-User", who.identity)
		r.Header.Set("X-Scopes", strings.Join(who.scopes, " "))
	}
	var out []rawClient
	for _, mode := range []string{"http-stateless", "http-session", "http-2026"} {
		o := Options{}
		if opts != nil {
			o = *opts
		}
		o.Handler = srv
		o.Identity = func(r *http.Request) string { return r.Header.Get("X-User") }
		if o.Scopes == nil {
			o.Scopes = scopesFrom
		}
		if o.Logger == nil {
			o.Logger, _ = quietLogger()
		}
		if mode == "http-session" {
			o.Sessions = &SessionOptions{}
		}
		ep := Controller(&o)
		hs := httptest.NewServer(withScopes(ep))
		t.Cleanup(func() {
			_ = ep.Shutdown(context.Background())
			hs.CloseClientConnections()
			hs.Close()
		})
		c := rawClient{name: mode}
		post := func(t *testing.T, body string) (int, http.Header, rpcMsg) {
			t.Helper()
			r, err := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
			require.NoError(t, err)
			r.Header.Set("Accept", acceptBoth)
			r.Header.Set("Content-Type", "application/json")
			hdr(r)
			if c.session != "" {
				r.Header.Set("Mcp-Session-Id", c.session)
				r.Header.Set("MCP-Protocol-Version", "2025-11-25")
			}
			if mode == "http-2026" {
				body = modernBody(t, body)
				r.Body = io.NopCloser(strings.NewReader(body))
				r.ContentLength = int64(len(body))
				var m rpcMsg
				require.NoError(t, json.Unmarshal([]byte(body), &m))
				r.Header.Set("MCP-Protocol-Version", "2026-07-28")
				r.Header.Set("Mcp-Method", m.Method)
				var p struct {
					Name string `json:"name"`
					URI  string `json:"uri"`
				}
				_ = json.Unmarshal(m.Params, &p)
				if p.Name+p.URI != "" {
					r.Header.Set("Mcp-Name", p.Name+p.URI)
				}
			}
			resp, err := hs.Client().Do(r)
			require.NoError(t, err)
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
				c.session = sid
			}
			if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				// The response is the stream's last message.
				var last string
				for _, line := range strings.Split(string(raw), "\n") {
					if d, ok := strings.CutPrefix(line, "data: "); ok && d != "" {
						last = d
					}
				}
				raw = []byte(last)
			}
			var m rpcMsg
			if len(raw) > 0 {
				require.NoError(t, json.Unmarshal(raw, &m), "%s", raw)
			}
			return resp.StatusCode, resp.Header, m
		}
		c.call = post
		c.notify = func(t *testing.T, body string) { post(t, body) }
		if mode == "http-session" {
			st, _, m := c.call(t, initBody("2025-11-25", `{}`))
			require.Equal(t, http.StatusOK, st)
			require.Nil(t, m.Error)
			require.NotEmpty(t, c.session)
			c.notify(t, note("notifications/initialized", ""))
		}
		out = append(out, c)
	}

	sc := startStdio(t, srv, &ConnOptions{Identity: who.identity, Scopes: who.scopes})
	sc.open("2025-11-25", `{}`)
	out = append(out, rawClient{name: "stdio",
		call: func(t *testing.T, body string) (int, http.Header, rpcMsg) {
			t.Helper()
			var m rpcMsg
			require.NoError(t, json.Unmarshal([]byte(body), &m))
			sc.send(body)
			line, _ := sc.reply(string(m.ID))
			var got rpcMsg
			require.NoError(t, json.Unmarshal([]byte(line.raw), &got))
			return http.StatusOK, nil, got
		},
		notify: func(t *testing.T, body string) { sc.send(body) },
	})
	return out
}

// modernBody adds the 2026-07-28 _meta a client sends to a request body.
func modernBody(t *testing.T, body string) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &m))
	params, _ := m["params"].(map[string]any)
	if params == nil {
		params = map[string]any{}
	}
	meta, _ := params["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[metaProtocol] = "2026-07-28"
	meta[metaClientCaps] = map[string]any{}
	meta[metaClientInfo] = map[string]any{"name": "t", "version": "1"}
	params["_meta"] = meta
	m["params"] = params
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}
