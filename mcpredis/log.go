package mcpredis

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/saguaro-go/saguaro/mcp/cluster"
)

// maxPending bounds the events waiting to be logged while Redis does not
// answer; past it the oldest are dropped (a replica that takes their
// sessions over replays less), and a warning says how many.
const maxPending = 100_000

// persister holds the events Append queued, which persist writes to
// Redis in the background, in order, in pipelined batches.
type persister struct {
	mu      sync.Mutex
	queue   []cluster.Event
	writing int // events taken from the queue and not written yet
	dropped int
	wake    chan struct{}
}

func (p *persister) init() { p.wake = make(chan struct{}, 1) }

// Append implements cluster.Cluster: the events are queued, and written
// by a background goroutine.
func (c *Cluster) Append(events ...cluster.Event) {
	p := &c.store
	p.mu.Lock()
	if over := len(p.queue) + len(events) - maxPending; over > 0 {
		over = min(over, len(p.queue))
		p.queue = append(p.queue[:0], p.queue[over:]...)
		p.dropped += over
	}
	p.queue = append(p.queue, events...)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// flush waits until every event queued so far is written, or ctx ends.
func (p *persister) flush(ctx context.Context) {
	for {
		p.mu.Lock()
		left := len(p.queue) + p.writing
		p.mu.Unlock()
		if left == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// persist writes the queued events until ctx ends. A batch Redis does not
// take goes back to the front of the queue, and is tried again.
func (c *Cluster) persist(ctx context.Context) {
	defer c.done.Done()
	p := &c.store
	out := outage{log: c.log, waiting: "mcpredis: session logs wait for Redis", resumed: "mcpredis: session logs are written again"}
	for {
		p.mu.Lock()
		n := min(len(p.queue), 4*batchSize)
		batch := append([]cluster.Event(nil), p.queue[:n]...)
		p.queue = append(p.queue[:0], p.queue[n:]...)
		p.writing = n
		dropped := p.dropped
		p.dropped = 0
		p.mu.Unlock()
		if dropped > 0 {
			c.log.Warn("mcpredis: events were not logged, Redis being too far behind; a replica that takes their sessions over replays less",
				slog.Int("events", dropped))
		}
		if n == 0 {
			select {
			case <-ctx.Done():
				return
			case <-p.wake:
			}
			continue
		}
		err := c.write(ctx, batch)
		p.mu.Lock()
		p.writing = 0
		if err != nil {
			p.queue = append(batch, p.queue...)
		}
		p.mu.Unlock()
		if !out.after(ctx, err) {
			return
		}
	}
}

// write logs one batch of events. A session another replica owns now is
// reported to the endpoints (NoticeMoved), once per batch.
func (c *Cluster) write(ctx context.Context, events []cluster.Event) error {
	calls := make([]call, 0, len(events))
	ids := make([]string, 0, len(events))
	for _, ev := range events {
		if !validID(ev.Session) {
			continue
		}
		el := strconv.FormatInt(ev.Change, 10)
		if ev.Change == 0 {
			el = string(ev.Data)
		}
		calls = append(calls, call{keys: []string{c.recKey(ev.Session), c.logKey(ev.Session)},
			args: []any{c.self.ID, ev.Seq, el, c.opts.MaxEvents}})
		ids = append(ids, ev.Session)
	}
	var moved []string
	var failed error
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := c.evalAll(wctx, appendScript, calls, func(i int, cmd *redis.Cmd) {
		n, err := cmd.Int()
		switch {
		case err != nil:
			failed = err
		case n == -2 && (len(moved) == 0 || moved[len(moved)-1] != ids[i]):
			moved = append(moved, ids[i])
		}
	})
	if err != nil {
		return err
	}
	if failed != nil {
		c.log.Warn("mcpredis: an event was not logged", slog.Any("err", failed))
	}
	for _, id := range moved {
		c.notify(cluster.Notice{Kind: cluster.NoticeMoved, Session: id})
	}
	return nil
}

// Events implements cluster.Cluster: the session's log, its changes'
// messages read from the log of changes (a change trimmed from it is
// left out).
func (c *Cluster) Events(ctx context.Context, id string, after int64) ([]cluster.Event, error) {
	if !validID(id) {
		return nil, nil
	}
	var list *redis.StringSliceCmd
	var lseq *redis.StringCmd
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		list = p.LRange(ctx, c.logKey(id), 0, -1)
		lseq = p.HGet(ctx, c.recKey(id), "lseq")
		return nil
	})
	if err != nil && err != redis.Nil {
		return nil, fmt.Errorf("mcpredis: events: %w", err)
	}
	els := list.Val()
	last, _ := strconv.ParseInt(lseq.Val(), 10, 64)
	base := last - int64(len(els)) + 1
	out := make([]cluster.Event, 0, len(els))
	changes := map[int64][]byte{}
	for i, el := range els {
		seq := base + int64(i)
		if seq <= after || el == "0" || el == "" {
			continue
		}
		ev := cluster.Event{Seq: seq}
		if el[0] >= '0' && el[0] <= '9' {
			ev.Change, _ = strconv.ParseInt(el, 10, 64)
			changes[ev.Change] = nil
		} else {
			ev.Data = []byte(el)
		}
		out = append(out, ev)
	}
	if len(changes) > 0 {
		cmds := make(map[int64]*redis.XMessageSliceCmd, len(changes))
		_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for n := range changes {
				id := strconv.FormatInt(n, 10) + "-0"
				cmds[n] = p.XRange(ctx, c.shared("log"), id, id)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("mcpredis: events: %w", err)
		}
		for n, cmd := range cmds {
			if msgs := cmd.Val(); len(msgs) == 1 {
				changes[n] = []byte(str(msgs[0].Values["d"]))
			}
		}
		kept := out[:0]
		for _, ev := range out {
			if ev.Change != 0 {
				if ev.Data = changes[ev.Change]; ev.Data == nil {
					continue
				}
			}
			kept = append(kept, ev)
		}
		out = kept
	}
	return out, nil
}
