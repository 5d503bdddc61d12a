package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcp/cluster"
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
	lb := httptest.NewServer(balancer(urls, false))
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

// sessionBackend answers a request without Mcp-Session-Id as an
// initialize, with a new id, and any other with its name.
func sessionBackend(name string) *httptest.Server {
	var n atomic.Int64
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Session-Id") == "" {
			w.Header().Set("Mcp-Session-Id", fmt.Sprintf("%s-%d", name, n.Add(1)))
		}
		_, _ = io.WriteString(w, name)
	}))
}

func parse(t *testing.T, servers ...*httptest.Server) []*url.URL {
	var urls []*url.URL
	for _, s := range servers {
		u, err := url.Parse(s.URL)
		require.NoError(t, err)
		urls = append(urls, u)
	}
	return urls
}

// send posts to the balancer, on session sid when not empty, and returns
// the backend's name and the session id it gave, if any.
func send(t *testing.T, lb, sid string) (name, newSID string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, lb, strings.NewReader("{}"))
	require.NoError(t, err)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	return string(b), resp.Header.Get("Mcp-Session-Id")
}

func TestStickyFollowsEachSession(t *testing.T) {
	a, b, c := sessionBackend("a"), sessionBackend("b"), sessionBackend("c")
	defer a.Close()
	defer b.Close()
	urls := parse(t, a, b, c)
	lb := httptest.NewServer(balancer(urls, true))
	defer lb.Close()

	// Sessions start on every backend in turn; each one's requests then
	// all go where it started.
	owner := map[string]string{}
	for range 6 {
		name, sid := send(t, lb.URL, "")
		require.NotEmpty(t, sid)
		owner[sid] = name
	}
	assert.Len(t, map[string]bool{owner["a-1"]: true, owner["b-1"]: true, owner["c-1"]: true}, 3, "initialize takes turns")
	for sid, name := range owner {
		for range 4 {
			got, _ := send(t, lb.URL, sid)
			assert.Equal(t, name, got, "session %s", sid)
		}
	}

	// c dies: its sessions go to the next backend by their hash, and
	// stay there.
	c.Close()
	for _, sid := range []string{"c-1", "c-2"} {
		moved, _ := send(t, lb.URL, sid)
		assert.NotEqual(t, "c", moved)
		for range 3 {
			got, _ := send(t, lb.URL, sid)
			assert.Equal(t, moved, got, "session %s after c died", sid)
		}
	}

	// A balancer that did not see a session start sends it where the
	// hash says, as every other such balancer does.
	other1 := httptest.NewServer(balancer(parse(t, a, b), true))
	defer other1.Close()
	other2 := httptest.NewServer(balancer(parse(t, b, a), true))
	defer other2.Close()
	for i := range 20 {
		sid := fmt.Sprintf("unknown-%d", i)
		got1, _ := send(t, other1.URL, sid)
		got2, _ := send(t, other2.URL, sid)
		assert.Equal(t, got1, got2, "two balancers disagree on %s", sid)
	}
}

// TestStickyMakesRelaysRare puts three replicas of one cluster behind the
// balancer and counts the requests one replica relays to another: none
// when the balancer is sticky, two in three without.
func TestStickyMakesRelaysRare(t *testing.T) {
	for _, sticky := range []bool{false, true} {
		store := cluster.NewMemory()
		var relayed, total atomic.Int64
		var servers []*httptest.Server
		for range 3 {
			srv := httptest.NewUnstartedServer(nil)
			s := mcp.NewServer(mcp.Implementation{Name: "t", Version: "1"}, nil)
			require.NoError(t, mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (string, error) {
				return in.Text, nil
			}))
			ep := mcp.Controller(&mcp.Options{Handler: s, Sessions: &mcp.SessionOptions{},
				Cluster: store.Join("http://" + srv.Listener.Addr().String() + "/mcp")})
			srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Saguaro-Relay") != "" {
					relayed.Add(1)
				} else {
					total.Add(1)
				}
				ep.ServeHTTP(w, r)
			})
			srv.Start()
			t.Cleanup(func() {
				_ = ep.Shutdown(context.Background())
				srv.Close()
			})
			servers = append(servers, srv)
		}
		lb := httptest.NewServer(balancer(parse(t, servers...), sticky))
		t.Cleanup(lb.Close)
		for range 6 {
			c := &mcpClient{t: t, url: lb.URL + "/mcp"}
			c.initialize()
			for i := range 6 {
				text := fmt.Sprint("call ", i)
				assert.Equal(t, text, c.echo(text))
			}
		}
		t.Logf("sticky %v: %d of %d requests relayed", sticky, relayed.Load(), total.Load())
		if sticky {
			assert.Zero(t, relayed.Load(), "a sticky balancer sends each request to its session's owner")
		} else {
			assert.Greater(t, relayed.Load(), total.Load()/3, "without stickiness most requests are relayed")
		}
	}
}

type echoIn struct {
	Text string `json:"text"`
}

// mcpClient is the least of a 2025-11-25 client.
type mcpClient struct {
	t   *testing.T
	url string
	sid string
	id  int
}

func (c *mcpClient) post(body string) *http.Response {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.url, strings.NewReader(body))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	return resp
}

func (c *mcpClient) initialize() {
	resp := c.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	resp.Body.Close()
	require.Equal(c.t, http.StatusOK, resp.StatusCode)
	c.sid = resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(c.t, c.sid)
	resp = c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	require.Equal(c.t, http.StatusAccepted, resp.StatusCode)
}

func (c *mcpClient) echo(text string) string {
	c.id++
	resp := c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`, c.id, text))
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	require.Equal(c.t, http.StatusOK, resp.StatusCode, "%s", b)
	var m struct {
		Result mcp.CallToolResult `json:"result"`
	}
	require.NoError(c.t, json.Unmarshal(b, &m), "%s", b)
	require.Len(c.t, m.Result.Content, 1)
	txt, ok := m.Result.Content[0].(*mcp.TextContent)
	require.True(c.t, ok, "%s", b)
	return txt.Text
}
