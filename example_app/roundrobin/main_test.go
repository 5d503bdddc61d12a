package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBalancerTakesTurnsAndSkipsTheDead(t *testing.T) {
	backend := func(name string) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			_, _ = io.WriteString(w, name+" "+r.Host+" "+string(b))
		}))
	}
	a, b, dead := backend("a"), backend("b"), backend("dead")
	defer a.Close()
	defer b.Close()
	dead.Close()
	var urls []*url.URL
	for _, s := range []string{a.URL, dead.URL, b.URL} {
		u, _ := url.Parse(s)
		urls = append(urls, u)
	}
	lb := httptest.NewServer(balancer(urls))
	defer lb.Close()
	host := strings.TrimPrefix(lb.URL, "http://")
	seen := map[string]int{}
	for range 6 {
		resp, err := http.Post(lb.URL, "text/plain", strings.NewReader("body"))
		require.NoError(t, err)
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", out)
		name, rest, _ := strings.Cut(string(out), " ")
		assert.Equal(t, host+" body", rest, "the client's Host and the body reach the backend")
		seen[name]++
	}
	assert.Equal(t, map[string]int{"a": 3, "b": 3}, seen)
}
