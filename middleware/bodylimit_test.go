package middleware

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chunked hides a reader's length, so the client sends no Content-Length.
type chunked struct{ io.Reader }

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	const limit = 64
	srv := httptest.NewServer(BodyLimit(limit)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, http.StatusRequestEntityTooLarge, codeInvalidRequest, "request body too large")
			return
		}
		if err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(b)
	})))
	defer srv.Close()

	post := func(body io.Reader) (*http.Response, string) {
		req, err := http.NewRequest(http.MethodPost, srv.URL, body)
		require.NoError(t, err)
		return do(t, req)
	}

	res, body := post(strings.NewReader(strings.Repeat("a", limit)))
	assert.Equal(t, http.StatusOK, res.StatusCode, "exactly at the limit")
	assert.Len(t, body, limit)

	res, body = post(strings.NewReader(strings.Repeat("a", limit+1)))
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, "Content-Length over the limit")
	assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
	var msg struct {
		JSONRPC string `json:"jsonrpc"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &msg))
	assert.Equal(t, "2.0", msg.JSONRPC)
	assert.Equal(t, -32600, msg.Error.Code)
	assert.Equal(t, "request body too large", msg.Error.Message)

	res, _ = post(chunked{strings.NewReader(strings.Repeat("a", 10*limit))})
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, "chunked body over the limit")

	res, _ = post(chunked{strings.NewReader("small")})
	assert.Equal(t, http.StatusOK, res.StatusCode)

	res, err := http.Get(srv.URL)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode, "no body")
}

func TestBodyLimit_LeavesCallerRequestAlone(t *testing.T) {
	t.Parallel()
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("x"))
	orig := req.Body
	BodyLimit(10)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.NotSame(t, req, r)
	})).ServeHTTP(httptest.NewRecorder(), req)
	assert.Equal(t, orig, req.Body)
}

func TestBodyLimit_PanicsOnBadLimit(t *testing.T) {
	t.Parallel()
	assert.Panics(t, func() { BodyLimit(0) })
	assert.Panics(t, func() { BodyLimit(-1) })
}
