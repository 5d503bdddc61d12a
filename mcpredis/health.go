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
// (cluster.HealthChecker): nil when the last heartbeat's round trip
// succeeded within Options.ReplicaTTL, which costs nothing; otherwise
// one PING bounded by ctx decides. The error wraps ErrUnhealthy.
//
// Pitfall: a replica whose heartbeats fail is also one the others soon
// count as gone (after ReplicaTTL): a probe that takes it out of the
// balancer then matches what the cluster does with its sessions.
func (c *Cluster) Healthy(ctx context.Context) error {
	last := c.lastBeat.Load()
	if last != 0 && time.Since(time.Unix(0, last)) <= c.opts.ReplicaTTL {
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
