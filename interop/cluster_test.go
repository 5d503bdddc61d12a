package interop

//lint:file-ignore SA1019 the fixture serves sampling to the revisions that have it; the Go SDK marks it deprecated as of 2026-07-28, not gone

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/mcpredis/redistest"
)

// The cluster tests run the fixture as separate replica processes sharing
// their sessions on Redis (mcpredis), behind a round-robin proxy with no
// stickiness, and drive them with the Go SDK's client.

// fixtureCluster is n fixture replicas behind a load balancer.
type fixtureCluster struct {
	t        *testing.T
	redis    *redistest.Server
	prefix   string
	replicas []*fixture
	down     []atomic.Bool
	lb       *httptest.Server
	next     atomic.Int64
}

func startCluster(t *testing.T, n int) *fixtureCluster {
	t.Helper()
	c := &fixtureCluster{t: t, redis: redistest.Start(t), prefix: redistest.Prefix(t)}
	c.down = make([]atomic.Bool, n)
	for range n {
		fx, err := startFixture(fixtureBin, "-redis", c.redis.URL(), "-prefix", c.prefix)
		require.NoError(t, err)
		c.replicas = append(c.replicas, fx)
	}
	t.Cleanup(func() {
		for i, fx := range c.replicas {
			if t.Failed() {
				t.Logf("replica %d stderr:\n%s", i, fx.stderr)
			}
			if !c.down[i].Load() {
				if err := fx.stop(); err != nil {
					t.Errorf("replica %d: %v", i, err)
				}
			}
		}
	})
	targets := make([]*url.URL, n)
	for i, fx := range c.replicas {
		targets[i], _ = url.Parse(fx.url)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	proxy := &httputil.ReverseProxy{
		// Round robin over the replicas that are up, as a balancer with
		// health checks does; the client's Host is kept.
		Rewrite: func(pr *httputil.ProxyRequest) {
			for range n {
				i := int(c.next.Add(1)) % n
				if !c.down[i].Load() {
					pr.Out.URL.Scheme, pr.Out.URL.Host = targets[i].Scheme, targets[i].Host
					break
				}
			}
			pr.Out.Host = pr.In.Host
		},
		FlushInterval: -1,
		Transport:     tr,
		ErrorLog:      log.New(io.Discard, "", 0),
	}
	// Full duplex: Go's HTTP/1 server otherwise closes the request body
	// once the response starts, racing the proxy's transport, which then
	// cuts the streamed answer (golang.org/issue/40747; proxy_test.go).
	c.lb = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		c.lb.CloseClientConnections()
		c.lb.Close()
		tr.CloseIdleConnections()
	})
	return c
}

func (c *fixtureCluster) url() string { return c.lb.URL + "/mcp" }

// kill takes replica i out of the balancer and SIGKILLs it.
func (c *fixtureCluster) kill(i int) {
	c.down[i].Store(true)
	c.replicas[i].kill()
}

// clusterClient is one Go SDK client session with what it heard.
type clusterClient struct {
	name     string
	cs       *gomcp.ClientSession
	progress events[progressEvent]
	updates  events[string]
	sampled  atomic.Int64
}

func connectCluster(t *testing.T, endpoint, name string) *clusterClient {
	t.Helper()
	cc := &clusterClient{name: name}
	opts := &gomcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *gomcp.ProgressNotificationClientRequest) {
			cc.progress.add(progressEvent{Token: r.Params.ProgressToken, Progress: r.Params.Progress, Total: r.Params.Total})
		},
		ResourceUpdatedHandler: func(_ context.Context, r *gomcp.ResourceUpdatedNotificationRequest) {
			cc.updates.add(r.Params.URI)
		},
		CreateMessageHandler: func(_ context.Context, r *gomcp.CreateMessageRequest) (*gomcp.CreateMessageResult, error) {
			cc.sampled.Add(1)
			return &gomcp.CreateMessageResult{Content: &gomcp.TextContent{Text: "from " + name}, Model: "m", Role: "assistant"}, nil
		},
	}
	client := gomcp.NewClient(&gomcp.Implementation{Name: "cluster-" + name, Version: "0"}, opts)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	st := &gomcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: tr}}
	// A legacy-era client: its session is what the cluster shares.
	cs, err := client.Connect(ctxFor(t), st, &gomcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	cc.cs = cs
	t.Cleanup(func() { _ = cs.Close() })
	return cc
}

func toolText(t *testing.T, res *gomcp.CallToolResult) string {
	t.Helper()
	require.False(t, res.IsError, "tool error: %+v", res.Content)
	require.NotEmpty(t, res.Content)
	tc, ok := res.Content[0].(*gomcp.TextContent)
	require.True(t, ok)
	return tc.Text
}

// exercise runs one round of the session's work: a call with progress,
// a call that samples the client's model, and a resource update the
// session is subscribed to; it checks that each answer and notification
// belongs to this session and this call.
func (cc *clusterClient) exercise(t *testing.T, ctx context.Context, round int) {
	token := fmt.Sprintf("%s-%d", cc.name, round)
	res, err := cc.cs.CallTool(ctx, &gomcp.CallToolParams{Name: "test_tool_with_progress",
		Meta: gomcp.Meta{"progressToken": token}})
	require.NoError(t, err)
	assert.Equal(t, token, toolText(t, res))
	// The client hands notifications to its handler asynchronously: the
	// last may be recorded just after the result.
	mine := func() (n int) {
		for _, p := range cc.progress.all() {
			require.Equal(t, cc.name, strings.SplitN(fmt.Sprint(p.Token), "-", 2)[0], "another session's progress")
			if p.Token == token {
				n++
			}
		}
		return n
	}
	assert.Eventually(t, func() bool { return mine() >= 3 }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, 3, mine(), "progress notifications of %s", token)

	before := cc.sampled.Load()
	res, err = cc.cs.CallTool(ctx, &gomcp.CallToolParams{Name: "test_sampling",
		Arguments: map[string]any{"prompt": "2+2?"}})
	require.NoError(t, err)
	assert.Equal(t, "LLM response: from "+cc.name, toolText(t, res))
	assert.Equal(t, before+1, cc.sampled.Load(), "one sampling request per call")
}

func (cc *clusterClient) uri() string { return "test://cluster/" + cc.name }

// keepCalling runs call for every client, over and over, each on its own
// goroutine, until the returned stop is called; stop waits for them.
func keepCalling(clients []*clusterClient, call func(*clusterClient)) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, cc := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				call(cc)
			}
		}()
	}
	return func() {
		close(done)
		wg.Wait()
	}
}

func TestClusterHundredSessions(t *testing.T) {
	c := startCluster(t, 3)
	const sessions, workers = 100, 10
	ctx := ctxFor(t)
	clients := make([]*clusterClient, sessions)
	var wg sync.WaitGroup
	jobs := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				cc := connectCluster(t, c.url(), fmt.Sprint("s", i))
				clients[i] = cc
				if !assert.NoError(t, cc.cs.Subscribe(ctx, &gomcp.SubscribeParams{URI: cc.uri()})) {
					continue
				}
				for round := range 2 {
					cc.exercise(t, ctx, round)
				}
				_, err := cc.cs.CallTool(ctx, &gomcp.CallToolParams{Name: "test_trigger_resource_update",
					Arguments: map[string]any{"uri": cc.uri()}})
				assert.NoError(t, err)
			}
		}()
	}
	for i := range sessions {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	// Each session hears its own update, once, on its GET stream.
	for _, cc := range clients {
		require.NotNil(t, cc)
		require.Eventually(t, func() bool { return cc.updates.len() >= 1 }, 10*time.Second, 10*time.Millisecond,
			"%s heard no update", cc.name)
	}
	time.Sleep(200 * time.Millisecond)
	for _, cc := range clients {
		assert.Equal(t, []string{cc.uri()}, cc.updates.all(), cc.name)
	}
}

func TestClusterReplicaKilled(t *testing.T) {
	c := startCluster(t, 3)
	const sessions = 24
	ctx := ctxFor(t)
	clients := make([]*clusterClient, sessions)
	for i := range clients {
		clients[i] = connectCluster(t, c.url(), fmt.Sprint("k", i))
		require.NoError(t, clients[i].cs.Subscribe(ctx, &gomcp.SubscribeParams{URI: clients[i].uri()}))
	}
	trigger := func(cc *clusterClient) {
		_, err := cc.cs.CallTool(ctx, &gomcp.CallToolParams{Name: "test_trigger_resource_update",
			Arguments: map[string]any{"uri": cc.uri()}})
		require.NoError(t, err)
	}
	for _, cc := range clients {
		trigger(cc)
		cc.exercise(t, ctx, 0)
	}
	for _, cc := range clients {
		require.Eventually(t, func() bool { return cc.updates.len() == 1 }, 10*time.Second, 10*time.Millisecond, cc.name)
	}

	// A replica dies while calls run: a call in flight on it may fail;
	// every session then goes on.
	var inflight, failed atomic.Int64
	stop := keepCalling(clients, func(cc *clusterClient) {
		inflight.Add(1)
		res, err := cc.cs.CallTool(ctx, &gomcp.CallToolParams{Name: "test_simple_text"})
		if err != nil || res.IsError {
			failed.Add(1)
		}
	})
	time.Sleep(300 * time.Millisecond)
	c.kill(1)
	time.Sleep(300 * time.Millisecond)
	stop()
	t.Logf("calls around the kill: %d, failed: %d", inflight.Load(), failed.Load())
	assert.Less(t, failed.Load(), int64(sessions), "only calls in flight on the dead replica may fail")

	for _, cc := range clients {
		trigger(cc)
		cc.exercise(t, ctx, 1)
	}
	// Every session hears exactly its two updates: the GET streams that
	// broke resumed without a gap or a repeat.
	for _, cc := range clients {
		require.Eventually(t, func() bool { return cc.updates.len() >= 2 }, 10*time.Second, 10*time.Millisecond,
			"%s heard %v", cc.name, cc.updates.all())
	}
	time.Sleep(300 * time.Millisecond)
	for _, cc := range clients {
		assert.Equal(t, []string{cc.uri(), cc.uri()}, cc.updates.all(), cc.name)
	}
	// The dead replica's sessions were taken over, not started again.
	took := 0
	for i, fx := range c.replicas {
		if i != 1 {
			took += strings.Count(fx.stderr.String(), "took over a session")
		}
	}
	assert.Positive(t, took, "no session was taken over")
}

func TestClusterRedisRestart(t *testing.T) {
	c := startCluster(t, 3)
	ctx := ctxFor(t)
	const sessions = 8
	clients := make([]*clusterClient, sessions)
	for i := range clients {
		clients[i] = connectCluster(t, c.url(), fmt.Sprint("r", i))
		clients[i].exercise(t, ctx, 0)
	}

	// The sessions keep calling while Redis goes away and comes back
	// empty. A call that needs Redis meanwhile fails with a clear 503
	// (a call relayed to an owner the replica already knows needs none);
	// none hangs, none is told its session is gone.
	var calls, failed, servedWhileDown atomic.Int64
	var down atomic.Bool
	var mu sync.Mutex
	var badErrs []string
	stop := keepCalling(clients, func(cc *clusterClient) {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := cc.cs.CallTool(cctx, &gomcp.CallToolParams{Name: "test_simple_text"})
		cancel()
		calls.Add(1)
		if err == nil && down.Load() {
			servedWhileDown.Add(1)
		}
		if err != nil {
			failed.Add(1)
			if !strings.Contains(err.Error(), "Service Unavailable") {
				mu.Lock()
				badErrs = append(badErrs, err.Error())
				mu.Unlock()
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	time.Sleep(200 * time.Millisecond)
	c.redis.Stop()
	down.Store(true)

	// A new session cannot start while Redis is down: fast, and says why.
	hc := &http.Client{Timeout: 5 * time.Second}
	start := time.Now()
	req, _ := http.NewRequest(http.MethodPost, c.url(), strings.NewReader(
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s", body)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	assert.Contains(t, string(body), "session store")
	assert.Less(t, time.Since(start), 3*time.Second)

	time.Sleep(time.Second)
	down.Store(false)
	c.redis.Restart()
	time.Sleep(2 * time.Second)
	stop()
	t.Logf("calls during the outage and restart: %d, failed: %d, served while Redis was down: %d", calls.Load(), failed.Load(), servedWhileDown.Load())
	assert.Positive(t, servedWhileDown.Load(), "no session went on while Redis was down")
	assert.Empty(t, badErrs, "errors other than 503")

	// Without restarting the replicas, every session goes on (each
	// replica recorded its sessions again) and new ones start.
	for _, cc := range clients {
		require.Eventually(t, func() bool {
			for range 3 {
				if err := cc.cs.Ping(ctx, nil); err != nil {
					return false
				}
			}
			return true
		}, 15*time.Second, 100*time.Millisecond, cc.name)
		cc.exercise(t, ctx, 1)
	}
	fresh := connectCluster(t, c.url(), "fresh")
	fresh.exercise(t, ctx, 0)
}
