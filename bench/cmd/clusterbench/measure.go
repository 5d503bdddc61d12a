package main

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/check"
	"github.com/saguaro-go/saguaro/bench/internal/hist"
	"github.com/saguaro-go/saguaro/bench/internal/probe"
)

// maxCallsPerSlice bounds every worker loop in count, whatever the clock
// does.
const maxCallsPerSlice = 5_000_000

// failures collects failed checks by kind, with the first message of each.
type failures struct {
	mu    sync.Mutex
	Count map[string]int    `json:"count,omitempty"`
	First map[string]string `json:"first,omitempty"`
}

func (f *failures) add(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Count == nil {
		f.Count, f.First = map[string]int{}, map[string]string{}
	}
	k := check.Kind(err)
	f.Count[k]++
	if _, ok := f.First[k]; !ok {
		f.First[k] = err.Error()
	}
}

func (f *failures) merge(o *failures) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for k, n := range o.Count {
		f.mu.Lock()
		if f.Count == nil {
			f.Count, f.First = map[string]int{}, map[string]string{}
		}
		f.Count[k] += n
		if _, ok := f.First[k]; !ok {
			f.First[k] = o.First[k]
		}
		f.mu.Unlock()
	}
}

func (f *failures) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.Count {
		n += c
	}
	return n
}

// first is the first message of each kind, kinds in order.
func (f *failures) first() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	kinds := make([]string, 0, len(f.First))
	for k := range f.First {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	s := ""
	for i, k := range kinds {
		if i > 0 {
			s += "; "
		}
		s += fmt.Sprintf("%d× %s, first: %s", f.Count[k], k, f.First[k])
	}
	return s
}

// target is one configuration as the load generator sees it: where to
// send, and whose CPU to count.
type target struct {
	Name  string // short key
	Label string // for the results page
	What  string // how it is set up
	ep    *endpoint
	procs []*proc   // processes serving it; their CPU is summed
	redis *redisSrv // nil when Redis plays no part
}

// cpuNS is the CPU time so far of every process serving t (probe
// endpoints) plus Redis's (INFO cpu) when t uses it.
func (t *target) cpuNS() (int64, error) {
	var ns int64
	for _, p := range t.procs {
		s, err := p.probe()
		if err != nil {
			return 0, err
		}
		ns += s.CPUNS()
	}
	if t.redis != nil {
		r, err := t.redis.cpuNS()
		if err != nil {
			return 0, err
		}
		ns += r
	}
	return ns, nil
}

// sliceResult is one measured slice of one configuration at one
// concurrency.
type sliceResult struct {
	OK     uint64
	Window time.Duration
	Hist   hist.H
	CPUNS  int64 // -1 when a probe failed
	Fail   failures
}

// runSlice drives t with conns connections, each with its own session:
// connect and initialize (checked), warm up, read the CPU figures, measure
// for measure, read them again, stop, DELETE the sessions. Every answer is
// judged (judgeCall): a failed check is counted and the connection goes on
// (the answer was read in full); a transport error ends the connection.
func runSlice(t *target, conns int, warmup, measure, timeout time.Duration) *sliceResult {
	res := &sliceResult{CPUNS: -1}
	var (
		recording atomic.Bool
		stop      atomic.Bool
		ready     sync.WaitGroup
		done      sync.WaitGroup
		hmu       sync.Mutex
		okCount   atomic.Uint64
	)
	start := make(chan struct{})
	ready.Add(conns)
	done.Add(conns)
	for w := 0; w < conns; w++ {
		go func(w int) {
			defer done.Done()
			var h hist.H
			var ok uint64
			defer func() {
				hmu.Lock()
				res.Hist.Merge(&h)
				hmu.Unlock()
				okCount.Add(ok)
			}()
			base := int64(w) << 32
			c, err := dial(t.ep, timeout)
			if err == nil {
				err = c.initialize(base + 1)
			}
			ready.Done()
			if err != nil {
				res.Fail.add(fmt.Errorf("setup: %w", err))
				if c != nil {
					c.Close()
				}
				return
			}
			defer c.Close()
			defer c.endSession()
			<-start
			var text []byte
			for seq := int64(2); seq < maxCallsPerSlice && !stop.Load(); seq++ {
				text = echoText(text, w, seq)
				t0 := time.Now()
				err := c.call(base+seq, string(text))
				lat := time.Since(t0)
				if err != nil {
					if check.Kind(err) == "transport" {
						if !stop.Load() {
							res.Fail.add(err)
						}
						return
					}
					res.Fail.add(err)
					continue
				}
				if recording.Load() {
					h.Record(lat)
					ok++
				}
			}
		}(w)
	}
	ready.Wait()
	close(start)
	time.Sleep(warmup)
	cpu0, err0 := t.cpuNS()
	t0 := time.Now()
	recording.Store(true)
	time.Sleep(measure)
	recording.Store(false)
	res.Window = time.Since(t0)
	cpu1, err1 := t.cpuNS()
	stop.Store(true)
	done.Wait()
	res.OK = okCount.Load()
	switch {
	case err0 != nil:
		res.Fail.add(fmt.Errorf("probe: %w", err0))
	case err1 != nil:
		res.Fail.add(fmt.Errorf("probe: %w", err1))
	default:
		res.CPUNS = cpu1 - cpu0
	}
	return res
}

// agg sums the slices of one configuration at one concurrency.
type agg struct {
	OK     uint64
	Window time.Duration
	Hist   hist.H
	// CPUNS and CPUOK: CPU time and calls of the slices whose CPU is
	// known.
	CPUNS int64
	CPUOK uint64
	// SliceRPS is each round's calls per second, in round order.
	SliceRPS []float64
	Fail     failures
}

func (a *agg) add(r *sliceResult) {
	a.OK += r.OK
	a.Window += r.Window
	a.Hist.Merge(&r.Hist)
	if r.CPUNS >= 0 {
		a.CPUNS += r.CPUNS
		a.CPUOK += r.OK
	}
	rps := 0.0
	if r.Window > 0 {
		rps = float64(r.OK) / r.Window.Seconds()
	}
	a.SliceRPS = append(a.SliceRPS, rps)
	a.Fail.merge(&r.Fail)
}

// rps is the median over the slices.
func (a *agg) rps() float64 { return median(a.SliceRPS) }

// cpuPerCall is the CPU per call in nanoseconds, 0 when unknown.
func (a *agg) cpuPerCall() float64 {
	if a.CPUOK == 0 {
		return 0
	}
	return float64(a.CPUNS) / float64(a.CPUOK)
}

// ratioTo is the median over rounds of a's rate divided by base's in the
// same round: slices of one round run back to back, so slow drift of the
// machine cancels out.
func (a *agg) ratioTo(base *agg) float64 {
	var rs []float64
	for i := 0; i < len(a.SliceRPS) && i < len(base.SliceRPS); i++ {
		if base.SliceRPS[i] > 0 {
			rs = append(rs, a.SliceRPS[i]/base.SliceRPS[i])
		}
	}
	return median(rs)
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

// relaySlice is one round of the relay measurement: one session created
// on replica A; calls of that session sent straight to A (served there)
// and straight to B (which relays them to A), alternately, one at a time,
// on two keep-alive connections, so both paths see the same machine at
// the same moment.
type relaySlice struct {
	A, B            string
	Direct, Relayed hist.H
	DirectOK, RelOK uint64
	Window          time.Duration
	// BCPUNS and RedisCPUNS: B's and Redis's CPU time over the measured
	// window, -1 when unknown. B only relays, so its CPU is the relaying
	// replica's cost; Redis serves B's lookups (and little else of ours).
	BCPUNS, RedisCPUNS int64
	Fail               failures
}

// runRelay measures one relay slice: warm-up, then measure, alternating
// which path goes first in each pair. a and b must be replicas of one
// cluster; b's redis is read for Redis's CPU.
func runRelay(a, b *target, warmup, measure, timeout time.Duration) *relaySlice {
	res := &relaySlice{A: a.Name, B: b.Name, BCPUNS: -1, RedisCPUNS: -1}
	ca, err := dial(a.ep, timeout)
	if err != nil {
		res.Fail.add(fmt.Errorf("setup: %w", err))
		return res
	}
	defer ca.Close()
	if err := ca.initialize(1); err != nil {
		res.Fail.add(fmt.Errorf("setup: %w", err))
		return res
	}
	defer ca.endSession()
	cb, err := dial(b.ep, timeout)
	if err != nil {
		res.Fail.add(fmt.Errorf("setup: %w", err))
		return res
	}
	defer cb.Close()
	cb.session = ca.session
	var (
		text []byte
		seq  int64 = 1
	)
	one := func(c *conn, worker int, h *hist.H, ok *uint64, rec bool) error {
		seq++
		text = echoText(text, worker, seq)
		t0 := time.Now()
		err := c.call(seq, string(text))
		lat := time.Since(t0)
		if err != nil {
			res.Fail.add(err)
			return err
		}
		if rec {
			h.Record(lat)
			*ok++
		}
		return nil
	}
	// pairs sends pairs of calls until the deadline; false after a
	// transport error.
	pairs := func(until time.Time, rec bool) bool {
		for n := 0; n < maxCallsPerSlice && time.Now().Before(until); n++ {
			for i := range 2 {
				var err error
				if (n+i)%2 == 0 {
					err = one(ca, 0, &res.Direct, &res.DirectOK, rec)
				} else {
					err = one(cb, 1, &res.Relayed, &res.RelOK, rec)
				}
				if err != nil && check.Kind(err) == "transport" {
					return false
				}
			}
		}
		return true
	}
	if !pairs(time.Now().Add(warmup), false) {
		return res
	}
	cpu := len(b.procs) == 1 && b.redis != nil // B's CPU and Redis's are known
	var (
		b0         probe.Snapshot
		r0         int64
		errB, errR error
	)
	if cpu {
		b0, errB = b.procs[0].probe()
		r0, errR = b.redis.cpuNS()
	}
	t0 := time.Now()
	ok := pairs(t0.Add(measure), true)
	res.Window = time.Since(t0)
	if !ok || !cpu {
		return res
	}
	if b1, err := b.procs[0].probe(); err == nil && errB == nil {
		res.BCPUNS = b1.CPUNS() - b0.CPUNS()
	}
	if r1, err := b.redis.cpuNS(); err == nil && errR == nil {
		res.RedisCPUNS = r1 - r0
	}
	return res
}

// relayAgg sums the relay slices.
type relayAgg struct {
	Direct, Relayed hist.H
	Rounds          []*relaySlice
	// BCPUNS, RedisCPUNS and CPUOK: the relaying replica's and Redis's
	// CPU time, and the relayed calls, of the slices where both are known.
	BCPUNS, RedisCPUNS int64
	CPUOK              uint64
	Fail               failures
}

func (r *relayAgg) add(s *relaySlice) {
	r.Direct.Merge(&s.Direct)
	r.Relayed.Merge(&s.Relayed)
	r.Rounds = append(r.Rounds, s)
	r.Fail.merge(&s.Fail)
	if s.BCPUNS >= 0 && s.RedisCPUNS >= 0 {
		r.BCPUNS += s.BCPUNS
		r.RedisCPUNS += s.RedisCPUNS
		r.CPUOK += s.RelOK
	}
}

// cost is the relay's cost at p50: the relayed calls' median minus the
// direct calls' median, over every call of every round.
func (r *relayAgg) cost() time.Duration {
	return r.Relayed.Quantile(0.5) - r.Direct.Quantile(0.5)
}

// roundCosts are the same difference per round.
func (r *relayAgg) roundCosts() []float64 {
	var xs []float64
	for _, s := range r.Rounds {
		if s.Direct.Count() > 0 && s.Relayed.Count() > 0 {
			xs = append(xs, float64(s.Relayed.Quantile(0.5)-s.Direct.Quantile(0.5)))
		}
	}
	return xs
}
