package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcp/cluster"
	"github.com/saguaro-go/saguaro/mcpredis"
	"github.com/saguaro-go/saguaro/mcpredis/redistest"

	"github.com/saguaro-go/saguaro/bench/internal/check"
	"github.com/saguaro-go/saguaro/bench/internal/loop"
)

type echoIn struct {
	Text string `json:"text"`
}

// echoEndpoint is the benchmark's server in miniature: the echo tool on
// mcp.Controller with sessions, in memory or on a cluster; with
// wrongEvery > 0 every so many calls answer a wrong text.
func echoEndpoint(t *testing.T, cl cluster.Cluster, wrongEvery int64) *mcp.Endpoint {
	t.Helper()
	s := mcp.NewServer(mcp.Implementation{Name: "test", Version: "0"}, nil)
	var n atomic.Int64
	err := mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, error) {
		text := in.Text
		if wrongEvery > 0 && n.Add(1)%wrongEvery == 0 {
			text += "!" // a wrong answer, fast
		}
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.Text(text)}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return mcp.Controller(&mcp.Options{Handler: s, Sessions: &mcp.SessionOptions{}, Cluster: cl})
}

func serveTarget(t *testing.T, name string, h http.Handler) *target {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ep, err := newEndpoint(srv.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	return &target{Name: name, ep: ep}
}

func TestRunSliceInMemory(t *testing.T) {
	e := echoEndpoint(t, nil, 0)
	tg := serveTarget(t, "memory", e)
	r := runSlice(tg, 4, 50*time.Millisecond, 200*time.Millisecond, 5*time.Second)
	if n := r.Fail.Total(); n > 0 {
		t.Fatalf("%d failures: %s", n, r.Fail.Summary())
	}
	if r.OK == 0 || r.Hist.Count() != r.OK {
		t.Fatalf("OK %d, histogram %d", r.OK, r.Hist.Count())
	}
	if r.CPUNS != 0 { // no process to probe: nothing counted
		t.Fatalf("CPU %d without processes", r.CPUNS)
	}
	if n := e.Sessions(); n != 0 {
		t.Fatalf("%d sessions left: each slice deletes its own", n)
	}
}

func TestRunSliceCountsWrongAnswers(t *testing.T) {
	tg := serveTarget(t, "wrong", echoEndpoint(t, nil, 5))
	r := runSlice(tg, 2, 20*time.Millisecond, 150*time.Millisecond, 5*time.Second)
	if r.Fail.Count["echo"] == 0 {
		t.Fatalf("no echo failure counted: %v", r.Fail.Count)
	}
	if r.OK == 0 {
		t.Fatal("the right answers were not counted")
	}
	a := &agg{}
	a.add(r)
	if a.Fail.Total() != r.Fail.Total() || !strings.Contains(a.Fail.Summary(), "echo") {
		t.Fatalf("agg lost the failures: %s", a.Fail.Summary())
	}
}

func TestRunSliceNeedsSessions(t *testing.T) {
	// A server that answers calls but gives no session fails the setup.
	s := mcp.NewServer(mcp.Implementation{Name: "test", Version: "0"}, nil)
	if err := mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.Text(in.Text)}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	tg := serveTarget(t, "stateless", mcp.Controller(&mcp.Options{Handler: s}))
	r := runSlice(tg, 2, 10*time.Millisecond, 50*time.Millisecond, 5*time.Second)
	if r.Fail.Count["session"] != 2 || r.OK != 0 {
		t.Fatalf("want 2 session failures and no call, got %v, OK %d", r.Fail.Count, r.OK)
	}
}

func TestProxyRoundRobinKeepsHost(t *testing.T) {
	var mu sync.Mutex
	hits := map[int]int{}
	hosts := map[string]bool{}
	var ups []string
	for i := range 3 {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			hits[i]++
			hosts[r.Host] = true
			mu.Unlock()
			w.WriteHeader(204)
		}))
		t.Cleanup(srv.Close)
		ups = append(ups, srv.URL)
	}
	front := httptest.NewServer(newProxy(parseURLs(t, ups), nil))
	t.Cleanup(front.Close)
	req, _ := http.NewRequest(http.MethodPost, front.URL+"/mcp", nil)
	req.Host = "example.test:1234"
	for range 9 {
		resp, err := front.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if hits[0] != 3 || hits[1] != 3 || hits[2] != 3 {
		t.Fatalf("not round robin: %v", hits)
	}
	if len(hosts) != 1 || !hosts["example.test:1234"] {
		t.Fatalf("Host not kept: %v", hosts)
	}
}

// TestRelayOnRedis runs a relay slice between two replicas of a cluster
// on Redis (in this process) and checks that B's calls were relayed to A,
// and that a slice through a round-robin proxy over both works too.
func TestRelayOnRedis(t *testing.T) {
	url := redistest.URL(t)
	prefix := redistest.Prefix(t)
	redistest.DeleteOnCleanup(t, url, prefix)
	var relayed atomic.Int64
	var targets []*target
	for _, name := range []string{"A", "B"} {
		srv := httptest.NewUnstartedServer(nil)
		rdb, err := mcpredis.NewClient(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rdb.Close() })
		cl, err := mcpredis.New(context.Background(), rdb, &mcpredis.Options{URL: "http://" + srv.Listener.Addr().String() + "/mcp", Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cl.Close() })
		e := echoEndpoint(t, cl, 0)
		srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Saguaro-Relay") != "" {
				relayed.Add(1)
			}
			e.ServeHTTP(w, r)
		})
		srv.Start()
		t.Cleanup(srv.Close)
		ep, err := newEndpoint(srv.URL + "/mcp")
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, &target{Name: name, ep: ep})
	}
	s := runRelay(targets[0], targets[1], 20*time.Millisecond, 200*time.Millisecond, 5*time.Second)
	if n := s.Fail.Total(); n > 0 {
		t.Fatalf("%d failures: %s", n, s.Fail.Summary())
	}
	if s.DirectOK == 0 || s.RelOK == 0 || max(s.DirectOK, s.RelOK)-min(s.DirectOK, s.RelOK) > 1 {
		t.Fatalf("direct %d, relayed %d: want about as many", s.DirectOK, s.RelOK)
	}
	if got := uint64(relayed.Load()); got < s.RelOK {
		t.Fatalf("A saw %d relayed requests for %d calls sent to B", got, s.RelOK)
	}
	ra := &relayAgg{}
	ra.add(s)
	if ra.cost() != ra.Relayed.Quantile(0.5)-ra.Direct.Quantile(0.5) || len(ra.roundCosts()) != 1 {
		t.Fatalf("cost %v, rounds %v", ra.cost(), ra.roundCosts())
	}

	// Each path on its own: the relayed slice's calls reach A through B.
	relayed.Store(0)
	for _, path := range []string{pathDirect, pathRelayed} {
		r := runPathSlice(targets[0], targets[1], path, 3, 20*time.Millisecond, 200*time.Millisecond, 5*time.Second)
		if n := r.Fail.Total(); n > 0 || r.OK == 0 {
			t.Fatalf("%s: %d failures (%s), %d OK", path, n, r.Fail.Summary(), r.OK)
		}
		if r.CPUNS != 0 { // no process to probe: nothing counted
			t.Fatalf("%s: CPU %d without processes", path, r.CPUNS)
		}
		switch got := uint64(relayed.Load()); {
		case path == pathDirect && got != 0:
			t.Fatalf("direct: A saw %d relayed requests", got)
		case path == pathRelayed && got < r.OK:
			t.Fatalf("relayed: A saw %d relayed requests for %d calls", got, r.OK)
		}
	}

	var ups []string
	for _, tg := range targets {
		ups = append(ups, "http://"+tg.ep.Addr)
	}
	front := httptest.NewServer(newProxy(parseURLs(t, ups), nil))
	t.Cleanup(front.Close)
	ep, err := newEndpoint(front.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	relayed.Store(0)
	r := runSlice(&target{Name: "proxied", ep: ep}, 3, 20*time.Millisecond, 200*time.Millisecond, 5*time.Second)
	if n := r.Fail.Total(); n > 0 || r.OK == 0 {
		t.Fatalf("through the proxy: %d failures (%s), %d OK", n, r.Fail.Summary(), r.OK)
	}
	if relayed.Load() == 0 {
		t.Fatal("round robin over two replicas relayed nothing")
	}
}

func TestRedisHelpers(t *testing.T) {
	url := redistest.URL(t)
	prefix := redistest.Prefix(t)
	redistest.DeleteOnCleanup(t, url, prefix)
	rs, err := openRedis(url, t.TempDir(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	if rs.Version == "" {
		t.Fatal("no Redis version")
	}
	if ns, err := rs.cpuNS(); err != nil || ns <= 0 {
		t.Fatalf("cpu %d, %v", ns, err)
	}
	ctx := context.Background()
	for _, k := range []string{"a", "b", "c"} {
		if err := rs.rdb.Set(ctx, prefix+k, "1", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if keys, err := rs.cleanup(prefix); err != nil || len(keys) != 3 {
		t.Fatalf("cleanup: %q, %v", keys, err)
	}
	if n, _ := rs.rdb.Exists(ctx, prefix+"a").Result(); n != 0 {
		t.Fatal("key left")
	}
}

func TestRelayVerdict(t *testing.T) {
	mk := func(direct, relayed time.Duration) *runResult {
		rl := &relayAgg{}
		s := &relaySlice{}
		for range 100 {
			s.Direct.Record(direct)
			s.Relayed.Record(relayed)
		}
		rl.add(s)
		return &runResult{Relay: rl}
	}
	if v := relayVerdict(mk(100*time.Microsecond, 200*time.Microsecond)); !strings.Contains(v, "**met**") {
		t.Fatalf("100 µs: %s", v)
	}
	if v := relayVerdict(mk(100*time.Microsecond, 400*time.Microsecond)); !strings.Contains(v, "**missed**") {
		t.Fatalf("300 µs: %s", v)
	}
	if v := relayVerdict(mk(100*time.Microsecond, 1500*time.Microsecond)); !strings.Contains(v, "**missed**") {
		t.Fatalf("1.4 ms: %s", v)
	}
	r := mk(100*time.Microsecond, 200*time.Microsecond)
	r.Relay.Fail.Add(&check.Error{Kind: "echo", Detail: "x"})
	if v := relayVerdict(r); !strings.Contains(v, "not judged") {
		t.Fatalf("with a failure: %s", v)
	}
	if v := relayVerdict(&runResult{Relay: &relayAgg{}}); !strings.Contains(v, "not measured") {
		t.Fatalf("empty: %s", v)
	}
}

func TestRelayCPUVerdict(t *testing.T) {
	mk := func(direct, relayed int64) *runResult {
		r := &runResult{Opts: &options{conns: []int{16}}, RelayTP: map[string]*agg{}}
		for path, ns := range map[string]int64{pathDirect: direct, pathRelayed: relayed} {
			a := &agg{}
			a.add(&sliceResult{Result: &loop.Result{OK: 1000, Window: time.Second}, CPUNS: ns * 1000})
			r.RelayTP[tpKey(path, 16)] = a
		}
		return r
	}
	if v := relayCPUVerdict(mk(50_000, 70_000), 16); !strings.Contains(v, "**met**") || !strings.Contains(v, "1.40×") {
		t.Fatalf("1.4×: %s", v)
	}
	if v := relayCPUVerdict(mk(50_000, 100_000), 16); !strings.Contains(v, "**missed**") {
		t.Fatalf("2×: %s", v)
	}
	if v := relayCPUVerdict(mk(50_000, 70_000), 1); v != "" {
		t.Fatalf("not measured at 1: %q", v)
	}
}

func TestEndpointRefusesNonLoopback(t *testing.T) {
	if _, err := newEndpoint("http://192.0.2.1:80/mcp"); err == nil {
		t.Fatal("a non-loopback target was accepted")
	}
	if ep, err := newEndpoint("http://" + net.JoinHostPort("127.0.0.1", "8080") + "/mcp"); err != nil || ep.Path != "/mcp" {
		t.Fatalf("%v %v", ep, err)
	}
}

func parseURLs(t *testing.T, ss []string) []*url.URL {
	t.Helper()
	var out []*url.URL
	for _, s := range ss {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
	return out
}
