// Package mcpredis shares MCP sessions among the replicas of a server on
// Redis: a [cluster.Cluster] for mcp.Options.Cluster, so that a plain load
// balancer with no stickiness can spread one session's requests over the
// replicas.
//
//	rdb, _ := mcpredis.NewClient("redis://127.0.0.1:6379/0")
//	cl, err := mcpredis.New(ctx, rdb, &mcpredis.Options{URL: "http://10.0.0.7:8080/mcp"})
//	...
//	defer cl.Close()
//	r.Mount("/mcp", mcp.Controller(&mcp.Options{Handler: srv, Cluster: cl}))
//
// What Redis holds: each session's record (revision, client capabilities,
// identity, log level, subscriptions, the handler's state when it is an
// mcp.StateCodec), the log of its GET stream (a Redis stream, bounded by
// Options.MaxEvents), the set of live replicas with their relay URLs
// (each beats every Options.Heartbeat and is gone after Options.ReplicaTTL
// without one), and the bus on which replicas hear of events, registry
// changes and sessions taken over. What it does not hold: calls in
// flight, their response streams, server→client requests waiting for an
// answer; these live on the session's owner, where every request of the
// session is relayed, and die with it (see cluster.Cluster).
//
// Redis keeps nothing on disk on our machines, and this package does not
// need it to: when Redis restarts empty, every replica records its live
// sessions again at its next heartbeat, with its GET streams' sequence
// numbers, so event ids never repeat (the events logged before the
// restart are lost for a replica that takes a session over later). While
// Redis is down, requests that need it fail at once with 503 and
// Retry-After; sessions keep serving requests that land on their owner.
//
// Pitfalls: the URL must reach this replica's endpoint from the other
// replicas (not through the load balancer); every replica must serve the
// same tools, resources and prompts; all replicas must share
// Options.Prefix and the keys that seal cursors and requestState
// (SharedKey, for mcp.ServerOptions.Keys); one Redis server (or a primary
// with replicas), not Redis Cluster.
package mcpredis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/saguaro-go/saguaro/mcp/cluster"
)

// Options configures [New]. Zero fields take the defaults.
type Options struct {
	// URL is this replica's MCP endpoint as the other replicas reach it,
	// such as "http://10.0.0.7:8080/mcp". Required.
	URL string
	// ID names this replica; default a random one. It must be unique
	// among the live replicas; a restarted process is a new replica.
	ID string
	// Prefix starts every key and the bus channel; default "saguaro:".
	// Replicas of one service share it; services sharing a Redis must not.
	Prefix string
	// Heartbeat is how often this replica tells Redis it is alive;
	// default 1s.
	Heartbeat time.Duration
	// ReplicaTTL is how long a replica counts as alive after its last
	// heartbeat; default 3× Heartbeat. Its sessions are taken over by the
	// next replica that gets a request for them after that (or at once,
	// when a relay to it cannot connect).
	ReplicaTTL time.Duration
	// MaxEvents bounds each session's GET stream log; default 128.
	MaxEvents int
	// Logger receives Redis trouble; default slog.Default().
	Logger *slog.Logger
}

// Cluster is an [cluster.Cluster] on Redis. Make one per process with [New];
// it is safe for concurrent use. Close it when the server stops.
type Cluster struct {
	rdb    redis.UniversalClient
	opts   Options
	self   cluster.Replica
	log    *slog.Logger
	cancel context.CancelFunc
	done   sync.WaitGroup

	beaten atomic.Bool // a beat succeeded once
	// lastBeat is when the last successful beat started (Unix ns), for
	// Healthy.
	lastBeat atomic.Int64

	mu       sync.Mutex
	watchers map[int]func(cluster.Notice)
	nextW    int
	announce chan announcement
}

type announcement struct {
	c    cluster.Change
	data []byte
}

// ErrNoURL is returned by [New] when Options.URL is empty.
var ErrNoURL = errors.New("mcpredis: Options.URL is required")

// NewClient returns a go-redis client for url ("redis://host:port/db")
// tuned to fail fast when Redis is down (short dial, read and write
// timeouts, one retry), which is what the endpoint needs to answer 503
// at once rather than hang.
func NewClient(url string) (*redis.Client, error) {
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("mcpredis: %w", err)
	}
	o.DialTimeout = 500 * time.Millisecond
	o.ReadTimeout = time.Second
	o.WriteTimeout = time.Second
	o.PoolTimeout = time.Second
	o.MaxRetries = 1
	return redis.NewClient(o), nil
}

// New joins this replica to the cluster: it checks that Redis answers,
// beats once, and starts beating and listening to the bus in the
// background until Close. rdb stays the caller's (Close does not close
// it).
func New(ctx context.Context, rdb redis.UniversalClient, opts *Options) (*Cluster, error) {
	if opts == nil || opts.URL == "" {
		return nil, ErrNoURL
	}
	o := *opts
	if o.ID == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		o.ID = hex.EncodeToString(b[:])
	}
	if o.Prefix == "" {
		o.Prefix = "saguaro:"
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = time.Second
	}
	if o.ReplicaTTL <= 0 {
		o.ReplicaTTL = 3 * o.Heartbeat
	}
	if o.MaxEvents <= 0 {
		o.MaxEvents = 128
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	c := &Cluster{
		rdb:      rdb,
		opts:     o,
		self:     cluster.Replica{ID: o.ID, URL: o.URL},
		log:      o.Logger,
		watchers: map[int]func(cluster.Notice){},
		announce: make(chan announcement, 1024),
	}
	if _, err := c.beat(ctx); err != nil {
		return nil, fmt.Errorf("mcpredis: %w", err)
	}
	// Subscribe before New returns, so that no notice sent after it is
	// missed.
	ps := rdb.Subscribe(ctx, o.Prefix+"bus")
	if _, err := ps.Receive(ctx); err != nil {
		_ = ps.Close()
		return nil, fmt.Errorf("mcpredis: subscribe: %w", err)
	}
	run, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.done.Add(3)
	go c.heartbeat(run)
	go c.listen(run, ps)
	go c.announcer(run)
	return c, nil
}

// Close stops beating and listening and removes this replica from the
// live set, so that the others take its sessions over at once. It does
// not end the sessions (mcp.Endpoint.Shutdown releases them).
func (c *Cluster) Close() error {
	c.cancel()
	c.done.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return c.rdb.Del(ctx, c.key("r:", c.self.ID)).Err()
}

// Self implements cluster.Cluster.
func (c *Cluster) Self() cluster.Replica { return c.self }

func (c *Cluster) key(kind, name string) string { return c.opts.Prefix + kind + name }

// SharedKey returns the secret named name, size bytes, that every
// replica sharing this Redis and prefix gets: the first to ask creates it
// at random. Use it for the keys that seal pagination cursors and
// requestState (mcp.ServerOptions.Keys), which must be the same on every
// replica. Pitfall: Redis that keeps
// nothing on disk forgets it when it restarts, and a replica started
// after that gets a new one; in production pass keys from your secret
// store instead.
func (c *Cluster) SharedKey(ctx context.Context, name string, size int) ([]byte, error) {
	b := make([]byte, size)
	_, _ = rand.Read(b)
	k := c.key("k:", name)
	if err := c.rdb.SetNX(ctx, k, b, 0).Err(); err != nil {
		return nil, fmt.Errorf("mcpredis: shared key: %w", err)
	}
	v, err := c.rdb.Get(ctx, k).Bytes()
	if err != nil {
		return nil, fmt.Errorf("mcpredis: shared key: %w", err)
	}
	return v, nil
}

// Create implements cluster.Cluster.
func (c *Cluster) Create(ctx context.Context, rec *cluster.Record, ttl time.Duration) error {
	return c.save(ctx, "create", rec, ttl)
}

// Save implements cluster.Cluster.
func (c *Cluster) Save(ctx context.Context, rec *cluster.Record, ttl time.Duration) error {
	return c.save(ctx, "save", rec, ttl)
}

func (c *Cluster) save(ctx context.Context, mode string, rec *cluster.Record, ttl time.Duration) error {
	client := []byte("null")
	if len(rec.Client) > 0 {
		client = rec.Client
	}
	subs := []byte("[]")
	if len(rec.Subscriptions) > 0 {
		subs, _ = json.Marshal(rec.Subscriptions)
	}
	n, err := saveScript.Run(ctx, c.rdb, nil, c.opts.Prefix, rec.ID, mode, c.self.ID, ttl.Milliseconds(),
		rec.Identity, rec.Revision, client, rec.LogLevel, flag(rec.Initialized), subs,
		rec.State, flag(rec.Movable), rec.Seq).Int()
	switch {
	case err != nil:
		return fmt.Errorf("mcpredis: %s: %w", mode, err)
	case n == 0:
		return cluster.ErrSessionUnknown
	case n == -2:
		return cluster.ErrSessionMoved
	}
	return nil
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// Load implements cluster.Cluster.
func (c *Cluster) Load(ctx context.Context, id string) (*cluster.Record, error) {
	v, err := loadScript.Run(ctx, c.rdb, nil, c.opts.Prefix, id).Slice()
	if err != nil {
		return nil, fmt.Errorf("mcpredis: load: %w", err)
	}
	if len(v) != 4 {
		return nil, fmt.Errorf("mcpredis: load: %d values from the script", len(v))
	}
	flat, _ := v[0].([]any)
	m := make(map[string]string, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		k, _ := flat[i].(string)
		val, _ := flat[i+1].(string)
		m[k] = val
	}
	if len(m) == 0 || m["rev"] == "" {
		// Redis lost its data moments ago (P fresh), or so recently
		// that no replica has beaten since (no P gen).
		if fresh, _ := v[2].(int64); fresh == 1 {
			return nil, ErrRecovering
		}
		if gen, _ := v[3].(int64); gen == 0 {
			return nil, ErrRecovering
		}
		return nil, cluster.ErrSessionUnknown
	}
	ownerURL, _ := v[1].(string)
	rec := &cluster.Record{
		ID:          id,
		Owner:       m["owner"],
		OwnerURL:    ownerURL,
		Identity:    m["identity"],
		Initialized: m["init"] == "1",
		Movable:     m["movable"] == "1",
	}
	rec.Revision = m["rev"]
	if cl := m["client"]; cl != "" && cl != "null" {
		rec.Client = json.RawMessage(cl)
	}
	if subs := m["subs"]; subs != "" && subs != "[]" {
		if err := json.Unmarshal([]byte(subs), &rec.Subscriptions); err != nil {
			return nil, fmt.Errorf("mcpredis: load: subscriptions: %w", err)
		}
	}
	if st := m["state"]; st != "" {
		rec.State = []byte(st)
	}
	rec.LogLevel = m["level"]
	rec.Seq, _ = strconv.ParseInt(m["seq"], 10, 64)
	return rec, nil
}

// Touch implements cluster.Cluster.
func (c *Cluster) Touch(ctx context.Context, id string, ttl time.Duration) error {
	n, err := touchScript.Run(ctx, c.rdb, nil, c.opts.Prefix, id, ttl.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("mcpredis: touch: %w", err)
	}
	if n == 0 {
		return cluster.ErrSessionUnknown
	}
	return nil
}

// Claim implements cluster.Cluster.
func (c *Cluster) Claim(ctx context.Context, id, from string) (bool, error) {
	n, err := claimScript.Run(ctx, c.rdb, nil, c.opts.Prefix, id, from, c.self.ID).Int()
	if err != nil {
		return false, fmt.Errorf("mcpredis: claim: %w", err)
	}
	if n < 0 {
		return false, cluster.ErrSessionUnknown
	}
	return n == 1, nil
}

// Release implements cluster.Cluster: the ids go to Redis in pipelined
// batches, each bounded by ctx.
func (c *Cluster) Release(ctx context.Context, ids ...string) error {
	calls := make([]call, len(ids))
	for i, id := range ids {
		calls[i] = call{args: []any{c.opts.Prefix, id, c.self.ID}}
	}
	var failed error
	err := c.evalAll(ctx, releaseScript, calls, func(_ int, cmd *redis.Cmd) {
		if failed == nil && cmd.Err() != nil {
			failed = cmd.Err()
		}
	})
	if err == nil {
		err = failed
	}
	if err != nil {
		return fmt.Errorf("mcpredis: release: %w", err)
	}
	return nil
}

// End implements cluster.Cluster.
func (c *Cluster) End(ctx context.Context, id string) error {
	if err := endScript.Run(ctx, c.rdb, nil, c.opts.Prefix, id).Err(); err != nil {
		return fmt.Errorf("mcpredis: end: %w", err)
	}
	return nil
}

// Locate implements cluster.Cluster. A replica Redis does not know is
// gone, except while Redis has just restarted empty: then it may be alive
// and not have beaten since, and Locate returns ErrRecovering, so that
// its sessions are not taken from it (the endpoint answers 503 with
// Retry-After until it has beaten).
func (c *Cluster) Locate(ctx context.Context, replica string) (string, error) {
	v, err := locateScript.Run(ctx, c.rdb, nil, c.key("r:", replica), c.opts.Prefix).Slice()
	if err != nil {
		return "", fmt.Errorf("mcpredis: locate: %w", err)
	}
	if len(v) != 3 {
		return "", fmt.Errorf("mcpredis: locate: %d values from the script", len(v))
	}
	if url, _ := v[0].(string); url != "" {
		return url, nil
	}
	fresh, _ := v[1].(int64)
	gen, _ := v[2].(int64)
	if fresh == 1 || gen == 0 {
		return "", ErrRecovering
	}
	return "", cluster.ErrReplicaGone
}

// Append implements cluster.Cluster.
func (c *Cluster) Append(ctx context.Context, id string, data []byte) (int64, error) {
	n, err := appendScript.Run(ctx, c.rdb, nil, c.opts.Prefix, id, data, c.opts.MaxEvents).Int64()
	if err != nil {
		return 0, fmt.Errorf("mcpredis: append: %w", err)
	}
	if n < 0 {
		return 0, cluster.ErrSessionUnknown
	}
	return n, nil
}

// Events implements cluster.Cluster.
func (c *Cluster) Events(ctx context.Context, id string, after int64) ([]cluster.Event, error) {
	msgs, err := c.rdb.XRange(ctx, c.key("e:", id), "("+strconv.FormatInt(after, 10)+"-0", "+").Result()
	if err != nil {
		return nil, fmt.Errorf("mcpredis: events: %w", err)
	}
	out := make([]cluster.Event, 0, len(msgs))
	for _, m := range msgs {
		seq, _, _ := strings.Cut(m.ID, "-")
		n, err := strconv.ParseInt(seq, 10, 64)
		if err != nil {
			continue
		}
		d, _ := m.Values["d"].(string)
		out = append(out, cluster.Event{Seq: n, Data: []byte(d)})
	}
	return out, nil
}

// Announce implements cluster.Cluster: the change is queued for a background
// goroutine, which runs it on Redis in order. A queue that is full (Redis
// far behind) drops it, logged.
func (c *Cluster) Announce(ch cluster.Change, data []byte) {
	select {
	case c.announce <- announcement{c: ch, data: data}:
	default:
		c.log.Error("mcpredis: announcement queue full; a change notification is lost",
			slog.String("notification", ch.Notification), slog.String("uri", ch.URI))
	}
}

func (c *Cluster) announcer(ctx context.Context) {
	defer c.done.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case a := <-c.announce:
			uri := a.c.URI
			for attempt := 0; ; attempt++ {
				rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				err := announceScript.Run(rctx, c.rdb, nil, c.opts.Prefix, uri, a.data, c.opts.MaxEvents,
					c.self.ID, a.c.Notification).Err()
				cancel()
				if err == nil {
					break
				}
				if attempt == 2 || ctx.Err() != nil {
					c.log.Error("mcpredis: a change could not be announced", slog.Any("err", err))
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
}

// Watch implements cluster.Cluster.
func (c *Cluster) Watch(fn func(cluster.Notice)) (stop func()) {
	c.mu.Lock()
	id := c.nextW
	c.nextW++
	c.watchers[id] = fn
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.watchers, id)
		c.mu.Unlock()
	}
}

func (c *Cluster) notify(n cluster.Notice) {
	c.mu.Lock()
	fns := make([]func(cluster.Notice), 0, len(c.watchers))
	for _, fn := range c.watchers {
		fns = append(fns, fn)
	}
	c.mu.Unlock()
	for _, fn := range fns {
		fn(n)
	}
}

// listen turns bus messages into notices. go-redis resubscribes by
// itself when the connection drops; what was published meanwhile is
// lost, which the endpoint makes up for by reading the log when it sees
// a gap and before each GET stream attaches.
func (c *Cluster) listen(ctx context.Context, ps *redis.PubSub) {
	defer c.done.Done()
	defer ps.Close()
	ch := ps.Channel(redis.WithChannelSize(4096))
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			if n, ok := c.parse(m.Payload); ok {
				c.notify(n)
			}
		}
	}
}

// parse reads one bus message, and says whether it concerns this
// replica.
func (c *Cluster) parse(p string) (cluster.Notice, bool) {
	kind, rest, _ := strings.Cut(p, " ")
	switch kind {
	case "e":
		id, rest, _ := strings.Cut(rest, " ")
		seq, data, _ := strings.Cut(rest, " ")
		n, err := strconv.ParseInt(seq, 10, 64)
		if err != nil {
			return cluster.Notice{}, false
		}
		return cluster.Notice{Kind: cluster.NoticeEvent, Session: id, Seq: n, Data: []byte(data)}, true
	case "c":
		parts := strings.SplitN(rest, " ", 3)
		if len(parts) != 3 || parts[0] == c.self.ID {
			return cluster.Notice{}, false
		}
		return cluster.Notice{Kind: cluster.NoticeChange, Change: cluster.Change{Notification: parts[1], URI: parts[2]}}, true
	case "m":
		parts := strings.SplitN(rest, " ", 3)
		if len(parts) != 3 || parts[1] != c.self.ID {
			return cluster.Notice{}, false
		}
		return cluster.Notice{Kind: cluster.NoticeMoved, Session: parts[0]}, true
	}
	return cluster.Notice{}, false
}

// heartbeat beats every Options.Heartbeat. A beat that finds this
// replica's key gone (Redis restarted empty, or this process stalled
// past ReplicaTTL) tells the endpoints to record their sessions again.
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
		known, err := c.beat(ctx)
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
		if !known {
			c.notify(cluster.Notice{Kind: cluster.NoticeReset})
		}
	}
}

func (c *Cluster) beat(ctx context.Context) (known bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Heartbeat)
	defer cancel()
	start := time.Now()
	n, err := beatScript.Run(ctx, c.rdb, nil, c.key("r:", c.self.ID), c.self.URL, c.opts.ReplicaTTL.Milliseconds(),
		c.opts.Prefix, c.grace().Milliseconds(), flag(c.beaten.Load())).Int()
	if err == nil {
		c.beaten.Store(true)
		c.lastBeat.Store(start.UnixNano())
	}
	return n == 1, err
}

// grace is how long after Redis lost its data a session it does not know
// is answered "try again" rather than "not found": every replica beats
// within a heartbeat and then records its sessions again.
func (c *Cluster) grace() time.Duration { return c.opts.ReplicaTTL + 2*c.opts.Heartbeat }

// ErrRecovering is returned while Redis has just restarted empty, by Load
// for a session Redis does not know (its owner has probably not recorded
// it again yet) and by Locate for a replica Redis does not know (it has
// probably not beaten since). The endpoint answers 503 with Retry-After,
// not 404, which would make the client start over, and takes no session
// from a replica that may be alive.
var ErrRecovering = errors.New("mcpredis: Redis restarted empty moments ago; sessions are being recorded again")

var _ cluster.Cluster = (*Cluster)(nil)
