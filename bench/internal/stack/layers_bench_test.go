package stack

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/httplog/v3"

	"github.com/saguaro-go/saguaro/auth"
	"github.com/saguaro-go/saguaro/mcp"
)

// recorder is a ResponseWriter that keeps the status, the header and the
// last body, reused from call to call so the benchmark measures the
// handler and not a growing recorder.
type recorder struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.h }
func (w *recorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *recorder) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(p)
}
func (w *recorder) reset() {
	clear(w.h)
	w.status = 0
	w.body.Reset()
}

type echoIn struct {
	Text string `json:"text"`
}

// mcpHandler is the saguaro bench server's endpoint: the echo tool on
// mcp.Controller with sessions, the caller's identity and log attributes
// wired in when the stack has auth and the logger.
func mcpHandler(tb testing.TB, l layers) http.Handler {
	s := mcp.NewServer(mcp.Implementation{Name: "bench-saguaro", Version: "1.0.0"}, nil)
	err := mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo the text back"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.Text(in.Text)}}, nil
		})
	if err != nil {
		tb.Fatal(err)
	}
	opts := &mcp.Options{Handler: s, Limits: &mcp.Limits{Calls: -1, Streams: -1, Sessions: -1},
		Sessions: &mcp.SessionOptions{}}
	if l.auth {
		opts.Identity = auth.Identity
	}
	if l.logger {
		opts.Attrs = httplog.SetAttrs
	}
	return mcp.Controller(opts)
}

// client sends MCP requests to a handler in process, as the load
// generator sends them over HTTP: the same headers, one request value
// reused with a fresh body.
type client struct {
	h    http.Handler
	req  *http.Request
	body *strings.Reader
	w    recorder
}

func newClient(h http.Handler, token string) *client {
	c := &client{h: h, body: strings.NewReader(""), w: recorder{h: http.Header{}}}
	c.req, _ = http.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", c.body)
	// As net/http's server hands it over: the URL is the request target
	// alone (scheme and host are in TLS and Host), so the logger's url.full
	// is what it logs in production.
	c.req.URL = &url.URL{Path: "/mcp"}
	c.req.RemoteAddr = "127.0.0.1:40000"
	c.req.RequestURI = "/mcp"
	hd := c.req.Header
	hd.Set("Accept", "application/json, text/event-stream")
	hd.Set("Mcp-Protocol-Version", "2025-11-25")
	hd.Set("Content-Type", "application/json")
	hd.Set("Authorization", "Bearer "+token)
	return c
}

func (c *client) do(body string) {
	c.body.Reset(body)
	c.req.Body = io.NopCloser(c.body)
	c.req.ContentLength = int64(len(body))
	c.w.reset()
	c.h.ServeHTTP(&c.w, c.req)
}

// open initializes a session and sends notifications/initialized.
func (c *client) open(tb testing.TB) {
	c.do(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`)
	sid := c.w.h.Get("Mcp-Session-Id")
	if c.w.status != http.StatusOK || sid == "" {
		tb.Fatalf("initialize: %d %q %s", c.w.status, sid, c.w.body.String())
	}
	c.req.Header.Set("Mcp-Session-Id", sid)
	c.do(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if c.w.status != http.StatusAccepted {
		tb.Fatalf("notifications/initialized: %d %s", c.w.status, c.w.body.String())
	}
}

const (
	callBody  = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`
	callReply = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hello"}]}}`
)

// call sends the echo call and checks the answer in full.
func (c *client) call(tb testing.TB) {
	c.do(callBody)
	if c.w.status != http.StatusOK || strings.TrimSpace(c.w.body.String()) != callReply {
		tb.Fatalf("tools/call: %d %s", c.w.status, c.w.body.String())
	}
}

// stackVariants are the stack taken apart, layer by layer: "mcp" is
// saguaro-stateful (the controller on a chi router), "stack" is
// saguaro-stack, "silent" is the stack writing no line (what is left when
// the line costs nothing).
var stackVariants = []struct {
	name string
	l    layers
}{
	{"mcp", layers{}},
	{"chi", layers{chi: true}},
	{"logger", layers{chi: true, logger: true}},
	{"auth", layers{chi: true, auth: true}},
	{"silent", layers{chi: true, logger: true, auth: true, silent: true}},
	{"stack", all},
}

// BenchmarkLayers splits the realistic stack's cost per tools/call, in
// process, on one session: subtract "mcp" from a variant for the cost of
// its layers. Compare cpu-ns/op (process CPU, the garbage collector's
// included), not ns/op, on a shared machine.
func BenchmarkLayers(b *testing.B) {
	for _, v := range stackVariants {
		b.Run(v.name, func(b *testing.B) {
			c := openVariant(b, v.l)
			c.call(b)
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				c.call(b)
			}
		})
	}
}

// openVariant builds the stack with layers l around the MCP endpoint
// (closed when b ends) and returns a client with its session open.
func openVariant(b *testing.B, l layers) *client {
	s, err := build("/mcp", mcpHandler(b, l), io.Discard, l)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	c := newClient(s.Handler, s.Token)
	c.open(b)
	return c
}

// reportCPU reports the process's CPU time per operation as "cpu-ns/op"
// when the returned func is called after the loop.
func reportCPU(b *testing.B) func() {
	start, ok := processCPU()
	return func() {
		end, _ := processCPU()
		if ok && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// BenchmarkLayersInterleaved serves the variants of BenchmarkLayers in
// turn, a batch of calls each, so that a busy machine weighs on all of
// them alike, and reports each variant's median CPU per call over the
// batches ("<variant>-cpu-ns/call") and the whole stack's over the MCP
// controller's ("stack/mcp"), the ratio of the medians. It also reports,
// for each variant, the median over rounds of each round's own ratio to
// mcp ("<variant>/mcp-paired"): a round's batches run milliseconds apart,
// so a change of load between rounds, which moves every median, cancels
// out of it; on a busy machine it is the steadier figure. One op is one
// batch of every variant.
func BenchmarkLayersInterleaved(b *testing.B) {
	const batch = 200
	clients := make([]*client, len(stackVariants))
	for i, v := range stackVariants {
		c := openVariant(b, v.l)
		for range batch {
			c.call(b)
		}
		clients[i] = c
	}
	samples := make([][]float64, len(stackVariants))
	paired := make([][]float64, len(stackVariants)) // per round: a variant's CPU per call over mcp's
	b.ReportAllocs()
	for b.Loop() {
		for i, c := range clients {
			start, ok := processCPU()
			if !ok {
				b.Skip("no process CPU time on this platform")
			}
			for range batch {
				c.call(b)
			}
			end, _ := processCPU()
			samples[i] = append(samples[i], float64(end-start)/batch)
		}
		round := len(samples[0]) - 1
		for i := 1; i < len(samples); i++ {
			paired[i] = append(paired[i], samples[i][round]/samples[0][round])
		}
	}
	med := make([]float64, len(samples))
	for i, s := range samples {
		slices.Sort(s)
		med[i] = s[len(s)/2]
		b.ReportMetric(med[i], stackVariants[i].name+"-cpu-ns/call")
	}
	b.ReportMetric(med[len(med)-1]/med[0], "stack/mcp")
	for i := 1; i < len(stackVariants); i++ {
		slices.Sort(paired[i])
		b.ReportMetric(paired[i][len(paired[i])/2], stackVariants[i].name+"/mcp-paired")
	}
}
