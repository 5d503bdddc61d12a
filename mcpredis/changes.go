package mcpredis

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/saguaro-go/saguaro/mcp/cluster"
)

// A change travels in three steps, each a short script on the shard of
// {c}: this replica announces it (announceScript), which makes it wait
// for its notice, led by the first replica to announce its kind; the
// leader sends the notice ChangeWindow later (publishScript), which
// numbers it, logs it and tells every replica; a replica that did not
// lead checks that a notice went out after it announced (checkScript),
// and announces again if the leader went away first. Every replica hears
// the notice (listen) and reads what it missed from the log (catchUp).

// changeKey is a change's kind: changes of one kind make one notice.
type changeKey struct{ notification, uri string }

// The states of a change this replica announced.
const (
	stQueued     = iota // to announce
	stLeading           // this replica sends its notice at due
	stPublishing        // the notice is being sent
	stFollowing         // another replica leads; check at due
	stChecking          // the check is under way
)

// pendingChange is a change this replica announced and has not seen
// through.
type pendingChange struct {
	key   changeKey
	hash  string // of key, for its Redis keys
	data  []byte
	state int
	// again: the change happened again here while its notice was being
	// sent or checked: announce it again once that is done.
	again bool
	due   time.Time
	since int64 // stFollowing: when this replica announced, the server's ms
}

// announcer queues the changes this replica announces, one entry per
// kind: a change of a kind already waiting joins it, so the queue never
// holds more entries than there are kinds (a notification and a URI), and
// nothing is dropped.
type announcer struct {
	mu      sync.Mutex
	pending map[changeKey]*pendingChange
	// queued, leading and following hold pending changes by state, in
	// the order of their due times (leading, following), or of their
	// arrival (queued).
	queued, leading, following []*pendingChange
	wake                       chan struct{}
}

func (a *announcer) init() {
	a.pending = map[changeKey]*pendingChange{}
	a.wake = make(chan struct{}, 1)
}

// Announce implements cluster.Cluster: the change is queued for the
// announcer, which runs it on Redis in the background; a change of the
// same kind that waits already covers it.
func (c *Cluster) Announce(ch cluster.Change, data []byte) {
	a := &c.ann
	k := changeKey{ch.Notification, ch.URI}
	a.mu.Lock()
	p := a.pending[k]
	switch {
	case p == nil:
		h := fnv.New64a()
		_, _ = h.Write([]byte(k.notification))
		_, _ = h.Write([]byte{0})
		_, _ = h.Write([]byte(k.uri))
		p = &pendingChange{key: k, hash: strconv.FormatUint(h.Sum64(), 36), data: data, state: stQueued}
		a.pending[k] = p
		a.queued = append(a.queued, p)
	case p.state == stFollowing:
		// Whether the leader's notice goes out after this change is
		// not known: announce again (it follows again while the kind
		// waits).
		p.data, p.state = data, stQueued
		a.queued = append(a.queued, p)
	case p.state == stPublishing || p.state == stChecking:
		p.data, p.again = data, true
	default:
		// Queued, or led here: its notice goes out after now.
		p.data = data
	}
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// announcer runs the announced changes on Redis until ctx ends: a batch
// of queued ones, then the notices due, then the checks due, each batch
// one pipeline.
func (c *Cluster) announcer(ctx context.Context) {
	defer c.done.Done()
	a := &c.ann
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	out := outage{log: c.log, waiting: "mcpredis: registry changes wait for Redis", resumed: "mcpredis: registry changes go out again"}
	for {
		queued, leading, following, next := a.take(time.Now())
		if len(queued)+len(leading)+len(following) == 0 {
			wait := time.Hour
			if !next.IsZero() {
				wait = time.Until(next)
			}
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-a.wake:
			case <-timer.C:
			}
			continue
		}
		var err error
		if len(queued) > 0 {
			err = c.announceBatch(ctx, queued)
		}
		if len(leading) > 0 {
			err = errors.Join(err, c.publishBatch(ctx, leading))
		}
		if len(following) > 0 {
			err = errors.Join(err, c.checkBatch(ctx, following))
		}
		if !out.after(ctx, err) {
			return
		}
	}
}

// take returns up to a batch of queued changes, of leading ones whose
// notice is due, and of following ones whose check is due, marked as
// under way, and when the next one falls due.
func (a *announcer) take(now time.Time) (queued, leading, following []*pendingChange, next time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := min(len(a.queued), batchSize)
	queued, a.queued = append([]*pendingChange(nil), a.queued[:n]...), a.queued[n:]
	due := func(list *[]*pendingChange, state, under int) []*pendingChange {
		var out []*pendingChange
		i := 0
		for ; i < len(*list) && len(out) < batchSize; i++ {
			p := (*list)[i]
			if p.state != state {
				continue // moved on meanwhile
			}
			if p.due.After(now) {
				if next.IsZero() || p.due.Before(next) {
					next = p.due
				}
				break
			}
			p.state = under
			out = append(out, p)
		}
		*list = (*list)[i:]
		return out
	}
	leading = due(&a.leading, stLeading, stPublishing)
	following = due(&a.following, stFollowing, stChecking)
	return queued, leading, following, next
}

// requeueLocked puts p back among the changes to announce.
func (a *announcer) requeueLocked(p *pendingChange) {
	p.state, p.again = stQueued, false
	a.queued = append(a.queued, p)
}

// settleLocked ends p's run: done, or announced again when it happened
// again meanwhile.
func (a *announcer) settleLocked(p *pendingChange) {
	if p.again {
		a.requeueLocked(p)
		return
	}
	delete(a.pending, p.key)
}

// waitMS is how long a change may wait for its notice in Redis before the
// replicas that did not lead announce it again: its window, and time for
// a leader that went away to count as gone.
func (c *Cluster) waitMS() int64 {
	return (c.opts.ChangeWindow + c.opts.ReplicaTTL).Milliseconds()
}

func (c *Cluster) announceBatch(ctx context.Context, ps []*pendingChange) error {
	calls := make([]call, len(ps))
	for i, p := range ps {
		calls[i] = call{keys: []string{c.shared("p:" + p.hash)}, args: []any{c.waitMS()}}
	}
	bctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	cmds, err := c.evalBatch(bctx, announceScript, calls)
	a := &c.ann
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	for i, p := range ps {
		v, e := reply(cmds, i, err)
		if e != nil || len(v) < 2 {
			err = cmp.Or(err, e, errShortReply)
			a.queued = append(a.queued, p) // still stQueued
			continue
		}
		if lead, _ := v[0].(int64); lead == 1 {
			p.state, p.due = stLeading, now.Add(c.opts.ChangeWindow)
			a.leading = append(a.leading, p)
			continue
		}
		left := int64(0)
		if len(v) > 2 {
			left, _ = v[2].(int64)
		}
		p.since, _ = v[1].(int64)
		p.state = stFollowing
		p.due = now.Add(time.Duration(max(left, 0))*time.Millisecond + c.opts.ChangeWindow/2 + 20*time.Millisecond)
		a.following = append(a.following, p)
	}
	if err != nil {
		return fmt.Errorf("announce: %w", err)
	}
	return nil
}

func (c *Cluster) publishBatch(ctx context.Context, ps []*pendingChange) error {
	channel := c.shared("chg")
	keep := max(time.Minute, 10*time.Duration(c.waitMS())*time.Millisecond).Milliseconds()
	calls := make([]call, len(ps))
	c.ann.mu.Lock()
	for i, p := range ps {
		calls[i] = call{
			keys: []string{c.shared("p:" + p.hash), c.shared("d:" + p.hash), c.shared("log"), c.shared("gen")},
			args: []any{p.key.notification, p.key.uri, p.data, c.opts.MaxChanges, keep, channel, flag(c.sharded)},
		}
	}
	c.ann.mu.Unlock()
	bctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	cmds, err := c.evalBatch(bctx, publishScript, calls)
	a := &c.ann
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, p := range ps {
		e := err
		if e == nil {
			e = cmds[i].Err()
		}
		if e != nil {
			err = e
			p.state, p.due = stLeading, time.Now()
			a.leading = append(a.leading, p)
			continue
		}
		a.settleLocked(p)
	}
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	return nil
}

func (c *Cluster) checkBatch(ctx context.Context, ps []*pendingChange) error {
	calls := make([]call, len(ps))
	for i, p := range ps {
		calls[i] = call{keys: []string{c.shared("p:" + p.hash), c.shared("d:" + p.hash)}, args: []any{p.since}}
	}
	bctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	cmds, err := c.evalBatch(bctx, checkScript, calls)
	a := &c.ann
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	for i, p := range ps {
		v, e := reply(cmds, i, err)
		if e != nil || len(v) == 0 {
			err = cmp.Or(err, e, errShortReply)
			p.state, p.due = stFollowing, now.Add(250*time.Millisecond)
			a.following = append(a.following, p)
			continue
		}
		switch r, _ := v[0].(int64); r {
		case 1: // a notice went out after this replica announced
			a.settleLocked(p)
		case 0: // still waiting for its notice
			left := int64(0)
			if len(v) > 1 {
				left, _ = v[1].(int64)
			}
			p.state, p.due = stFollowing, now.Add(time.Duration(max(left, 0))*time.Millisecond+20*time.Millisecond)
			a.following = append(a.following, p)
		default: // the leader went away: announce again
			a.requeueLocked(p)
		}
	}
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	return nil
}

// reply is the array a pipelined script call answered, or why there is
// none: the batch's error, or the call's own.
func reply(cmds []*redis.Cmd, i int, batch error) ([]any, error) {
	if batch != nil {
		return nil, batch
	}
	return cmds[i].Slice()
}

var errShortReply = errors.New("a script's answer is too short")

// replicaChannel is the channel replica id hears.
func (c *Cluster) replicaChannel(id string) string { return c.shared("r:" + id) }

// publish sends msg on channel: sharded where the server has it.
func (c *Cluster) publish(ctx context.Context, channel, msg string) error {
	if c.sharded {
		return c.rdb.SPublish(ctx, channel, msg).Err()
	}
	return c.rdb.Publish(ctx, channel, msg).Err()
}

// subscribe subscribes to the changes and to this replica's channel (both
// in the slot of {c}, so on one connection).
func (c *Cluster) subscribe(ctx context.Context) error {
	chans := []string{c.shared("chg"), c.replicaChannel(c.self.ID)}
	if c.sharded {
		c.ps = c.rdb.SSubscribe(ctx)
		if err := c.ps.SSubscribe(ctx, chans...); err != nil {
			_ = c.ps.Close()
			return err
		}
	} else {
		c.ps = c.rdb.Subscribe(ctx)
		if err := c.ps.Subscribe(ctx, chans...); err != nil {
			_ = c.ps.Close()
			return err
		}
	}
	for range chans {
		if _, err := c.ps.ReceiveTimeout(ctx, 5*time.Second); err != nil {
			_ = c.ps.Close()
			return err
		}
	}
	return nil
}

// feed is where this replica is in the log of changes: the number of the
// last change it delivered, in the store's epoch. Only listen uses it.
type feed struct {
	cursor int64
	epoch  string
}

// start begins the feed after the last change logged.
func (f *feed) start(ctx context.Context, c *Cluster) error {
	top, err := c.rdb.XRevRangeN(ctx, c.shared("log"), "+", "-", 1).Result()
	if err != nil {
		return err
	}
	f.epoch = c.reg.epochNow()
	if len(top) > 0 {
		f.cursor, _ = changeNumber(top[0].ID)
	}
	return nil
}

func changeNumber(id string) (int64, bool) {
	n, _, _ := strings.Cut(id, "-")
	v, err := strconv.ParseInt(n, 10, 64)
	return v, err == nil
}

// change is one change of the log.
type change struct {
	n     int64
	epoch string
	c     cluster.Change
	data  []byte
}

// listen delivers the changes and this replica's notices until ctx ends.
// A change whose number does not follow the last one delivered, a
// (re)subscription, and every Heartbeat without a message, make it read
// the log for what it missed: a lost message costs a delay, never a
// change.
func (c *Cluster) listen(ctx context.Context) {
	defer c.done.Done()
	failing := false
	myChannel := c.replicaChannel(c.self.ID)
	for {
		msg, err := c.ps.ReceiveTimeout(ctx, c.opts.Heartbeat)
		if ctx.Err() != nil {
			return
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			_ = c.ps.Ping(ctx)
			c.catchUp(ctx)
			continue
		}
		if err != nil {
			_ = c.fail(err)
			if !failing {
				c.log.Warn("mcpredis: the bus is unreachable", slog.Any("err", err))
			}
			failing = true
			select {
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		if failing {
			failing = false
			c.catchUp(ctx)
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			c.catchUp(ctx)
		case *redis.Message:
			if m.Channel == myChannel {
				if id, ok := strings.CutPrefix(m.Payload, "m "); ok {
					c.notify(cluster.Notice{Kind: cluster.NoticeMoved, Session: id})
				}
				continue
			}
			ch, ok := parseChange(m.Payload)
			if !ok {
				continue
			}
			c.receive(ctx, ch)
		}
	}
}

// parseChange reads a change's message: "<n> <epoch>
// <notification>\n<URI length>\n<URI><message>".
func parseChange(p string) (change, bool) {
	head, rest, ok := strings.Cut(p, "\n")
	if !ok {
		return change{}, false
	}
	ulen, rest, ok := strings.Cut(rest, "\n")
	if !ok {
		return change{}, false
	}
	l, err := strconv.Atoi(ulen)
	if err != nil || l < 0 || l > len(rest) {
		return change{}, false
	}
	parts := strings.SplitN(head, " ", 3)
	if len(parts) != 3 {
		return change{}, false
	}
	n, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return change{}, false
	}
	return change{n: n, epoch: parts[1], c: cluster.Change{Notification: parts[2], URI: rest[:l]}, data: []byte(rest[l:])}, true
}

// receive delivers a change heard on the bus when it is the next one,
// and reads the log when changes are missing before it.
func (c *Cluster) receive(ctx context.Context, ch change) {
	f := &c.feed
	if c.syncEpoch() {
		c.catchUp(ctx)
		return
	}
	if ch.epoch != f.epoch && ch.epoch != "-" {
		return // of another epoch: catchUp reads the present one's
	}
	switch {
	case ch.n <= f.cursor:
	case ch.n == f.cursor+1:
		c.deliver([]change{ch})
		f.cursor = ch.n
	default:
		c.catchUp(ctx)
	}
}

// syncEpoch starts the feed at the beginning of the log when the store's
// epoch changed (it lost its data: the new log starts at 1); it reports
// whether it did.
func (c *Cluster) syncEpoch() bool {
	f := &c.feed
	if e := c.reg.epochNow(); e != f.epoch {
		f.epoch, f.cursor = e, 0
		return true
	}
	return false
}

// catchUp delivers the logged changes after the last one delivered.
func (c *Cluster) catchUp(ctx context.Context) {
	c.syncEpoch()
	f := &c.feed
	const page = 1000
	for ctx.Err() == nil {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		msgs, err := c.rdb.XRangeN(rctx, c.shared("log"), "("+strconv.FormatInt(f.cursor, 10)+"-0", "+", page).Result()
		cancel()
		if err != nil {
			_ = c.fail(err)
			return // the next message or heartbeat tries again
		}
		var batch []change
		last := f.cursor
		for _, m := range msgs {
			n, ok := changeNumber(m.ID)
			if !ok {
				continue
			}
			if last > 0 && n > last+1 && len(batch) == 0 {
				c.log.Error("mcpredis: registry changes were trimmed from the log before this replica read them; its sessions miss them",
					slog.Int64("changes", n-last-1))
			}
			last = n
			ch := change{n: n, epoch: str(m.Values["g"]), data: []byte(str(m.Values["d"])),
				c: cluster.Change{Notification: str(m.Values["n"]), URI: str(m.Values["u"])}}
			if ch.epoch != f.epoch && ch.epoch != "-" {
				continue
			}
			batch = append(batch, ch)
		}
		c.deliver(batch)
		f.cursor = last
		if len(msgs) < page {
			return
		}
	}
}

func str(v any) string { s, _ := v.(string); return s }

// deliver tells the endpoints of the changes, in order; of changes of
// one kind in one batch only the last (each tells the client the same:
// look again).
func (c *Cluster) deliver(batch []change) {
	if len(batch) > 1 {
		lastOf := make(map[changeKey]int, len(batch))
		for i, ch := range batch {
			lastOf[changeKey{ch.c.Notification, ch.c.URI}] = i
		}
		kept := batch[:0]
		for i, ch := range batch {
			if lastOf[changeKey{ch.c.Notification, ch.c.URI}] == i {
				kept = append(kept, ch)
			}
		}
		batch = kept
	}
	for _, ch := range batch {
		c.notify(cluster.Notice{Kind: cluster.NoticeChange, Change: ch.c, Data: ch.data, Seq: ch.n})
	}
}
