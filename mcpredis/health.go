package mcpredis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/saguaro-go/saguaro/mcp/cluster"
)

// ErrUnhealthy is what [Cluster.Healthy] wraps when Redis does not
// answer.
var ErrUnhealthy = errors.New("mcpredis: Redis does not answer")

// Healthy reports whether Redis answers, for a readiness probe
// (cluster.HealthChecker), without a round trip of its own when the
// heartbeat knows: nil when the last heartbeat succeeded within two
// Heartbeats, an error at once when the last one failed; otherwise one
// PING bounded by ctx decides. So a Redis that goes away is seen within
// about a Heartbeat (a second by default). The error wraps ErrUnhealthy.
//
// Pitfall: a replica whose heartbeats fail is also one the others soon
// count as gone (after ReplicaTTL): a probe that takes it out of the
// balancer then matches what the cluster does with its sessions.
func (c *Cluster) Healthy(ctx context.Context) error {
	last := c.lastBeat.Load()
	if err := c.beatErr.Load(); err != nil {
		return fmt.Errorf("%w (the last heartbeat failed): %w", ErrUnhealthy, *err)
	}
	if last != 0 && time.Since(time.Unix(0, last)) <= 2*c.opts.Heartbeat {
		return nil
	}
	start := time.Now()
	if err := c.rdb.Ping(ctx).Err(); err != nil {
		if last == 0 {
			return fmt.Errorf("%w: %w", ErrUnhealthy, err)
		}
		return fmt.Errorf("%w (last heartbeat %v ago): %w", ErrUnhealthy, time.Since(time.Unix(0, last)).Round(time.Millisecond), err)
	}
	c.lastBeat.CompareAndSwap(last, start.UnixNano())
	return nil
}

var _ cluster.HealthChecker = (*Cluster)(nil)
