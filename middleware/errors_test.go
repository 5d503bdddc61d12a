package middleware

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteError(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Length", "999")
	writeError(rec, http.StatusTooManyRequests, codeServerError, `rate "limit"`)
	assert.Equal(t, http.StatusTooManyRequests, rec.Code)
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	assert.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
	assert.Empty(t, rec.Header().Get("Content-Length"))

	var body map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
	assert.Equal(t, map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": float64(-32000), "message": `rate "limit"`},
	}, body)
}

func TestSentinelsWrap(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("%w: %q", ErrHostNotAllowed, "evil.example.com")
	assert.True(t, errors.Is(err, ErrHostNotAllowed))
	assert.False(t, errors.Is(err, ErrOriginNotAllowed))
}
