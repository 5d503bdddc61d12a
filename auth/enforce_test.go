package auth_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"

	"github.com/saguaro-go/saguaro/auth"
)

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })

func TestRequiredWithoutVerifierFailsClosed(t *testing.T) {
	t.Parallel()
	for name, mw := range map[string]func(http.Handler) http.Handler{
		"Required":      auth.Required(),
		"RequireScopes": auth.RequireScopes("a"),
	} {
		w := httptest.NewRecorder()
		mw(ok).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		assert.Equal(t, http.StatusInternalServerError, w.Code, name)
		assert.Empty(t, w.Header().Get("WWW-Authenticate"), name)
		assert.JSONEq(t, `{"error":"server_error","error_description":"authentication is not configured"}`, w.Body.String(), name)
	}
}

func TestRequireScopesPanicsOnBadScopes(t *testing.T) {
	t.Parallel()
	assert.Panics(t, func() { auth.RequireScopes() })
	assert.Panics(t, func() { auth.RequireScopes("") })
	assert.Panics(t, func() { auth.RequireScopes("two words") })
	assert.Panics(t, func() { auth.RequireScopes(`quo"te`) })
	assert.Panics(t, func() { auth.RequireScopes(`back\slash`) })
	assert.NotPanics(t, func() { auth.RequireScopes("mcp:tools.read", "https://api.example.com/x") })
}

func TestRequireScopesDoesNotAliasCallerSlice(t *testing.T) {
	t.Parallel()
	scopes := []string{"a"}
	mw := auth.RequireScopes(scopes...)
	scopes[0] = "b"
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r = r.WithContext(auth.NewContext(r.Context(), &auth.Claims{Subject: "s", Scopes: []string{"a"}}))
	mw(ok).ServeHTTP(w, r)
	assert.Equal(t, http.StatusOK, w.Code)
}

func TestEnforcersWithNewContext(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r = r.WithContext(auth.NewContext(r.Context(), &auth.Claims{Subject: "s", Scopes: []string{"read"}}))

	w := httptest.NewRecorder()
	auth.Required()(ok).ServeHTTP(w, r)
	assert.Equal(t, http.StatusOK, w.Code)

	w = httptest.NewRecorder()
	auth.RequireScopes("read", "write")(ok).ServeHTTP(w, r)
	assert.Equal(t, http.StatusForbidden, w.Code)
	assert.Equal(t, `Bearer error="insufficient_scope", error_description="the token lacks a required scope", scope="read write"`,
		w.Header().Get("WWW-Authenticate"))

	r = r.WithContext(auth.NewContext(r.Context(), nil))
	w = httptest.NewRecorder()
	auth.Required()(ok).ServeHTTP(w, r)
	assert.Equal(t, http.StatusUnauthorized, w.Code, "nil claims are no claims")
}

// TestChiComposition uses the enforcers the three ways chi apps do: Use
// inside a Group, With on one route, and in front of Mount.
func TestChiComposition(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, defaultOptions())
	r := chi.NewRouter()
	r.Use(v.Handler)
	r.Get("/public", ok)
	r.Group(func(r chi.Router) {
		r.Use(auth.Required())
		r.Get("/group", ok)
	})
	r.With(auth.RequireScopes("tools:read")).Get("/with", ok)
	sub := chi.NewRouter()
	sub.Get("/deep", ok)
	r.With(auth.Required()).Mount("/mounted", sub)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)

	tok := "Bearer " + rsaToken(t)
	for _, path := range []string{"/group", "/with", "/mounted/deep"} {
		assert.Equal(t, 401, get(t, srv, path).status, path)
		got := get(t, srv, path, tok)
		assert.Equal(t, 200, got.status, path)
		assert.Equal(t, "ok", got.body, path)
	}
	assert.Equal(t, 200, get(t, srv, "/public").status)
	assert.Equal(t, 200, get(t, srv, "/public", "Bearer bad").status, "the verifier alone never rejects")
}

func TestCheckScopesAnswersLikeRequireScopes(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r = r.WithContext(auth.NewContext(r.Context(), &auth.Claims{Subject: "s", Scopes: []string{"read"}}))
	assert.NoError(t, auth.CheckScopes(r, "read"))
	assert.NoError(t, auth.CheckScopes(r), "no scopes: a valid token is enough")

	err := auth.CheckScopes(r, "read", "write")
	assert.ErrorIs(t, err, auth.ErrInsufficientScope)
	viaCheck := httptest.NewRecorder()
	auth.WriteError(viaCheck, r, err)
	viaMiddleware := httptest.NewRecorder()
	auth.RequireScopes("read", "write")(ok).ServeHTTP(viaMiddleware, r)
	assert.Equal(t, http.StatusForbidden, viaCheck.Code)
	assert.Equal(t, viaMiddleware.Header().Get("WWW-Authenticate"), viaCheck.Header().Get("WWW-Authenticate"))
	assert.Equal(t, viaMiddleware.Body.String(), viaCheck.Body.String())

	bare := httptest.NewRequest(http.MethodGet, "/", nil)
	assert.Error(t, auth.CheckScopes(bare, "read"), "no verifier: fail closed")
	noToken := bare.WithContext(auth.NewContext(bare.Context(), nil))
	assert.ErrorIs(t, auth.CheckScopes(noToken, "read"), auth.ErrNoToken)
}
