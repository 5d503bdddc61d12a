package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The debug listener serves expvar, the runtime figures, a forced
// collection and pprof on its own address, and none of it on the app's;
// it stops with the app.
func TestDebugListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url, dbg := "http://"+ln.Addr().String(), "http://"+dln.Addr().String()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, ln, config{BaseURL: url, Debug: dln, PrintToken: false}, quietLogger())
	}()
	get := func(method, u string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, u, nil)
		require.NoError(t, err)
		var res *http.Response
		require.Eventually(t, func() bool {
			res, err = http.DefaultClient.Do(req)
			return err == nil
		}, 10*time.Second, 20*time.Millisecond)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}

	code, body := get(http.MethodGet, dbg+"/debug/vars")
	require.Equal(t, http.StatusOK, code)
	var vars struct {
		Memstats struct{ HeapAlloc uint64 } `json:"memstats"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &vars))
	assert.NotZero(t, vars.Memstats.HeapAlloc)

	for _, method := range []string{http.MethodGet, http.MethodPost} {
		path := map[string]string{http.MethodGet: "/debug/runtime", http.MethodPost: "/debug/gc"}[method]
		code, body = get(method, dbg+path)
		require.Equal(t, http.StatusOK, code, path)
		var st runtimeStats
		require.NoError(t, json.Unmarshal([]byte(body), &st), body)
		assert.Greater(t, st.Goroutines, 1, path)
		assert.NotZero(t, st.HeapAlloc, path)
		assert.Zero(t, st.Sessions, path)
	}
	code, _ = get(http.MethodGet, dbg+"/debug/gc")
	assert.Equal(t, http.StatusMethodNotAllowed, code, "a collection is forced by POST only")

	code, body = get(http.MethodGet, dbg+"/debug/pprof/goroutine?debug=1")
	require.Equal(t, http.StatusOK, code)
	assert.True(t, strings.HasPrefix(body, "goroutine profile: total "), body)

	code, _ = get(http.MethodGet, url+"/debug/vars")
	assert.NotEqual(t, http.StatusOK, code, "the app's own listener serves no debug route")

	stop()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the app did not stop")
	}
	_, err = net.DialTimeout("tcp", dln.Addr().String(), time.Second)
	assert.Error(t, err, "the debug listener stopped with the app")
}
