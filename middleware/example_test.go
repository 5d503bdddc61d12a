package middleware_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"time"

	chimw "github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httplog/v3"
	"github.com/saguaro-go/saguaro/middleware"
)

// exampleLogger writes text lines with only the given keys, so that the
// examples' output is short and stable (no times, durations or ports).
func exampleLogger(keys ...string) *slog.Logger {
	keep := map[string]bool{slog.LevelKey: true}
	for _, k := range keys {
		keep[k] = true
	}
	return slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if !keep[a.Key] {
				return slog.Attr{}
			}
			return a
		},
	}))
}

// The preset redacts query values and credentials, takes MCP attributes
// from the headers, and adds what the handler sets with SetAttrs.
func ExampleRequestLogger() {
	logger := exampleLogger("url.full", "http.response.status_code", middleware.MCPMethodKey, middleware.MCPToolKey)
	h := middleware.RequestLogger(logger, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		middleware.SetAttrs(r.Context(), slog.String(middleware.MCPToolKey, "get_weather"))
		fmt.Fprintln(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))

	req := httptest.NewRequest(http.MethodPost, "/mcp?access_token=SECRET", strings.NewReader("{}"))
	req.Host = "127.0.0.1:8080"
	req.Header.Set("Authorization", "Bearer SECRET")
	req.Header.Set("Mcp-Method", "tools/call")
	h.ServeHTTP(httptest.NewRecorder(), req)
	// Output:
	// level=INFO url.full="http://127.0.0.1:8080/mcp?access_token=REDACTED" http.response.status_code=200 mcp.method=tools/call mcp.tool=get_weather
}

// An event stream gets a line when it is accepted and one when it ends.
func ExampleRequestLogger_stream() {
	logger := exampleLogger(middleware.StreamLogKey, "http.response.body.bytes")
	h := middleware.RequestLogger(logger, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, "data: 1\n\n")
		http.NewResponseController(w).Flush()
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/mcp", nil))
	// Output:
	// level=INFO http.stream=start
	// level=INFO http.response.body.bytes=9 http.stream=end
}

// SetAttrs may be called from any goroutine while the request is served:
// here from the tool's own goroutine, as the mcp package does through its
// log hook.
func ExampleSetAttrs() {
	logger := exampleLogger(middleware.MCPMethodKey, middleware.MCPIDKey, middleware.MCPErrorCodeKey)
	hook := middleware.SetAttrs // what the app gives the mcp package
	h := middleware.RequestLogger(logger, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hook(r.Context(), slog.String(middleware.MCPMethodKey, "tools/call"), slog.Int(middleware.MCPIDKey, 7))
		var wg sync.WaitGroup
		wg.Go(func() { // the tool's goroutine
			hook(r.Context(), slog.Int(middleware.MCPErrorCodeKey, -32602))
		})
		wg.Wait()
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/mcp", nil))
	// Output:
	// level=INFO mcp.method=tools/call mcp.id=7 mcp.error_code=-32602
}

// SetError puts a handler's error on the request's line, in the place of
// httplog.SetError, which does nothing under RequestLogger. The schema's
// ReplaceAttr names it as the schema does: error.message in ECS.
func ExampleSetError() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			a = httplog.SchemaECS.ReplaceAttr(groups, a)
			if a.Key != "log.level" && a.Key != "http.response.status_code" && a.Key != "error.message" {
				return slog.Attr{}
			}
			return a
		},
	}))
	find := func(ctx context.Context, id string) error {
		return middleware.SetError(ctx, fmt.Errorf("no tool %q", id))
	}
	h := middleware.RequestLogger(logger, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := find(r.Context(), "get_weather"); err != nil {
			http.Error(w, "not found", http.StatusNotFound)
		}
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/mcp", nil))
	// Output:
	// log.level=WARN http.response.status_code=404 error.message="no tool \"get_weather\""
}

// A server on loopback refuses foreign Host headers (DNS rebinding) and
// foreign Origins.
func ExampleOriginCheck() {
	srv := httptest.NewServer(middleware.OriginCheck(&middleware.OriginOptions{
		AllowedOrigins: []string{"https://app.example.com"},
	})(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	defer srv.Close()

	for _, tc := range []struct{ host, origin string }{
		{"127.0.0.1:8080", ""},
		{"127.0.0.1:8080", "https://app.example.com"},
		{"127.0.0.1:8080", "https://evil.example.com"},
		{"evil.example.com", "http://evil.example.com"},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", nil)
		req.Host = tc.host
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Println(tc.host, tc.origin, resp.StatusCode)
	}
	// Output:
	// 127.0.0.1:8080  200
	// 127.0.0.1:8080 https://app.example.com 200
	// 127.0.0.1:8080 https://evil.example.com 403
	// evil.example.com http://evil.example.com 403
}

// A browser preflight for an MCP POST.
func ExampleCORS() {
	h := middleware.CORS(&middleware.CORSOptions{
		AllowedOrigins: []string{"http://localhost:6274"},
	})(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))

	req := httptest.NewRequest(http.MethodOptions, "/mcp", nil)
	req.Header.Set("Origin", "http://localhost:6274")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "authorization, content-type, mcp-session-id, mcp-param-region")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	fmt.Println(rec.Code)
	fmt.Println(rec.Header().Get("Access-Control-Allow-Origin"))
	fmt.Println(rec.Header().Get("Access-Control-Allow-Headers"))
	// Output:
	// 200
	// http://localhost:6274
	// Authorization, Content-Type, Mcp-Session-Id, Mcp-Param-Region
}

func ExampleBodyLimit() {
	h := middleware.BodyLimit(16)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(strings.Repeat("x", 17))))
	fmt.Print(rec.Code, " ", rec.Body.String())
	// Output:
	// 413 {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"request body too large"}}
}

// Limit per token subject, and per client IP for requests without one.
func ExampleRateLimit() {
	subject := func(r *http.Request) string { return r.Header.Get("X-Example-Subject") } // e.g. from the auth context
	var h http.Handler = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	h = middleware.RateLimit(&middleware.RateLimitOptions{
		Limit:  2,
		Window: time.Minute,
		Key:    middleware.KeyBySubject(subject),
	})(h)
	h = chimw.ClientIPFromRemoteAddr(h)

	for _, sub := range []string{"alice", "alice", "alice", "bob"} {
		req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		req.Header.Set("X-Example-Subject", sub)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Printf("%s %d Retry-After=%q\n", sub, rec.Code, rec.Header().Get("Retry-After"))
	}
	// Output:
	// alice 200 Retry-After=""
	// alice 200 Retry-After=""
	// alice 429 Retry-After="60"
	// bob 200 Retry-After=""
}
