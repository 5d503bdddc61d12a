package controller

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func testLogger() (*slog.Logger, *syncBuffer) {
	buf := &syncBuffer{}
	return slog.New(slog.NewTextHandler(buf, nil)), buf
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, string(body)
}

type greeting struct{ Word string }

func TestBufferedRepliesThroughChi(t *testing.T) {
	t.Parallel()
	logger, logs := testLogger()
	r := chi.NewRouter()
	r.Method(http.MethodGet, "/hello/{name}", New(Func(func(req *Request) Reply {
		g := StateOf[greeting](req)
		return Buffered(http.StatusOK, http.Header{"Content-Type": {"text/plain"}},
			[]byte(g.Word+", "+chi.URLParam(req.Request, "name")))
	}), &Options{State: greeting{Word: "hola"}}))
	r.Method(http.MethodGet, "/json", New(Func(func(req *Request) Reply {
		return JSON(http.StatusCreated, map[string]int{"n": 1})
	}), nil))
	r.Method(http.MethodGet, "/badjson", New(Func(func(req *Request) Reply {
		return JSON(http.StatusOK, func() {})
	}), &Options{Logger: logger}))
	r.Method(http.MethodGet, "/status", New(Func(func(req *Request) Reply {
		return Status(http.StatusNoContent)
	}), nil))
	r.Method(http.MethodGet, "/405", New(Func(func(req *Request) Reply {
		return MethodNotAllowed(http.MethodPost, http.MethodDelete)
	}), nil))
	r.Method(http.MethodGet, "/delegate", New(Func(func(req *Request) Reply {
		return Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "teapot "+r.URL.Path, http.StatusTeapot)
		}))
	}), nil))
	r.Method(http.MethodGet, "/state", New(Func(func(req *Request) Reply {
		_, isInt := req.State().(int)
		return JSON(http.StatusOK, map[string]any{"int": isInt, "zero": StateOf[greeting](req).Word == ""})
	}), &Options{State: 7}))
	srv := httptest.NewServer(r)
	defer srv.Close()

	res, body := get(t, srv.URL+"/hello/ana")
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "hola, ana", body, "route state and chi URL params reach the controller")
	assert.Equal(t, "9", res.Header.Get("Content-Length"))

	res, body = get(t, srv.URL+"/json")
	assert.Equal(t, http.StatusCreated, res.StatusCode)
	assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
	assert.JSONEq(t, `{"n":1}`, body)

	res, body = get(t, srv.URL+"/badjson")
	assert.Equal(t, http.StatusInternalServerError, res.StatusCode)
	assert.NotContains(t, body, "func")
	assert.Contains(t, logs.String(), "not encodable")

	res, _ = get(t, srv.URL+"/status")
	assert.Equal(t, http.StatusNoContent, res.StatusCode)

	res, _ = get(t, srv.URL+"/405")
	assert.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
	assert.Equal(t, "POST, DELETE", res.Header.Get("Allow"))

	res, body = get(t, srv.URL+"/delegate")
	assert.Equal(t, http.StatusTeapot, res.StatusCode)
	assert.Equal(t, "teapot /delegate\n", body, "a delegated handler writes the response itself")

	_, body = get(t, srv.URL+"/state")
	assert.JSONEq(t, `{"int":true,"zero":true}`, body, "StateOf of the wrong type is the zero value")
}

func TestPanicInHandleIsA500AndTheServerLives(t *testing.T) {
	t.Parallel()
	logger, logs := testLogger()
	var mb *Mailbox
	h := New(Func(func(req *Request) Reply {
		if req.URL.Query().Has("nil") {
			return nil
		}
		mb = req.Mailbox()
		panic("secret internal detail")
	}), &Options{Logger: logger})
	srv := httptest.NewServer(h)
	defer srv.Close()

	for i := 0; i < 3; i++ {
		res, body := get(t, srv.URL)
		assert.Equal(t, http.StatusInternalServerError, res.StatusCode)
		assert.NotContains(t, body, "secret", "no panic detail reaches the client")
	}
	assert.Contains(t, logs.String(), "secret internal detail", "the panic is logged")
	assert.Contains(t, logs.String(), "reply_test.go", "with its stack")
	assert.ErrorIs(t, mb.Send("late"), ErrClosed, "the mailbox is released")

	res, _ := get(t, srv.URL+"?nil")
	assert.Equal(t, http.StatusInternalServerError, res.StatusCode, "a nil reply is a 500 too")
	assert.Contains(t, logs.String(), "nil reply")
}

func TestStreamSendsChunksAsTheyAreSent(t *testing.T) {
	t.Parallel()
	next := make(chan struct{})
	srv := httptest.NewServer(New(Func(func(req *Request) Reply {
		return Stream(http.StatusOK, http.Header{"Content-Type": {"text/plain"}}, func(ctx context.Context, send Send) error {
			for i := 0; i < 3; i++ {
				if err := send([]byte{'a' + byte(i), '\n'}); err != nil {
					return err
				}
				select {
				case <-next:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		})
	}), nil))
	defer srv.Close()
	res, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer res.Body.Close()
	buf := make([]byte, 2)
	for i := 0; i < 3; i++ {
		_, err := io.ReadFull(res.Body, buf)
		require.NoError(t, err)
		assert.Equal(t, string([]byte{'a' + byte(i), '\n'}), string(buf))
		next <- struct{}{}
	}
	rest, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	assert.Empty(t, strings.TrimSpace(string(rest)))
}

func TestBufferedTypeSetsOnlyContentType(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{"ok":true}`, strings.Repeat("x", 5000)} {
		srv := httptest.NewServer(New(Func(func(req *Request) Reply {
			return BufferedType(http.StatusAccepted, "application/json", []byte(body))
		}), nil))
		res, err := srv.Client().Get(srv.URL)
		require.NoError(t, err)
		got, err := io.ReadAll(res.Body)
		res.Body.Close()
		srv.Close()
		require.NoError(t, err)
		assert.Equal(t, http.StatusAccepted, res.StatusCode)
		assert.Equal(t, body, string(got))
		assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
		assert.Equal(t, int64(len(body)), res.ContentLength, "a Content-Length, never chunked")
		assert.Empty(t, res.TransferEncoding)
	}
}
