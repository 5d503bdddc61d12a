package mcpredis_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcpredis/redistest"
)

// unlimited turns off the per-caller bounds: the tests play many clients
// from one address.
func unlimited(o *mcp.Options) { o.Limits = &mcp.Limits{Sessions: -1, Calls: -1, Streams: -1} }

// openSessions initializes n sessions, spread over the replicas (each
// owns those initialized on it), with conns concurrent clients; it
// returns their ids.
func openSessions(t *testing.T, rps []*replica, n, conns int) []string {
	t.Helper()
	ids := make([]string, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	tr := &http.Transport{MaxIdleConnsPerHost: conns}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	post := func(url, sid, body string) (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(body)))
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		return hc.Do(req)
	}
	for range conns {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				url := rps[i%len(rps)].srv.URL + "/mcp"
				resp, err := post(url, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
				if !assert.NoError(t, err) {
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				ids[i] = resp.Header.Get("Mcp-Session-Id")
				if !assert.Equal(t, http.StatusOK, resp.StatusCode) || !assert.NotEmpty(t, ids[i]) {
					return
				}
				resp, err = post(url, ids[i], `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				if !assert.NoError(t, err) {
					return
				}
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	require.False(t, t.Failed())
	return ids
}

// pinger keeps sending ping through a balancer for sessions picked at
// random among ids, and counts the answers: every one must be 200, or 503
// with Retry-After; anything else is a session the cluster lost or
// mislaid.
type pinger struct {
	mu     sync.Mutex
	counts map[int]int
	bad    []string
	stop   chan struct{}
	wg     sync.WaitGroup
}

func startPinger(t *testing.T, url string, ids []string, conns int) *pinger {
	p := &pinger{counts: map[int]int{}, stop: make(chan struct{})}
	tr := &http.Transport{MaxIdleConnsPerHost: conns}
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	for range conns {
		p.wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-p.stop:
					return
				default:
				}
				sid := ids[rand.IntN(len(ids))]
				req, _ := http.NewRequest(http.MethodPost, url+"/mcp", bytes.NewReader([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, n+1))))
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				req.Header.Set("Mcp-Session-Id", sid)
				resp, err := hc.Do(req)
				if err != nil {
					p.note(0, false, sid+": "+err.Error())
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				p.note(resp.StatusCode, resp.Header.Get("Retry-After") != "", sid+": "+string(body))
				if resp.StatusCode != http.StatusOK {
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
	return p
}

func (p *pinger) note(status int, retryAfter bool, what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts[status]++
	if status != http.StatusOK && (status != http.StatusServiceUnavailable || !retryAfter) && len(p.bad) < 20 {
		p.bad = append(p.bad, fmt.Sprintf("%d (Retry-After %v) %s", status, retryAfter, what))
	}
}

// end stops the pinger and returns what it counted.
func (p *pinger) end() (map[int]int, []string) {
	close(p.stop)
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts, p.bad
}

// TestNoLiveSessionIsLostAcrossARedisRestart: three replicas with 3,000
// sessions between them, pinged at random through a balancer while Redis
// restarts empty. The replicas record their sessions again in batches and
// say so; until all of them have, a session Redis does not know is
// answered 503, never 404. Afterwards every session answers.
func TestNoLiveSessionIsLostAcrossARedisRestart(t *testing.T) {
	rs := redistest.Start(t)
	prefix := redistest.Prefix(t)
	rps := []*replica{
		startReplicaWith(t, "a", rs.URL(), prefix, nil, unlimited),
		startReplicaWith(t, "b", rs.URL(), prefix, nil, unlimited),
		startReplicaWith(t, "c", rs.URL(), prefix, nil, unlimited),
	}
	lb := roundRobin(t, rps...)
	ids := openSessions(t, rps, 3000, 8)
	p := startPinger(t, lb.URL, ids, 6)
	time.Sleep(300 * time.Millisecond)
	rs.Restart()
	// Long enough for every replica to beat into the empty Redis and
	// record its thousand sessions again.
	time.Sleep(3 * time.Second)
	counts, bad := p.end()
	t.Logf("answers across the restart: %v", counts)
	assert.Empty(t, bad, "answers that are neither the result nor 503 + Retry-After")
	assert.Positive(t, counts[http.StatusOK])

	// Every session is back, on every replica.
	after := startPinger(t, lb.URL, ids, 6)
	time.Sleep(time.Second)
	counts, bad = after.end()
	assert.Empty(t, bad)
	assert.Zero(t, counts[http.StatusServiceUnavailable], "the recovery is over: %v", counts)
}

// TestFailoverOfARedisClusterMaster: three replicas on a Redis Cluster of
// three masters, each with a replica of its own. While sessions are
// pinged through a balancer, each master crashes in turn (one of them
// serves the replicas' registry and the changes, the {c} slot; all hold
// sessions), and each time its replica takes its slots over. Meanwhile
// answers are 200 or 503 with Retry-After; no session is lost.
func TestFailoverOfARedisClusterMaster(t *testing.T) {
	rc := redistest.StartCluster(t, 3, 1)
	prefix := redistest.Prefix(t)
	rps := []*replica{
		startReplicaWith(t, "a", rc.URL(), prefix, nil, unlimited),
		startReplicaWith(t, "b", rc.URL(), prefix, nil, unlimited),
		startReplicaWith(t, "c", rc.URL(), prefix, nil, unlimited),
	}
	lb := roundRobin(t, rps...)
	ids := openSessions(t, rps, 300, 6)
	p := startPinger(t, lb.URL, ids, 6)
	for _, kill := range rc.Masters() {
		time.Sleep(500 * time.Millisecond)
		// Redis replicates asynchronously: what a master took a moment
		// before it crashed may not be on its replica. The documented
		// promise covers what was replicated.
		rc.WaitSynced(5 * time.Second)
		kill.Kill()
		rc.WaitOK(20 * time.Second)
	}
	time.Sleep(2 * time.Second)
	counts, bad := p.end()
	t.Logf("answers across three failovers: %v", counts)
	assert.Empty(t, bad, "answers that are neither the result nor 503 + Retry-After")
	assert.Positive(t, counts[http.StatusOK])

	after := startPinger(t, lb.URL, ids, 6)
	time.Sleep(time.Second)
	counts, bad = after.end()
	assert.Empty(t, bad)
	assert.Zero(t, counts[http.StatusServiceUnavailable], "the failovers are over: %v", counts)
}
