package middleware

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	chimw "github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httprate"
)

// RateLimitOptions configures [RateLimit]. A nil pointer means 100 requests
// a minute per client IP.
type RateLimitOptions struct {
	// Limit is the number of requests a key may make per Window.
	// Default: 100.
	Limit int

	// Window is the length of the sliding window. Default: one minute.
	// Retry-After on a 429 is the window length in seconds (httprate's
	// rule), rounded up.
	Window time.Duration

	// Key names the bucket of a request. Default: [KeyByClientIP]. Use
	// [KeyBySubject] after authentication to limit per token subject.
	Key httprate.KeyFunc

	// Counter stores the counts. Default: in memory, per process; pass a
	// shared counter (e.g. go-chi/httprate-redis) when replicas must share
	// a limit.
	Counter httprate.LimitCounter

	// OnError writes the answer when Key or Counter fails. Default: 503 with
	// Retry-After: 1 and a small JSON body (the error is not shown to the
	// client). The request is never let through on an error.
	OnError func(w http.ResponseWriter, r *http.Request, err error)
}

// RateLimit returns middleware that limits requests per key with
// [httprate.LimitBy]. Over the limit it answers 429 with Retry-After and a
// small JSON body; every answer carries httprate's X-RateLimit-* headers.
//
// Keyed by client IP, it must come after one of chi's ClientIPFrom…
// middlewares, or every client behind one proxy shares a bucket (see
// [KeyByClientIP]). Keyed by subject, it must come after authentication.
// An MCP event stream counts as one request, however long it lives.
// RateLimit panics if Limit or Window is negative.
func RateLimit(opts *RateLimitOptions) func(http.Handler) http.Handler {
	var o RateLimitOptions
	if opts != nil {
		o = *opts
	}
	switch {
	case o.Limit < 0:
		panic("saguaro/middleware: RateLimit expects Limit >= 0")
	case o.Window < 0:
		panic("saguaro/middleware: RateLimit expects Window >= 0")
	}
	if o.Limit == 0 {
		o.Limit = 100
	}
	if o.Window == 0 {
		o.Window = time.Minute
	}
	if o.Key == nil {
		o.Key = KeyByClientIP
	}
	if o.OnError == nil {
		o.OnError = rateLimitError
	}
	retryAfter := strconv.FormatInt(int64((o.Window+time.Second-1)/time.Second), 10)
	options := []httprate.Option{
		httprate.WithLimitHandler(func(w http.ResponseWriter, r *http.Request) {
			// httprate truncates sub-second windows to "0"; never send that.
			w.Header().Set("Retry-After", retryAfter)
			writeError(w, http.StatusTooManyRequests, codeServerError, "rate limit exceeded")
		}),
		httprate.WithErrorHandler(o.OnError),
	}
	if o.Counter != nil {
		options = append(options, httprate.WithLimitCounter(o.Counter))
	}
	return httprate.LimitBy(o.Limit, o.Window, o.Key, options...)
}

func rateLimitError(w http.ResponseWriter, _ *http.Request, _ error) {
	w.Header().Set("Retry-After", "1")
	writeError(w, http.StatusServiceUnavailable, codeServerError, "rate limiter unavailable")
}

// KeyByClientIP is a [httprate.KeyFunc] that keys by the client IP that
// chi's ClientIPFrom… middleware resolved ([chimw.GetClientIP]), bucketing
// IPv6 clients by their /64 ([httprate.CanonicalizeIP]). Without such a
// middleware it falls back to the peer address of the connection, never to
// one global bucket; behind a proxy that peer is the proxy, so install
// ClientIPFromXFF or ClientIPFromHeader there.
func KeyByClientIP(r *http.Request) (string, error) {
	ip := chimw.GetClientIP(r.Context())
	if ip == "" {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		ip = host
	}
	if ip == "" {
		return "", fmt.Errorf("saguaro/middleware: no client IP for %q", r.RemoteAddr)
	}
	return "ip:" + httprate.CanonicalizeIP(ip), nil
}

// KeyBySubject returns a [httprate.KeyFunc] that keys by the authenticated
// subject that subject reports (e.g. the JWT "sub" read from the auth
// package's context), and by [KeyByClientIP] when subject returns "".
// Subject and IP keys live in separate namespaces, so a subject named like
// an IP address cannot share that IP's bucket.
func KeyBySubject(subject func(r *http.Request) string) httprate.KeyFunc {
	if subject == nil {
		panic("saguaro/middleware: KeyBySubject needs a subject func")
	}
	return func(r *http.Request) (string, error) {
		if s := subject(r); s != "" {
			return "sub:" + s, nil
		}
		return KeyByClientIP(r)
	}
}
