package mcpredis

import (
	"context"
	"log/slog"
	"time"
)

// outage paces a background writer's retries while Redis does not take
// its writes, and tells the log once when that starts and once when it
// ends, not once per attempt.
type outage struct {
	log     *slog.Logger
	waiting string // logged (Warn) at the first failure
	resumed string // logged (Info) at the first success after failures
	failing bool
}

// after takes the outcome of one attempt; after a failure it waits before
// the next. It reports false when ctx ended while it waited.
func (o *outage) after(ctx context.Context, err error) bool {
	switch {
	case err != nil && ctx.Err() == nil:
		if !o.failing {
			o.log.Warn(o.waiting, slog.Any("err", err))
		}
		o.failing = true
		select {
		case <-ctx.Done():
			return false
		case <-time.After(250 * time.Millisecond):
		}
	case err == nil && o.failing:
		o.log.Info(o.resumed)
		o.failing = false
	}
	return true
}
