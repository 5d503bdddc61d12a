package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// proxyLag is how long the proxied request body holds back its last Read:
// see lateEOF.
const proxyLag = 25 * time.Millisecond

// TestProxyKeepAliveStreams puts the fixture behind a plain
// httputil.ReverseProxy with keep-alive on both hops and makes streaming
// tools/calls one after the other: every event stream must arrive whole,
// and both hops must keep their one connection.
//
// The bug this guards against is in net/http, not in saguaro
// (golang.org/issue/40747, golang.org/issue/15527): when the proxy writes
// the backend's response headers, its HTTP/1 server drains and closes the
// inbound request body; the proxy's Transport, having copied the declared
// Content-Length, reads that body once more (transferWriter.writeBody, the
// doBodyCopy into io.Discard) and, when that read comes after the close,
// gets "http: invalid Read on closed Body", takes it for a failed request
// write and closes the connection to the backend (persistConn.writeLoop)
// while the response is still streaming in. The client keeps the first
// event and gets unexpected EOF; the proxy logs "read error during body
// copy: use of closed network connection". Any quick backend hits it
// (a stdlib-only SSE server in another process does too); it only needs
// the Transport's writeLoop to be descheduled for a moment after the body
// write, which lateEOF makes happen on every request. The fix is on the
// proxy: fullDuplex.
func TestProxyKeepAliveStreams(t *testing.T) {
	t.Run("2026-07-28", func(t *testing.T) {
		p := newStreamProxy(t, fixtureURL)
		for j := range 8 {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{`+
				`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"proxy","version":"0"},`+
				`"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":"m%d"},"name":"test_tool_with_progress","arguments":{}}}`, j+1, j)
			h := http.Header{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"test_tool_with_progress"}}
			_, _, got := p.post(t, h, body)
			checkProgressStream(t, got, j+1, fmt.Sprint("m", j))
		}
		p.check(t)
	})
	t.Run("2025-11-25", func(t *testing.T) {
		const rev = "2025-11-25"
		p := newStreamProxy(t, fixtureURL)
		status, hdr, _ := p.post(t, nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+rev+
			`","capabilities":{},"clientInfo":{"name":"proxy","version":"0"}}}`)
		require.Equal(t, http.StatusOK, status, "initialize")
		session := hdr.Get("Mcp-Session-Id")
		require.NotEmpty(t, session, "initialize without Mcp-Session-Id")
		h := http.Header{"Mcp-Session-Id": {session}, "Mcp-Protocol-Version": {rev}}
		status, _, _ = p.post(t, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		require.Equal(t, http.StatusAccepted, status, "notifications/initialized")
		for j := range 8 {
			_, _, got := p.post(t, h, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{"progressToken":"l%d"},"name":"test_tool_with_progress","arguments":{}}}`, j+1, j))
			checkProgressStream(t, got, j+1, fmt.Sprint("l", j))
		}
		assert.Equal(t, http.StatusNoContent, deleteRaw(t, session, rev), "DELETE of the session")
		p.check(t)
	})
}

// streamProxy is a client, a ReverseProxy and the proxy's Transport, each
// counting its connections.
type streamProxy struct {
	url       string
	client    *http.Client
	clientIn  atomic.Int64 // connections the proxy accepted
	backOut   atomic.Int64 // connections the proxy dialled to the backend
	errorLog  *lockedWriter
	requests  int
	transport *http.Transport
}

func newStreamProxy(t *testing.T, backend string) *streamProxy {
	t.Helper()
	target, err := url.Parse(backend)
	require.NoError(t, err)
	p := &streamProxy{errorLog: &lockedWriter{w: &bytes.Buffer{}}}
	var d net.Dialer
	tr := &http.Transport{
		MaxConnsPerHost: 1, // one keep-alive connection to the backend
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			p.backOut.Add(1)
			return d.DialContext(ctx, network, addr)
		},
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = target.Scheme, target.Host
			pr.Out.Host = pr.In.Host
			if pr.Out.Body != nil {
				pr.Out.Body = &lateEOF{ReadCloser: pr.Out.Body}
			}
		},
		FlushInterval: -1,
		Transport:     tr,
		ErrorLog:      log.New(p.errorLog, "", 0),
	}
	lb := httptest.NewUnstartedServer(fullDuplex(proxy))
	lb.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			p.clientIn.Add(1)
		}
	}
	lb.Start()
	ctr := &http.Transport{MaxConnsPerHost: 1}
	p.url, p.client, p.transport = lb.URL+target.Path, &http.Client{Transport: ctr, Timeout: 10 * time.Second}, tr
	t.Cleanup(func() {
		ctr.CloseIdleConnections()
		lb.CloseClientConnections()
		lb.Close()
		tr.CloseIdleConnections()
	})
	return p
}

// fullDuplex is the fix: it stops the proxy's HTTP/1 server from draining
// and closing the request body when the response starts, so the Transport
// can finish with it whenever it is scheduled. (Buffering the body before
// proxying, as mcp's relay does, works too.)
func fullDuplex(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex()
		h.ServeHTTP(w, r)
	})
}

// lateEOF holds back every Read of the proxied request body after the one
// that reached its end by proxyLag, as a busy scheduler may hold back the
// Transport's writeLoop: the backend's response then reaches the proxy
// before the Transport has finished with the body, which makes the race
// described at TestProxyKeepAliveStreams happen on every request instead
// of now and then.
type lateEOF struct {
	io.ReadCloser
	eof bool
}

func (b *lateEOF) Read(p []byte) (int, error) {
	if b.eof {
		time.Sleep(proxyLag)
	}
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

// post sends a JSON-RPC message through the proxy and reads the whole
// response; a cut response fails the test.
func (p *streamProxy) post(t *testing.T, h http.Header, body string) (int, http.Header, string) {
	t.Helper()
	p.requests++
	req, err := http.NewRequest(http.MethodPost, p.url, strings.NewReader(body))
	require.NoError(t, err)
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := p.client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err, "response %d cut after %q; proxy log: %s", p.requests, b, p.errorLog)
	return res.StatusCode, res.Header, string(b)
}

// check asserts that the proxy logged nothing and that neither hop needed
// a second connection: a response cut by the proxy's Transport costs the
// backend connection it was on.
func (p *streamProxy) check(t *testing.T) {
	t.Helper()
	assert.Empty(t, p.errorLog.String(), "proxy error log")
	assert.EqualValues(t, 1, p.clientIn.Load(), "client→proxy connections for %d requests", p.requests)
	assert.EqualValues(t, 1, p.backOut.Load(), "proxy→backend connections for %d requests", p.requests)
}

// checkProgressStream checks an event stream that answered a tools/call of
// test_tool_with_progress: three progress notifications for token, then
// the result for id, which ends it.
func checkProgressStream(t *testing.T, body string, id int, token string) {
	t.Helper()
	var progress []float64
	var result bool
	for _, ev := range sseEvents(body) {
		if !ev.HasData || ev.Data == "" {
			continue // priming
		}
		var msg struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Params struct {
				ProgressToken any     `json:"progressToken"`
				Progress      float64 `json:"progress"`
			} `json:"params"`
		}
		require.NoError(t, json.Unmarshal([]byte(ev.Data), &msg), "event %q", ev.Data)
		require.False(t, result, "an event after the result: %q", body)
		switch {
		case msg.Method == "notifications/progress":
			assert.Equal(t, token, msg.Params.ProgressToken)
			progress = append(progress, msg.Params.Progress)
		case msg.ID != nil && *msg.ID == id && msg.Result != nil:
			result = true
		default:
			t.Errorf("unexpected event %q", ev.Data)
		}
	}
	assert.Equal(t, []float64{0, 50, 100}, progress, "progress in %q", body)
	assert.True(t, result, "no result for id %d in %q", id, body)
}
