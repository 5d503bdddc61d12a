package middleware

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// originServer starts a real server whose handler is OriginCheck built from
// the options returned by opts(port).
func originServer(t *testing.T, opts func(port string) *OriginOptions) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	srv.Config.Handler = OriginCheck(opts(port))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	}))
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, port
}

func TestOriginCheck_Table(t *testing.T) {
	t.Parallel()
	srv, port := originServer(t, func(port string) *OriginOptions {
		return &OriginOptions{
			AllowedOrigins: []string{"https://app.example.com", "http://localhost:6274/"},
		}
	})
	local := "127.0.0.1:" + port
	cases := map[string]struct {
		host    string
		origins []string
		want    int
	}{
		"absent origin":                      {local, nil, 200},
		"allowed origin":                     {local, []string{"https://app.example.com"}, 200},
		"allowed origin, other case":         {local, []string{"HTTPS://App.Example.com"}, 200},
		"allowed origin, default port":       {local, []string{"https://app.example.com:443"}, 200},
		"allowed origin listed with slash":   {local, []string{"http://localhost:6274"}, 200},
		"disallowed origin":                  {local, []string{"https://evil.example.com"}, 403},
		"allowed host, other scheme":         {local, []string{"http://app.example.com"}, 403},
		"allowed host, other port":           {local, []string{"https://app.example.com:8443"}, 403},
		"null origin":                        {local, []string{"null"}, 403},
		"empty origin":                       {local, []string{""}, 403},
		"two origins":                        {local, []string{"https://app.example.com", "https://evil.example.com"}, 403},
		"origin with a path":                 {local, []string{"https://app.example.com/x"}, 403},
		"evil host and origin (conformance)": {"evil.example.com", []string{"http://evil.example.com"}, 403},
		"evil host":                          {"evil.example.com", nil, 403},
		"evil host with our port":            {"evil.example.com:" + port, nil, 403},
		"loopback-looking name":              {"127.0.0.1.evil.example.com:" + port, nil, 403},
		"localhost subdomain":                {"localhost.evil.example.com", nil, 403},
		"127.0.0.1:PORT":                     {local, nil, 200},
		"localhost:PORT":                     {"localhost:" + port, nil, 200},
		"LOCALHOST:PORT":                     {"LOCALHOST:" + port, nil, 200},
		"[::1]:PORT":                         {"[::1]:" + port, nil, 200},
		"localhost without port":             {"localhost", nil, 200},
		"[::1] without port":                 {"[::1]", nil, 200},
		"loopback, any port":                 {"127.0.0.1:1", nil, 200},
		"own origin":                         {local, []string{"http://" + local}, 200},
		"loopback origin on loopback":        {local, []string{"http://localhost:3000"}, 200},
		"bad port":                           {"127.0.0.1:x", nil, 403},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequest(http.MethodPost, srv.URL+"/mcp", nil)
			require.NoError(t, err)
			req.Host = tc.host
			for _, o := range tc.origins {
				req.Header.Add("Origin", o)
			}
			res, body := do(t, req)
			assert.Equal(t, tc.want, res.StatusCode)
			if tc.want == http.StatusForbidden {
				assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
				var msg struct {
					Error struct{ Code int } `json:"error"`
				}
				require.NoError(t, json.Unmarshal([]byte(body), &msg))
				assert.Equal(t, -32600, msg.Error.Code)
			}
		})
	}
}

func TestOriginCheck_AnyPortAndLoopbackOrigins(t *testing.T) {
	t.Parallel()
	srv, _ := originServer(t, func(string) *OriginOptions {
		return &OriginOptions{AllowedHosts: []string{"mcp.internal", "api.internal:8443"}}
	})
	cases := []struct {
		host, origin string
		want         int
	}{
		{"127.0.0.1:9", "", 200},
		{"mcp.internal:8080", "", 200},
		{"MCP.internal", "", 200},
		{"other.internal", "", 403},
		{"api.internal:8443", "", 200},
		{"api.internal:8080", "", 403},
		{"api.internal", "", 403},
		{"localhost:1", "http://localhost:6274", 200},
		{"localhost:1", "http://127.0.0.1:3000", 200},
		{"localhost:1", "https://[::1]:3000", 200},
		{"localhost:1", "http://localhost.evil.example.com", 403},
		{"localhost:1", "chrome-extension://localhost", 403},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Host = tc.host
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		res, _ := do(t, req)
		assert.Equal(t, tc.want, res.StatusCode, "host %q origin %q", tc.host, tc.origin)
	}
}

func TestOriginCheck_NilOptionsRefusesEveryOrigin(t *testing.T) {
	t.Parallel()
	h := OriginCheck(nil)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	req := httptest.NewRequest(http.MethodGet, "http://evil.example.com/", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusOK, rec.Code, "no Origin, no Host check")

	req.Header.Set("Origin", "https://anything.example")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusForbidden, rec.Code)
}

func TestOriginCheck_OnDeny(t *testing.T) {
	t.Parallel()
	var got error
	h := OriginCheck(&OriginOptions{
		AllowedHosts: []string{"app.example.com"},
		OnDeny: func(w http.ResponseWriter, r *http.Request, err error) {
			got = err
			w.WriteHeader(http.StatusTeapot)
		},
	})(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	req := httptest.NewRequest(http.MethodGet, "http://evil.example.com/", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusTeapot, rec.Code)
	assert.ErrorIs(t, got, ErrHostNotAllowed)
}

func TestOriginCheck_PanicsOnBadConfig(t *testing.T) {
	t.Parallel()
	for _, o := range []*OriginOptions{
		{AllowedOrigins: []string{"https://*.example.com"}},
		{AllowedOrigins: []string{"app.example.com"}},
		{AllowedOrigins: []string{"https://app.example.com/path"}},
		{AllowedHosts: []string{"host:http"}},
		{AllowedHosts: []string{""}},
		{AllowedHosts: []string{"a/b"}},
	} {
		assert.Panics(t, func() { OriginCheck(o) }, "%+v", o)
	}
}
