package middleware

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	chimw "github.com/go-chi/chi/v5/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRateLimit_HoldsUnderConcurrentLoad(t *testing.T) {
	t.Parallel()
	const limit, clients = 10, 50
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	h = RateLimit(&RateLimitOptions{Limit: limit, Window: time.Minute})(h)
	h = chimw.ClientIPFromRemoteAddr(h)
	srv := httptest.NewServer(h)
	defer srv.Close()

	var (
		mu     sync.Mutex
		counts = map[int]int{}
		wg     sync.WaitGroup
		start  = make(chan struct{})
	)
	for range clients {
		wg.Go(func() {
			<-start
			res, err := http.Get(srv.URL + "/mcp")
			if !assert.NoError(t, err) {
				return
			}
			res.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			counts[res.StatusCode]++
			if res.StatusCode == http.StatusTooManyRequests {
				assert.Equal(t, "60", res.Header.Get("Retry-After"))
				assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
			}
			assert.Equal(t, "10", res.Header.Get("X-RateLimit-Limit"))
		})
	}
	close(start)
	wg.Wait()
	assert.Equal(t, map[int]int{http.StatusOK: limit, http.StatusTooManyRequests: clients - limit}, counts)
}

func TestRateLimit_BySubjectFallsBackToIP(t *testing.T) {
	t.Parallel()
	subject := func(r *http.Request) string { return r.Header.Get("X-Test-Subject") }
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	h = RateLimit(&RateLimitOptions{Limit: 2, Key: KeyBySubject(subject)})(h)
	srv := httptest.NewServer(h)
	defer srv.Close()

	get := func(sub string) int {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		if sub != "" {
			req.Header.Set("X-Test-Subject", sub)
		}
		res, _ := do(t, req)
		return res.StatusCode
	}
	assert.Equal(t, []int{200, 200, 429}, []int{get("alice"), get("alice"), get("alice")})
	assert.Equal(t, []int{200, 200, 429}, []int{get("bob"), get("bob"), get("bob")}, "own bucket")
	assert.Equal(t, []int{200, 200, 429}, []int{get(""), get(""), get("")}, "anonymous: by IP")
	assert.Equal(t, 200, get("127.0.0.1"), "a subject named like an IP has its own bucket")
}

func TestRateLimit_KeyErrorIs503(t *testing.T) {
	t.Parallel()
	h := RateLimit(&RateLimitOptions{Key: func(*http.Request) (string, error) { return "", errors.New("redis down") }})(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("must not be reached") }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Equal(t, "1", rec.Header().Get("Retry-After"))
	assert.NotContains(t, rec.Body.String(), "redis")
}

func TestRateLimit_SubSecondWindowRetryAfter(t *testing.T) {
	t.Parallel()
	h := RateLimit(&RateLimitOptions{Limit: 1, Window: 500 * time.Millisecond})(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	var last *httptest.ResponseRecorder
	for range 2 {
		last = httptest.NewRecorder()
		h.ServeHTTP(last, httptest.NewRequest(http.MethodGet, "/", nil))
	}
	require.Equal(t, http.StatusTooManyRequests, last.Code)
	assert.Equal(t, "1", last.Header().Get("Retry-After"))
}

func TestRateLimit_PanicsOnBadOptions(t *testing.T) {
	t.Parallel()
	assert.Panics(t, func() { RateLimit(&RateLimitOptions{Limit: -1}) })
	assert.Panics(t, func() { RateLimit(&RateLimitOptions{Window: -time.Second}) })
	assert.Panics(t, func() { KeyBySubject(nil) })
	opts := &RateLimitOptions{}
	RateLimit(opts)
	assert.Equal(t, RateLimitOptions{}, *opts, "the caller's struct is not filled in")
}

func TestKeyByClientIP(t *testing.T) {
	t.Parallel()
	key := func(remote string, resolve bool) string {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.RemoteAddr = remote
		var got string
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var err error
			got, err = KeyByClientIP(r)
			assert.NoError(t, err)
		})
		if resolve {
			chimw.ClientIPFromRemoteAddr(h).ServeHTTP(httptest.NewRecorder(), req)
		} else {
			h.ServeHTTP(httptest.NewRecorder(), req)
		}
		return got
	}
	assert.Equal(t, "ip:192.0.2.7", key("192.0.2.7:1234", true))
	assert.Equal(t, "ip:192.0.2.7", key("192.0.2.7:1234", false), "falls back to the peer")
	assert.Equal(t, key("[2001:db8::1]:1", true), key("[2001:db8::ffff]:2", true), "one /64, one bucket")
	assert.NotEqual(t, key("[2001:db8::1]:1", true), key("[2001:db8:0:1::1]:1", true))

	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.RemoteAddr = ""
	_, err := KeyByClientIP(req)
	assert.Error(t, err, "no IP at all is an error, not a global bucket")
}
