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
// (cluster.HealthChecker): an error at once when the last heartbeat
// failed, else one PING bounded by ctx. A probe thus sees a Redis that
// went away within its own timeout (give it a second), and costs Redis
// one PING. The error wraps ErrUnhealthy.
//
// Pitfall: a replica whose heartbeats fail is also one the others soon
// count as gone (after ReplicaTTL): a probe that takes it out of the
// balancer then matches what the cluster does with its sessions.
func (c *Cluster) Healthy(ctx context.Context) error {
	if err := c.beatErr.Load(); err != nil {
		return fmt.Errorf("%w (the last heartbeat failed): %w", ErrUnhealthy, *err)
	}
	if err := c.rdb.Ping(ctx).Err(); err != nil {
		if last := c.lastBeat.Load(); last != 0 {
			return fmt.Errorf("%w (last heartbeat %v ago): %w", ErrUnhealthy, time.Since(time.Unix(0, last)).Round(time.Millisecond), err)
		}
		return fmt.Errorf("%w: %w", ErrUnhealthy, err)
	}
	return nil
}

var _ cluster.HealthChecker = (*Cluster)(nil)
