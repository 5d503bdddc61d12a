package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/check"
	"github.com/saguaro-go/saguaro/bench/internal/cli"
	"github.com/saguaro-go/saguaro/bench/internal/configs"
	"github.com/saguaro-go/saguaro/bench/internal/proc"
)

// The stdio workload: tools/call of the echo tool over stdio, against each
// library's stdio server (configs.Stdio), one process per client as a
// desktop client starts it. Each slice sends a fixed number of calls,
// lock-step (one in flight) or pipelined (N in flight), checks every
// answer, and reads the server's CPU time and allocations from its probe
// before and after: calls/s is wall time, so the figures that matter on a
// shared machine are CPU and bytes per call.

type stdioOptions struct {
	depths []int
	calls  int // per measured slice
	warmup int // calls per slice before measuring
	rounds int
}

func stdioFlags(o *options) func() {
	var depths string
	flag.StringVar(&depths, "stdio-depths", "1,16", "stdio workload: calls in flight, comma-separated (1 is lock-step)")
	flag.IntVar(&o.stdio.calls, "stdio-calls", 0, "stdio workload: measured calls per slice (default 20000; quick 3000)")
	flag.IntVar(&o.stdio.warmup, "stdio-warmup", 0, "stdio workload: unmeasured calls before each slice (default 2000; quick 500)")
	flag.IntVar(&o.stdio.rounds, "stdio-rounds", 0, "stdio workload: interleaved rounds (default 5; quick 2)")
	return func() {
		s := &o.stdio
		var err error
		if s.depths, err = cli.ParseConns(depths); err != nil {
			log.Fatal(err)
		}
		pick := func(quick, full int) int {
			if o.quick {
				return quick
			}
			return full
		}
		if s.calls == 0 {
			s.calls = pick(3000, 20000)
		}
		if s.warmup == 0 {
			s.warmup = pick(500, 2000)
		}
		if s.rounds == 0 {
			s.rounds = pick(2, 5)
		}
	}
}

func stdioKey(name string, depth int) string { return name + "@" + strconv.Itoa(depth) }

// stdioSlice is one measured slice.
type stdioSlice struct {
	Calls      int
	Wall       time.Duration
	CPUNS      int64
	AllocBytes uint64
	AllocObjs  uint64
}

// stdioAgg is one cell of the stdio table: its slices, and the first
// failure if any.
type stdioAgg struct {
	Slices []stdioSlice
	Err    string `json:",omitempty"`
}

func (a *stdioAgg) callsPerSec() []float64 {
	var xs []float64
	for _, s := range a.Slices {
		xs = append(xs, float64(s.Calls)/s.Wall.Seconds())
	}
	return xs
}

func (a *stdioAgg) cpuPerCall() []float64 {
	var xs []float64
	for _, s := range a.Slices {
		xs = append(xs, float64(s.CPUNS)/float64(s.Calls))
	}
	return xs
}

func (a *stdioAgg) bytesPerCall() []float64 {
	var xs []float64
	for _, s := range a.Slices {
		xs = append(xs, float64(s.AllocBytes)/float64(s.Calls))
	}
	return xs
}

func (a *stdioAgg) objsPerCall() []float64 {
	var xs []float64
	for _, s := range a.Slices {
		xs = append(xs, float64(s.AllocObjs)/float64(s.Calls))
	}
	return xs
}

// stdioServer is a running stdio server and its session.
type stdioServer struct {
	*proc.Proc
	cfg  configs.Config
	w    *bufio.Writer
	r    *bufio.Reader
	next int64
}

func startStdioServer(o *options, cfg configs.Config) (*stdioServer, error) {
	bin := filepath.Join(o.binDir, cfg.Name)
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s not built (run make -C bench build): %w", bin, err)
	}
	args := []string{"-admin", "127.0.0.1:0"}
	cmd := exec.Command(bin, args...)
	if o.pin {
		cmd = exec.Command("taskset", append([]string{"-c", "0", bin}, args...)...)
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	}
	p, in, out, err := proc.StartStdio(cfg.Name, filepath.Join(o.logDir, cfg.Name+".stdio.log"), cmd)
	if err != nil {
		return nil, err
	}
	s := &stdioServer{Proc: p, cfg: cfg, w: bufio.NewWriter(in), r: bufio.NewReaderSize(out, 64<<10), next: 1}
	if err := s.initialize(); err != nil {
		p.Stop()
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	return s, nil
}

// stdioProtocol is the revision the workload asks for: one every library
// serves over stdio.
const stdioProtocol = "2025-06-18"

func (s *stdioServer) initialize() error {
	fmt.Fprintf(s.w, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"bench-loadgen","version":"1"}}}`+"\n", stdioProtocol)
	if err := s.w.Flush(); err != nil {
		return err
	}
	line, err := s.response()
	if err != nil {
		return err
	}
	if err := check.Initialize(stdioResponse(line), 0, "", false, stdioProtocol); err != nil {
		return err
	}
	fmt.Fprintf(s.w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	return s.w.Flush()
}

// response reads the next line that is a response (notifications, which
// none of these calls should cause, are skipped).
func (s *stdioServer) response() ([]byte, error) {
	for {
		line, err := s.r.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("reading the server's output: %w", err)
		}
		var env struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &env) == nil && len(env.ID) > 0 {
			return line, nil
		}
	}
}

func stdioResponse(line []byte) check.Response {
	return check.Response{Status: 200, ContentType: "application/json", Body: line}
}

func stdioText(id int64) string { return "stdio echo " + strconv.FormatInt(id, 10) }

// run sends n calls with depth of them in flight at most and checks every
// answer; it returns the wall time from the first write to the last read.
func (s *stdioServer) run(n, depth int) (time.Duration, error) {
	first := s.next
	s.next += int64(n)
	tokens := make(chan struct{}, depth)
	werr := make(chan error, 1)
	start := time.Now()
	go func() {
		var buf []byte
		for id := first; id < first+int64(n); id++ {
			tokens <- struct{}{}
			buf = append(buf[:0], `{"jsonrpc":"2.0","id":`...)
			buf = strconv.AppendInt(buf, id, 10)
			buf = append(buf, `,"method":"tools/call","params":{"name":"echo","arguments":{"text":`...)
			buf = strconv.AppendQuote(buf, stdioText(id))
			buf = append(buf, "}}}\n"...)
			if _, err := s.w.Write(buf); err != nil {
				werr <- err
				return
			}
			if err := s.w.Flush(); err != nil {
				werr <- err
				return
			}
		}
		werr <- nil
	}()
	seen := make(map[int64]bool, depth)
	for range n {
		line, err := s.response()
		if err != nil {
			return 0, err
		}
		var env struct {
			ID int64 `json:"id"`
		}
		if err := json.Unmarshal(line, &env); err != nil || env.ID < first || env.ID >= first+int64(n) || seen[env.ID] {
			return 0, fmt.Errorf("an answer with an unexpected id: %.200s", line)
		}
		if err := check.Call(stdioResponse(line), env.ID, stdioText(env.ID)); err != nil {
			return 0, fmt.Errorf("call %d: %w", env.ID, err)
		}
		if depth > 1 {
			seen[env.ID] = true
		}
		<-tokens
	}
	wall := time.Since(start)
	if err := <-werr; err != nil {
		return 0, err
	}
	return wall, nil
}

// slice runs a warm-up, then n measured calls between two probe readings.
func (s *stdioServer) slice(o *options, depth int) (stdioSlice, error) {
	if _, err := s.run(o.stdio.warmup, depth); err != nil {
		return stdioSlice{}, err
	}
	before, err := s.Probe(false)
	if err != nil {
		return stdioSlice{}, err
	}
	wall, err := s.run(o.stdio.calls, depth)
	if err != nil {
		return stdioSlice{}, err
	}
	after, err := s.Probe(false)
	if err != nil {
		return stdioSlice{}, err
	}
	return stdioSlice{Calls: o.stdio.calls, Wall: wall, CPUNS: after.CPUNS() - before.CPUNS(),
		AllocBytes: after.AllocBytes - before.AllocBytes, AllocObjs: after.AllocObjs - before.AllocObjs}, nil
}

// runStdioPhase starts every stdio server, then for each round and each
// depth gives every server one slice, in an order that rotates from round
// to round.
func runStdioPhase(o *options, run *runResult) {
	run.Stdio = map[string]*stdioAgg{}
	var servers []*stdioServer
	defer func() {
		for _, s := range servers {
			s.Stop()
		}
	}()
	for _, c := range configs.Stdio {
		if len(o.only) > 0 && !o.only[c.Name] {
			continue
		}
		s, err := startStdioServer(o, c)
		if err != nil {
			log.Printf("stdio: %s: %v", c.Name, err)
			for _, d := range o.stdio.depths {
				run.Stdio[stdioKey(c.Name, d)] = &stdioAgg{Err: err.Error()}
			}
			continue
		}
		run.StdioReady = append(run.StdioReady, s.Ready)
		servers = append(servers, s)
	}
	for round := range o.stdio.rounds {
		for _, d := range o.stdio.depths {
			for i := range servers {
				s := servers[(i+round)%len(servers)]
				k := stdioKey(s.cfg.Name, d)
				agg := run.Stdio[k]
				if agg == nil {
					agg = &stdioAgg{}
					run.Stdio[k] = agg
				}
				if agg.Err != "" {
					continue
				}
				sl, err := s.slice(o, d)
				if err != nil {
					if errors.Is(err, io.EOF) {
						err = fmt.Errorf("%w (see %s)", err, s.LogPath)
					}
					agg.Err = err.Error()
					log.Printf("stdio: %s, %d in flight: FAILED: %v", s.cfg.Name, d, err)
					continue
				}
				agg.Slices = append(agg.Slices, sl)
				log.Printf("stdio round %d: %s, %d in flight: %.0f calls/s, %.1f µs CPU and %.0f B per call",
					round+1, s.cfg.Name, d, float64(sl.Calls)/sl.Wall.Seconds(), float64(sl.CPUNS)/float64(sl.Calls)/1e3,
					float64(sl.AllocBytes)/float64(sl.Calls))
			}
		}
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func minOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	m := xs[0]
	for _, x := range xs[1:] {
		m = min(m, x)
	}
	return m
}

// renderStdio writes the stdio section of the results page.
func renderStdio(r *runResult, p func(string, ...any)) {
	o := r.Opts
	p("## stdio: tools/call over standard input and output\n\n")
	p("Each library's stdio server (one process, started by the load generator as a desktop client starts one, speaking %s after `initialize`) "+
		"gets %d rounds of slices; each slice is %d unmeasured calls of the echo tool, then %d measured ones, lock-step (1 in flight) or pipelined "+
		"(N written ahead of their answers), every answer checked (its id, one text block equal to the text sent). "+
		"calls/s is the median slice's wall rate; CPU and bytes per call are the server's own (its probe's getrusage and runtime/metrics, "+
		"read before and after each slice), the minimum over the slices for CPU (the machine is shared) and the median for bytes.\n\n",
		stdioProtocol, o.stdio.rounds, o.stdio.warmup, o.stdio.calls)
	for _, rd := range r.StdioReady {
		p("- %s: %s\n", rd.Name, rd.Notes)
	}
	p("\n")
	for _, d := range o.stdio.depths {
		what := "lock-step (1 in flight)"
		if d > 1 {
			what = fmt.Sprintf("%d in flight", d)
		}
		p("### %s\n\n", what)
		p("| configuration | calls/s | CPU per call | bytes per call | allocations per call |\n|---|---|---|---|---|\n")
		for _, c := range configs.Stdio {
			agg := r.Stdio[stdioKey(c.Name, d)]
			switch {
			case agg == nil:
				continue
			case agg.Err != "":
				p("| %s | **FAILED**: %s | | | |\n", c.Name, agg.Err)
				continue
			case len(agg.Slices) == 0:
				continue
			}
			p("| %s | %.0f | %.1f µs | %.0f B | %.1f |\n", c.Name, median(agg.callsPerSec()), minOf(agg.cpuPerCall())/1e3,
				median(agg.bytesPerCall()), median(agg.objsPerCall()))
		}
		p("\n")
		if line := stdioVerdict(r, d); line != "" {
			p("%s\n\n", line)
		}
	}
}

// stdioVerdict says whether saguaro is ahead of both peers at depth d on
// calls/s and on bytes per call.
func stdioVerdict(r *runResult, d int) string {
	get := func(name string) *stdioAgg {
		a := r.Stdio[stdioKey(name, d)]
		if a == nil || a.Err != "" || len(a.Slices) == 0 {
			return nil
		}
		return a
	}
	sg := get("saguaro-stdio")
	if sg == nil {
		return ""
	}
	ahead := func(f func(*stdioAgg) float64, more bool) (bool, string) {
		ok := true
		var parts []string
		for _, peer := range []string{"gosdk-stdio", "mcpgo-stdio"} {
			pa := get(peer)
			if pa == nil {
				continue
			}
			x, y := f(sg), f(pa)
			if more && x <= y || !more && x >= y {
				ok = false
			}
			parts = append(parts, fmt.Sprintf("%.2fx %s", x/y, peer))
		}
		return ok, fmt.Sprint(parts)
	}
	cps, cpsWhy := ahead(func(a *stdioAgg) float64 { return median(a.callsPerSec()) }, true)
	bpc, bpcWhy := ahead(func(a *stdioAgg) float64 { return median(a.bytesPerCall()) }, false)
	cpu, cpuWhy := ahead(func(a *stdioAgg) float64 { return minOf(a.cpuPerCall()) }, false)
	yes := map[bool]string{true: "ahead of both", false: "**not** ahead of both"}
	return fmt.Sprintf("saguaro-stdio: calls/s %s (%s); bytes per call %s (%s); CPU per call %s (%s).",
		yes[cps], cpsWhy, yes[bpc], bpcWhy, yes[cpu], cpuWhy)
}
