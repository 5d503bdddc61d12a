package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/configs"
	"github.com/saguaro-go/saguaro/bench/internal/serve"
)

type runResult struct {
	Started  time.Time
	Finished time.Time
	Opts     *options `json:"-"`
	Configs  []configs.Config
	Ready    map[string]serve.Ready
	StartErr map[string]string       `json:",omitempty"`
	TP       map[string]*tpAgg       `json:",omitempty"`
	Churn    map[string]*churnResult `json:",omitempty"`
	Idle     map[string]*idleResult  `json:",omitempty"`
	// Progress is keyed name@own / name@shared.
	Progress      map[string]*tpAgg `json:",omitempty"`
	ProgressNotes map[string]string `json:",omitempty"`
	// Fanout is keyed name@paced / name@burst.
	Fanout    map[string]*fanAgg `json:",omitempty"`
	LoadgenGo string
	LoadStart string
	LoadEnd   string
}

// noteReady keeps the first ready line of a configuration (the throughput
// phase's, when it ran), for the configuration table.
func (r *runResult) noteReady(name string, rd serve.Ready) {
	if _, ok := r.Ready[name]; !ok {
		r.Ready[name] = rd
	}
}

func (r *runResult) setStartError(name string, err error) {
	if r.StartErr == nil {
		r.StartErr = map[string]string{}
	}
	r.StartErr[name] = err.Error()
}

// failed reports whether a configuration failed anywhere, with the first
// reason.
func (r *runResult) failed(name string) (bool, string) {
	if e, ok := r.StartErr[name]; ok {
		return true, "did not start: " + e
	}
	var reasons []string
	for k, a := range r.TP {
		if strings.HasPrefix(k, name+"@") && a.Fail.total() > 0 {
			reasons = append(reasons, fmt.Sprintf("tools/call c=%s: %d of %d calls wrong, first: %s", strings.TrimPrefix(k, name+"@"),
				a.Fail.total(), uint64(a.Fail.total())+a.OK, firstOf(&a.Fail)))
		}
	}
	for _, v := range []string{progressOwn, progressShared} {
		if a := r.Progress[name+"@"+v]; a != nil && a.Fail.total() > 0 {
			reasons = append(reasons, fmt.Sprintf("progress (%s): %d of %d calls wrong, first: %s", variantLabel(v),
				a.Fail.total(), uint64(a.Fail.total())+a.OK, firstOf(&a.Fail)))
		}
	}
	for _, v := range []string{fanPaced, fanBurst} {
		if a := r.Fanout[name+"@"+v]; a != nil && a.Fail.total() > 0 {
			reasons = append(reasons, fmt.Sprintf("fan-out (%s): %s", v, fanFailure(a)))
		}
	}
	if c := r.Churn[name]; c != nil && c.Fail.total() > 0 {
		reasons = append(reasons, "churn: "+firstOf(&c.Fail))
	}
	if c := r.Idle[name]; c != nil && c.Fail.total() > 0 {
		reasons = append(reasons, "idle: "+firstOf(&c.Fail))
	}
	sort.Strings(reasons)
	if len(reasons) == 0 {
		return false, ""
	}
	return true, strings.Join(reasons, "; ")
}

func (r *runResult) anyFailed() bool {
	for _, c := range r.Configs {
		if f, _ := r.failed(c.Name); f {
			return true
		}
	}
	return false
}

func firstOf(f *failures) string {
	kinds := make([]string, 0, len(f.First))
	for k := range f.First {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	if len(kinds) == 0 {
		return ""
	}
	return f.First[kinds[0]]
}

func (r *runResult) ready(name string) *serve.Ready {
	if rd, ok := r.Ready[name]; ok {
		return &rd
	}
	return nil
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// cpuCount is the machine's processor count, whatever this process's
// affinity.
func cpuCount() int {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.NumCPU()
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if k, _, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "processor" {
			n++
		}
	}
	if n == 0 {
		return runtime.NumCPU()
	}
	return n
}

func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return runtime.GOOS
	}
	return "Linux " + strings.TrimSpace(string(b))
}

func saguaroCommit() string {
	out, err := exec.Command("git", "-C", "..", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown commit"
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", "..", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		c += " + uncommitted changes"
	}
	return c
}

func dur(d time.Duration) string {
	switch {
	case d <= 0:
		return "–"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
}

func bytesStr(b float64) string {
	switch {
	case b < 0:
		return "-" + bytesStr(-b)
	case b < 1024:
		return fmt.Sprintf("%.0f B", b)
	case b < 1<<20:
		return fmt.Sprintf("%.1f KiB", b/1024)
	default:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	}
}

func ratio(v, base float64) string {
	if base <= 0 || v <= 0 {
		return "–"
	}
	return fmtRatio(v / base)
}

func fmtRatio(x float64) string {
	if x <= 0 {
		return "–"
	}
	if x < 0.1 {
		return fmt.Sprintf("%.3f×", x)
	}
	return fmt.Sprintf("%.2f×", x)
}

func renderResults(r *runResult) string {
	o := r.Opts
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	p("# saguaro benchmark results\n\n")
	p("Generated by `%s`. Do not edit by hand: run the command again.\n", o.command)
	if o.quick {
		p("**QUICK run**: short slices, few rounds; for development only, the figures are noisy.\n")
	}
	p("\n")
	p("- Date: %s (the run took %s)\n", r.Started.UTC().Format("2006-01-02 15:04 MST"), r.Finished.Sub(r.Started).Round(time.Second))
	procs := map[int]bool{}
	for _, rd := range r.Ready {
		procs[rd.GOMAXPROCS] = true
	}
	var gmp []string
	for n := range procs {
		gmp = append(gmp, fmt.Sprint(n))
	}
	sort.Strings(gmp)
	placement := fmt.Sprintf("unpinned: the load generator (GOMAXPROCS=%d) and the servers (GOMAXPROCS=%s) share the cores", runtime.GOMAXPROCS(0), strings.Join(gmp, ","))
	if o.pin {
		placement = fmt.Sprintf("pinned: every server on CPU 0 (GOMAXPROCS=%s), the load generator on CPU 1", strings.Join(gmp, ","))
	}
	p("- Machine: %s, %d cores, %s; %s\n", cpuModel(), cpuCount(), kernel(), placement)
	goVersions := map[string]bool{runtime.Version(): true}
	deps := map[string]string{}
	for _, rd := range r.Ready {
		goVersions[rd.GoVersion] = true
		for k, v := range rd.Deps {
			deps[k] = v
		}
	}
	p("- Other load on the machine (1-minute load average, /proc/loadavg): %s at the start, %s at the end; "+
		"a run alone keeps it near 2, so more means other work shared the cores\n", orDash(r.LoadStart), orDash(r.LoadEnd))
	p("- Go: %s\n", strings.Join(sortedKeys(goVersions), ", "))
	var libs []string
	for _, k := range sortedKeysS(deps) {
		if strings.Contains(k, "saguaro") {
			continue
		}
		libs = append(libs, k+" "+deps[k])
	}
	libs = append(libs, "saguaro "+saguaroCommit()+" (working tree)")
	p("- Libraries: %s\n", strings.Join(libs, "; "))
	if o.workloads["fanout"] {
		p("- Fan-out: %d SSE clients per configuration, %d rounds, each a paced slice (%d events at %.0f events/s) and a burst slice (%d events back to back) per configuration\n",
			o.fanClients, o.fanRounds, o.fanPacedEvents, o.fanRate, o.fanBurstEvents)
	}
	p("- Settings: %s rounds × %d concurrencies (%s connections) × one slice per configuration, each slice %v warm-up + %v measured; "+
		"churn %v with %d connections and a %v session idle timeout; %d idle sessions; per-request timeout %v; protocol %s, JSON responses\n",
		fmt.Sprint(o.rounds), len(o.conns), joinInts(o.conns), o.warmup, o.slice, o.churnDur, o.churnConns, o.churnTTL,
		o.idleSessions, o.timeout, ProtocolVersion)
	if len(o.effectiveFlags) > 0 {
		p("- Flags given: `%s`\n", strings.Join(o.effectiveFlags, " "))
	}
	p("\n")

	// Summary.
	if sum := summary(r); len(sum) > 0 {
		p("## Summary\n\n")
		for _, line := range sum {
			p("- %s\n", line)
		}
		p("\n")
	}

	// Configurations.
	p("## Configurations\n\n")
	p("Each is its own binary and process, listening on 127.0.0.1. The MCP configurations serve one typed tool `echo` (`{\"text\": string}`, required, " +
		"validated by the library) that returns one text content block with the same text. The `sse-*` configurations serve the fan-out workload " +
		"only: an event stream at `GET /events` and `POST /publish?seq=N`, which publishes one event to every connected client.\n\n")
	p("| configuration | library | status | how it is set up |\n|---|---|---|---|\n")
	for _, c := range r.Configs {
		status := "ok"
		notes := ""
		if rd := r.ready(c.Name); rd != nil {
			notes = rd.Notes
		}
		if c.IsModern() {
			notes += "; the load generator speaks 2026-07-28 to it: no initialize, no session, every request carries " +
				"`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `_meta` protocolVersion + clientCapabilities"
		}
		if isPending(c) {
			status = "not measured"
			notes = "pending: " + c.Pending
		} else if f, why := r.failed(c.Name); f {
			status = "**FAILED**: " + mdEscape(why)
		}
		p("| %s | %s | %s | %s |\n", c.Name, c.Library, status, mdEscape(notes))
	}
	p("\nIn the throughput and idle-session workloads the stateful servers get a %v session idle timeout; in the churn workload %v.\n\n",
		o.serverIdleTTL, o.churnTTL)

	// Throughput.
	if len(r.TP) > 0 {
		p("## tools/call throughput and latency\n\n")
		p("Every connection is a keep-alive HTTP/1.1 connection sending one request at a time (closed loop). Stateful configurations " +
			"initialize each connection's session first (initialize + notifications/initialized, then `Mcp-Session-Id` on every call). " +
			"Every response is checked: HTTP 200, a JSON-RPC result for the request's id, and the echoed text equal to the text sent " +
			"(distinct per request); for the 2026-07-28 configurations also `resultType: \"complete\"`. Server CPU (user+sys from getrusage), allocations and bytes are the server process's own, " +
			"read from its probe endpoint before and after each measured slice, summed over the slices and divided by the requests completed in them. " +
			"req/s is the median over the slices; its × bare is the median over rounds of the ratio to bare's slice in the same round " +
			"(higher is better). Server CPU × bare: lower is better. p50/p99 cover every request of every slice.\n\n")
		for _, conns := range o.conns {
			base := r.TP[tpKeyString(configs.Bare, conns)]
			p("### %d connection%s\n\n", conns, plural(conns))
			p("| configuration | req/s | × bare | p50 | p99 | server CPU/req | × bare | allocs/req | bytes/req | req/s per slice (min–max) | checked OK |\n")
			p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
			for _, c := range r.Configs {
				a := r.TP[tpKeyString(c.Name, conns)]
				if a == nil {
					reason := "not run"
					if isPending(c) {
						reason = "pending"
					}
					p("| %s | %s | | | | | | | | | |\n", c.Name, reason)
					continue
				}
				if a.Fail.total() > 0 {
					p("| %s | **FAILED**: %d of %d calls wrong, first: %s | | | | | | | | | |\n", c.Name, a.Fail.total(),
						uint64(a.Fail.total())+a.OK, mdEscape(firstOf(&a.Fail)))
					continue
				}
				cpu := a.perReq(float64(a.CPUNS)) / 1000
				rpsRatio := "–"
				var baseCPU float64
				if base != nil && base.Fail.total() == 0 {
					rpsRatio = fmtRatio(a.ratioTo(base))
					baseCPU = base.perReq(float64(base.CPUNS)) / 1000
				}
				lo, hi := minMax(a.SliceRPS)
				p("| %s | %.0f | %s | %s | %s | %.1f µs | %s | %.0f | %s | %.0f–%.0f | %d |\n",
					c.Name, a.medianRPS(), rpsRatio, dur(a.Hist.Quantile(0.5)), dur(a.Hist.Quantile(0.99)),
					cpu, ratio(cpu, baseCPU), a.perReq(float64(a.Allocs)), bytesStr(a.perReq(float64(a.Bytes))), lo, hi, a.OK)
			}
			p("\n")
		}
	}

	// Progress.
	if len(r.Progress) > 0 {
		p("## Progress streaming\n\n")
		p("A tool `progress` sends %d `notifications/progress` for the call's `progressToken`, then the same echo result. "+
			"The call must be answered as an event stream holding exactly those notifications, in increasing order, for this "+
			"call's token and no other, then the result. %d connections, %d interleaved round%s; every server runs in a fresh process. "+
			"First every connection has its own session; then (stateful configurations) connections share sessions two by two, "+
			"so two calls of one session are in flight at once and each call's notifications must still reach its own stream.\n\n",
			serve.ProgressSteps, o.progressConns, o.progressRounds, plural(o.progressRounds))
		p("| configuration | req/s | p50 | p99 | server CPU/req | allocs/req | bytes/req | checked OK | two connections per session |\n")
		p("|---|---:|---:|---:|---:|---:|---:|---:|---|\n")
		for _, c := range r.Configs {
			if c.Name == configs.Bare {
				continue
			}
			a := r.Progress[c.Name+"@"+progressOwn]
			if a == nil {
				p("| %s | %s | | | | | | | |\n", c.Name, notRun(c))
				continue
			}
			shared := "n/a (no sessions)"
			if sh := r.Progress[c.Name+"@"+progressShared]; sh != nil {
				if f := sh.Fail.total(); f > 0 {
					shared = fmt.Sprintf("**FAILED**: %d of %d calls wrong, first: %s", f, uint64(f)+sh.OK, mdEscape(firstOf(&sh.Fail)))
				} else {
					shared = fmt.Sprintf("ok, %d calls checked, %.0f req/s", sh.OK, sh.medianRPS())
				}
			}
			if f := a.Fail.total(); f > 0 {
				p("| %s | **FAILED**: %d of %d calls wrong, first: %s | | | | | | | %s |\n", c.Name, f, uint64(f)+a.OK, mdEscape(firstOf(&a.Fail)), shared)
				continue
			}
			p("| %s | %.0f | %s | %s | %.1f µs | %.0f | %s | %d | %s |\n", c.Name, a.medianRPS(),
				dur(a.Hist.Quantile(0.5)), dur(a.Hist.Quantile(0.99)), a.perReq(float64(a.CPUNS))/1000,
				a.perReq(float64(a.Allocs)), bytesStr(a.perReq(float64(a.Bytes))), a.OK, shared)
		}
		var differs []string
		for _, c := range r.Configs {
			if n, ok := r.ProgressNotes[c.Name]; ok && r.ready(c.Name) != nil && n != r.ready(c.Name).Notes {
				differs = append(differs, fmt.Sprintf("%s: %s", c.Name, mdEscape(n)))
			}
		}
		if len(differs) == 0 {
			differs = append(differs, "none")
		}
		p("\nSet-ups that differ from the configuration table for this workload: %s.\n\n", strings.Join(differs, "; "))
	}

	if len(r.Fanout) > 0 {
		renderFanout(r, p)
	}

	// Churn.
	if len(r.Churn) > 0 {
		p("## Session churn\n\n")
		p("Each of %d connections loops: initialize, notifications/initialized, one checked tools/call, then abandons the session "+
			"(no DELETE), for %v. The servers run with a %v session idle timeout (go-sdk `SessionTimeout`, mcp-go `WithSessionIdleTTL`). "+
			"Heap and goroutines are read after a forced GC: before, right after the churn, and again %v later, when every abandoned "+
			"session should have been reaped. Δ is against before. When the churn lasts longer than the idle timeout, the reaper is "+
			"already at work during it, so \"right after\" is a steady state, not the total. Stateless configurations keep no "+
			"sessions and are left out of this table and the next.\n\n", o.churnConns, o.churnDur, o.churnTTL, o.churnWait)
		p("| configuration | sessions | sessions/s | server CPU/session | right after: goroutines Δ | heap Δ | heap Δ / sessions | after the reaper: goroutines Δ | heap Δ | server log lines |\n")
		p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, c := range r.Configs {
			x := r.Churn[c.Name]
			if x == nil {
				if c.Stateful {
					p("| %s | %s | | | | | | | | |\n", c.Name, notRun(c))
				}
				continue
			}
			if x.Fail.total() > 0 {
				p("| %s | **FAILED** %s | | | | | | | | |\n", c.Name, mdEscape(firstOf(&x.Fail)))
				continue
			}
			n := float64(max(x.Sessions, 1))
			endHeap := float64(x.End.HeapLive) - float64(x.Base.HeapLive)
			p("| %s | %d | %.0f | %.0f µs | %+d | %s | %s | %+d | %s | %d |\n", c.Name, x.Sessions, float64(x.Sessions)/x.Elapsed.Seconds(),
				float64(x.End.CPUNS()-x.Base.CPUNS())/n/1000,
				int64(x.End.Goroutines)-int64(x.Base.Goroutines), bytesStr(endHeap), bytesStr(endHeap/n),
				int64(x.Reaped.Goroutines)-int64(x.Base.Goroutines), bytesStr(float64(x.Reaped.HeapLive)-float64(x.Base.HeapLive)),
				x.LogLines)
		}
		p("\n")
	}

	// Idle.
	if len(r.Idle) > 0 {
		p("## Idle sessions\n\n")
		p("%d sessions opened (initialize + notifications/initialized, %d connections), then left idle; what the server retains is "+
			"read after a forced GC and divided by the sessions. Then a checked tools/call on a sample of about 100 of them proves "+
			"they are still alive. Idle timeout %v, longer than the test.\n\n", o.idleSessions, o.idleConns, o.serverIdleTTL)
		p("| configuration | sessions | opened/s | heap live per session | stacks per session | goroutines per session | RSS per session | sample alive |\n")
		p("|---|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, c := range r.Configs {
			x := r.Idle[c.Name]
			if x == nil {
				if c.Stateful {
					p("| %s | %s | | | | | | |\n", c.Name, notRun(c))
				}
				continue
			}
			if x.Fail.total() > 0 {
				p("| %s | **FAILED** %s | | | | | | |\n", c.Name, mdEscape(firstOf(&x.Fail)))
				continue
			}
			n := float64(max(x.Sessions, 1))
			opened := fmt.Sprint(x.Sessions)
			if x.Limited {
				opened = fmt.Sprintf("%d of %d (the %v time limit stopped it)", x.Sessions, x.Wanted, o.idleLimit)
			}
			p("| %s | %s | %.0f | %s | %s | %.2f | %s | %d |\n", c.Name, opened, float64(x.Sessions)/x.Elapsed.Seconds(),
				bytesStr((float64(x.Held.HeapLive)-float64(x.Base.HeapLive))/n),
				bytesStr((float64(x.Held.StackBytes)-float64(x.Base.StackBytes))/n),
				(float64(x.Held.Goroutines)-float64(x.Base.Goroutines))/n,
				bytesStr((float64(x.Held.RSS)-float64(x.Base.RSS))/n), x.Checked)
		}
		p("\n")
	}

	p("## Not measured\n\n")
	var missing []string
	for _, c := range r.Configs {
		if isPending(c) {
			missing = append(missing, fmt.Sprintf("`%s`: %s.", c.Name, c.Pending))
		}
	}
	for _, w := range []string{"throughput", "progress", "churn", "idle", "fanout"} {
		if !o.workloads[w] {
			missing = append(missing, fmt.Sprintf("The %s workload, left out of this run by `-workloads`.", w))
		}
	}
	if len(missing) == 0 {
		missing = append(missing, "Nothing left out: every configuration ran every workload that applies to it.")
	}
	for _, m := range missing {
		p("- %s\n", m)
	}
	p("\n## Method\n\n")
	p("- One load generator process (`bench/cmd/loadgen`) drives every server process. Slices are interleaved: in each round, every " +
		"configuration gets one slice at each concurrency, in an order that rotates from round to round, so machine noise " +
		"spreads over all of them. Figures add up all rounds; the min–max column shows the spread between slices.\n")
	p("- The load generator writes requests as raw bytes on keep-alive connections and parses responses with `net/http`'s " +
		"reader; latency is from writing the request to having read and checked the whole response (p50/p99 from a log-linear " +
		"histogram, ~3%% resolution).\n")
	if lg := loadgenCPU(r); lg != "" {
		p("- The load generator's own CPU per checked request (user+sys, all its threads): %s. A cheap server's rate is "+
			"partly bounded by it (it shares the cores, or has one core to itself when pinned); the server CPU columns are not.\n", lg)
	}
	p("- A configuration with any failed check (wrong status, JSON-RPC error, wrong id or echo, transport error) is reported " +
		"as FAILED and gets no figures.\n")
	p("- Server logs of the run are in `bench/.bin/logs/`; raw figures in `bench/.bin/results.json`.\n")
	return b.String()
}

func notRun(c configs.Config) string {
	if isPending(c) {
		return "pending"
	}
	return "not run"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

func minMax(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	lo, hi := xs[0], xs[0]
	for _, x := range xs[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		if k != "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func sortedKeysS(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// loadgenCPU summarises the load generator's CPU per request, per
// concurrency, over every configuration.
func loadgenCPU(r *runResult) string {
	var parts []string
	for _, conns := range r.Opts.conns {
		var ns int64
		var ok uint64
		for _, c := range r.Configs {
			if a := r.TP[tpKeyString(c.Name, conns)]; a != nil {
				ns += a.SelfCPUNS
				ok += a.OK
			}
		}
		if ok > 0 {
			parts = append(parts, fmt.Sprintf("%.1f µs at %d connection%s", float64(ns)/float64(ok)/1000, conns, plural(conns)))
		}
	}
	return strings.Join(parts, ", ")
}

func variantLabel(v string) string {
	if v == progressShared {
		return "two connections per session"
	}
	return "own session per connection"
}

// loadAvg is the 1-minute load average.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return ""
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// summary is one generated line per configuration: its tools/call figures
// against bare at the middle concurrency, its idle-session cost, and what
// failed.
func summary(r *runResult) []string {
	conns := 0
	if len(r.Opts.conns) > 0 {
		conns = r.Opts.conns[len(r.Opts.conns)/2]
	}
	base := r.TP[tpKeyString(configs.Bare, conns)]
	var out []string
	for _, c := range r.Configs {
		if c.Name == configs.Bare || c.Name == configs.SSEBare || isPending(c) {
			continue
		}
		var parts []string
		if a := r.TP[tpKeyString(c.Name, conns)]; a != nil && a.Fail.total() == 0 && base != nil && base.Fail.total() == 0 && a.OK > 0 && base.OK > 0 {
			cpu := a.perReq(float64(a.CPUNS))
			parts = append(parts, fmt.Sprintf("tools/call at %d connections: %s bare's rate, %s bare's server CPU per call (%.0f µs), %s allocated per call",
				conns, fmtRatio(a.ratioTo(base)), ratio(cpu, base.perReq(float64(base.CPUNS))), cpu/1000, bytesStr(a.perReq(float64(a.Bytes)))))
		}
		if line := fanSummary(r, c.Name); line != "" {
			parts = append(parts, line)
		}
		if x := r.Idle[c.Name]; x != nil && x.Fail.total() == 0 && x.Sessions > 0 {
			n := float64(x.Sessions)
			parts = append(parts, fmt.Sprintf("an idle session holds %s of heap and %.2f goroutines",
				bytesStr((float64(x.Held.HeapLive)-float64(x.Base.HeapLive))/n), (float64(x.Held.Goroutines)-float64(x.Base.Goroutines))/n))
		}
		if f, why := r.failed(c.Name); f {
			parts = append(parts, "**FAILED** "+mdEscape(why))
		}
		if len(parts) > 0 {
			out = append(out, fmt.Sprintf("`%s`: %s.", c.Name, strings.Join(parts, "; ")))
		}
	}
	return out
}
