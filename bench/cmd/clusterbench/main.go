// Command clusterbench measures what sharing MCP sessions on Redis costs
// (mcp.Options.Cluster, package mcpredis), in one run, interleaved:
//
//   - (a) one process, sessions in memory;
//   - (b) one replica with its sessions on Redis;
//   - (b′) that replica behind the proxy (a reference: the proxy's own
//     cost);
//   - (c) three replicas on Redis behind a round-robin
//     httputil.ReverseProxy with no stickiness, so that two calls in three
//     land on a replica that does not run the session and are relayed to
//     the one that does;
//
// each at 1 and 16 connections, every connection its own 2025-11-25
// session (initialize, notifications/initialized, then tools/call echo
// with Mcp-Session-Id), every answer checked. Then the relay's own cost:
// the three replicas without the proxy, one session created on replica A,
// its calls sent alternately straight to A and straight to B (which relays
// them to A).
//
// Every server is servers/saguarocluster, its own process, with the probe
// of internal/serve; the proxy is this command run with -serve-proxy. It
// writes RESULTS-cluster.md.
//
//	make -C bench cluster            # about 2 minutes
//	make -C bench cluster QUICK=1    # about 20 s, writes .bin/RESULTS-cluster-quick.md
//	make -C bench cluster ARGS=-relay-only
package main

import (
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/cli"
	"github.com/saguaro-go/saguaro/bench/internal/loop"
	"github.com/saguaro-go/saguaro/bench/internal/machine"
	"github.com/saguaro-go/saguaro/bench/internal/report"
)

type options struct {
	binDir, out, logDir string
	relayProfile        string
	quick, relayOnly    bool
	rounds              int
	warmup, slice       time.Duration
	conns               []int
	timeout             time.Duration
	redisURL            string
	maxRuntime          time.Duration
	command             string
	effectiveFlags      []string
	// The cluster at scale (scale.go): the numbers of sessions, the
	// replicas, the GET streams, the rounds of changes, the updates of the
	// burst per replica; onlyScale skips the rest.
	scaleSessions []int
	scaleReplicas int
	scaleStreams  int
	scaleRounds   int
	scaleBurst    int
	onlyScale     bool
}

// serverBin is the server's binary name in -bin.
const serverBin = "saguaro-cluster"

func parseFlags() (*options, string) {
	o := &options{}
	var conns, proxyUpstreams string
	flag.StringVar(&o.binDir, "bin", ".bin", "folder of the built server binary ("+serverBin+")")
	flag.StringVar(&o.out, "out", "", "results page to write (default RESULTS-cluster.md, or <bin>/RESULTS-cluster-quick.md with -quick)")
	flag.BoolVar(&o.quick, "quick", os.Getenv("QUICK") == "1", "smoke run (about 20 s); also QUICK=1")
	flag.BoolVar(&o.relayOnly, "relay-only", false, "measure the relay's cost alone (the three replicas, no proxy)")
	flag.StringVar(&o.relayProfile, "relay-profile", "", "after the rounds, profile both replicas (CPU) during a relayed slice at the highest concurrency into this folder")
	flag.IntVar(&o.rounds, "rounds", 0, "interleaved rounds (default 5; quick 3)")
	flag.DurationVar(&o.warmup, "warmup", 0, "unmeasured warm-up per slice (default 500ms; quick 150ms)")
	flag.DurationVar(&o.slice, "slice", 0, "measured time per slice (default 1.5s; quick 300ms)")
	flag.StringVar(&conns, "conns", "1,16", "concurrent connections (each its own session)")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Second, "per-request timeout")
	def := os.Getenv("REDIS_URL")
	if def == "" {
		def = "redis://127.0.0.1:6379"
	}
	flag.StringVar(&o.redisURL, "redis", def, "Redis to use when it answers PING (else a throwaway redis-server is started); default $REDIS_URL or redis://127.0.0.1:6379")
	flag.DurationVar(&o.maxRuntime, "max-runtime", 10*time.Minute, "abort the whole run after this long")
	flag.StringVar(&o.command, "command", "", "the command to print on the results page (the Makefile passes its own)")
	flag.StringVar(&proxyUpstreams, "serve-proxy", "", "run as the proxy to these comma-separated upstream URLs (used by the benchmark itself)")
	var scale string
	flag.StringVar(&scale, "scale", "", "numbers of sessions of the cluster-at-scale measurement, \"none\" to skip it (default 1000,10000,100000; quick 1000,10000)")
	flag.IntVar(&o.scaleReplicas, "scale-replicas", 3, "replica processes of the cluster-at-scale measurement")
	flag.IntVar(&o.scaleStreams, "scale-streams", 0, "open GET streams of the cluster-at-scale measurement (default 1000; quick 200)")
	flag.IntVar(&o.scaleRounds, "scale-rounds", 0, "list changes timed per number of sessions (default 5; quick 3)")
	flag.IntVar(&o.scaleBurst, "scale-burst", 10_000, "updates per replica in the burst of the cluster-at-scale measurement")
	flag.BoolVar(&o.onlyScale, "only-scale", false, "run the cluster-at-scale measurement alone")
	flag.Parse()
	if proxyUpstreams != "" {
		return nil, proxyUpstreams
	}
	dflt := func(d *time.Duration, full, quick time.Duration) {
		if *d == 0 {
			*d = full
			if o.quick {
				*d = quick
			}
		}
	}
	dflt(&o.warmup, 500*time.Millisecond, 150*time.Millisecond)
	dflt(&o.slice, 1500*time.Millisecond, 300*time.Millisecond)
	if o.rounds == 0 {
		o.rounds = 5
		if o.quick {
			o.rounds = 3
		}
	}
	if o.out == "" {
		o.out = "RESULTS-cluster.md"
		if o.quick {
			o.out = filepath.Join(o.binDir, "RESULTS-cluster-quick.md")
		}
	}
	o.logDir = filepath.Join(o.binDir, "logs-cluster")
	var err error
	if o.conns, err = cli.ParseConns(conns); err != nil {
		log.Fatal(err)
	}
	switch {
	case scale == "none":
	case scale != "":
		for _, f := range strings.Split(scale, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				log.Fatalf("-scale %q: want numbers of sessions, such as 1000,10000", scale)
			}
			o.scaleSessions = append(o.scaleSessions, n)
		}
	case o.quick:
		o.scaleSessions = []int{1000, 10_000}
	default:
		o.scaleSessions = []int{1000, 10_000, 100_000}
	}
	if o.scaleStreams == 0 {
		o.scaleStreams = map[bool]int{true: 200, false: 1000}[o.quick]
	}
	if o.scaleRounds == 0 {
		o.scaleRounds = map[bool]int{true: 3, false: 5}[o.quick]
	}
	if o.command == "" {
		o.command = strings.Join(os.Args, " ")
	}
	o.effectiveFlags = cli.GivenFlags("command", "out", "bin", "redis", "relay-profile")
	if o.onlyScale && len(o.scaleSessions) == 0 {
		log.Fatal("-only-scale with -scale none measures nothing")
	}
	return o, ""
}

// The configurations, by key.
const (
	cfgMemory     = "memory"
	cfgRedis1     = "redis-1"
	cfgRedis1Prox = "redis-1-proxy"
	cfgRedis3Prox = "redis-3-proxy"
)

// runResult is everything the results page shows.
type runResult struct {
	Started, Finished  time.Time
	Opts               *options
	Redis              *redisSrv
	Prefix             string
	Targets            []*target
	TP                 map[string]*agg // key@conns
	Relay              *relayAgg
	RelayTP            map[string]*agg // path@conns
	Procs              []*child
	LoadStart, LoadEnd string
	KeysLeft           []string
	CleanupErr         error
	// The cluster at scale (scale.go, sim.go).
	Scale []*scaleResult
	Log   *logResult
	Sim   *simResult
}

func tpKey(name string, conns int) string { return name + "@" + strconv.Itoa(conns) }

func main() {
	log.SetFlags(log.Ltime)
	log.SetPrefix("clusterbench: ")
	o, proxyUpstreams := parseFlags()
	if proxyUpstreams != "" {
		serveProxy(proxyUpstreams)
		return
	}
	go func() {
		time.Sleep(o.maxRuntime)
		log.Printf("max runtime %v reached; aborting (the children exit when this process's pipes close)", o.maxRuntime)
		os.Exit(3)
	}()
	run, err := bench(o)
	if err != nil {
		log.Fatal(err)
	}
	if len(o.scaleSessions) > 0 {
		// After the other configurations' processes stopped: the
		// replicas at scale have the machine to themselves.
		bin := filepath.Join(o.binDir, serverBin)
		run.Scale = runScale(o, bin, run.Prefix)
		run.Log = measureLog(o, bin, run.Prefix+"scale-log:")
		run.Sim = simulate(run.Scale, run.Log)
		if err := writeChart(run, chartPath(o)); err != nil {
			log.Printf("chart: %v", err)
		}
		run.LoadEnd = machine.LoadAvg()
		run.Finished = time.Now()
	}
	page := renderResults(run)
	if err := report.WriteFileAtomic(o.out, []byte(page)); err != nil {
		log.Fatalf("write %s: %v", o.out, err)
	}
	log.Printf("wrote %s in %v", o.out, run.Finished.Sub(run.Started).Round(time.Second))
	if run.anyFailed() {
		log.Printf("some configurations FAILED; see %s", o.out)
		os.Exit(1)
	}
}

// bench starts Redis (when needed), the servers and the proxies, runs the
// interleaved rounds and the relay slices, stops everything and removes
// the run's keys from Redis.
func bench(o *options) (*runResult, error) {
	run := &runResult{Started: time.Now(), Opts: o, TP: map[string]*agg{}, Relay: &relayAgg{}, RelayTP: map[string]*agg{}, LoadStart: machine.LoadAvg()}
	if o.onlyScale {
		var rnd [6]byte
		_, _ = rand.Read(rnd[:])
		run.Prefix = "saguaro-bench:" + hex.EncodeToString(rnd[:]) + ":"
		run.Redis = &redisSrv{}
		run.Finished = time.Now()
		return run, nil
	}
	bin := filepath.Join(o.binDir, serverBin)
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s not built (run make -C bench cluster): %w", bin, err)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	rs, err := openRedis(o.redisURL, filepath.Join(o.logDir, "redis"), log.Printf)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	run.Redis = rs
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	run.Prefix = "saguaro-bench:" + hex.EncodeToString(rnd[:]) + ":"
	defer func() {
		run.KeysLeft, run.CleanupErr = rs.cleanup(run.Prefix)
	}()

	defer func() {
		for _, p := range run.Procs {
			p.Stop()
		}
	}()
	start := func(p *child, err error) (*child, error) {
		if err != nil {
			return nil, err
		}
		run.Procs = append(run.Procs, p)
		return p, nil
	}
	idle := []string{"-idle-timeout", "10m"}
	var three []*child
	for i := range 3 {
		p, err := start(startReplica(o.logDir, "three-"+string(rune('A'+i)), bin, append([]string{"-redis", rs.URL, "-prefix", run.Prefix + "three:"}, idle...)...))
		if err != nil {
			return nil, err
		}
		three = append(three, p)
	}
	mk := func(name, label, what string, front *child, rds *redisSrv, procs ...*child) (*target, error) {
		ep, err := newEndpoint(front.Ready.MCPURL)
		if err != nil {
			return nil, err
		}
		return &target{Name: name, Label: label, What: what, ep: ep, procs: procs, redis: rds}, nil
	}
	var targets []*target
	if !o.relayOnly {
		mem, err := start(startProc(o.logDir, "memory", "server", bin, append([]string{"-mode", "memory", "-addr", "127.0.0.1:0", "-admin", "127.0.0.1:0"}, idle...)...))
		if err != nil {
			return nil, err
		}
		one, err := start(startReplica(o.logDir, "one", bin, append([]string{"-redis", rs.URL, "-prefix", run.Prefix + "one:"}, idle...)...))
		if err != nil {
			return nil, err
		}
		prox1, err := start(startProc(o.logDir, "proxy-one", "proxy", self, "-serve-proxy", one.Ready.MCPURL))
		if err != nil {
			return nil, err
		}
		prox3, err := start(startProc(o.logDir, "proxy-three", "proxy", self, "-serve-proxy",
			three[0].Ready.MCPURL+","+three[1].Ready.MCPURL+","+three[2].Ready.MCPURL))
		if err != nil {
			return nil, err
		}
		for _, spec := range []struct {
			name, label, what string
			front             *child
			rds               *redisSrv
			procs             []*child
		}{
			{cfgMemory, "(a) 1 process, in memory", "one process; sessions in memory (no Cluster)", mem, nil, []*child{mem}},
			{cfgRedis1, "(b) 1 replica on Redis", "one replica; Cluster = mcpredis; the client talks to it directly", one, rs, []*child{one}},
			{cfgRedis1Prox, "(b′) 1 replica on Redis + proxy", "(b)'s replica behind the proxy (a reference: what the proxy alone adds)", prox1, rs, []*child{one, prox1}},
			{cfgRedis3Prox, "(c) 3 replicas on Redis + proxy", "three replicas, one Cluster (shared prefix); the proxy sends each request to the next replica in turn, so 2 calls in 3 land on a replica that relays them to the session's owner", prox3, rs, []*child{three[0], three[1], three[2], prox3}},
		} {
			t, err := mk(spec.name, spec.label, spec.what, spec.front, spec.rds, spec.procs...)
			if err != nil {
				return nil, err
			}
			targets = append(targets, t)
		}
	}
	run.Targets = targets
	var direct []*target
	for i, p := range three {
		t, err := mk("three-"+string(rune('A'+i)), "", "", p, rs, p)
		if err != nil {
			return nil, err
		}
		direct = append(direct, t)
	}
	log.Printf("Redis %s (%s) at %s, prefix %s; %d processes up", rs.Version, map[bool]string{true: "throwaway", false: "shared"}[rs.Throwaway], rs.URL, run.Prefix, len(run.Procs))

	total := o.rounds * (len(o.conns)*(len(targets)+2) + 1)
	n := 0
	for round := 0; round < o.rounds; round++ {
		for _, conns := range o.conns {
			for i := range targets {
				t := targets[(i+round)%len(targets)]
				n++
				r := runSlice(t, conns, o.warmup, o.slice, o.timeout)
				k := tpKey(t.Name, conns)
				a := run.TP[k]
				if a == nil {
					a = &agg{}
					run.TP[k] = a
				}
				a.add(r)
				log.Printf("[%d/%d] round %d c=%-2d %-14s %7.0f calls/s p50 %-8s p99 %-8s%s", n, total, round+1, conns, t.Name,
					float64(r.OK)/r.Window.Seconds(), report.Dur(r.Hist.Quantile(0.5)), report.Dur(r.Hist.Quantile(0.99)), failNote(&r.Fail))
			}
		}
		// The relay: A owns the session, B relays; a different pair of
		// replicas each round.
		a, b := direct[round%3], direct[(round+1)%3]
		n++
		s := runRelay(a, b, o.warmup, o.slice, o.timeout)
		run.Relay.add(s)
		log.Printf("[%d/%d] round %d relay %s→%s: direct p50 %s, relayed p50 %s (%d+%d calls)%s", n, total, round+1, b.Name, a.Name,
			report.Dur(s.Direct.Quantile(0.5)), report.Dur(s.Relayed.Quantile(0.5)), s.DirectOK, s.RelOK, failNote(&s.Fail))
		// Each path on its own, for its rate and CPU; which goes first
		// alternates.
		for _, conns := range o.conns {
			for i := range 2 {
				path := []string{pathDirect, pathRelayed}[(i+round)%2]
				n++
				r := runPathSlice(a, b, path, conns, o.warmup, o.slice, o.timeout)
				k := tpKey(path, conns)
				ag := run.RelayTP[k]
				if ag == nil {
					ag = &agg{}
					run.RelayTP[k] = ag
				}
				ag.add(r)
				cpu := "–"
				if r.CPUNS >= 0 && r.OK > 0 {
					cpu = cpuStr(float64(r.CPUNS) / float64(r.OK))
				}
				log.Printf("[%d/%d] round %d c=%-2d %-8s %s→%s %7.0f calls/s p50 %-8s CPU/call %s%s", n, total, round+1, conns, path, b.Name, a.Name,
					float64(r.OK)/r.Window.Seconds(), report.Dur(r.Hist.Quantile(0.5)), cpu, failNote(&r.Fail))
			}
		}
	}
	if o.relayProfile != "" {
		profileRelay(o.relayProfile, direct[0], direct[1], slices.Max(o.conns), 5, o.timeout)
	}
	run.LoadEnd = machine.LoadAvg()
	run.Finished = time.Now()
	return run, nil
}

func failNote(f *loop.Failures) string {
	if f.Total() == 0 {
		return ""
	}
	return " FAILED " + f.Summary()
}

// anyFailed reports whether any check failed anywhere.
func (r *runResult) anyFailed() bool {
	for _, a := range r.TP {
		if a.Fail.Total() > 0 {
			return true
		}
	}
	for _, a := range r.RelayTP {
		if a.Fail.Total() > 0 {
			return true
		}
	}
	if r.Relay.Fail.Total() > 0 {
		return true
	}
	for _, s := range r.Scale {
		if s.failed() {
			return true
		}
	}
	return r.Log != nil && r.Log.Fail != ""
}
