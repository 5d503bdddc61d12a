// Command loadgen runs the side-by-side benchmark: it starts every built
// server configuration as its own process on a loopback port, drives them
// all from this one process, interleaved (round-robin short slices per
// configuration, repeated, so machine noise affects all alike), checks
// every response, reads each server's own CPU and allocation figures from
// its probe endpoint, and writes RESULTS.md.
//
//	make -C bench bench            # the full run, under 10 minutes
//	make -C bench bench QUICK=1    # about a minute, written to .bin/
//	loadgen -print-builds          # the binaries the Makefile builds
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/cli"
	"github.com/saguaro-go/saguaro/bench/internal/configs"
	"github.com/saguaro-go/saguaro/bench/internal/machine"
	"github.com/saguaro-go/saguaro/bench/internal/report"
	"github.com/saguaro-go/saguaro/bench/internal/serve"
)

type options struct {
	binDir, out, rawOut, logDir string
	quick                       bool
	workloads                   map[string]bool
	only                        map[string]bool

	rounds          int
	warmup, slice   time.Duration
	conns           []int
	timeout         time.Duration
	churnDur        time.Duration
	churnConns      int
	churnTTL        time.Duration
	churnWait       time.Duration
	idleSessions    int
	idleConns       int
	idleLimit       time.Duration
	serverIdleTTL   time.Duration
	maxRuntime      time.Duration
	command         string
	effectiveFlags  []string
	printBuildsOnly bool
	cpuProfile      string
	pin             bool
	progressConns   int
	progressRounds  int
	fanClients      []int
	fanRounds       []int
	fanMaxConns     int
	fanRate         float64
	fanPacedEvents  int
	fanBurstEvents  int
	fanProfile      string
	fanProfileSecs  int
	payload         payloadOptions
	stdio           stdioOptions
}

func parseFlags() *options {
	o := &options{}
	var workloads, only, conns, fanClients, fanRounds string
	flag.StringVar(&o.binDir, "bin", ".bin", "folder of the built server binaries")
	flag.StringVar(&o.out, "out", "", "results page to write (default RESULTS.md, or .bin/RESULTS-quick.md with -quick)")
	flag.StringVar(&o.rawOut, "raw", "", "raw JSON results (default <bin>/results.json)")
	flag.BoolVar(&o.quick, "quick", os.Getenv("QUICK") == "1", "short run (about a minute) for development; also QUICK=1")
	flag.StringVar(&workloads, "workloads", "throughput,payload,progress,churn,idle,fanout,stdio", "workloads to run")
	flag.IntVar(&o.progressConns, "progress-conns", 16, "connections for the progress workload")
	flag.IntVar(&o.progressRounds, "progress-rounds", 0, "interleaved rounds of the progress workload (default 3; quick 1)")
	flag.StringVar(&fanClients, "fanout-clients", "1000,10000", "comma-separated SSE client counts; the fan-out workload runs at each in turn, with that many clients connected to each fan-out configuration")
	flag.StringVar(&fanRounds, "fanout-rounds", "", "interleaved rounds of the fan-out workload at each client count, comma-separated, the last repeated (default 5,2; quick 2,1)")
	flag.IntVar(&o.fanMaxConns, "fanout-max-conns", 0, "the most fan-out client connections held at once (default: what the open-file limit allows); configurations whose clients do not fit together take turns")
	flag.Float64Var(&o.fanRate, "fanout-rate", 50, "events per second published in a paced fan-out slice at the first client count; other counts are offered the same deliveries per second (rate × first count ÷ count)")
	flag.IntVar(&o.fanPacedEvents, "fanout-paced-events", 0, "events per paced fan-out slice at the first client count, scaled like the rate (default 50; quick 25)")
	flag.IntVar(&o.fanBurstEvents, "fanout-burst-events", 50, "events per burst fan-out slice, published back to back; keep it under 64, the queue saguaro's Hub and the bare server give each client, or they rightly drop clients")
	flag.StringVar(&o.fanProfile, "fanout-profile", "", "after the fan-out rounds, profile each fan-out server under bursts and write its CPU and allocation profiles into this folder (not reported)")
	flag.IntVar(&o.fanProfileSecs, "fanout-profile-seconds", 8, "length of each fan-out CPU profile")
	flag.StringVar(&only, "only", "", "comma-separated configuration names (default: all built); bare and sse-bare are always kept")
	flag.IntVar(&o.rounds, "rounds", 0, "interleaved rounds per concurrency (default 5; quick 2)")
	flag.DurationVar(&o.warmup, "warmup", 0, "unmeasured warm-up per slice (default 500ms; quick 150ms)")
	flag.DurationVar(&o.slice, "slice", 0, "measured time per slice (default 1.5s; quick 300ms)")
	flag.StringVar(&conns, "conns", "1,16,64", "concurrent connections for tools/call throughput")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Second, "per-request timeout")
	flag.DurationVar(&o.churnDur, "churn", 0, "session churn duration per configuration (default 5s; quick 1.5s)")
	flag.IntVar(&o.churnConns, "churn-conns", 8, "connections for session churn")
	flag.DurationVar(&o.churnTTL, "churn-ttl", 0, "session idle timeout given to the servers for the churn workload (default 2s; quick 1s)")
	flag.DurationVar(&o.churnWait, "churn-wait", 0, "wait after churn before measuring what is left (default 2*ttl+2s)")
	flag.IntVar(&o.idleSessions, "idle-sessions", envInt("IDLE_SESSIONS", 0), "idle sessions to open per configuration (default 10000; quick 2000; e.g. 100000, also IDLE_SESSIONS)")
	flag.IntVar(&o.idleConns, "idle-conns", 16, "connections used to open idle sessions")
	flag.DurationVar(&o.idleLimit, "idle-limit", 0, "time limit for opening the idle sessions per configuration (default 2.4ms per session, at least 60s)")
	flag.DurationVar(&o.serverIdleTTL, "server-ttl", 10*time.Minute, "session idle timeout given to the servers for throughput and idle sessions")
	flag.DurationVar(&o.maxRuntime, "max-runtime", 30*time.Minute, "abort the whole run after this long")
	flag.StringVar(&o.command, "command", "", "the command to print on the results page (the Makefile passes its own)")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write the load generator's own CPU profile here")
	flag.BoolVar(&o.pin, "pin", os.Getenv("PIN") == "1", "run every server on CPU 0 (taskset, GOMAXPROCS=1); run the load generator itself on CPU 1 (the Makefile does with PIN=1)")
	flag.BoolVar(&o.printBuildsOnly, "print-builds", false, "print 'name package mode' per configuration to build, then exit")
	payloadDefaults := payloadFlags(o)
	stdioDefaults := stdioFlags(o)
	flag.Parse()
	payloadDefaults()
	stdioDefaults()

	def := func(d *time.Duration, full, quick time.Duration) {
		if *d == 0 {
			*d = full
			if o.quick {
				*d = quick
			}
		}
	}
	def(&o.warmup, 500*time.Millisecond, 150*time.Millisecond)
	def(&o.slice, 1500*time.Millisecond, 300*time.Millisecond)
	def(&o.churnDur, 5*time.Second, 1500*time.Millisecond)
	def(&o.churnTTL, 2*time.Second, time.Second)
	if o.churnWait == 0 {
		o.churnWait = 2*o.churnTTL + 2*time.Second
	}
	if o.rounds == 0 {
		o.rounds = 5
		if o.quick {
			o.rounds = 2
		}
	}
	if o.progressRounds == 0 {
		o.progressRounds = 3
		if o.quick {
			o.progressRounds = 1
		}
	}
	if fanRounds == "" {
		fanRounds = "5,2"
		if o.quick {
			fanRounds = "2,1"
		}
	}
	var err error
	if o.fanClients, err = parseInts("fanout-clients", fanClients, 1, 100_000); err != nil {
		log.Fatal(err)
	}
	if o.fanRounds, err = parseInts("fanout-rounds", fanRounds, 1, 1000); err != nil {
		log.Fatal(err)
	}
	if o.fanPacedEvents == 0 {
		o.fanPacedEvents = 50
		if o.quick {
			o.fanPacedEvents = 25
		}
	}
	if o.fanRate <= 0 || o.fanPacedEvents < 1 || o.fanBurstEvents < 1 || o.fanBurstEvents > 100_000 || o.fanPacedEvents > 100_000 {
		log.Fatalf("bad fan-out flags: rate %v, paced events %d, burst events %d", o.fanRate, o.fanPacedEvents, o.fanBurstEvents)
	}
	if o.idleSessions == 0 {
		o.idleSessions = 10000
		if o.quick {
			o.idleSessions = 2000
		}
	}
	if o.idleLimit == 0 {
		o.idleLimit = max(60*time.Second, time.Duration(o.idleSessions)*2400*time.Microsecond)
	}
	if o.out == "" {
		o.out = "RESULTS.md"
		if o.quick {
			o.out = filepath.Join(o.binDir, "RESULTS-quick.md")
		}
	}
	if o.rawOut == "" {
		o.rawOut = filepath.Join(o.binDir, "results.json")
	}
	o.logDir = filepath.Join(o.binDir, "logs")
	o.workloads = set(workloads)
	o.only = set(only)
	if o.conns, err = cli.ParseConns(conns); err != nil {
		log.Fatal(err)
	}
	if o.command == "" {
		o.command = strings.Join(os.Args, " ")
	}
	o.effectiveFlags = cli.GivenFlags("command", "out", "raw", "bin")
	return o
}

// parseInts parses a flag's comma-separated list of integers from lo to
// hi.
func parseInts(name, list string, lo, hi int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < lo || n > hi {
			return nil, fmt.Errorf("bad -%s %q: want integers from %d to %d", name, list, lo, hi)
		}
		out = append(out, n)
	}
	return out, nil
}

func envInt(name string, def int) int {
	if v := os.Getenv(name); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

func set(csv string) map[string]bool {
	m := map[string]bool{}
	for _, f := range strings.Split(csv, ",") {
		if f = strings.TrimSpace(f); f != "" {
			m[f] = true
		}
	}
	return m
}

func main() {
	log.SetFlags(log.Ltime)
	log.SetPrefix("loadgen: ")
	o := parseFlags()
	if o.printBuildsOnly {
		for _, c := range append(configs.All, configs.Stdio...) {
			if !isPending(c) {
				fmt.Printf("%s %s %s\n", c.Name, c.Pkg, c.Mode)
			}
		}
		return
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	go func() {
		time.Sleep(o.maxRuntime)
		log.Printf("max runtime %v reached; aborting (servers exit when this process's pipes close)", o.maxRuntime)
		os.Exit(3)
	}()

	run := &runResult{Started: time.Now(), Opts: o, Ready: map[string]serve.Ready{}, ProgressNotes: map[string]string{}, LoadgenGo: runtime.Version()}
	for _, c := range configs.All {
		if len(o.only) > 0 && !o.only[c.Name] && c.Name != configs.Bare && c.Name != configs.SSEBare {
			continue
		}
		run.Configs = append(run.Configs, c)
	}

	run.LoadStart = machine.LoadAvg()
	if o.workloads["throughput"] {
		runThroughput(o, run)
	}
	if o.workloads["payload"] {
		runPayloadPhase(o, run)
	}
	if o.workloads["progress"] {
		runProgressPhase(o, run)
	}
	if o.workloads["churn"] {
		runChurnPhase(o, run)
	}
	if o.workloads["idle"] {
		runIdlePhase(o, run)
	}
	if o.workloads["fanout"] {
		runFanoutPhase(o, run)
	}
	if o.workloads["stdio"] {
		runStdioPhase(o, run)
	}
	run.Finished = time.Now()
	run.LoadEnd = machine.LoadAvg()

	page := renderResults(run)
	if err := report.WriteFileAtomic(o.out, []byte(page)); err != nil {
		log.Fatalf("write %s: %v", o.out, err)
	}
	if raw, err := json.MarshalIndent(run, "", "  "); err == nil {
		_ = report.WriteFileAtomic(o.rawOut, raw)
	}
	log.Printf("wrote %s (raw: %s) in %v", o.out, o.rawOut, run.Finished.Sub(run.Started).Round(time.Second))
	if run.anyFailed() {
		log.Printf("some configurations FAILED; see %s", o.out)
	}
}

// runThroughput starts every configuration, then for each round and each
// concurrency gives every configuration one slice, in an order that
// rotates from round to round.
func runThroughput(o *options, run *runResult) {
	var servers []*server
	defer func() { stopAll(servers) }()
	for _, c := range run.Configs {
		if isPending(c) || c.IsSSE() || !c.Runs("throughput") {
			continue
		}
		s, err := startServer(o, "throughput", c, "-idle-timeout", o.serverIdleTTL.String())
		if err != nil {
			log.Printf("%s: %v", c.Name, err)
			run.setStartError(c.Name, err)
			continue
		}
		run.noteReady(c.Name, s.Ready)
		servers = append(servers, s)
	}
	run.TP = map[string]*tpAgg{}
	if len(servers) == 0 {
		return
	}
	total := o.rounds * len(o.conns) * len(servers)
	n := 0
	for round := 0; round < o.rounds; round++ {
		for _, conns := range o.conns {
			for i := range servers {
				s := servers[(i+round)%len(servers)]
				n++
				r := runSlice(s, sliceSpec{Conns: conns}, o.warmup, o.slice, o.timeout)
				k := tpKeyString(s.cfg.Name, conns)
				a := run.TP[k]
				if a == nil {
					a = &tpAgg{}
					run.TP[k] = a
				}
				a.add(r)
				status := ""
				if f := r.Fail.Total(); f > 0 {
					status = fmt.Sprintf(" FAILED x%d %v", f, r.Fail.First)
				}
				log.Printf("[%d/%d] round %d c=%-3d %-18s %8.0f req/s%s", n, total, round+1, conns, s.cfg.Name,
					float64(r.OK)/r.Window.Seconds(), status)
			}
		}
	}
}

// Progress variants: every connection with its own session, or two
// connections per session.
const (
	progressOwn    = "own"
	progressShared = "shared"
)

// runProgressPhase starts every configuration but bare with -progress and
// runs interleaved slices of progress calls: each connection with its own
// session, then (stateful configurations) two connections per session.
func runProgressPhase(o *options, run *runResult) {
	run.Progress = map[string]*tpAgg{}
	var servers []*server
	defer func() { stopAll(servers) }()
	for _, c := range run.Configs {
		if isPending(c) || c.Name == configs.Bare || c.IsSSE() || !c.Runs("progress") {
			continue
		}
		s, err := startServer(o, "progress", c, "-idle-timeout", o.serverIdleTTL.String(), "-progress")
		if err != nil {
			log.Printf("%s: %v", c.Name, err)
			run.setStartError(c.Name, err)
			continue
		}
		run.noteReady(c.Name, s.Ready)
		run.ProgressNotes[c.Name] = s.Ready.Notes
		servers = append(servers, s)
	}
	if len(servers) == 0 {
		return
	}
	n := 0
	for round := 0; round < o.progressRounds; round++ {
		for _, variant := range []string{progressOwn, progressShared} {
			for i := range servers {
				s := servers[(i+round)%len(servers)]
				if variant == progressShared && !s.cfg.Stateful {
					continue
				}
				n++
				spec := sliceSpec{Conns: o.progressConns, Progress: true, Share: variant == progressShared}
				r := runSlice(s, spec, o.warmup, o.slice, o.timeout)
				k := s.cfg.Name + "@" + variant
				a := run.Progress[k]
				if a == nil {
					a = &tpAgg{}
					run.Progress[k] = a
				}
				a.add(r)
				status := ""
				if f := r.Fail.Total(); f > 0 {
					status = fmt.Sprintf(" FAILED %d of %d: %v", f, uint64(f)+r.OK, r.Fail.First)
				}
				log.Printf("progress round %d %-6s c=%d %-18s %8.0f req/s%s", round+1, variant, o.progressConns, s.cfg.Name,
					float64(r.OK)/r.Window.Seconds(), status)
			}
		}
	}
}

func tpKeyString(name string, conns int) string { return name + "@" + strconv.Itoa(conns) }

func runChurnPhase(o *options, run *runResult) {
	run.Churn = map[string]*churnResult{}
	for _, c := range run.Configs {
		if isPending(c) || !c.Stateful || c.IsSSE() || !c.Runs("churn") {
			continue
		}
		s, err := startServer(o, "churn", c, "-idle-timeout", o.churnTTL.String())
		if err != nil {
			log.Printf("%s: %v", c.Name, err)
			run.setStartError(c.Name, err)
			continue
		}
		run.noteReady(c.Name, s.Ready)
		r := runChurn(s, o.churnConns, o.churnDur, o.churnWait, o.churnTTL, o.timeout)
		s.Stop()
		run.Churn[c.Name] = r
		log.Printf("churn %-18s %d sessions in %v; goroutines %d -> %d -> %d; heap live %s -> %s -> %s; %d log lines",
			c.Name, r.Sessions, r.Elapsed.Round(time.Millisecond),
			r.Base.Goroutines, r.End.Goroutines, r.Reaped.Goroutines,
			mib(r.Base.HeapLive), mib(r.End.HeapLive), mib(r.Reaped.HeapLive), r.LogLines)
		if f := r.Fail.Total(); f > 0 {
			log.Printf("churn %s FAILED: %v", c.Name, r.Fail.First)
		}
	}
}

func runIdlePhase(o *options, run *runResult) {
	run.Idle = map[string]*idleResult{}
	for _, c := range run.Configs {
		if isPending(c) || !c.Stateful || c.IsSSE() || !c.Runs("idle") {
			continue
		}
		s, err := startServer(o, "idle", c, "-idle-timeout", o.serverIdleTTL.String())
		if err != nil {
			log.Printf("%s: %v", c.Name, err)
			run.setStartError(c.Name, err)
			continue
		}
		run.noteReady(c.Name, s.Ready)
		r := runIdle(s, o.idleSessions, o.idleConns, o.idleLimit, o.timeout)
		s.Stop()
		run.Idle[c.Name] = r
		log.Printf("idle  %-18s %d sessions in %v; goroutines %d -> %d; heap live %s -> %s; checked %d",
			c.Name, r.Sessions, r.Elapsed.Round(time.Millisecond), r.Base.Goroutines, r.Held.Goroutines,
			mib(r.Base.HeapLive), mib(r.Held.HeapLive), r.Checked)
		if f := r.Fail.Total(); f > 0 {
			log.Printf("idle %s FAILED: %v", c.Name, r.Fail.First)
		}
	}
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
