package soak

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
)

// Allowances of the back-to-baseline criterion. A process at rest still
// has a goroutine or two that come and go (a timer's callback, a pool's
// connection being replaced), so "back to baseline" allows that many more
// than the baseline, and no more; the heap may be 10% over its baseline.
// Connections to Redis and PostgreSQL are the pools' to keep, so they are
// apart from the descriptors and their buffers apart from the heap: a
// go-redis connection holds a 32 KiB read and a 32 KiB write buffer, on a
// heap of 3 MiB two more pooled connections are 4%.
const (
	goroutineSlack = 2
	fdSlack        = 2
	heapSlack      = 0.10
	pooledHeap     = 64 << 10
)

// Criterion is one pass/fail line of the report.
type Criterion struct {
	Name    string
	Pass    bool
	Figures string
}

// Criteria judges the run.
func (r *Result) Criteria() []Criterion {
	var out []Criterion
	var gor, fds, heap []string
	gorOK, fdOK, heapOK := true, true, true
	for _, p := range r.Procs {
		b, f := p.Baseline, p.Final
		gor = append(gor, fmt.Sprintf("%s %d → %d", p.Name, b.Goroutines, f.Goroutines))
		if f.Goroutines > b.Goroutines+goroutineSlack {
			gorOK = false
		}
		fds = append(fds, fmt.Sprintf("%s %d → %d", p.Name, b.FDs-b.Pooled, f.FDs-f.Pooled))
		if f.FDs-f.Pooled > b.FDs-b.Pooled+fdSlack {
			fdOK = false
		}
		ratio := float64(f.Heap) / float64(b.Heap)
		heap = append(heap, fmt.Sprintf("%s %s → %s (%+.1f%%)", p.Name, mib(int64(b.Heap)), mib(int64(f.Heap)), (ratio-1)*100))
		if float64(f.Heap) > float64(b.Heap)*(1+heapSlack)+float64(max(0, f.Pooled-b.Pooled)*pooledHeap) {
			heapOK = false
		}
	}
	out = append(out,
		Criterion{fmt.Sprintf("goroutines back to baseline (at most +%d)", goroutineSlack), gorOK, strings.Join(gor, "; ")},
		Criterion{fmt.Sprintf("open file descriptors back to baseline (at most +%d), connections to Redis and PostgreSQL apart", fdSlack), fdOK, strings.Join(fds, "; ")},
		Criterion{"heap within 10% of baseline (after a forced collection; new pooled connections' buffers apart)", heapOK, strings.Join(heap, "; ")},
	)
	var lost []string
	lostOK := true
	for _, t := range []string{"single", "cluster"} {
		m := r.Missing[t]
		lost = append(lost, fmt.Sprintf("%s: %d of %d tasks whose creation succeeded are missing", t, len(m), r.Checked[t]))
		if len(m) > 0 {
			lostOK = false
			lost = append(lost, "e.g. "+strings.Join(m[:min(3, len(m))], ", "))
		}
	}
	out = append(out, Criterion{"no answer lost that the client was told succeeded", lostOK, strings.Join(lost, "; ")})
	undoc, total := 0, 0
	for _, row := range r.Ledger.rows(r.Windows) {
		total += row.Count
		if !row.Documented {
			undoc += row.Count
		}
	}
	out = append(out, Criterion{"every failure a documented status", undoc == 0,
		fmt.Sprintf("%d failures, %d of them not documented (table below)", total, undoc)})
	return out
}

// Passed says whether every criterion passed.
func (r *Result) Passed() bool {
	for _, c := range r.Criteria() {
		if !c.Pass {
			return false
		}
	}
	return true
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// Header is what the report says about where and how it ran.
type Header struct {
	Title   string
	Command string
	Machine []string // lines such as "CPU: …"
	PNG     string   // the chart's file name, relative to the report
}

// WriteReport writes the Markdown report.
func (r *Result) WriteReport(w io.Writer, h Header) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	c := r.Config
	verdict := "PASS"
	if !r.Passed() {
		verdict = "FAIL"
	}
	p("# %s", h.Title)
	p("")
	p("Written by `%s` on %s; verdict: **%s**.", h.Command, r.Started.UTC().Format("2006-01-02 15:04 UTC"), verdict)
	p("")
	for _, l := range h.Machine {
		p("- %s", l)
	}
	p("")
	p("## What ran")
	p("")
	p("- **One process** (`example_app`, board in SQLite in memory) and **three replicas** (`example_app -redis`, one")
	p("  PostgreSQL database for the board, one throwaway `redis-server` for the MCP sessions) behind `example_app/roundrobin`,")
	p("  every one with `-session-idle %s -conn-idle %s -body-timeout %s -write-timeout %s -debug-addr …`.", c.SessionIdle, c.ConnIdle, c.BodyTimeout, c.WriteTimeout)
	p("- Each board is seeded with 1,000 tasks (so the whole board outgrows a never-reading client's socket buffers), a")
	p("  warm-up with as many workers as the load runs (10 s; 5 s in the short form) so that the connection pools reach their")
	p("  working size, the idle timeouts pass, and the **baseline** is taken after a forced collection (`POST /debug/gc` on")
	p("  each process's debug listener).")
	if c.Light {
		p("- The short form: for %s, one worker of each kind per target, %d slow-body and %d never-reading clients per process,", c.Load, c.SlowBodies, c.NeverReaders)
		p("  and one replica SIGKILLed and restarted at 35%% of the load.")
	} else {
		p("- For %s, per target (the process, and the cluster through its balancer): %d legacy-session workers (2025-11-25:", c.Load, c.Legacy)
		p("  initialize, 3–8 calls, DELETE for half, the others abandoned to the idle timeout), %d 2026-07-28 callers, %d", c.Modern, c.Resumers)
		p("  workers that open a session's GET stream, drop it and resume it with `Last-Event-ID` (four times a session),")
		p("  %d `/events` readers; per process, straight to its own address, %d clients trickling a POST body (1 byte every", c.Feeds, c.SlowBodies)
		p("  2 s of 1,000 declared) and %d clients that never read (half on `/events`, half a `list_tasks` of the whole board).", c.NeverReaders)
		p("  The call mix: 15%% `add_task`, 10%% `import_tasks` with a progress token (an event stream of three progress")
		p("  notifications, checked), 40%% `list_tasks` of the done tasks, 35%% `search_tasks`; %s between one worker's calls.", c.Pause)
		p("- At 35%% of the load one replica is SIGKILLed and restarted 3 s later on its address; at 65%% redis-server is")
		p("  SIGKILLed and restarted 2 s later, empty.")
	}
	p("- After the load every client connection is closed, the board is checked for every task whose creation a client")
	p("  was told succeeded (the JSON API's list), the idle timeouts pass, and the **final** figures are taken after a forced")
	p("  collection. Heap is `runtime.MemStats.HeapAlloc`; RSS and open file descriptors come from `/proc`; samples every %s.", c.Sample)
	p("")
	p("## Verdict")
	p("")
	p("| criterion | result | figures (baseline → final) |")
	p("|---|---|---|")
	for _, cr := range r.Criteria() {
		res := "pass"
		if !cr.Pass {
			res = "**FAIL**"
		}
		p("| %s | %s | %s |", cr.Name, res, cr.Figures)
	}
	p("")
	p("| process | goroutines | open fds | of which Redis and PostgreSQL connections | heap | RSS | MCP sessions | |")
	p("|---|---|---|---|---|---|---|---|")
	for _, pr := range r.Procs {
		p("| %s | %d → %d | %d → %d | %d → %d | %s → %s | %s → %s | %d → %d | %s |", pr.Name, pr.Baseline.Goroutines, pr.Final.Goroutines,
			pr.Baseline.FDs, pr.Final.FDs, pr.Baseline.Pooled, pr.Final.Pooled, mib(int64(pr.Baseline.Heap)), mib(int64(pr.Final.Heap)),
			mib(pr.Baseline.RSS), mib(pr.Final.RSS), pr.Baseline.Sessions, pr.Final.Sessions, pr.Note)
	}
	p("")
	if h.PNG != "" {
		p("![heap, RSS, goroutines and open file descriptors of every process](%s)", h.PNG)
		p("")
		p("Dashed lines: the replica kill and the Redis restart; dotted: the load's end and the final figures.")
		p("")
	}
	peak := map[string]sample{}
	for _, s := range r.Samples {
		m := peak[s.Proc]
		m.Proc = s.Proc
		m.Goroutines = max(m.Goroutines, s.Goroutines)
		m.FDs = max(m.FDs, s.FDs)
		m.Heap = max(m.Heap, s.Heap)
		m.RSS = max(m.RSS, s.RSS)
		m.Sessions = max(m.Sessions, s.Sessions)
		peak[s.Proc] = m
	}
	p("Peaks under load: ")
	for _, name := range r.procNames() {
		m := peak[name]
		p("- %s: %d goroutines, %d fds, heap %s, RSS %s, %d sessions", name, m.Goroutines, m.FDs, mib(int64(m.Heap)), mib(m.RSS), m.Sessions)
	}
	p("")
	p("## Timeline")
	p("")
	p("```")
	for _, l := range r.Timeline {
		p("%s", l)
	}
	p("```")
	p("")
	p("## Requests")
	p("")
	p("Successes by kind (`kind/target`), %d `/events` events read in all:", r.Feed)
	p("")
	r.Ledger.mu.Lock()
	keys := make([]string, 0, len(r.Ledger.ok))
	for k := range r.Ledger.ok {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	p("| kind | successes |")
	p("|---|---|")
	for _, k := range keys {
		p("| %s | %d |", k, r.Ledger.ok[k])
	}
	notes := make([]string, 0, len(r.Ledger.notes))
	for k, n := range r.Ledger.notes {
		notes = append(notes, fmt.Sprintf("- %s: %d", k, n))
	}
	cuts := map[string][]time.Duration{}
	for k, v := range r.Ledger.cuts {
		cuts[k] = slices.Clone(v)
	}
	r.Ledger.mu.Unlock()
	p("")
	p("Every failure a client saw, with the first second it was seen and whether the documentation promises it:")
	p("")
	p("| failure | count | first at | documented |")
	p("|---|---|---|---|")
	for _, row := range r.Ledger.rows(r.Windows) {
		doc := "yes: " + row.Why
		if !row.Documented {
			doc = "**no**"
		}
		p("| %s | %d | %.0f s | %s |", row.outcome, row.Count, row.At.Seconds(), doc)
	}
	p("")
	p("Hostile clients:")
	p("")
	sort.Strings(notes)
	for _, n := range notes {
		p("%s", n)
	}
	for _, k := range []string{kindSlowBody, kindNeverRead} {
		d := cuts[k]
		if len(d) == 0 {
			continue
		}
		slices.Sort(d)
		how := ""
		if k == kindNeverRead {
			how = " (the harness looks after the write timeout + 5 s)"
		}
		p("- %s: %d cut, held for %.1f s at the median and %.1f s at most%s", k, len(d), d[len(d)/2].Seconds(), d[len(d)-1].Seconds(), how)
	}
	p("")
	_, err := io.WriteString(w, b.String())
	return err
}
