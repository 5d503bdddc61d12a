package mcpredis_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcpredis/redistest"
	"github.com/saguaro-go/saguaro/sse"
)

// ownedBy returns a client of a session initialized on rp (its owner),
// whose later requests go through the balancer lb.
func ownedBy(t *testing.T, rp *replica, lb string) *client {
	c := newClient(t, rp.srv.URL)
	c.initialize()
	c.url = lb + "/mcp"
	return c
}

// TestAChangeMadeOnEveryReplicaIsHeardOnce: every replica must serve the
// same tools, so a tool added at run time is added on each; each session,
// whichever replica runs it, hears one list_changed, not one per replica.
func TestAChangeMadeOnEveryReplicaIsHeardOnce(t *testing.T) {
	rps, lb := cluster(t, 3)
	var streams []<-chan sse.Event
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, rp := range rps {
		c := ownedBy(t, rp, lb.URL)
		events, _ := c.getStream(ctx, "")
		streams = append(streams, events)
	}
	for _, rp := range rps {
		require.NoError(t, mcp.AddTool(rp.mcp, &mcp.Tool{Name: "late"}, func(context.Context, *mcp.CallToolRequest, echoIn) (string, error) {
			return "", nil
		}))
	}
	for i, events := range streams {
		ev := next(t, events)
		assert.Contains(t, string(ev.Data), "notifications/tools/list_changed", "session %d", i)
	}
	for i, events := range streams {
		select {
		case ev := <-events:
			t.Errorf("session %d heard the change again: %s", i, ev.Data)
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// TestNoStreamMissesABurstOfUpdates: 10,000 updates of one resource, made
// on three replicas at once over a good part of a second, while thirty clients (ten sessions on each
// replica) follow it as a client does: on each notification they read
// the resource again. The updates coalesce into a few notifications, and
// every client ends with the last value: none missed the last change.
func TestNoStreamMissesABurstOfUpdates(t *testing.T) {
	url, prefix := redistest.URL(t), redistest.Prefix(t)
	redistest.DeleteOnCleanup(t, url, prefix)
	var value atomic.Int64
	servers := make([]*mcp.Server, 3)
	rps := make([]*replica, 3)
	for i := range rps {
		s := mcp.NewServer(mcp.Implementation{Name: "burst", Version: "1"}, nil)
		require.NoError(t, s.AddResource(&mcp.Resource{URI: "test://burst", Name: "burst"},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://burst", Text: fmt.Sprint(value.Load())}}}, nil
			}))
		servers[i] = s
		rps[i] = startReplicaWith(t, fmt.Sprint("r", i), url, prefix, s, unlimited)
	}
	lb := roundRobin(t, rps...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type follower struct {
		last          atomic.Int64
		notifications atomic.Int64
	}
	followers := make([]*follower, 30)
	var wg sync.WaitGroup
	for i := range followers {
		f := &follower{}
		f.last.Store(-1)
		followers[i] = f
		c := ownedBy(t, rps[i%3], lb.URL)
		res, _ := c.call("resources/subscribe", `{"uri":"test://burst"}`, nil)
		require.Nil(t, res.Error)
		events, _ := c.getStream(ctx, "")
		read := newClient(t, lb.URL)
		read.sid = c.sid
		wg.Go(func() {
			for ev := range events {
				if !strings.Contains(string(ev.Data), "notifications/resources/updated") {
					continue
				}
				f.notifications.Add(1)
				m, _ := read.call("resources/read", `{"uri":"test://burst"}`, nil)
				var r struct {
					Contents []struct {
						Text string `json:"text"`
					} `json:"contents"`
				}
				if assert.NoError(t, json.Unmarshal(m.Result, &r)) && assert.Len(t, r.Contents, 1) {
					var n int64
					_, _ = fmt.Sscan(r.Contents[0].Text, &n)
					f.last.Store(n)
				}
			}
		})
	}

	const updates = 10_000
	var burst sync.WaitGroup
	for i, s := range servers {
		burst.Go(func() {
			for j := i; j < updates; j += len(servers) {
				value.Add(1)
				s.ResourceUpdated("test://burst")
				if j%30 == 0 {
					time.Sleep(time.Millisecond) // a burst that lasts a while
				}
			}
		})
	}
	burst.Wait()
	require.EqualValues(t, updates, value.Load())
	require.Eventually(t, func() bool {
		for _, f := range followers {
			if f.last.Load() != updates {
				return false
			}
		}
		return true
	}, 20*time.Second, 20*time.Millisecond, "a client did not hear of the last update")
	total := int64(0)
	for _, f := range followers {
		total += f.notifications.Load()
	}
	t.Logf("%d updates made %d notifications per client on average", updates, total/int64(len(followers)))
	assert.Less(t, total/int64(len(followers)), int64(updates/10), "the updates coalesce")
	cancel()
	wg.Wait()
}
