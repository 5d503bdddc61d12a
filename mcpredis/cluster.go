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
// It works alike on one Redis server, a primary with replicas (through
// Sentinel), and a Redis Cluster (NewClient with every node's address:
// "redis://10.0.0.1:6379?addr=10.0.0.2:6379&addr=10.0.0.3:6379"), and on
// Valkey: every key of a session shares the session's hash slot, the keys
// the replicas share another, and no command spans two slots.
//
// # What Redis holds
//
// Each session's record (revision, client capabilities, identity, log
// level, subscriptions, the handler's state when it is an
// mcp.StateCodec) and the log of its GET stream (its last
// Options.MaxEvents events: a registry change as its number, a message of
// the session's own as itself), both kept for as long as the session
// lives; the live replicas with their relay URLs (each beats every
// Options.Heartbeat and is gone after Options.ReplicaTTL without one); the
// last Options.MaxChanges registry changes, each stored once. It does not
// hold calls in flight, their response streams, server→client requests
// waiting for an answer: these live on the session's owner, where every
// request of the session is relayed, and die with it (see
// cluster.Cluster).
//
// # How a change travels
//
// A replica whose handler changes (a list, a resource) announces it: the
// change waits Options.ChangeWindow in Redis for others of its kind (the
// same notification and URI, from this replica or any other), then one
// numbered notice goes to every replica on one channel (sharded pub/sub
// on Redis 7 and later), and each replica appends it to the GET streams
// of the sessions it runs that it concerns, in its own memory. Their logs
// in Redis get its number (a few bytes), written in pipelined batches. A
// replica that missed notices (its subscription dropped, or Redis was
// away) reads them from the change log when it reconnects, and at least
// every Heartbeat, so that no session waits for a later change to hear an
// earlier one. Announcing never blocks and never drops: a change waiting
// for Redis is sent when Redis answers, and changes of one kind waiting
// together make one.
//
// Events of one session never travel between replicas: its owner makes
// them and logs them. A replica that loses a session to another hears it
// on a channel of its own; if that notice is lost, its next write for
// the session is refused and tells it.
//
// # When Redis loses its data
//
// Redis keeps nothing on disk on our machines, and this package does not
// need it to. When Redis restarts empty, every replica finds out at its
// next heartbeat and records its live sessions again, in pipelined
// batches, with their GET streams' sequence numbers (event ids never
// repeat; the events logged before the loss are lost for a replica that
// takes a session over later); then it says so in the registry. Until
// every live replica has (and for at least ReplicaTTL, in which a live
// replica must have beaten), a request for a session Redis does not know
// gets 503 with Retry-After, not 404. While Redis is down, requests that
// need it fail at once with 503 and Retry-After; sessions keep serving
// requests that land on their owner, and their changes wait.
//
// # When a Redis Cluster master fails
//
// Its replica takes its slots over within the cluster's node timeout;
// meanwhile requests that need those slots get 503 with Retry-After, and
// afterwards every session it held goes on. Redis replicates
// asynchronously, so what the master took in its last moments may be
// missing on its replica: a session created then is unknown afterwards
// (404: its client initializes again), a save or a logged event then is
// lost. When the failed master holds the slot of {c} (the registry and the
// changes), heartbeats fail for the failover's duration: a replica that
// has not beaten since by the time another asks for one of its sessions
// may have that session taken over (it moves; it is not lost).
//
// # Capacity
//
// Measured with make -C bench cluster on two shared cores
// (bench/RESULTS-cluster.md, which projects the figures further with a
// model whose inputs it measures):
//
//   - Per session, in Redis: a record of about 250–300 bytes (more with a
//     large client capabilities object or handler state). Once its client
//     opened the GET stream, a log: a change costs it 4–5 bytes (a full
//     log of MaxEvents changes, about 520 bytes), a message of the
//     session's own is kept whole.
//   - Per session, on its owner: about 1 KiB of heap when idle (a change's
//     message is shared by every session that hears it); no goroutine.
//   - Per change: on the shard of {c}, three short scripts and one message
//     to each replica; on each replica about a microsecond of CPU for each
//     session it runs that the change concerns; in Redis, one log script
//     (10–35 µs) for each such session with a GET stream, in pipelined
//     batches of 64 (1–2 ms of Redis time each), spread over the shards
//     by session. No Redis call grows with the number of sessions: at
//     100,000 sessions over three replicas, the last of 1,000 open
//     streams heard a list change about 160 ms after it was made (100 ms
//     of which is ChangeWindow), and no Redis call took longer than a log
//     batch.
//   - Per replica: a heartbeat a second (a script on {c} that reads the
//     registry, which grows with the number of replicas), a pub/sub
//     connection, a read of the change log a second when idle.
//   - A million sessions over fifty replicas and six Redis shards: about
//     270 MB of Redis for the records, plus about 500 bytes per session
//     with a full log (760 MB if every session has one); 20,000 sessions
//     and some 22 MB of heap per replica. A list change costs each replica
//     about 17 ms of CPU and reaches its last stream about 150 ms after it
//     is made; Redis about 10 µs per session with a GET stream: some 9 s
//     of CPU over the shards if every session has one, in batches of a few
//     milliseconds. A resource update costs that per subscribed session.
//     At that scale list changes are best rare, and ChangeWindow makes the
//     changes of one kind made close together (a deploy that registers a
//     tool on every replica) one notice.
//
// Pitfalls: the URL must reach this replica's endpoint from the other
// replicas (not through the load balancer); every replica must serve the
// same tools, resources and prompts; all replicas must share
// Options.Prefix and the keys that seal cursors and requestState
// (SharedKey, for mcp.ServerOptions.Keys); Redis must not evict keys
// (maxmemory-policy noeviction, or a volatile-* policy, since every key
// of a live session has a lifetime).
package mcpredis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
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
	// Prefix starts every key and channel; default "saguaro:". Replicas
	// of one service share it; services sharing a Redis must not. It must
	// not contain '{' or '}', which Redis Cluster reads as a hash tag.
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
	// MaxChanges bounds the log of registry changes, which a replica
	// that missed notices catches up from and which sessions' logs refer
	// to; default 10,000.
	MaxChanges int
	// ChangeWindow is how long a registry change waits for others of its
	// kind (the same notification and URI) before its notice goes out,
	// on any replica: changes registered on every replica at once, or a
	// burst of updates of one resource, make one notice. Default 100ms;
	// negative for none (the notice goes out at once, and each replica's
	// change makes its own).
	ChangeWindow time.Duration
	// Logger receives Redis trouble; default slog.Default().
	Logger *slog.Logger
}

// Cluster is a [cluster.Cluster] on Redis. Make one per process with [New];
// it is safe for concurrent use. Close it when the server stops.
type Cluster struct {
	rdb     redis.UniversalClient
	opts    Options
	self    cluster.Replica
	log     *slog.Logger
	cancel  context.CancelFunc
	done    sync.WaitGroup
	sharded bool // the server has sharded pub/sub (Redis 7)
	ps      *redis.PubSub

	// lastBeat is when the last successful beat started (Unix ns), and
	// beatErr why the last beat failed (nil when it succeeded), for
	// Healthy.
	lastBeat atomic.Int64
	beatErr  atomic.Pointer[error]

	mu       sync.Mutex
	watchers map[int]func(cluster.Notice)
	nextW    int

	reg   registry
	feed  feed
	ann   announcer
	store persister
}

// ErrNoURL is returned by [New] when Options.URL is empty.
var ErrNoURL = errors.New("mcpredis: Options.URL is required")

// ErrPrefix is returned by [New] when Options.Prefix holds a brace.
var ErrPrefix = errors.New("mcpredis: Options.Prefix must not contain '{' or '}'")

// NewClient returns a go-redis client for url tuned to fail fast when
// Redis is down (short dial, read and write timeouts, one retry), which
// is what the endpoint needs to answer 503 at once rather than hang.
//
// url is "redis://[user:password@]host:port[/db]" for one server, or
// names every node of a Redis Cluster with addr parameters:
// "redis://host1:port1?addr=host2:port2&addr=host3:port3" (go-redis's
// cluster URL form: redis.ParseClusterURL). Pitfall: the address of one
// node of a cluster without addr parameters makes a client of that node
// alone, which New refuses.
func NewClient(url string) (redis.UniversalClient, error) {
	if isClusterURL(url) {
		o, err := redis.ParseClusterURL(url)
		if err != nil {
			return nil, fmt.Errorf("mcpredis: %w", err)
		}
		o.DialTimeout = 500 * time.Millisecond
		o.ReadTimeout = time.Second
		o.WriteTimeout = time.Second
		o.PoolTimeout = time.Second
		o.MaxRetries = 1
		return redis.NewClusterClient(o), nil
	}
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

// isClusterURL reports whether u names more nodes with addr parameters.
func isClusterURL(u string) bool {
	p, err := url.Parse(u)
	return err == nil && p.Query().Has("addr")
}

// New joins this replica to the cluster: it checks that Redis answers,
// beats once, and starts beating, listening to the bus and writing logs
// in the background until Close. rdb stays the caller's (Close does not
// close it).
func New(ctx context.Context, rdb redis.UniversalClient, opts *Options) (*Cluster, error) {
	return newCluster(ctx, rdb, opts, nil)
}

// newCluster is New; sharded, when set, says whether to use sharded
// pub/sub instead of asking the server's version (the tests of the
// plain pub/sub that Redis before 7 needs).
func newCluster(ctx context.Context, rdb redis.UniversalClient, opts *Options, sharded *bool) (*Cluster, error) {
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
	if strings.ContainsAny(o.Prefix, "{}") {
		return nil, ErrPrefix
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
	if o.MaxChanges <= 0 {
		o.MaxChanges = 10_000
	}
	switch {
	case o.ChangeWindow == 0:
		o.ChangeWindow = 100 * time.Millisecond
	case o.ChangeWindow < 0:
		o.ChangeWindow = 0
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
	}
	c.ann.init()
	c.store.init()
	if _, err := c.beat(ctx); err != nil {
		return nil, fmt.Errorf("mcpredis: %w", misdirected(err))
	}
	if sharded != nil {
		c.sharded = *sharded
	} else {
		var err error
		if c.sharded, err = hasShardedPubSub(ctx, rdb); err != nil {
			return nil, fmt.Errorf("mcpredis: %w", err)
		}
	}
	// Subscribe, and find where the change log ends, before New returns,
	// so that no change announced after it is missed.
	if err := c.subscribe(ctx); err != nil {
		return nil, fmt.Errorf("mcpredis: subscribe: %w", err)
	}
	if err := c.feed.start(ctx, c); err != nil {
		_ = c.ps.Close()
		return nil, fmt.Errorf("mcpredis: change log: %w", err)
	}
	run, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.done.Add(4)
	go c.heartbeat(run)
	go c.listen(run)
	go c.announcer(run)
	go c.persist(run)
	return c, nil
}

// misdirected explains the error of a client of one node of a Redis
// Cluster.
func misdirected(err error) error {
	if err != nil && strings.HasPrefix(err.Error(), "MOVED ") {
		return fmt.Errorf("%w (Redis is a cluster: give NewClient every node, as redis://host1:port1?addr=host2:port2&addr=…)", err)
	}
	return err
}

// fail passes err on, after asking a Redis Cluster client to read the
// cluster's layout again when err is not an answer of Redis (a node went
// away: after a failover its slots are served by another, which the
// client would otherwise learn only at its next periodic refresh).
func (c *Cluster) fail(err error) error {
	if err == nil || isReplyError(err) || errors.Is(err, context.Canceled) {
		return err
	}
	if cc, ok := c.rdb.(*redis.ClusterClient); ok {
		cc.ReloadState(context.Background())
	}
	return err
}

// hasShardedPubSub reports whether the server speaks Redis 7's sharded
// pub/sub (SPUBLISH, SSUBSCRIBE), from the version INFO gives (Valkey
// gives the Redis version it matches).
func hasShardedPubSub(ctx context.Context, rdb redis.UniversalClient) (bool, error) {
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return false, fmt.Errorf("server version: %w", err)
	}
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			major, _, _ := strings.Cut(v, ".")
			n, err := strconv.Atoi(major)
			return err == nil && n >= 7, nil
		}
	}
	return false, nil
}

// Close stops beating and listening, writes what is left of the logs
// (for up to a second), and removes this replica from the live set, so
// that the others take its sessions over at once. It does not end the
// sessions (mcp.Endpoint.Shutdown releases them).
func (c *Cluster) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	flush, cancelFlush := context.WithTimeout(ctx, time.Second)
	c.store.flush(flush)
	cancelFlush()
	c.cancel()
	_ = c.ps.Close()
	c.done.Wait()
	return c.rdb.HDel(ctx, c.shared("reg"), c.self.ID).Err()
}

// Self implements cluster.Cluster.
func (c *Cluster) Self() cluster.Replica { return c.self }

// recKey and logKey are a session's keys, in its hash slot.
func (c *Cluster) recKey(id string) string { return c.opts.Prefix + "s{" + id + "}" }
func (c *Cluster) logKey(id string) string { return c.opts.Prefix + "e{" + id + "}" }

// shared is a key the replicas share, in the slot of tag {c}.
func (c *Cluster) shared(name string) string { return c.opts.Prefix + "{c}:" + name }

// validID reports whether id can name a session's keys: a session id
// this package did not make, or that holds a brace (which would move a
// key to another slot), is unknown.
func validID(id string) bool { return id != "" && !strings.ContainsAny(id, "{}") }

// SharedKey returns the secret named name, size bytes, that every
// replica sharing this Redis and prefix gets: the first to ask creates it
// at random. Use it for the keys that seal pagination cursors and
// requestState (mcp.ServerOptions.Keys), which must be the same on every
// replica. Pitfall: Redis that keeps nothing on disk forgets it when it
// restarts, and a replica started after that gets a new one; in
// production pass keys from your secret store instead.
func (c *Cluster) SharedKey(ctx context.Context, name string, size int) ([]byte, error) {
	b := make([]byte, size)
	_, _ = rand.Read(b)
	k := c.shared("k:" + name)
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
	if !validID(rec.ID) {
		return fmt.Errorf("mcpredis: %s: session id %q: %w", mode, rec.ID, cluster.ErrSessionUnknown)
	}
	cl := c.saveCall(mode, rec, ttl)
	n, err := saveScript.Run(ctx, c.rdb, cl.keys, cl.args...).Int()
	switch {
	case err != nil:
		return fmt.Errorf("mcpredis: %s: %w", mode, c.fail(err))
	case n == 0:
		return cluster.ErrSessionUnknown
	case n == -2:
		return cluster.ErrSessionMoved
	}
	return nil
}

// saveCall is the saveScript call that records rec.
func (c *Cluster) saveCall(mode string, rec *cluster.Record, ttl time.Duration) call {
	client := []byte("null")
	if len(rec.Client) > 0 {
		client = rec.Client
	}
	subs := []byte("[]")
	if len(rec.Subscriptions) > 0 {
		subs, _ = json.Marshal(rec.Subscriptions)
	}
	return call{keys: []string{c.recKey(rec.ID), c.logKey(rec.ID)}, args: []any{mode, c.self.ID, ttl.Milliseconds(),
		rec.Identity, rec.Revision, client, rec.LogLevel, flag(rec.Initialized), subs,
		rec.State, flag(rec.Movable), rec.Seq}}
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// Load implements cluster.Cluster. The owner's URL comes from this
// replica's view of the registry, which each heartbeat refreshes: one
// round trip for what a relay needs.
func (c *Cluster) Load(ctx context.Context, id string) (*cluster.Record, error) {
	if !validID(id) {
		return nil, cluster.ErrSessionUnknown
	}
	m, err := c.rdb.HGetAll(ctx, c.recKey(id)).Result()
	if err != nil {
		return nil, fmt.Errorf("mcpredis: load: %w", misdirected(c.fail(err)))
	}
	if m["rev"] == "" {
		// Unknown, or not recorded again yet after Redis lost it.
		rec, err := c.recovering(ctx)
		if err != nil {
			return nil, fmt.Errorf("mcpredis: load: %w", c.fail(err))
		}
		if rec {
			return nil, ErrRecovering
		}
		return nil, cluster.ErrSessionUnknown
	}
	rec := &cluster.Record{
		ID:          id,
		Owner:       m["owner"],
		Identity:    m["identity"],
		Initialized: m["init"] == "1",
		Movable:     m["movable"] == "1",
		Revision:    m["rev"],
		LogLevel:    m["level"],
	}
	if rec.Owner != "" {
		rec.OwnerURL = c.reg.url(rec.Owner)
	}
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
	seq, _ := strconv.ParseInt(m["seq"], 10, 64)
	lseq, _ := strconv.ParseInt(m["lseq"], 10, 64)
	rec.Seq = max(seq, lseq)
	return rec, nil
}

// Touch implements cluster.Cluster.
func (c *Cluster) Touch(ctx context.Context, id string, ttl time.Duration) error {
	if !validID(id) {
		return cluster.ErrSessionUnknown
	}
	n, err := touchScript.Run(ctx, c.rdb, []string{c.recKey(id), c.logKey(id)}, ttl.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("mcpredis: touch: %w", c.fail(err))
	}
	if n == 0 {
		return cluster.ErrSessionUnknown
	}
	return nil
}

// Claim implements cluster.Cluster. The replica that lost the session
// hears it on its channel.
func (c *Cluster) Claim(ctx context.Context, id, from string) (bool, error) {
	if !validID(id) {
		return false, cluster.ErrSessionUnknown
	}
	n, err := claimScript.Run(ctx, c.rdb, []string{c.recKey(id)}, from, c.self.ID).Int()
	if err != nil {
		return false, fmt.Errorf("mcpredis: claim: %w", c.fail(err))
	}
	if n < 0 {
		return false, cluster.ErrSessionUnknown
	}
	if n == 1 && from != "" && from != c.self.ID {
		// Lost, the old owner finds out at its next write for the
		// session, which Redis refuses.
		_ = c.publish(ctx, c.replicaChannel(from), "m "+id)
	}
	return n == 1, nil
}

// Release implements cluster.Cluster: the logs this replica has still
// to write go first (within ctx), then the ids, in pipelined batches,
// each bounded by ctx.
func (c *Cluster) Release(ctx context.Context, ids ...string) error {
	c.store.flush(ctx)
	calls := make([]call, 0, len(ids))
	for _, id := range ids {
		if validID(id) {
			calls = append(calls, call{keys: []string{c.recKey(id)}, args: []any{c.self.ID}})
		}
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
	if !validID(id) {
		return nil
	}
	if err := c.rdb.Del(ctx, c.recKey(id), c.logKey(id)).Err(); err != nil {
		return fmt.Errorf("mcpredis: end: %w", c.fail(err))
	}
	return nil
}

// Recover implements cluster.Cluster: the records go in pipelined
// batches, then this replica's entry in the registry says it recorded
// its sessions in the store's present epoch.
func (c *Cluster) Recover(ctx context.Context, recs []*cluster.Record, ttl time.Duration) (moved []string, err error) {
	c.reg.recovering.Store(true)
	defer c.reg.recovering.Store(false)
	epoch := c.reg.epochNow()
	calls := make([]call, 0, len(recs))
	ids := make([]string, 0, len(recs))
	for _, rec := range recs {
		if validID(rec.ID) {
			calls = append(calls, c.saveCall("create", rec, ttl))
			ids = append(ids, rec.ID)
		}
	}
	var failed error
	err = c.evalAll(ctx, saveScript, calls, func(i int, cmd *redis.Cmd) {
		n, err := cmd.Int()
		switch {
		case err != nil:
			if failed == nil {
				failed = err
			}
		case n == -2:
			moved = append(moved, ids[i])
		}
	})
	if err == nil {
		err = failed
	}
	if err != nil {
		return moved, fmt.Errorf("mcpredis: recover: %w", err)
	}
	c.reg.recorded(epoch)
	if _, err := c.beat(ctx); err != nil {
		return moved, fmt.Errorf("mcpredis: recover: %w", err)
	}
	return moved, nil
}

// Locate implements cluster.Cluster. A replica this replica saw beat at
// its last heartbeat is found without a round trip; any other is looked
// up in Redis, which is the only one to call it gone. While Redis
// records its sessions again after a loss, a replica it does not know
// may be alive and not have beaten since: Locate returns ErrRecovering
// then, so that its sessions are not taken from it (the endpoint
// answers 503 with Retry-After until it has beaten).
func (c *Cluster) Locate(ctx context.Context, replica string) (string, error) {
	if url := c.reg.url(replica); url != "" {
		return url, nil
	}
	v, err := locateScript.Run(ctx, c.rdb, c.regKeys(), replica, c.opts.ReplicaTTL.Milliseconds()).Slice()
	if err != nil {
		return "", fmt.Errorf("mcpredis: locate: %w", c.fail(err))
	}
	if len(v) != 2 {
		return "", fmt.Errorf("mcpredis: locate: %d values from the script", len(v))
	}
	if url, _ := v[0].(string); url != "" {
		return url, nil
	}
	if rec, _ := v[1].(int64); rec == 1 {
		return "", ErrRecovering
	}
	return "", cluster.ErrReplicaGone
}

// regKeys are the registry's keys, as the scripts that read it take
// them.
func (c *Cluster) regKeys() []string {
	return []string{c.shared("gen"), c.shared("reg"), c.shared("recov")}
}

// recovering asks Redis whether it is recording its sessions again after
// a loss.
func (c *Cluster) recovering(ctx context.Context) (bool, error) {
	n, err := recoveringScript.Run(ctx, c.rdb, c.regKeys(), c.opts.ReplicaTTL.Milliseconds()).Int()
	return n == 1, err
}

// ErrRecovering is returned while Redis records its sessions again after
// it lost them, by Load for a session Redis does not know (its owner has
// probably not recorded it again yet) and by Locate for a replica Redis
// does not know (it has probably not beaten since). The endpoint answers
// 503 with Retry-After, not 404, which would make the client start over,
// and takes no session from a replica that may be alive.
var ErrRecovering = errors.New("mcpredis: Redis lost its data moments ago; sessions are being recorded again")

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

// notify tells every watcher of n; it reports whether there was one.
func (c *Cluster) notify(n cluster.Notice) bool {
	c.mu.Lock()
	fns := make([]func(cluster.Notice), 0, len(c.watchers))
	for _, fn := range c.watchers {
		fns = append(fns, fn)
	}
	c.mu.Unlock()
	for _, fn := range fns {
		fn(n)
	}
	return len(fns) > 0
}

var _ cluster.Cluster = (*Cluster)(nil)
