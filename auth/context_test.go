package auth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/saguaro-go/saguaro/auth"
)

func TestContextWithoutVerifier(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	assert.Nil(t, auth.ClaimsFromContext(ctx))
	assert.Nil(t, auth.ErrorFromContext(ctx))
	assert.Equal(t, "", auth.Subject(ctx))
	assert.Nil(t, auth.Scopes(ctx))
	assert.Equal(t, "", auth.Identity(httptest.NewRequest(http.MethodGet, "/", nil)))
	assert.Equal(t, "", auth.Identity(nil))
}

func TestNewContext(t *testing.T) {
	t.Parallel()
	c := &auth.Claims{Issuer: "https://i", Subject: "bob", Scopes: []string{"a", "b"}}
	ctx := auth.NewContext(context.Background(), c)
	assert.Same(t, c, auth.ClaimsFromContext(ctx))
	assert.Nil(t, auth.ErrorFromContext(ctx))
	assert.Equal(t, "bob", auth.Subject(ctx))

	scopes := auth.Scopes(ctx)
	assert.Equal(t, []string{"a", "b"}, scopes)
	scopes[0] = "changed"
	assert.Equal(t, "a", c.Scopes[0], "Scopes returns a copy")

	r := httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx)
	assert.Equal(t, `"https://i" "bob"`, auth.Identity(r))
}

// TestContextAfterVerifier checks the accessors on requests the real
// middleware handled.
func TestContextAfterVerifier(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, defaultOptions())
	var seen struct {
		claims *auth.Claims
		err    error
		id     string
	}
	h := v.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.claims, seen.err, seen.id = auth.ClaimsFromContext(r.Context()), auth.ErrorFromContext(r.Context()), auth.Identity(r)
	}))
	serve := func(authz string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if authz != "" {
			r.Header.Set("Authorization", authz)
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
	}

	serve("Bearer " + rsaToken(t))
	assert.NoError(t, seen.err)
	if assert.NotNil(t, seen.claims) {
		assert.Equal(t, []string{"tools:read", "tools:call"}, seen.claims.Scopes)
	}
	assert.Equal(t, `"`+testIssuer+`" "alice"`, seen.id)

	serve("")
	assert.ErrorIs(t, seen.err, auth.ErrNoToken)
	assert.Nil(t, seen.claims)
	assert.Equal(t, "", seen.id)

	serve("Bearer nope")
	assert.ErrorIs(t, seen.err, auth.ErrMalformed)
	assert.Nil(t, seen.claims)
	assert.Equal(t, "", seen.id)
}
