package mcp_test

// Big results are written into the response in place (no copy of the
// encoded result): the answers must read exactly as the copied ones do,
// in every era and transport, with a short or a long id, with and without
// a result _meta (which the 2026-07-28 envelope has to merge, so it takes
// the copying path).

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcp/mcptest"
)

func bigServer(t *testing.T) (*mcp.Server, string) {
	text := strings.Repeat("line \"quoted\"\tand é, <tag> & \u2028\n", 2000)
	srv := mcp.NewServer(mcp.Implementation{Name: "big", Version: "1"}, nil)
	type in struct {
		Meta bool `json:"meta,omitempty"`
	}
	require.NoError(t, mcp.AddTool(srv, &mcp.Tool{Name: "big"}, func(_ context.Context, _ *mcp.CallToolRequest, in in) (*mcp.CallToolResult, error) {
		res := &mcp.CallToolResult{Content: []mcp.Content{mcp.Text(text)}}
		if in.Meta {
			res.Meta = mcp.Meta{"k": "v"}
		}
		return res, nil
	}))
	type echoIn struct {
		Text string `json:"text"`
	}
	require.NoError(t, mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (string, error) {
		return in.Text, nil
	}))
	require.NoError(t, srv.AddResource(&mcp.Resource{URI: "big://doc", Name: "doc"}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.URI, Text: text}}}, nil
	}))
	return srv, text
}

type bigAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  struct {
		ResultType string `json:"resultType"`
		Content    []struct {
			Text string `json:"text"`
		} `json:"content"`
		Contents []struct {
			Text string `json:"text"`
		} `json:"contents"`
		Meta map[string]any `json:"_meta"`
	} `json:"result"`
	Error any `json:"error"`
}

func TestBigResultsOverHTTP(t *testing.T) {
	srv, text := bigServer(t)
	ts := httptest.NewServer(mcp.Controller(&mcp.Options{Handler: srv}))
	defer ts.Close()
	post := func(rev, id, method, params string) bigAnswer {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`
		r, err := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
		require.NoError(t, err)
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("MCP-Protocol-Version", rev)
		if rev == "2026-07-28" {
			r.Header.Set("Mcp-Method", method)
			if method == "tools/call" {
				r.Header.Set("Mcp-Name", "big")
			} else {
				r.Header.Set("Mcp-Name", "big://doc")
			}
		}
		resp, err := ts.Client().Do(r)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%.300s", raw)
		require.True(t, json.Valid(raw), "%.300s", raw)
		var a bigAnswer
		require.NoError(t, json.Unmarshal(raw, &a))
		assert.Equal(t, "2.0", a.JSONRPC)
		assert.JSONEq(t, id, string(a.ID))
		require.Nil(t, a.Error)
		return a
	}
	modernMeta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}`
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		for _, id := range []string{`7`, `"short"`, `"` + strings.Repeat("x", 300) + `"`} {
			for _, meta := range []bool{false, true} {
				args := `{}`
				if meta {
					args = `{"meta":true}`
				}
				params := `{"name":"big","arguments":` + args
				rparams := `{"uri":"big://doc"`
				if rev == "2026-07-28" {
					params += "," + modernMeta
					rparams += "," + modernMeta
				}
				a := post(rev, id, "tools/call", params+"}")
				require.Len(t, a.Result.Content, 1)
				assert.Equal(t, text, a.Result.Content[0].Text, "%s id %.10s meta %v", rev, id, meta)
				if meta {
					assert.Equal(t, "v", a.Result.Meta["k"])
				}
				r := post(rev, id, "resources/read", rparams+"}")
				require.Len(t, r.Result.Contents, 1)
				assert.Equal(t, text, r.Result.Contents[0].Text)
				if rev == "2026-07-28" {
					assert.Equal(t, "complete", a.Result.ResultType)
					assert.Contains(t, a.Result.Meta, "io.modelcontextprotocol/serverInfo")
					assert.Equal(t, "complete", r.Result.ResultType)
					assert.Contains(t, r.Result.Meta, "io.modelcontextprotocol/serverInfo")
				}
			}
		}
	}
}

func TestBigResultsOverAConnection(t *testing.T) {
	srv, text := bigServer(t)
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		c := mcptest.Connect(t, srv, &mcptest.Options{Revision: rev})
		res, err := c.CallTool(context.Background(), "big", map[string]any{"meta": true})
		require.NoError(t, err)
		require.Len(t, res.Content, 1)
		assert.Equal(t, text, res.Content[0].(*mcp.TextContent).Text)
		assert.Equal(t, "v", res.Meta["k"])
		rr, err := c.ReadResource(context.Background(), "big://doc")
		require.NoError(t, err)
		assert.Equal(t, text, rr.Contents[0].Text)
	}
}

// A big argument arrives whole whether the client declares its length or
// sends it chunked, in a session or not.
func TestBigArgumentsOverHTTP(t *testing.T) {
	srv, _ := bigServer(t)
	text := strings.Repeat("arg \"quoted\"\tand é\n", 15000) // ~300 KB, past several read chunks
	for _, sessions := range []bool{false, true} {
		opts := &mcp.Options{Handler: srv}
		if sessions {
			opts.Sessions = &mcp.SessionOptions{}
		}
		ep := mcp.Controller(opts)
		ts := httptest.NewServer(ep)
		sid := ""
		if sessions {
			sid = bigSession(t, ts)
		}
		args, _ := json.Marshal(map[string]string{"text": text})
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":` + string(args) + `}}`
		for _, chunked := range []bool{false, true} {
			var rd io.Reader = strings.NewReader(body)
			if chunked {
				rd = io.MultiReader(rd) // hides the length: sent chunked
			}
			_, raw := bigPost(t, ts, "2025-11-25", sid, rd)
			var a bigAnswer
			require.NoError(t, json.Unmarshal(raw, &a), "%.200s", raw)
			require.Len(t, a.Result.Content, 1)
			assert.Equal(t, text, a.Result.Content[0].Text, "sessions %v chunked %v", sessions, chunked)
		}
		_ = ep.Shutdown(context.Background())
		ts.Close()
	}
}

// A big result answered as JSON is encoded into a pooled buffer that goes
// back to its pool once written: over many answers a call allocates far
// less than its response, and answers written at once from reused buffers
// stay whole. Each way a call is answered is tried: stateless, in a
// session (through the call's worker), and in 2026-07-28.
func TestBigAnswersReuseTheirBuffer(t *testing.T) {
	srv, _ := bigServer(t)
	for _, mode := range []string{"stateless", "session", "2026-07-28"} {
		t.Run(mode, func(t *testing.T) {
			opts := &mcp.Options{Handler: srv}
			if mode == "session" {
				opts.Sessions = &mcp.SessionOptions{}
			}
			ep := mcp.Controller(opts)
			ts := httptest.NewServer(ep)
			defer ts.Close()
			defer func() { _ = ep.Shutdown(context.Background()) }()
			rev := "2025-11-25"
			if mode == "2026-07-28" {
				rev = mode
			}
			sid := ""
			if mode == "session" {
				sid = bigSession(t, ts)
			}
			echo := func(text string) (string, int) {
				args, _ := json.Marshal(map[string]string{"text": text})
				params := `{"name":"echo","arguments":` + string(args)
				if rev == "2026-07-28" {
					params += `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
				}
				resp, raw := bigPost(t, ts, rev, sid, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+params+`}}`))
				require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
				var a bigAnswer
				require.NoError(t, json.Unmarshal(raw, &a), "%.300s", raw)
				require.Len(t, a.Result.Content, 1, "%.300s", raw)
				return a.Result.Content[0].Text, len(raw)
			}

			// Whole answers from reused buffers, eight at a time.
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 6 {
						text := strings.Repeat(fmt.Sprintf("caller %d call %d: \"q\"\té\n", g, i), 4000)
						got, _ := echo(text)
						if !assert.Equal(t, text, got) {
							return
						}
					}
				}()
			}
			wg.Wait()

			// Far less allocated per call than the response once warm: a
			// resources/read of a big document over a raw connection, so
			// that what the client allocates is next to nothing.
			params := `{"uri":"big://doc"`
			if rev == "2026-07-28" {
				params += `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
			}
			body := `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":` + params + `}}`
			head := "POST / HTTP/1.1\r\nHost: " + ts.Listener.Addr().String() +
				"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: " + rev +
				"\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n"
			if rev == "2026-07-28" {
				head += "Mcp-Method: resources/read\r\nMcp-Name: big://doc\r\n"
			}
			if sid != "" {
				head += "Mcp-Session-Id: " + sid + "\r\n"
			}
			req := []byte(head + "\r\n" + body)
			c, err := net.Dial("tcp", ts.Listener.Addr().String())
			require.NoError(t, err)
			defer c.Close()
			br := bufio.NewReaderSize(c, 64<<10)
			read := func() int64 {
				_, err := c.Write(req)
				require.NoError(t, err)
				resp, err := http.ReadResponse(br, nil)
				require.NoError(t, err)
				n, err := io.Copy(io.Discard, resp.Body)
				require.NoError(t, err)
				resp.Body.Close()
				require.Equal(t, http.StatusOK, resp.StatusCode)
				return n
			}
			size := read()
			read()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			const n = 20
			for range n {
				read()
			}
			runtime.ReadMemStats(&after)
			perCall := int64(after.TotalAlloc-before.TotalAlloc) / n
			t.Logf("response %d bytes, %d allocated per call", size, perCall)
			// Without reuse a call allocates about twice the response;
			// with it, next to nothing. The race detector makes sync.Pool
			// drop buffers at random, so there only the answers count.
			if !raceEnabled {
				assert.Less(t, perCall, size/2, "the response's buffer was not reused")
			}
		})
	}
}

// bigSession opens a 2025-11-25 session on ts and returns its id.
func bigSession(t *testing.T, ts *httptest.Server) string {
	t.Helper()
	r, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := ts.Client().Do(r)
	require.NoError(t, err)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	return sid
}

// bigPost posts a tools/call body to ts in revision rev (and session sid,
// if any) and returns the 200 answer and its body. A 2026-07-28 call
// names the echo tool in its headers.
func bigPost(t *testing.T, ts *httptest.Server, rev, sid string, body io.Reader) (*http.Response, []byte) {
	t.Helper()
	r, err := http.NewRequest(http.MethodPost, ts.URL, body)
	require.NoError(t, err)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", rev)
	if rev == "2026-07-28" {
		r.Header.Set("Mcp-Method", "tools/call")
		r.Header.Set("Mcp-Name", "echo")
	}
	if sid != "" {
		r.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := ts.Client().Do(r)
	require.NoError(t, err)
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%.300s", raw)
	return resp, raw
}
