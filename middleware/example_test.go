package middleware_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httplog/v3"
	"github.com/golang-jwt/jwt/v5"

	"github.com/saguaro-go/saguaro/auth"
	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/middleware"
)

// exampleLogger writes text lines with only the given keys, so that the
// examples' output is short and stable (no times, durations or ports),
// under the ECS schema's names.
func exampleLogger(keys ...string) *slog.Logger {
	keep := map[string]bool{}
	for _, k := range keys {
		keep[k] = true
	}
	return slog.New(keepOnly{slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == slog.MessageKey {
				return slog.Attr{}
			}
			return httplog.SchemaECS.ReplaceAttr(groups, a)
		},
	}), keep})
}

// keepOnly passes on a record with only the attributes it keeps.
type keepOnly struct {
	slog.Handler
	keep map[string]bool
}

func (h keepOnly) Handle(ctx context.Context, r slog.Record) error {
	kept := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		if h.keep[a.Key] {
			kept.AddAttrs(a)
		}
		return true
	})
	return h.Handler.Handle(ctx, kept)
}

// The package documentation's chain around an MCP endpoint, run: a
// browser's preflight is answered by CORS, a foreign page refused by
// OriginCheck, a request without a token by the verifier's enforcer, and
// a call with one reaches the endpoint; every line is httplog's, with the
// MCP method and tool on it.
func Example() {
	logger := exampleLogger("url.path", "http.response.status_code", mcp.AttrMethod, mcp.AttrTool)
	origins := []string{"https://app.example.com"}
	key := []byte("an-example-secret-of-32-bytes!!!")
	v, err := auth.NewVerifier(context.Background(), &auth.Options{Resource: "http://127.0.0.1:8080/mcp",
		Issuer: "https://login.example.com", Keys: []auth.Key{auth.HMACKey("HS256", key)}})
	if err != nil {
		panic(err)
	}
	defer v.Close()
	srv := mcp.NewServer(mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	_ = mcp.AddTool(srv, &mcp.Tool{Name: "get_weather"},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct{ City string }) (string, error) {
			return "sunny in " + in.City, nil
		})

	r := chi.NewRouter()
	r.Use(chimw.RequestID, chimw.ClientIPFromRemoteAddr) // Logging logs them; behind a proxy, ClientIPFromXFF
	r.Use(middleware.Logging(logger, nil))               // recovers panics itself
	r.Use(chimw.Heartbeat("/healthz"))
	r.Use(middleware.CORS(&middleware.CORSOptions{AllowedOrigins: origins}))          // answers preflights
	r.Use(middleware.OriginCheck(&middleware.OriginOptions{AllowedOrigins: origins})) // refuses the rest
	r.Use(middleware.RateLimit(nil))                                                  // 100 a minute per client IP, token checks included
	r.Use(middleware.BodyLimit(middleware.DefaultMaxBodyBytes))
	r.With(v.Handler, auth.Required(), middleware.RateLimit(&middleware.RateLimitOptions{
		Limit: 600, Key: middleware.KeyBySubject(auth.Identity), // per subject, after auth
	})).Mount("/mcp", mcp.Controller(&mcp.Options{
		Handler:        srv,
		AllowedOrigins: origins, // the endpoint applies OriginCheck's rule itself
		Attrs:          httplog.SetAttrs,
	}))

	token, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": "https://login.example.com",
		"aud": "http://127.0.0.1:8080/mcp", "sub": "ann", "exp": time.Now().Add(time.Hour).Unix()}).SignedString(key)
	send := func(method, origin, token, body string) {
		req := httptest.NewRequest(method, "http://127.0.0.1:8080/mcp", strings.NewReader(body))
		req.RemoteAddr = "192.0.2.7:41000"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if method == http.MethodOptions {
			req.Header.Set("Access-Control-Request-Method", "POST")
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		fmt.Println(method, origin, w.Code)
	}
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_weather","arguments":{"City":"Tucson"}}}`
	send(http.MethodOptions, "https://app.example.com", "", "")
	send(http.MethodPost, "https://evil.example.com", token, call)
	send(http.MethodPost, "", "", call)
	send(http.MethodPost, "https://app.example.com", token, call)
	// Output:
	// OPTIONS https://app.example.com 200
	// log.level=WARN url.path=/mcp http.response.status_code=403
	// POST https://evil.example.com 403
	// log.level=WARN url.path=/mcp http.response.status_code=401
	// POST  401
	// log.level=INFO url.path=/mcp http.response.status_code=200 mcp.method=tools/call mcp.tool=get_weather
	// POST https://app.example.com 200
}

// The preset is httplog's request line; the mcp package puts what a
// request calls on it through httplog.SetAttrs.
func ExampleLogging() {
	logger := exampleLogger("url.full", "http.response.status_code", mcp.AttrMethod, mcp.AttrTool, mcp.AttrID)
	srv := mcp.NewServer(mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	_ = mcp.AddTool(srv, &mcp.Tool{Name: "get_weather"},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct{ City string }) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.Text("sunny in " + in.City)}}, nil
		})
	h := middleware.Logging(logger, nil)(mcp.Controller(&mcp.Options{
		Handler: srv,
		Attrs:   httplog.SetAttrs,
	}))

	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_weather","arguments":{"City":"Tucson"}}}`))
	req.Host = "127.0.0.1:8080"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	h.ServeHTTP(httptest.NewRecorder(), req)
	// Output:
	// log.level=INFO url.full=http://127.0.0.1:8080/mcp http.response.status_code=200 mcp.method=tools/call mcp.id=7 mcp.tool=get_weather
}

// An event stream gets a line when it is accepted and httplog's when it
// ends.
func ExampleLogging_stream() {
	logger := exampleLogger(middleware.StreamLogKey, "http.response.body.bytes")
	h := middleware.Logging(logger, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, "data: 1\n\n")
		http.NewResponseController(w).Flush()
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/mcp", nil))
	// Output:
	// log.level=INFO http.stream=start
	// log.level=INFO http.response.body.bytes=9 http.stream=end
}

// A handler's error goes on the line with httplog.SetError; the schema's
// ReplaceAttr names it as the schema does: error.message in ECS.
func ExampleLogging_error() {
	logger := exampleLogger("http.response.status_code", httplog.ErrorKey)
	find := func(ctx context.Context, id string) error {
		return httplog.SetError(ctx, fmt.Errorf("no task %q", id))
	}
	h := middleware.Logging(logger, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := find(r.Context(), "7"); err != nil {
			http.Error(w, "not found", http.StatusNotFound)
		}
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/tasks/7", nil))
	// Output:
	// log.level=WARN http.response.status_code=404 error.message="no task \"7\""
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
