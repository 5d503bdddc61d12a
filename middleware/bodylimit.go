package middleware

import (
	"net/http"
)

// DefaultMaxBodyBytes is the request body limit the saguaro design uses for
// MCP POSTs: 4 MiB.
const DefaultMaxBodyBytes = 4 << 20

// BodyLimit returns middleware that caps request bodies at maxBytes.
//
// A request whose Content-Length exceeds the cap is answered 413 with a
// small JSON body at once, before the handler runs. Any other body is
// wrapped with [http.MaxBytesReader], so a chunked body that grows past the
// cap fails the handler's read with a [*http.MaxBytesError]; the handler
// must then answer 413 itself (test with errors.As), because only it knows
// what it has written so far. The mcp package does.
//
// Put BodyLimit before [Logging] when request bodies are logged: httplog
// keeps a copy of the body, and reads to its end what the handler left.
// BodyLimit panics if maxBytes is not positive.
func BodyLimit(maxBytes int64) func(http.Handler) http.Handler {
	if maxBytes <= 0 {
		panic("saguaro/middleware: BodyLimit expects maxBytes > 0")
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > maxBytes {
				// Do not read the body; net/http closes the connection
				// rather than drain a large one.
				w.Header().Set("Connection", "close")
				writeError(w, http.StatusRequestEntityTooLarge, codeInvalidRequest, "request body too large")
				return
			}
			if r.Body != nil && r.Body != http.NoBody {
				body := r.Body
				r = r.WithContext(r.Context()) // a shallow copy; the caller's request stays as it was
				// MaxBytesReader uses the writer only to tell net/http to
				// close the connection once the cap is hit, which works only
				// on net/http's own writer: hand it the innermost one.
				r.Body = http.MaxBytesReader(innermost(w), body, maxBytes)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// innermost follows Unwrap to the writer at the bottom of a wrapper chain.
func innermost(w http.ResponseWriter) http.ResponseWriter {
	for range 32 { // a bound, in case of a wrapper that returns itself
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return w
		}
		w = u.Unwrap()
	}
	return w
}
