package middleware

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func corsServer(t *testing.T, opts *CORSOptions) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var reached atomic.Int32
	srv := httptest.NewServer(CORS(opts)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.Header().Set("Mcp-Session-Id", "s-1")
		w.WriteHeader(http.StatusOK)
	})))
	t.Cleanup(srv.Close)
	return srv, &reached
}

func preflight(t *testing.T, url, origin, method, headers string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodOptions, url, nil)
	require.NoError(t, err)
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", method)
	if headers != "" {
		req.Header.Set("Access-Control-Request-Headers", headers)
	}
	res, _ := do(t, req)
	return res
}

func TestCORS_PreflightAllowsMCPHeaders(t *testing.T) {
	t.Parallel()
	srv, reached := corsServer(t, &CORSOptions{AllowedOrigins: []string{"https://inspector.example"}})
	requested := "authorization,content-type,mcp-session-id,mcp-protocol-version,mcp-method,mcp-name,last-event-id"
	for _, method := range []string{"GET", "POST", "DELETE"} {
		res := preflight(t, srv.URL+"/mcp", "https://inspector.example", method, requested)
		assert.Equal(t, http.StatusOK, res.StatusCode)
		assert.Equal(t, "https://inspector.example", res.Header.Get("Access-Control-Allow-Origin"))
		assert.Equal(t, method, res.Header.Get("Access-Control-Allow-Methods"))
		allowed := res.Header.Get("Access-Control-Allow-Headers")
		for _, h := range []string{"Authorization", "Content-Type", "Mcp-Session-Id", "Mcp-Protocol-Version",
			"Mcp-Method", "Mcp-Name", "Last-Event-Id"} {
			assert.Contains(t, allowed, h)
		}
		assert.Equal(t, "300", res.Header.Get("Access-Control-Max-Age"))
		assert.Empty(t, res.Header.Get("Access-Control-Allow-Credentials"))
	}
	assert.Zero(t, reached.Load(), "a preflight stops before the handler (and before auth)")

	res := preflight(t, srv.URL+"/mcp", "https://inspector.example", "PUT", "")
	assert.Empty(t, res.Header.Get("Access-Control-Allow-Origin"), "PUT is not allowed")
}

func TestCORS_ParamHeaders(t *testing.T) {
	t.Parallel()
	srv, _ := corsServer(t, &CORSOptions{AllowedOrigins: []string{"https://inspector.example"}})
	cases := map[string]bool{
		"mcp-param-region": true,
		"Content-Type, Mcp-Param-Region, mcp-param-unit_2": true,
		"mcp-param-":               false,
		"x-evil":                   false,
		"mcp-param-region, x-evil": false,
		"mcp-param-a b":            false,
		"mcp-param-a;x-evil":       false,
	}
	for requested, ok := range cases {
		res := preflight(t, srv.URL, "https://inspector.example", "POST", requested)
		if ok {
			assert.Equal(t, "https://inspector.example", res.Header.Get("Access-Control-Allow-Origin"), requested)
			assert.Contains(t, strings.ToLower(res.Header.Get("Access-Control-Allow-Headers")), "mcp-param-", requested)
		} else {
			assert.Empty(t, res.Header.Get("Access-Control-Allow-Origin"), requested)
		}
	}

	strictSrv, _ := corsServer(t, &CORSOptions{AllowedOrigins: []string{"https://inspector.example"}, NoParamHeaders: true})
	res := preflight(t, strictSrv.URL, "https://inspector.example", "POST", "mcp-param-region")
	assert.Empty(t, res.Header.Get("Access-Control-Allow-Origin"))
}

func TestCORS_ActualRequestExposesHeaders(t *testing.T) {
	t.Parallel()
	srv, reached := corsServer(t, &CORSOptions{
		AllowedOrigins: []string{"https://*.example.com"},
		ExposedHeaders: []string{"X-Trace"},
	})
	req, _ := http.NewRequest(http.MethodPost, srv.URL, nil)
	req.Header.Set("Origin", "https://app.example.com")
	res, _ := do(t, req)
	assert.Equal(t, 1, int(reached.Load()))
	assert.Equal(t, "https://app.example.com", res.Header.Get("Access-Control-Allow-Origin"))
	exposed := res.Header.Get("Access-Control-Expose-Headers")
	for _, h := range []string{"Mcp-Session-Id", "Www-Authenticate", "Mcp-Protocol-Version", "Retry-After", "X-Trace"} {
		assert.Contains(t, exposed, h)
	}

	req, _ = http.NewRequest(http.MethodPost, srv.URL, nil)
	req.Header.Set("Origin", "https://evil.test")
	res, _ = do(t, req)
	assert.Empty(t, res.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, http.StatusOK, res.StatusCode, "CORS does not refuse; OriginCheck does")
}

func TestCORS_PreflightFromDisallowedOrigin(t *testing.T) {
	t.Parallel()
	srv, _ := corsServer(t, &CORSOptions{AllowedOrigins: []string{"https://inspector.example"}})
	res := preflight(t, srv.URL, "https://evil.example.com", "POST", "authorization")
	assert.Empty(t, res.Header.Get("Access-Control-Allow-Origin"))
	assert.Empty(t, res.Header.Get("Access-Control-Allow-Headers"))
}

func TestCORS_Validation(t *testing.T) {
	t.Parallel()
	assert.Panics(t, func() { CORS(nil) })
	assert.Panics(t, func() { CORS(&CORSOptions{}) })
	assert.Panics(t, func() { CORS(&CORSOptions{AllowedOrigins: []string{"*"}, AllowCredentials: true}) })
	assert.Panics(t, func() {
		CORS(&CORSOptions{AllowedOrigins: []string{"https://a.example"}, AllowedHeaders: []string{"*"}})
	})

	opts := &CORSOptions{AllowedOrigins: []string{"https://a.example"}}
	CORS(opts)
	assert.Zero(t, opts.MaxAge, "the caller's struct is not filled in")
}
