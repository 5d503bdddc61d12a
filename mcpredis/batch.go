package mcpredis

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// batchSize is how many script calls go to Redis in one pipeline: each
// call takes 5–35 µs of the server's time (the more the busier the
// machine: measured on two shared cores), so that a batch stays within a
// millisecond or two and never holds up other clients for long, whatever
// the number of sessions.
const batchSize = 64

// call is one run of a script: its keys and arguments.
type call struct {
	keys []string
	args []any
}

// evalAll runs script once for each call, pipelined in batches of
// batchSize, and hands each reply to each (nil: no one reads them). It
// stops at the first batch that fails, or when ctx ends between batches,
// and returns that error; the calls of earlier batches are done.
func (c *Cluster) evalAll(ctx context.Context, script *redis.Script, calls []call, each func(i int, cmd *redis.Cmd)) error {
	for start := 0; start < len(calls); start += batchSize {
		if err := ctx.Err(); err != nil {
			return err
		}
		part := calls[start:min(start+batchSize, len(calls))]
		cmds, err := c.evalBatch(ctx, script, part)
		if err != nil {
			return err
		}
		if each != nil {
			for i, cmd := range cmds {
				each(start+i, cmd)
			}
		}
	}
	return nil
}

// evalBatch runs one pipeline of script calls by its hash, loading the
// script (on every shard of a Redis Cluster) and running the batch again
// when the server does not know it (it restarted, or failed over). A
// call that fails alone (its reply is an error) does not fail the batch:
// its Cmd carries the error.
func (c *Cluster) evalBatch(ctx context.Context, script *redis.Script, calls []call) ([]*redis.Cmd, error) {
	for attempt := 0; ; attempt++ {
		cmds := make([]*redis.Cmd, len(calls))
		_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, cl := range calls {
				cmds[i] = script.EvalSha(ctx, p, cl.keys, cl.args...)
			}
			return nil
		})
		noScript := false
		for _, cmd := range cmds {
			if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
				noScript = true
				break
			}
		}
		if noScript && attempt == 0 {
			if err := script.Load(ctx, c.rdb).Err(); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil && !isReplyError(err) {
			return nil, c.fail(err)
		}
		return cmds, nil
	}
}

// isReplyError reports whether err is an error reply of the server to
// one command (which fails that command only), rather than a failure of
// the connection or the context.
func isReplyError(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}
