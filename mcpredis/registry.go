package mcpredis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/saguaro-go/saguaro/mcp/cluster"
)

// registry is this replica's view of the live replicas, as its last
// heartbeat found them, and of the store's epoch.
type registry struct {
	mu sync.Mutex
	// epoch is the store's epoch as this replica knows it ("" before its
	// first beat); done is the epoch it recorded its sessions in.
	epoch, done string
	live        map[string]liveReplica
	// resetAt is when this replica last told its endpoint to record its
	// sessions again.
	resetAt time.Time
	// recovering is set while Recover runs.
	recovering atomic.Bool
}

// liveReplica is one replica of the registry: its relay URL, and until
// when it counts as alive (this process's clock).
type liveReplica struct {
	url   string
	until time.Time
}

// url returns the relay URL of replica id when it was alive at the last
// heartbeat and still counts as alive, else "".
func (r *registry) url(id string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if l, ok := r.live[id]; ok && time.Now().Before(l.until) {
		return l.url
	}
	return ""
}

// epochNow is the store's epoch as this replica knows it.
func (r *registry) epochNow() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.epoch
}

// recorded notes that this replica recorded its sessions in epoch.
func (r *registry) recorded(epoch string) {
	r.mu.Lock()
	if epoch == r.epoch {
		r.done = epoch
	}
	r.mu.Unlock()
}

// heartbeat beats every Options.Heartbeat. A beat that finds the store's
// epoch changed (Redis lost its data) tells the endpoints to record their
// sessions again; one that finds they have not (a Recover failed) tells
// them again, now and then.
func (c *Cluster) heartbeat(ctx context.Context) {
	defer c.done.Done()
	tick := time.NewTicker(c.opts.Heartbeat)
	defer tick.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		reset, err := c.beat(ctx)
		if err != nil {
			if !failing && ctx.Err() == nil {
				c.log.Warn("mcpredis: heartbeat failed; Redis unreachable", slog.Any("err", err))
			}
			failing = true
			continue
		}
		if failing {
			c.log.Info("mcpredis: Redis answers again")
			failing = false
		}
		c.askRecord(reset)
	}
}

// askRecord tells the endpoints to record their sessions again (Recover)
// when the store lost them: at once after the beat that found out
// (reset), and again every ten heartbeats while they have not managed to.
// With no endpoint watching, there is nothing to record.
func (c *Cluster) askRecord(reset bool) {
	r := &c.reg
	r.mu.Lock()
	epoch, pending := r.epoch, r.done != r.epoch
	again := pending && !reset && !r.recovering.Load() && time.Since(r.resetAt) > 10*c.opts.Heartbeat
	if reset || again {
		r.resetAt = time.Now()
	}
	r.mu.Unlock()
	if !reset && !again {
		return
	}
	if reset {
		c.log.Warn("mcpredis: Redis lost its data; recording the live sessions again", slog.String("epoch", epoch))
	}
	if !c.notify(cluster.Notice{Kind: cluster.NoticeReset}) {
		r.recorded(epoch)
	}
}

// beat tells Redis this replica is alive until ReplicaTTL from now, and
// reads the registry: the live replicas, the store's epoch. It reports
// whether the epoch changed since the last beat (the store lost its
// data).
func (c *Cluster) beat(ctx context.Context) (reset bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, max(c.opts.Heartbeat, time.Second))
	defer cancel()
	r := &c.reg
	r.mu.Lock()
	known, done := r.epoch, r.done
	r.mu.Unlock()
	var b [8]byte
	_, _ = rand.Read(b[:])
	start := time.Now()
	v, err := beatScript.Run(ctx, c.rdb, c.regKeys(), c.self.ID, c.self.URL, c.opts.ReplicaTTL.Milliseconds(),
		known, hex.EncodeToString(b[:]), done).Slice()
	if err != nil {
		c.beatErr.Store(&err)
		return false, c.fail(err)
	}
	c.beatErr.Store(nil)
	if len(v) != 4 {
		return false, fmt.Errorf("beat: %d values from the script", len(v))
	}
	gen, _ := v[0].(string)
	now, _ := v[1].(int64)
	flat, _ := v[3].([]any)
	c.lastBeat.Store(start.UnixNano())
	live := make(map[string]liveReplica, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		id, _ := flat[i].(string)
		entry, _ := flat[i+1].(string)
		until, rest, _ := strings.Cut(entry, " ")
		_, url, _ := strings.Cut(rest, " ")
		ms, err := strconv.ParseInt(until, 10, 64)
		if err != nil || ms <= now {
			continue
		}
		live[id] = liveReplica{url: url, until: start.Add(time.Duration(ms-now) * time.Millisecond)}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live = live
	switch {
	case known == "":
		r.epoch, r.done = gen, gen // a new replica has nothing to record
	case gen != r.epoch:
		r.epoch = gen
		reset = true
	}
	return reset, nil
}
