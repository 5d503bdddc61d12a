package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQuote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                       `""`,
		"plain":                  `"plain"`,
		`say "hi"`:               `"say \"hi\""`,
		`back\slash`:             `"back\\slash"`,
		"line\r\nWWW-Auth: evil": `"lineWWW-Auth: evil"`,
		"tab\there\x7f":          `"tabhere"`,
	} {
		assert.Equal(t, want, quote(in), "quote(%q)", in)
	}
}

func TestChallenge(t *testing.T) {
	t.Parallel()
	assert.Equal(t, `Bearer`, challenge("", "", nil, ""))
	assert.Equal(t, `Bearer resource_metadata="https://x/m"`, challenge("", "ignored without a code", nil, "https://x/m"))
	assert.Equal(t, `Bearer error="insufficient_scope", error_description="d", scope="a b", resource_metadata="https://x/m"`,
		challenge("insufficient_scope", "d", []string{"a", "b"}, "https://x/m"))
}

func TestProblemFor(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err    error
		status int
		code   string
	}{
		{ErrNoToken, 401, ""},
		{ErrInvalidRequest, 400, "invalid_request"},
		{ErrMalformed, 401, "invalid_token"},
		{ErrSignature, 401, "invalid_token"},
		{ErrUnknownKey, 401, "invalid_token"},
		{ErrExpired, 401, "invalid_token"},
		{ErrNotYetValid, 401, "invalid_token"},
		{ErrIssuer, 401, "invalid_token"},
		{ErrAudience, 401, "invalid_token"},
		{ErrMissingClaim, 401, "invalid_token"},
		{ErrInsufficientScope, 403, "insufficient_scope"},
		{ErrKeySource, 503, "temporarily_unavailable"},
		{errNotConfigured, 500, "server_error"},
		{errors.New("something else"), 401, "invalid_token"},
	}
	for _, c := range cases {
		wrapped := fmt.Errorf("context: %w", c.err)
		p := problemFor(wrapped)
		assert.Equal(t, c.status, p.status, "%v", c.err)
		assert.Equal(t, c.code, p.code, "%v", c.err)
		assert.NotEmpty(t, p.desc)
	}
}

func TestWriteErrorNeverEchoesTheError(t *testing.T) {
	t.Parallel()
	secret := "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0.c2ln"
	err := fmt.Errorf("%w: bad token %s", ErrSignature, secret)
	st := &state{challenge: &challenger{resourceMetadata: "https://x/.well-known/oauth-protected-resource"}}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r = r.WithContext(context.WithValue(r.Context(), stateKey{}, st))
	w := httptest.NewRecorder()
	WriteError(w, r, err)

	assert.Equal(t, 401, w.Code)
	assert.NotContains(t, w.Body.String(), secret)
	assert.NotContains(t, w.Header().Get("WWW-Authenticate"), secret)
	var body map[string]string
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
	assert.Equal(t, map[string]string{"error": "invalid_token", "error_description": "the token signature is invalid"}, body)
	assert.Equal(t, `Bearer error="invalid_token", error_description="the token signature is invalid", resource_metadata="https://x/.well-known/oauth-protected-resource"`,
		w.Header().Get("WWW-Authenticate"))
}

func TestWriteErrorWithoutVerifier(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	WriteError(w, httptest.NewRequest(http.MethodGet, "/", nil), ErrNoToken)
	assert.Equal(t, 401, w.Code)
	assert.Equal(t, "Bearer", w.Header().Get("WWW-Authenticate"), "no resource_metadata is known")
	assert.JSONEq(t, `{"error":"unauthorized","error_description":"a bearer token is required"}`, w.Body.String())
}
