// Package soak runs the example app under a long mixed load and checks
// that it comes back to where it started: one process, and three replicas
// sharing their sessions on Redis behind the example's round-robin
// balancer, serve tool calls in both eras, progress streams, resumed GET
// streams, session churn with and without DELETE, the /events fan-out,
// and clients that trickle their bodies or never read; meanwhile one
// replica is SIGKILLed and restarted and Redis is restarted empty. Every
// process's heap, RSS, goroutines and open file descriptors are sampled
// throughout (its -debug-addr listener and /proc), and the report
// (Markdown and a PNG) says pass or fail per criterion:
//
//   - after the load stops and the idle timeouts pass, goroutines and
//     file descriptors are back to their baseline (taken after a warm-up,
//     before the load), and the heap is within 10% of its baseline (the
//     buffers of pooled connections to Redis and PostgreSQL apart), each
//     after a forced collection;
//   - no task whose creation a client was told succeeded is missing from
//     the board at the end;
//   - every failure a client saw is a status the documentation promises
//     for what happened (a 408 for a trickled body, 503 + Retry-After
//     while Redis restarts, the balancer's 502 for a call in flight on
//     the killed replica, …).
package soak

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config is one soak run.
type Config struct {
	// Bin holds the example_app and roundrobin binaries.
	Bin string
	// Dir receives the processes' logs.
	Dir string
	// Redis is the redis-server binary; DatabaseURL a PostgreSQL server
	// on which the run creates (and drops) a database of its own for the
	// replicas' board; when it does not answer, the run starts a
	// throwaway server from the machine's initdb and postgres.
	Redis       string
	DatabaseURL string
	// Load is how long the load runs; the replica is killed at 35% of it
	// and Redis restarted at 65%.
	Load time.Duration
	// SessionIdle, ConnIdle, BodyTimeout and WriteTimeout are the apps'
	// -session-idle, -conn-idle, -body-timeout and -write-timeout.
	SessionIdle, ConnIdle, BodyTimeout, WriteTimeout time.Duration
	// Sample is the sampling interval.
	Sample time.Duration
	// Workers per target: legacy sessions, 2026-07-28 callers, GET
	// stream resumers, /events readers; per process: slow-body and
	// never-reading clients.
	Legacy, Modern, Resumers, Feeds, SlowBodies, NeverReaders int
	// Pause is the pause between one worker's calls.
	Pause time.Duration
	// Light runs only the hostile clients, the replica kill and the
	// back-to-baseline check, with a light call load (the short form).
	Light bool
	// Log receives progress lines.
	Log io.Writer
}

// appProc is one example_app process, restartable.
type appProc struct {
	*process
	addr, debug string
	poolPorts   map[int]bool // Redis's and PostgreSQL's ports
	baseline    *sample
	final       *sample
	killed      bool
}

func (a *appProc) up() bool { return a.pid() != 0 }

// Result is what a run measured.
type Result struct {
	Config   Config
	Started  time.Time
	Samples  []sample
	Procs    []*ProcResult
	Ledger   *ledger
	Windows  []window
	Missing  map[string][]string // target → tasks told created but absent
	Checked  map[string]int      // target → tasks told created
	Feed     int64               // events the /events readers got
	LoadEnd  time.Duration
	FinalAt  time.Duration
	Timeline []string
}

// ProcResult is one process's baseline and final figures.
type ProcResult struct {
	Name            string
	Baseline, Final sample
	Note            string
}

// Run runs the soak.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	logf := func(format string, args ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "%s soak: "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	res := &Result{Config: cfg, Started: time.Now(), Missing: map[string][]string{}, Checked: map[string]int{}}
	at := func() time.Duration { return time.Since(res.Started) }
	mark := func(format string, args ...any) {
		line := fmt.Sprintf("%5.0f s  ", at().Seconds()) + fmt.Sprintf(format, args...)
		res.Timeline = append(res.Timeline, line)
		logf(format, args...)
	}

	// Redis, and a database of the run's own for the replicas.
	redisAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	rds := redisServer(cfg.Redis, redisAddr, cfg.Dir)
	if err := rds.start(ctx); err != nil {
		return nil, err
	}
	defer rds.kill()
	if err := waitDial(ctx, redisAddr, 10*time.Second); err != nil {
		return nil, err
	}
	admin, stopPG, err := postgres(ctx, cfg.DatabaseURL, cfg.Dir)
	if err != nil {
		return nil, err
	}
	defer stopPG()
	dbURL, dropDB, err := createDatabase(ctx, admin)
	if err != nil {
		return nil, err
	}
	defer dropDB()

	// The single process, the three replicas, the balancer.
	common := []string{"-dev-login", "-session-idle", cfg.SessionIdle.String(), "-conn-idle", cfg.ConnIdle.String(),
		"-body-timeout", cfg.BodyTimeout.String(), "-write-timeout", cfg.WriteTimeout.String()}
	newApp := func(name string, env []string, extra ...string) (*appProc, error) {
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		dbg, err := freeAddr()
		if err != nil {
			return nil, err
		}
		args := append([]string{"-addr", addr, "-debug-addr", dbg}, common...)
		p := &process{name: name, bin: filepath.Join(cfg.Bin, "example_app"), args: append(args, extra...), env: env,
			logPath: filepath.Join(cfg.Dir, name+".log")}
		return &appProc{process: p, addr: addr, debug: "http://" + dbg}, nil
	}
	var all []*appProc
	single, err := newApp("single", nil)
	if err != nil {
		return nil, err
	}
	all = append(all, single)
	lbAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	lbURL := "http://" + lbAddr
	var replicas []*appProc
	for i := 1; i <= 3; i++ {
		rp, err := newApp(fmt.Sprintf("replica-%d", i), []string{"EXAMPLE_BASE_URL=" + lbURL},
			"-db", dbURL, "-redis", "redis://"+redisAddr, "-redis-prefix", "soak:")
		if err != nil {
			return nil, err
		}
		replicas = append(replicas, rp)
		all = append(all, rp)
	}
	for _, a := range all {
		if err := a.start(ctx, "export TOKEN=", "debug listener on http://"); err != nil {
			return nil, err
		}
		defer a.stop()
	}
	pools := map[int]bool{}
	for _, u := range []string{"redis://" + redisAddr, dbURL} {
		if pu, err := url.Parse(u); err == nil {
			if port, err := strconv.Atoi(pu.Port()); err == nil {
				pools[port] = true
			}
		}
	}
	for _, a := range all {
		a.poolPorts = pools
	}
	var backends []string
	for _, rp := range replicas {
		backends = append(backends, "http://"+rp.addr)
	}
	lb := &process{name: "roundrobin", bin: filepath.Join(cfg.Bin, "roundrobin"), args: append([]string{"-addr", lbAddr}, backends...),
		logPath: filepath.Join(cfg.Dir, "roundrobin.log")}
	if err := lb.start(ctx, "roundrobin on "); err != nil {
		return nil, err
	}
	defer lb.kill()
	if err := waitDial(ctx, lbAddr, 10*time.Second); err != nil {
		return nil, err
	}
	mark("started redis-server, the single process, three replicas on Redis and PostgreSQL, and the balancer")

	tr := &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	led := newLedger(res.Started)
	res.Ledger = led
	var seq atomic.Int64
	targets := []*target{
		{name: "single", base: "http://" + single.addr, token: single.line("export TOKEN="), apps: []*appProc{single}},
		{name: "cluster", base: lbURL, token: replicas[0].line("export TOKEN="), apps: replicas},
	}
	for _, t := range targets {
		t.http, t.led, t.seq, t.cfg, t.pause = hc, led, &seq, &cfg, cfg.Pause
	}

	// The board gets a thousand tasks first, so that the whole board (the
	// feed's first event, list_tasks' answer) is bigger than the socket
	// buffers of a client that never reads.
	for _, t := range targets {
		titles := make([]string, 1000)
		for i := range titles {
			titles[i] = t.title()
		}
		a, err := t.mcp().modernCall(ctx, 1, "import_tasks", map[string]any{"titles": titles}, true)
		if o, failed := a.failure("seed", t.name, err); failed {
			return nil, fmt.Errorf("soak: seeding the %s board: %s", t.name, o)
		}
		led.created(t.name, titles...)
	}
	// A warm-up of every kind of call, then the baseline.
	// It runs as many workers as the load, so that the connection pools
	// (Redis, PostgreSQL, the relays between replicas) have grown to their
	// working size when the baseline is taken.
	n := func(v int) int {
		if cfg.Light {
			return min(v, 1)
		}
		return v
	}
	warmFor := 10 * time.Second
	if cfg.Light {
		warmFor = 5 * time.Second
	}
	warm, stopWarm := context.WithTimeout(ctx, warmFor)
	var wg sync.WaitGroup
	var feedEvents atomic.Int64
	for _, t := range targets {
		for range n(cfg.Legacy) {
			wg.Go(func() { t.legacy(warm) })
		}
		for range n(cfg.Modern) {
			wg.Go(func() { t.modern(warm) })
		}
		for range n(cfg.Resumers) {
			wg.Go(func() { t.resume(warm) })
		}
		wg.Go(func() { t.feed(warm, &feedEvents) })
	}
	wg.Wait()
	stopWarm()
	tr.CloseIdleConnections()
	// The warm-up's connections and abandoned sessions go.
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(max(cfg.ConnIdle, cfg.SessionIdle) + 2*time.Second):
	}
	for _, a := range all {
		s, err := collect(ctx, hc, a, true)
		if err != nil {
			return nil, err
		}
		s.At = at()
		saveHeapProfile(ctx, hc, a, "baseline")
		a.baseline = &s
		res.Samples = append(res.Samples, s)
	}
	mark("baseline taken after a warm-up (forced collection)")

	// Sampling, throughout.
	sampling, stopSampling := context.WithCancel(ctx)
	var sampleMu sync.Mutex
	var sampler sync.WaitGroup
	sampler.Go(func() {
		tick := time.NewTicker(cfg.Sample)
		defer tick.Stop()
		for {
			for _, a := range all {
				if s, err := collect(sampling, hc, a, false); err == nil {
					s.At = at()
					sampleMu.Lock()
					res.Samples = append(res.Samples, s)
					sampleMu.Unlock()
				}
			}
			select {
			case <-sampling.Done():
				return
			case <-tick.C:
			}
		}
	})
	defer func() { stopSampling(); sampler.Wait() }()

	// The load.
	load, stopLoad := context.WithCancel(ctx)
	mark("load starts for %s", cfg.Load)
	var workers sync.WaitGroup
	for _, t := range targets {
		for range n(cfg.Legacy) {
			workers.Go(func() { t.legacy(load) })
		}
		for range n(cfg.Modern) {
			workers.Go(func() { t.modern(load) })
		}
		for range n(cfg.Resumers) {
			workers.Go(func() { t.resume(load) })
		}
		for range n(cfg.Feeds) {
			workers.Go(func() { t.feed(load, &feedEvents) })
		}
		for _, a := range t.apps {
			for range cfg.SlowBodies {
				workers.Go(func() { t.slowBody(load, a) })
			}
			for i := range cfg.NeverReaders {
				workers.Go(func() { t.neverRead(load, a, i%2 == 0) })
			}
		}
	}

	// Chaos: a replica SIGKILLed and restarted, then Redis restarted.
	victim := replicas[1]
	wait := func(until time.Duration) {
		select {
		case <-ctx.Done():
		case <-time.After(until - at()):
		}
	}
	loadStart := at()
	wait(loadStart + cfg.Load*35/100)
	kill := window{Name: windowKill, From: at()}
	victim.kill()
	victim.killed = true
	mark("SIGKILL %s (pid gone)", victim.name)
	wait(at() + 3*time.Second)
	if err := victim.start(ctx, "export TOKEN=", "debug listener on http://"); err != nil {
		stopLoad()
		workers.Wait()
		return nil, fmt.Errorf("soak: restarting %s: %w", victim.name, err)
	}
	mark("%s restarted on the same address", victim.name)
	kill.To = at() + 10*time.Second
	res.Windows = append(res.Windows, kill)
	if !cfg.Light {
		wait(loadStart + cfg.Load*65/100)
		rw := window{Name: windowRedis, From: at()}
		rds.kill()
		mark("redis-server killed")
		wait(at() + 2*time.Second)
		if err := rds.start(ctx); err != nil {
			stopLoad()
			workers.Wait()
			return nil, err
		}
		if err := waitDial(ctx, redisAddr, 10*time.Second); err != nil {
			stopLoad()
			workers.Wait()
			return nil, err
		}
		mark("redis-server restarted, empty")
		rw.To = at() + 10*time.Second
		res.Windows = append(res.Windows, rw)
	}
	wait(loadStart + cfg.Load)
	stopLoad()
	workers.Wait()
	tr.CloseIdleConnections()
	res.LoadEnd = at()
	res.Feed = feedEvents.Load()
	mark("load stopped; every client connection closed")

	// What clients were told was created must be on the board.
	for _, t := range targets {
		have, err := boardTitles(ctx, hc, t)
		if err != nil {
			return nil, err
		}
		led.mu.Lock()
		want := led.added[t.name]
		led.mu.Unlock()
		res.Checked[t.name] = len(want)
		for _, title := range want {
			if !have[title] {
				res.Missing[t.name] = append(res.Missing[t.name], title)
			}
		}
	}
	tr.CloseIdleConnections()

	// The idle timeouts pass, then the final figures.
	idle := max(cfg.SessionIdle, cfg.ConnIdle) + 5*time.Second
	mark("waiting %s for the idle timeouts (sessions %s, connections %s)", idle, cfg.SessionIdle, cfg.ConnIdle)
	wait(at() + idle)
	for _, a := range all {
		s, err := collect(ctx, hc, a, true)
		if err != nil {
			return nil, err
		}
		saveHeapProfile(ctx, hc, a, "final")
		a.final = &s
	}
	res.FinalAt = at()
	mark("final figures taken (forced collection)")
	stopSampling()
	sampler.Wait()
	for _, a := range all {
		s := *a.final
		s.At = res.FinalAt
		res.Samples = append(res.Samples, s)
	}
	for _, a := range all {
		pr := &ProcResult{Name: a.name, Baseline: *a.baseline, Final: *a.final}
		if a.killed {
			pr.Note = "SIGKILLed and restarted; its baseline is the first process's"
		}
		res.Procs = append(res.Procs, pr)
	}
	return res, nil
}

// Window names.
const (
	windowKill  = "replica killed"
	windowRedis = "Redis restarted"
)

// sample is one process's figures at one moment.
type sample struct {
	Proc       string
	At         time.Duration
	Goroutines int
	Heap       uint64 // HeapAlloc
	RSS        int64
	FDs        int
	Pooled     int // of FDs, connections to Redis and PostgreSQL
	Sessions   int
}

// collect reads one process's figures: its debug listener's runtime
// figures (after a forced collection when gc) and /proc.
func collect(ctx context.Context, hc *http.Client, a *appProc, gc bool) (sample, error) {
	s := sample{Proc: a.name}
	pid := a.pid()
	if pid == 0 {
		return s, fmt.Errorf("soak: %s is not running", a.name)
	}
	method, path := http.MethodGet, "/debug/runtime"
	if gc {
		method, path = http.MethodPost, "/debug/gc"
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, method, a.debug+path, nil)
	if err != nil {
		return s, err
	}
	res, err := hc.Do(req)
	if err != nil {
		return s, fmt.Errorf("soak: %s's debug listener: %w", a.name, err)
	}
	defer res.Body.Close()
	var st struct {
		Goroutines int    `json:"goroutines"`
		HeapAlloc  uint64 `json:"heap_alloc"`
		Sessions   int    `json:"mcp_sessions"`
	}
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		return s, fmt.Errorf("soak: %s's runtime figures: %w", a.name, err)
	}
	s.Goroutines, s.Heap, s.Sessions = st.Goroutines, st.HeapAlloc, st.Sessions
	s.RSS, s.FDs, s.Pooled, err = procStatus(pid, a.poolPorts)
	return s, err
}

// saveHeapProfile keeps the process's heap profile beside its log, as
// NAME-heap-WHEN.pprof, for `go tool pprof -diff_base` when the heap did
// not come back. Failing to save it fails nothing.
func saveHeapProfile(ctx context.Context, hc *http.Client, a *appProc, when string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.debug+"/debug/pprof/heap", nil)
	if err != nil {
		return
	}
	res, err := hc.Do(req)
	if err != nil {
		return
	}
	defer res.Body.Close()
	f, err := os.Create(filepath.Join(filepath.Dir(a.logPath), a.name+"-heap-"+when+".pprof"))
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = io.Copy(f, res.Body)
}

// boardTitles lists the board's task titles through the JSON API.
func boardTitles(ctx context.Context, hc *http.Client, t *target) (map[string]bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.base+"/api/tasks", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+t.token)
	res, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("soak: the %s board: %w", t.name, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("soak: the %s board: HTTP %d", t.name, res.StatusCode)
	}
	var body json.RawMessage
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("soak: the %s board: %w", t.name, err)
	}
	var tasks []struct {
		Title string `json:"title"`
	}
	if err := json.Unmarshal(body, &tasks); err != nil {
		var wrapped struct {
			Tasks []struct {
				Title string `json:"title"`
			} `json:"tasks"`
		}
		if err2 := json.Unmarshal(body, &wrapped); err2 != nil {
			return nil, fmt.Errorf("soak: the %s board: %w", t.name, err)
		}
		tasks = wrapped.Tasks
	}
	out := make(map[string]bool, len(tasks))
	for _, tk := range tasks {
		out[tk.Title] = true
	}
	return out, nil
}

// createDatabase creates a database of the run's own on the PostgreSQL
// server at admin (psql does it, so the harness needs no driver), and
// returns its URL and a func that drops it.
func createDatabase(ctx context.Context, admin string) (string, func(), error) {
	u, err := url.Parse(admin)
	if err != nil {
		return "", nil, fmt.Errorf("soak: database URL: %w", err)
	}
	name := fmt.Sprintf("soak_%d", time.Now().UnixNano())
	psql := func(sql string) error {
		out, err := exec.CommandContext(ctx, "psql", admin, "-v", "ON_ERROR_STOP=1", "-qc", sql).CombinedOutput()
		if err != nil {
			return fmt.Errorf("soak: psql %q: %w: %s", sql, err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	if err := psql("CREATE DATABASE " + name); err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	q := u.Query()
	if q.Get("sslmode") == "" {
		q.Set("sslmode", "disable")
		u.RawQuery = q.Encode()
	}
	drop := func() {
		c := exec.Command("psql", admin, "-qc", "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		_ = c.Run()
	}
	return u.String(), drop, nil
}

// ErrFailed is returned by a run whose report fails a criterion.
var ErrFailed = errors.New("soak: a criterion failed")
