package soak

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// outcome is how one request (or one hostile client) ended.
type outcome struct {
	Kind       string        // which load: "legacy call", "modern call", "slow body", …
	Target     string        // "single" or "cluster"
	Status     int           // HTTP status; 0 when the exchange failed below HTTP
	RetryAfter bool          // the answer carried Retry-After
	RPCCode    int           // a JSON-RPC error's code, 0 when none
	Err        string        // a transport error, or what was wrong with the answer
	At         time.Duration // since the run started
}

// ledger counts every request of the run, and keeps what a client was told
// succeeded, so the end can check that it is really there.
type ledger struct {
	start time.Time

	mu       sync.Mutex
	ok       map[string]int // "kind/target" → successes
	failures map[outcome]int
	added    map[string][]string // target → titles of tasks whose creation succeeded
	notes    map[string]int      // what hostile clients saw, "kind/target: what" → count
	cuts     map[string][]time.Duration
}

func newLedger(start time.Time) *ledger {
	return &ledger{start: start, ok: map[string]int{}, failures: map[outcome]int{}, added: map[string][]string{}, notes: map[string]int{}}
}

func (l *ledger) success(kind, target string) {
	l.mu.Lock()
	l.ok[kind+"/"+target]++
	l.mu.Unlock()
}

// fail records a failure; At is rounded to the second so that equal
// failures of one second count together.
func (l *ledger) fail(o outcome) {
	o.At = time.Since(l.start).Truncate(time.Second)
	l.mu.Lock()
	l.failures[o]++
	l.mu.Unlock()
}

func (l *ledger) note(kind, target, what string) {
	l.mu.Lock()
	l.notes[kind+"/"+target+": "+what]++
	l.mu.Unlock()
}

func (l *ledger) created(target string, titles ...string) {
	l.mu.Lock()
	l.added[target] = append(l.added[target], titles...)
	l.mu.Unlock()
}

// window is a stretch of the run during which some failures are the
// documented consequence of what the harness did (a replica killed,
// Redis restarted).
type window struct {
	Name     string
	From, To time.Duration
}

func (w window) has(at time.Duration) bool { return at >= w.From-time.Second && at <= w.To }

// verdict says whether a failure is one the documentation promises, and
// which promise.
func verdict(o outcome, windows []window) (documented bool, why string) {
	in := func(name string) bool {
		for _, w := range windows {
			if w.Name == name && w.has(o.At) {
				return true
			}
		}
		return false
	}
	switch {
	case o.Kind == kindSlowBody && (o.Status == 408 || o.Err == "connection closed"):
		return true, "a trickled body is cut: 408, connection closed"
	case o.Status == 429 && o.RetryAfter:
		return true, "over a per-caller bound: 429 + Retry-After"
	case o.Status == 503 && o.RetryAfter:
		return true, "session store unreachable, just reset, or the session moving: 503 + Retry-After"
	case o.Status == 409 && o.Kind == kindResume:
		return true, "a second GET stream on one session: 409"
	case in(windowKill) && (o.Status == 502 || o.Status == 0 || (o.Err != "" && !strings.HasPrefix(o.Err, errBadAnswer.Error()))):
		return true, "in flight on the replica killed: lost with it (the balancer's 502, or the stream cut)"
	case in(windowKill) && o.RPCCode != 0:
		return true, "a call lost with its dead replica: that call's error"
	case in(windowKill) && o.Status == 404:
		return true, "a session whose owner died and whose state cannot move: 404, start over"
	}
	return false, "not documented"
}

// failureRow is one line of the report's failure table.
type failureRow struct {
	outcome
	Count      int
	Documented bool
	Why        string
}

// rows groups the failures by everything but the second they happened at,
// keeping the first second.
func (l *ledger) rows(windows []window) []failureRow {
	l.mu.Lock()
	defer l.mu.Unlock()
	type key struct {
		o          outcome
		documented bool
	}
	agg := map[key]*failureRow{}
	for o, n := range l.failures {
		doc, why := verdict(o, windows)
		k := o
		k.At = 0
		r := agg[key{k, doc}]
		if r == nil {
			r = &failureRow{outcome: o, Documented: doc, Why: why}
			agg[key{k, doc}] = r
		}
		r.Count += n
		if o.At < r.At {
			r.At = o.At
		}
	}
	out := make([]failureRow, 0, len(agg))
	for _, r := range agg {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Documented != out[j].Documented {
			return !out[i].Documented
		}
		return out[i].Count > out[j].Count
	})
	return out
}

func (o outcome) String() string {
	s := o.Kind + " (" + o.Target + "): "
	switch {
	case o.Status != 0:
		s += fmt.Sprintf("HTTP %d", o.Status)
		if o.RetryAfter {
			s += " + Retry-After"
		}
	default:
		s += "no HTTP answer"
	}
	if o.RPCCode != 0 {
		s += fmt.Sprintf(", JSON-RPC %d", o.RPCCode)
	}
	if o.Err != "" {
		s += ", " + o.Err
	}
	return s
}

// cut records how long a hostile client held its connection.
func (l *ledger) cut(kind string, d time.Duration) {
	l.mu.Lock()
	if l.cuts == nil {
		l.cuts = map[string][]time.Duration{}
	}
	l.cuts[kind] = append(l.cuts[kind], d)
	l.mu.Unlock()
}
