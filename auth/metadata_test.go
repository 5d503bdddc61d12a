package auth_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/auth"
)

func TestMetadataURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://mcp.example.com/mcp":      "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
		"https://mcp.example.com/mcp/":     "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
		"https://mcp.example.com":          "https://mcp.example.com/.well-known/oauth-protected-resource",
		"https://mcp.example.com/":         "https://mcp.example.com/.well-known/oauth-protected-resource",
		"http://127.0.0.1:8080/a/b":        "http://127.0.0.1:8080/.well-known/oauth-protected-resource/a/b",
		"https://mcp.example.com/x?tenant": "https://mcp.example.com/.well-known/oauth-protected-resource/x?tenant",
	} {
		got, err := auth.MetadataURL(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	for _, bad := range []string{"", "/mcp", "mcp.example.com/mcp", "https://x/mcp#frag", "ftp://x/y"} {
		_, err := auth.MetadataURL(bad)
		assert.ErrorIs(t, err, auth.ErrOptions, bad)
	}
}

// TestMetadataEndpoints fetches the document the challenge points at, over
// HTTP, at both well-known paths.
func TestMetadataEndpoints(t *testing.T) {
	t.Parallel()
	srv := newApp(t, newVerifier(t, defaultOptions()))

	// The resource_metadata URL of a real challenge, re-homed on the test
	// server, resolves to the document.
	_, rm, found := strings.Cut(get(t, srv, "/mcp").header.Get("WWW-Authenticate"), `resource_metadata="`)
	require.True(t, found)
	u, err := url.Parse(rm[:len(rm)-1])
	require.NoError(t, err)
	assert.Equal(t, "/.well-known/oauth-protected-resource/mcp", u.Path)

	want := `{"resource":"` + testResource + `","authorization_servers":["` + testIssuer + `"],` +
		`"scopes_supported":["tools:read","tools:call"],"bearer_methods_supported":["header"]}`
	for _, path := range []string{u.Path, "/.well-known/oauth-protected-resource"} {
		got := get(t, srv, path)
		assert.Equal(t, 200, got.status, path)
		assert.JSONEq(t, want, got.body, path)
		assert.Equal(t, "application/json", got.header.Get("Content-Type"))
		assert.Equal(t, "*", got.header.Get("Access-Control-Allow-Origin"))
	}
	// Served outside auth: a bad token does not matter.
	assert.Equal(t, 200, get(t, srv, u.Path, "Bearer garbage").status)
}

func TestMetadataMethods(t *testing.T) {
	t.Parallel()
	h, err := auth.NewMetadataHandler(&auth.ResourceMetadata{Resource: testResource})
	require.NoError(t, err)

	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodHead, "/", nil))
	assert.Equal(t, 200, w.Code)
	assert.Empty(t, w.Body.String())
	assert.NotEmpty(t, w.Header().Get("Content-Length"))

	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodOptions, "/", nil))
	assert.Equal(t, http.StatusNoContent, w.Code)
	assert.Contains(t, w.Header().Get("Access-Control-Allow-Methods"), "GET")

	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/", nil))
	assert.Equal(t, http.StatusMethodNotAllowed, w.Code)
	assert.Equal(t, "GET, HEAD, OPTIONS", w.Header().Get("Allow"))

	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	var doc map[string]any
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &doc))
	assert.Equal(t, map[string]any{"resource": testResource, "bearer_methods_supported": []any{"header"}}, doc,
		"empty optional fields are omitted")
}

func TestMetadataHandlerCopiesInput(t *testing.T) {
	t.Parallel()
	md := &auth.ResourceMetadata{Resource: testResource, ScopesSupported: []string{"a"}}
	h, err := auth.NewMetadataHandler(md)
	require.NoError(t, err)
	md.ScopesSupported[0] = "changed"
	md.Resource = "https://elsewhere"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.JSONEq(t, `{"resource":"`+testResource+`","scopes_supported":["a"],"bearer_methods_supported":["header"]}`, w.Body.String())
}

func TestMetadataRejectsBadInput(t *testing.T) {
	t.Parallel()
	for name, md := range map[string]*auth.ResourceMetadata{
		"nil":               nil,
		"no resource":       {},
		"relative resource": {Resource: "/mcp"},
		"relative AS":       {Resource: testResource, AuthorizationServers: []string{"login"}},
		"bad scope":         {Resource: testResource, ScopesSupported: []string{"a b"}},
	} {
		_, err := auth.NewMetadataHandler(md)
		assert.ErrorIs(t, err, auth.ErrOptions, name)
		assert.ErrorIs(t, auth.MountMetadata(chi.NewRouter(), md), auth.ErrOptions, name)
	}
}

func TestMountMetadataOnServeMux(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	require.NoError(t, auth.MountMetadata(mux, &auth.ResourceMetadata{Resource: "https://x.example/api/mcp"}))
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/api/mcp"} {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		assert.Equal(t, 200, w.Code, path)
		assert.Contains(t, w.Body.String(), `"resource":"https://x.example/api/mcp"`)
	}
	// A resource without a path mounts the root path once (a ServeMux
	// would panic on a second registration).
	assert.NotPanics(t, func() {
		require.NoError(t, auth.MountMetadata(http.NewServeMux(), &auth.ResourceMetadata{Resource: "https://x.example/"}))
	})
}
