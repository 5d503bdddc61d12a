package middleware

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	chimw "github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httplog/v3"
)

// discardWriter is a ResponseWriter that keeps nothing but the header, so
// that a benchmark measures the middleware and not a growing recorder.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(code int)        { w.status = code }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }

// mcpPostBody is a tools/call as an MCP client sends it.
const mcpPostBody = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Tucson"}}}`

// mcpPostHandler answers like the mcp package answers a buffered POST: it
// reads the body, reports the call through SetAttrs (the log hook) and
// writes a JSON result.
func mcpPostHandler() http.HandlerFunc {
	result := []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"sunny"}]}}`)
	var buf [512]byte
	return func(w http.ResponseWriter, r *http.Request) {
		for {
			if _, err := r.Body.Read(buf[:]); err != nil {
				break
			}
		}
		SetAttrs(r.Context(), slog.String(MCPMethodKey, "tools/call"), slog.String(MCPIDKey, "7"),
			slog.String(MCPRevisionKey, "2025-11-25"), slog.String(MCPToolKey, "get_weather"))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(result)
	}
}

// reportCPU reports the process's CPU time per operation as "cpu-ns/op"
// when the returned func is called after the loop. Unlike ns/op it does not
// grow while other processes hold the machine's cores, so it is the figure
// to compare between runs on a shared machine.
func reportCPU(b *testing.B) func() {
	start, ok := processCPU()
	return func() {
		end, _ := processCPU()
		if ok && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// BenchmarkRequestLogger_MCPPost serves an MCP tools/call POST through
// chi's RequestID and ClientIPFromRemoteAddr, then the logger, with a
// bearer token, the MCP headers and a JSON body; lines are formatted in
// full by slog's JSON handler and discarded. "none" is the same chain
// without a logger: the logger's cost is the difference. "preset-direct"
// is the preset writing through JSONHandler (the same line);
// "preset-silent" writes no line (the preset's bookkeeping). "httplog" is
// httplog's own middleware in the logger's place, for reference.
func BenchmarkRequestLogger_MCPPost(b *testing.B) {
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	inner := mcpPostHandler()
	chain := func(logMW func(http.Handler) http.Handler) http.Handler {
		r := chi.NewRouter()
		r.Use(chimw.RequestID, chimw.ClientIPFromRemoteAddr)
		if logMW != nil {
			r.Use(logMW)
		}
		r.Post("/mcp", inner)
		return r
	}
	for _, bc := range []struct {
		name string
		h    http.Handler
	}{
		{"none", chain(nil)},
		{"preset", chain(RequestLogger(logger, nil))},
		{"preset-direct", chain(RequestLogger(slog.New(NewJSONHandler(io.Discard, nil)), nil))},
		{"preset-silent", chain(RequestLogger(slog.New(NewJSONHandler(io.Discard, nil)), &LogOptions{Level: slog.LevelError + 1}))},
		{"httplog", chain(httplog.RequestLogger(logger, &httplog.Options{
			LogRequestHeaders: []string{"Content-Type", "Origin"},
		}))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			body := strings.NewReader(mcpPostBody)
			req := httptest.NewRequest(http.MethodPost, "/mcp", body)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer eyJhbGciOiJSUzI1NiIsImtpZCI6ImJlbmNoIn0.eyJzdWIiOiJiZW5jaCJ9.c2lnbmF0dXJl")
			req.Header.Set("Mcp-Session-Id", "3f9c2a7e-5b1d-4e8a-9c0f-7d2e6b4a1c85")
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			req.Header.Set("User-Agent", "mcp-client/1.0")
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				body.Reset(mcpPostBody)
				req.Body = io.NopCloser(body)
				clear(w.h)
				bc.h.ServeHTTP(w, req)
				if w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
			}
		})
	}
}

func BenchmarkRequestLogger(b *testing.B) {
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	h := RequestLogger(logger, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		SetAttrs(r.Context(), slog.String(MCPToolKey, "echo"))
		w.WriteHeader(http.StatusOK)
	}))
	for _, bc := range []struct {
		name   string
		target string
		auth   bool
	}{{"plain", "/mcp", false}, {"query+auth", "/mcp?access_token=x&cursor=y", true}} {
		b.Run(bc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodPost, bc.target, nil)
			req.Header.Set("Mcp-Method", "tools/call")
			if bc.auth {
				req.Header.Set("Authorization", "Bearer t")
			}
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, req)
			}
		})
	}
}
