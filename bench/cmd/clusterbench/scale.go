package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/saguaro-go/saguaro/sse"

	"github.com/saguaro-go/saguaro/bench/internal/mcpconn"
)

// The cluster at scale: for each number of sessions, replicas on a Redis
// of their own (a throwaway server, so that its memory and CPU are the
// run's alone), sessions spread over them, a thousand of them with an
// open GET stream and a subscription; then registry changes, timed to
// the last stream that hears them, while a concurrent PING measures how
// long Redis keeps other clients waiting.

// The routes and the resource of servers/saguarocluster.
const (
	announcePath = "/announce"
	noticesPath  = "/notices"
	scaleURI     = "bench://scale"
)

// scaleResult is what one number of sessions measured.
type scaleResult struct {
	Sessions, Replicas, Streams int
	Create                      time.Duration // opening the sessions
	// MemRecord is Redis's memory per session with an empty log (its
	// record): INFO used_memory's growth over the sessions, and MEMORY
	// USAGE of sampled records (MemRecordKey).
	MemRecord, MemRecordKey float64
	// HeapPerSession is the replicas' live heap per session they run,
	// right after the sessions opened.
	HeapPerSession float64
	// PingIdle is the worst PING wait over as long as a round, with no
	// change under way.
	PingIdle time.Duration
	// Preempted is the longest a trivial script ("return 1", a microsecond
	// of work) took by Redis's clock, over a second of them in pipelines
	// as long as the log's: the scheduler's share of any command's time
	// on this machine.
	Preempted time.Duration
	Rounds    []announceRound
	// Dedup: a change made on every replica at once.
	Dedup dedupResult
	Burst burstResult
	// NoticesPerChange is, per replica, the notices it heard per change
	// sent; PublishesPerChange Redis's PUBLISH and SPUBLISH calls per
	// change.
	NoticesPerChange   []float64
	PublishesPerChange float64
	// ScriptMean is the mean time of a script call by Redis's clock
	// (INFO commandstats, evalsha), at the end: mostly log appends.
	ScriptMean time.Duration
	Fail       []string
}

// announceRound is one list change, made on one replica.
type announceRound struct {
	Last, Median time.Duration // from the request to the last (median) stream's notification
	Missed       int           // streams that did not hear it within scaleWait
	WorstPing    time.Duration
	// IdlePing is the worst PING in a window as long as WorstPing's, just
	// before the change, with nothing under way: on a loaded machine, the
	// part of a wait that is the scheduler's, not Redis's.
	IdlePing time.Duration
	// Slowest is the longest command Redis ran in the round, by its own
	// clock (SLOWLOG), and SlowestName what it was.
	Slowest     time.Duration
	SlowestName string
	// IdleSlowest is the longest command of the idle window before.
	IdleSlowest time.Duration
	RedisCPU    time.Duration
	ReplicaCPU  time.Duration // summed over the replicas
}

type dedupResult struct {
	Heard, Twice, Missed int // streams that heard the change once, more than once, never
}

type burstResult struct {
	Updates   int           // made, over every replica
	Took      time.Duration // making them
	Published int64         // notices the cluster sent
	Settled   time.Duration // from the first update to the last notification
	MinHeard  int           // the fewest notifications a stream heard
	MaxHeard  int
	WorstPing time.Duration
}

// scaleWait bounds how long a round waits for every stream.
const scaleWait = 30 * time.Second

// burstEvery spaces a replica's updates in the burst: about a second for
// 10,000 of them, so that the coalesced notices are many, not one.
const burstEvery = 100 * time.Microsecond

// runScale measures each number of sessions in turn, on a throwaway
// Redis each, and returns what it found.
func runScale(o *options, bin, prefix string) []*scaleResult {
	var out []*scaleResult
	for _, n := range o.scaleSessions {
		log.Printf("scale: %d sessions over %d replicas", n, o.scaleReplicas)
		r := &scaleResult{Sessions: n, Replicas: o.scaleReplicas, Streams: min(o.scaleStreams, n)}
		if err := measureScale(o, bin, prefix+"scale-"+strconv.Itoa(n)+":", r); err != nil {
			r.Fail = append(r.Fail, err.Error())
			log.Printf("scale %d: %v", n, err)
		}
		out = append(out, r)
	}
	return out
}

// scaleCluster is the processes and Redis of one measurement.
type scaleCluster struct {
	rs       *redisSrv
	prefix   string
	replicas []*child
	eps      []*mcpconn.Endpoint
}

func (c *scaleCluster) close() {
	for _, p := range c.replicas {
		p.Stop()
	}
	c.rs.Close()
}

// startScaleCluster starts a throwaway Redis and n replicas on it, with
// extra arguments for each.
func startScaleCluster(o *options, bin, prefix, name string, n int, extra ...string) (*scaleCluster, error) {
	dir := filepath.Join(o.logDir, name)
	rs, err := startRedis(filepath.Join(dir, "redis"))
	if err != nil {
		return nil, err
	}
	c := &scaleCluster{rs: rs, prefix: prefix}
	for i := range n {
		args := append([]string{"-redis", rs.URL, "-prefix", prefix, "-idle-timeout", "1h", "-max-lifetime", "2h"}, extra...)
		p, err := startReplica(dir, fmt.Sprintf("%s-%c", name, 'A'+i), bin, args...)
		if err != nil {
			c.close()
			return nil, err
		}
		c.replicas = append(c.replicas, p)
		ep, err := newEndpoint(p.Ready.MCPURL)
		if err != nil {
			c.close()
			return nil, err
		}
		c.eps = append(c.eps, ep)
	}
	return c, nil
}

// session is one session of a measurement: its id and its owner.
type session struct {
	id    string
	owner int
}

// openSessions initializes n sessions, the i-th on replica i mod
// replicas, with 32 keep-alive connections.
func (c *scaleCluster) openSessions(n int) ([]session, error) {
	out := make([]session, n)
	err := c.eachOnReplicas(32, n, func(w, i int, conn func(r int) (*mcpconn.Conn, error)) error {
		r := i % len(c.eps)
		cn, err := conn(r)
		if err != nil {
			return err
		}
		if err := cn.Initialize(int64(w)<<32|int64(i), true); err != nil {
			return fmt.Errorf("initialize: %w", err)
		}
		out[i] = session{id: cn.Session(), owner: r}
		return nil
	})
	return out, err
}

// subscribe subscribes the sessions to scaleURI, each through its owner.
func (c *scaleCluster) subscribe(ss []session) error {
	return c.eachOnReplicas(16, len(ss), func(_, i int, conn func(r int) (*mcpconn.Conn, error)) error {
		s := ss[i]
		cn, err := conn(s.owner)
		if err != nil {
			return err
		}
		cn.SetSession(s.id)
		r, _, err := cn.Do(http.MethodPost, []byte(`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"`+scaleURI+`"}}`))
		if err == nil && (r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"result"`)) {
			err = fmt.Errorf("resources/subscribe: %d %s", r.Status, r.Body)
		}
		return err
	})
}

// eachOnReplicas runs do for i in [0, n) on workers goroutines, each with
// its own keep-alive connection to every replica (conn(r), dialled on
// first use). A worker stops at its first error; the first error of all
// is returned.
func (c *scaleCluster) eachOnReplicas(workers, n int, do func(w, i int, conn func(r int) (*mcpconn.Conn, error)) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	for w := range workers {
		wg.Go(func() {
			conns := make([]*mcpconn.Conn, len(c.eps))
			defer func() {
				for _, cn := range conns {
					if cn != nil {
						cn.Close()
					}
				}
			}()
			conn := func(r int) (*mcpconn.Conn, error) {
				if conns[r] == nil {
					cn, err := mcpconn.Dial(c.eps[r], 30*time.Second)
					if err != nil {
						return nil, err
					}
					conns[r] = cn
				}
				return conns[r], nil
			}
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := do(w, i, conn); err != nil {
					mu.Lock()
					failed = cmp.Or(failed, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return failed
}

// follower reads one session's GET stream and notes when each list
// change and each update of scaleURI arrived.
type follower struct {
	mu      sync.Mutex
	lists   []time.Time
	updates []time.Time
	err     error
}

func (f *follower) counts() (lists, updates int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.lists), len(f.updates)
}

// listAt returns when the i-th list change (from 0) arrived.
func (f *follower) listAt(i int) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i < len(f.lists) {
		return f.lists[i], true
	}
	return time.Time{}, false
}

// follow opens the GET streams of the sessions, each on its owner, and
// returns their followers once every stream answered.
func (c *scaleCluster) follow(ctx context.Context, ss []session) ([]*follower, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}
	hc := &http.Client{Transport: tr}
	out := make([]*follower, len(ss))
	errs := make(chan error, len(ss))
	for i, s := range ss {
		f := &follower{}
		out[i] = f
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.replicas[s.owner].Ready.MCPURL, nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", mcpconn.ProtocolVersion)
			req.Header.Set("Mcp-Session-Id", s.id)
			resp, err := hc.Do(req)
			if err == nil && resp.StatusCode != http.StatusOK {
				resp.Body.Close()
				err = fmt.Errorf("GET stream: %d", resp.StatusCode)
			}
			errs <- err
			if err != nil {
				return
			}
			defer resp.Body.Close()
			r := sse.NewReader(resp.Body)
			for {
				ev, err := r.Next()
				if err != nil {
					if ctx.Err() == nil {
						f.mu.Lock()
						f.err = err
						f.mu.Unlock()
					}
					return
				}
				now := time.Now()
				d := string(ev.Data)
				f.mu.Lock()
				switch {
				case strings.Contains(d, "notifications/tools/list_changed"):
					f.lists = append(f.lists, now)
				case strings.Contains(d, "notifications/resources/updated"):
					f.updates = append(f.updates, now)
				}
				f.mu.Unlock()
			}
		}()
	}
	var failed error
	for range ss {
		failed = cmp.Or(failed, <-errs)
	}
	return out, failed
}

// pinger PINGs Redis every millisecond on a connection of its own and
// keeps the worst wait.
type pinger struct {
	worst atomic.Int64
	stop  chan struct{}
	done  chan struct{}
}

func startPinger(rs *redisSrv) *pinger {
	p := &pinger{stop: make(chan struct{}), done: make(chan struct{})}
	o, _ := redis.ParseURL(rs.URL)
	o.PoolSize, o.ReadTimeout = 1, 30*time.Second
	c := redis.NewClient(o)
	go func() {
		defer close(p.done)
		defer c.Close()
		ctx := context.Background()
		for {
			select {
			case <-p.stop:
				return
			default:
			}
			t0 := time.Now()
			_ = c.Ping(ctx).Err()
			if d := int64(time.Since(t0)); d > p.worst.Load() {
				p.worst.Store(d)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	return p
}

func (p *pinger) end() time.Duration {
	close(p.stop)
	<-p.done
	return time.Duration(p.worst.Load())
}

// cpu is the CPU time so far of Redis and of every replica.
func (c *scaleCluster) cpu() (redisNS, replicasNS int64) {
	redisNS, _ = c.rs.cpuNS()
	for _, p := range c.replicas {
		if s, err := p.Probe(false); err == nil {
			replicasNS += s.CPUNS()
		}
	}
	return redisNS, replicasNS
}

// announce asks replica i for n changes of kind, every apart.
func (c *scaleCluster) announce(i int, kind string, n int, every time.Duration) error {
	u, _ := url.Parse(c.replicas[i].Ready.MCPURL)
	u.Path = announcePath
	u.RawQuery = url.Values{"kind": {kind}, "n": {strconv.Itoa(n)}, "every": {every.String()}}.Encode()
	resp, err := http.Post(u.String(), "", nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("%s: %d", announcePath, resp.StatusCode)
	}
	return nil
}

// notices returns how many changes each replica heard.
func (c *scaleCluster) notices() []int64 {
	out := make([]int64, len(c.replicas))
	for i, p := range c.replicas {
		u, _ := url.Parse(p.Ready.MCPURL)
		u.Path = noticesPath
		resp, err := http.Get(u.String())
		if err != nil {
			continue
		}
		var n struct {
			Change int64 `json:"change"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&n)
		resp.Body.Close()
		out[i] = n.Change
	}
	return out
}

// lastChange is the number of the last change the cluster logged.
func (c *scaleCluster) lastChange() int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	top, err := c.rs.rdb.XRevRangeN(ctx, c.prefix+"{c}:log", "+", "-", 1).Result()
	if err != nil || len(top) == 0 {
		return 0
	}
	n, _, _ := strings.Cut(top[0].ID, "-")
	v, _ := strconv.ParseInt(n, 10, 64)
	return v
}

// publishes is how many PUBLISH and SPUBLISH Redis ran, scripts'
// included.
func (c *scaleCluster) publishes() int64 {
	m, err := c.rs.info("commandstats")
	if err != nil {
		return 0
	}
	var n int64
	for _, k := range []string{"cmdstat_publish", "cmdstat_spublish"} {
		calls, _, _ := strings.Cut(strings.TrimPrefix(m[k], "calls="), ",")
		v, _ := strconv.ParseInt(calls, 10, 64)
		n += v
	}
	return n
}

// slowlog empties Redis's slow log, first (init) logging every command
// that takes 200 µs or more. The Redis is the measurement's own.
func (c *scaleCluster) slowlog(init bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if init {
		_ = c.rs.rdb.ConfigSet(ctx, "slowlog-log-slower-than", "200").Err()
		_ = c.rs.rdb.ConfigSet(ctx, "slowlog-max-len", "4096").Err()
	}
	_ = c.rs.rdb.SlowLogReset(ctx).Err()
}

// slowest returns the longest command of the slow log, and its name
// (a script's first key shows which one).
func (c *scaleCluster) slowest() (time.Duration, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	logs, err := c.rs.rdb.SlowLogGet(ctx, -1).Result()
	if err != nil {
		return 0, ""
	}
	var d time.Duration
	name := ""
	for _, l := range logs {
		if l.Duration > d {
			d = l.Duration
			name = strings.Join(l.Args[:min(len(l.Args), 1)], " ")
			if len(l.Args) > 3 && strings.EqualFold(l.Args[0], "evalsha") {
				name = "EVALSHA " + strings.TrimPrefix(l.Args[3], c.prefix)
			}
		}
	}
	return d, name
}

// trivialSlowest runs trivial scripts in pipelines of logBatch for d
// and returns the longest any took by Redis's clock (SLOWLOG).
func (c *scaleCluster) trivialSlowest(d time.Duration) time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), d+10*time.Second)
	defer cancel()
	for end := time.Now().Add(d); time.Now().Before(end); {
		_, _ = c.rs.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for range logBatch {
				p.Eval(ctx, "return 1", nil)
			}
			return nil
		})
	}
	slowest, _ := c.slowest()
	return slowest
}

// heap is the replicas' live heap, summed, after a collection.
func (c *scaleCluster) heap() int64 {
	var n int64
	for _, p := range c.replicas {
		if s, err := p.Probe(true); err == nil {
			n += int64(s.HeapLive)
		}
	}
	return n
}

func (c *scaleCluster) usedMemory() int64 {
	m, err := c.rs.info("memory")
	if err != nil {
		return 0
	}
	v, _ := strconv.ParseInt(m["used_memory"], 10, 64)
	return v
}

// keyMemory is the mean MEMORY USAGE (every element counted) of the keys
// that name gives for some of the sessions; 0 for a missing key.
func (c *scaleCluster) keyMemory(ss []session, name func(id string) string) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	step := max(1, len(ss)/50)
	total, n := int64(0), 0
	for i := 0; i < len(ss); i += step {
		v, err := c.rs.rdb.MemoryUsage(ctx, name(ss[i].id), 0).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			continue
		}
		total += v
		n++
	}
	if n == 0 {
		return 0
	}
	return float64(total) / float64(n)
}

// waitAll waits until every follower's count (of lists or updates) is at
// least want, and returns how many did not get there within scaleWait.
func waitAll(fs []*follower, want int, updates bool) (missed int) {
	deadline := time.Now().Add(scaleWait)
	for {
		missed = 0
		for _, f := range fs {
			l, u := f.counts()
			if updates && u < want || !updates && l < want {
				missed++
			}
		}
		if missed == 0 || time.Now().After(deadline) {
			return missed
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// measureScale runs the measurement of r.Sessions sessions.
func measureScale(o *options, bin, prefix string, r *scaleResult) error {
	c, err := startScaleCluster(o, bin, prefix, "scale-"+strconv.Itoa(r.Sessions), r.Replicas)
	if err != nil {
		return err
	}
	defer c.close()
	mem0, heap0 := c.usedMemory(), c.heap()
	t0 := time.Now()
	ss, err := c.openSessions(r.Sessions)
	if err != nil {
		return err
	}
	r.Create = time.Since(t0)
	r.MemRecord = float64(c.usedMemory()-mem0) / float64(r.Sessions)
	r.HeapPerSession = float64(c.heap()-heap0) / float64(r.Sessions)
	r.MemRecordKey = c.keyMemory(ss, func(id string) string { return prefix + "s{" + id + "}" })
	log.Printf("scale %d: sessions open in %v; Redis %.0f B per session", r.Sessions, r.Create.Round(time.Millisecond), r.MemRecord)

	watched := ss[:r.Streams]
	if err := c.subscribe(watched); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fs, err := c.follow(ctx, watched)
	if err != nil {
		return err
	}
	// A change not measured: every replica's path is warm.
	if err := c.announce(0, "list", 1, 0); err != nil {
		return err
	}
	if missed := waitAll(fs, 1, false); missed > 0 {
		return fmt.Errorf("%d of %d streams did not hear the first change", missed, len(fs))
	}
	time.Sleep(500 * time.Millisecond)
	// The idle cost: heartbeats, the logs' catch-up reads, the pinger's
	// own PINGs, which every round's CPU figures leave out.
	redisIdle0, repsIdle0 := c.cpu()
	idleStart := time.Now()
	p := startPinger(c.rs)
	time.Sleep(2 * time.Second)
	r.PingIdle = p.end()
	redisIdle1, repsIdle1 := c.cpu()
	idle := time.Since(idleStart).Seconds()
	redisRate, repsRate := float64(redisIdle1-redisIdle0)/idle, float64(repsIdle1-repsIdle0)/idle

	notices0, pubs0, change0 := c.notices(), c.publishes(), c.lastChange()
	heard := 1
	c.slowlog(true)
	r.Preempted = c.trivialSlowest(time.Second)
	c.slowlog(false)
	for round := range o.scaleRounds {
		// An idle window as long as the last round's, for comparison.
		idleFor := 800 * time.Millisecond
		if n := len(r.Rounds); n > 0 {
			idleFor = r.Rounds[n-1].Last + 500*time.Millisecond
		}
		c.slowlog(false)
		ip := startPinger(c.rs)
		time.Sleep(idleFor)
		idlePing := ip.end()
		idleSlowest, _ := c.slowest()
		c.slowlog(false)
		redis0, reps0 := c.cpu()
		p := startPinger(c.rs)
		start := time.Now()
		if err := c.announce(round%r.Replicas, "list", 1, 0); err != nil {
			p.end()
			return err
		}
		ar := announceRound{Missed: waitAll(fs, heard+1, false)}
		// The logs are written after the streams are told: keep
		// pinging through them.
		time.Sleep(500 * time.Millisecond)
		ar.WorstPing, ar.IdlePing, ar.IdleSlowest = p.end(), idlePing, idleSlowest
		ar.Slowest, ar.SlowestName = c.slowest()
		redis1, reps1 := c.cpu()
		window := time.Since(start).Seconds()
		ar.RedisCPU = time.Duration(max(0, float64(redis1-redis0)-redisRate*window))
		ar.ReplicaCPU = time.Duration(max(0, float64(reps1-reps0)-repsRate*window))
		var lat []time.Duration
		for _, f := range fs {
			if at, ok := f.listAt(heard); ok {
				lat = append(lat, at.Sub(start))
			}
		}
		slices.Sort(lat)
		if len(lat) > 0 {
			ar.Last, ar.Median = lat[len(lat)-1], lat[len(lat)/2]
		}
		heard++
		r.Rounds = append(r.Rounds, ar)
		log.Printf("scale %d round %d: last of %d streams %v (median %v), worst PING %v, missed %d",
			r.Sessions, round+1, len(fs), ar.Last.Round(time.Microsecond), ar.Median.Round(time.Microsecond), ar.WorstPing.Round(time.Microsecond), ar.Missed)
		time.Sleep(200 * time.Millisecond)
	}

	// The same change on every replica at once: one notification.
	var wg sync.WaitGroup
	for i := range c.replicas {
		wg.Go(func() { _ = c.announce(i, "list", 1, 0) })
	}
	wg.Wait()
	r.Dedup.Missed = waitAll(fs, heard+1, false)
	time.Sleep(time.Second)
	for _, f := range fs {
		switch l, _ := f.counts(); {
		case l == heard+1:
			r.Dedup.Heard++
		case l > heard+1:
			r.Dedup.Twice++
		}
	}
	heard = 0
	for _, f := range fs {
		l, _ := f.counts()
		heard = max(heard, l)
	}

	// A burst of updates of the resource every watched session follows,
	// on every replica at once.
	b := &r.Burst
	b.Updates = o.scaleBurst * r.Replicas
	before := c.lastChange()
	p = startPinger(c.rs)
	start := time.Now()
	for i := range c.replicas {
		wg.Go(func() { _ = c.announce(i, "update", o.scaleBurst, burstEvery) })
	}
	wg.Wait()
	b.Took = time.Since(start)
	// Settled: no new notification for a second.
	last, quiet := start, time.Now()
	for time.Since(quiet) < time.Second && time.Since(start) < scaleWait {
		time.Sleep(50 * time.Millisecond)
		latest := start
		for _, f := range fs {
			f.mu.Lock()
			if n := len(f.updates); n > 0 && f.updates[n-1].After(latest) {
				latest = f.updates[n-1]
			}
			f.mu.Unlock()
		}
		if latest.After(last) {
			last, quiet = latest, time.Now()
		}
	}
	b.WorstPing = p.end()
	b.Settled = last.Sub(start)
	b.Published = c.lastChange() - before
	b.MinHeard = -1
	for _, f := range fs {
		_, u := f.counts()
		if b.MinHeard < 0 || u < b.MinHeard {
			b.MinHeard = u
		}
		b.MaxHeard = max(b.MaxHeard, u)
	}

	if m, err := c.rs.info("commandstats"); err == nil {
		_, rest, _ := strings.Cut(m["cmdstat_evalsha"], "usec_per_call=")
		v, _, _ := strings.Cut(rest, ",")
		us, _ := strconv.ParseFloat(v, 64)
		r.ScriptMean = time.Duration(us * float64(time.Microsecond))
	}
	changes := c.lastChange() - change0
	if changes > 0 {
		for i, n := range c.notices() {
			r.NoticesPerChange = append(r.NoticesPerChange, float64(n-notices0[i])/float64(changes))
		}
		r.PublishesPerChange = float64(c.publishes()-pubs0) / float64(changes)
	}
	for _, f := range fs {
		f.mu.Lock()
		err := f.err
		f.mu.Unlock()
		if err != nil {
			r.Fail = append(r.Fail, "a GET stream ended: "+err.Error())
			break
		}
	}
	cancel()
	return nil
}

// failed reports whether a check of the measurement failed: an error,
// a stream that missed a change, a change heard twice, a burst not heard
// in full.
func (r *scaleResult) failed() bool {
	if len(r.Fail) > 0 || r.Dedup.Missed > 0 || r.Dedup.Twice > 0 || len(r.Rounds) == 0 {
		return true
	}
	for _, a := range r.Rounds {
		if a.Missed > 0 {
			return true
		}
	}
	return r.Burst.Published == 0 || int64(r.Burst.MinHeard) < r.Burst.Published
}

// logResult is what the full-log measurement found: Redis's memory per
// session whose log is full of changes.
type logResult struct {
	Sessions, Changes int
	MemRecord         float64 // MEMORY USAGE of a record
	MemLog            float64 // MEMORY USAGE of a full log
	MemPerSession     float64 // INFO used_memory's growth per session, logs filled
	AppendCPU         time.Duration
	Fail              string
}

// measureLog fills the logs of sessions with open GET streams: one
// replica, notices sent at once (ChangeWindow none), more updates than a
// log keeps, spaced so that each makes its own notice.
func measureLog(o *options, bin, prefix string) *logResult {
	r := &logResult{Sessions: min(1000, o.scaleStreams), Changes: 160}
	fail := func(err error) *logResult { r.Fail = err.Error(); return r }
	c, err := startScaleCluster(o, bin, prefix, "scale-log", 1, "-change-window", "-1ns")
	if err != nil {
		return fail(err)
	}
	defer c.close()
	ss, err := c.openSessions(r.Sessions)
	if err != nil {
		return fail(err)
	}
	if err := c.subscribe(ss); err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fs, err := c.follow(ctx, ss)
	if err != nil {
		return fail(err)
	}
	mem0 := c.usedMemory()
	redis0, _ := c.cpu()
	if err := c.announce(0, "update", r.Changes, 25*time.Millisecond); err != nil {
		return fail(err)
	}
	waitAll(fs, 1, true)
	time.Sleep(2 * time.Second) // the logs are written in the background
	redis1, _ := c.cpu()
	least := -1
	for _, f := range fs {
		if _, u := f.counts(); least < 0 || u < least {
			least = u
		}
	}
	r.Changes = least
	r.MemPerSession = float64(c.usedMemory()-mem0) / float64(r.Sessions)
	r.MemRecord = c.keyMemory(ss, func(id string) string { return prefix + "s{" + id + "}" })
	r.MemLog = c.keyMemory(ss, func(id string) string { return prefix + "e{" + id + "}" })
	if entries := r.Sessions * min(least, 128); entries > 0 {
		r.AppendCPU = time.Duration(redis1-redis0) / time.Duration(entries)
	}
	log.Printf("scale: a full log (%d changes) costs %.0f B, a record %.0f B", least, r.MemLog, r.MemRecord)
	return r
}
