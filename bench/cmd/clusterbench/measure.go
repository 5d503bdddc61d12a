package main

import (
	"fmt"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/check"
	"github.com/saguaro-go/saguaro/bench/internal/hist"
	"github.com/saguaro-go/saguaro/bench/internal/loop"
	"github.com/saguaro-go/saguaro/bench/internal/mcpconn"
	"github.com/saguaro-go/saguaro/bench/internal/probe"
)

// target is one configuration as the load generator sees it: where to
// send, and whose CPU to count.
type target struct {
	Name  string // short key
	Label string // for the results page
	What  string // how it is set up
	ep    *mcpconn.Endpoint
	procs []*child  // processes serving it; their CPU is summed
	redis *redisSrv // nil when Redis plays no part
}

// cpuNS is the CPU time so far of every process serving t (probe
// endpoints) plus Redis's (INFO cpu) when t uses it.
func (t *target) cpuNS() (int64, error) {
	var ns int64
	for _, p := range t.procs {
		s, err := p.Probe(false)
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
	*loop.Result
	CPUNS int64 // -1 when a probe failed
}

// runSlice drives t with conns connections (loop.Run), each with its own
// session: connect and initialize (checked), warm up, read the CPU
// figures, measure for measure, read them again, stop, DELETE the
// sessions. Every answer is judged (mcpconn.CheckJSONCall): a failed check
// is counted and the connection goes on (the answer was read in full); a
// transport error ends the connection.
func runSlice(t *target, conns int, warmup, measure, timeout time.Duration) *sliceResult {
	var (
		cpu0, cpu1 int64
		err0, err1 error
	)
	r := loop.Run(loop.Spec{Conns: conns, Warmup: warmup, Measure: measure,
		Setup: func(w int) (loop.Worker, error) {
			base := int64(w) << 32
			c, err := mcpconn.Dial(t.ep, timeout)
			if err != nil {
				return loop.Worker{}, err
			}
			if err := c.Initialize(base+1, true); err != nil {
				return loop.Worker{Close: func() { c.Close() }}, err
			}
			return loop.Worker{
				Call:  func(seq int64, text []byte) error { return c.Call(base+seq, string(text)) },
				Close: func() { c.EndSession(); c.Close() },
			}, nil
		},
		Before: func(*loop.Result) { cpu0, err0 = t.cpuNS() },
		After:  func(*loop.Result) { cpu1, err1 = t.cpuNS() },
	})
	res := &sliceResult{Result: r, CPUNS: -1}
	switch {
	case err0 != nil:
		res.Fail.Add(fmt.Errorf("probe: %w", err0))
	case err1 != nil:
		res.Fail.Add(fmt.Errorf("probe: %w", err1))
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
	Fail     loop.Failures
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
	a.Fail.Merge(&r.Fail)
}

// rps is the median over the slices.
func (a *agg) rps() float64 { return loop.Median(a.SliceRPS) }

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
func (a *agg) ratioTo(base *agg) float64 { return loop.RoundRatio(a.SliceRPS, base.SliceRPS) }

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
	Fail               loop.Failures
}

// runRelay measures one relay slice: warm-up, then measure, alternating
// which path goes first in each pair. a and b must be replicas of one
// cluster; b's redis is read for Redis's CPU.
func runRelay(a, b *target, warmup, measure, timeout time.Duration) *relaySlice {
	res := &relaySlice{A: a.Name, B: b.Name, BCPUNS: -1, RedisCPUNS: -1}
	ca, err := mcpconn.Dial(a.ep, timeout)
	if err != nil {
		res.Fail.Add(fmt.Errorf("setup: %w", err))
		return res
	}
	defer ca.Close()
	if err := ca.Initialize(1, true); err != nil {
		res.Fail.Add(fmt.Errorf("setup: %w", err))
		return res
	}
	defer ca.EndSession()
	cb, err := mcpconn.Dial(b.ep, timeout)
	if err != nil {
		res.Fail.Add(fmt.Errorf("setup: %w", err))
		return res
	}
	defer cb.Close()
	cb.SetSession(ca.Session())
	var (
		text []byte
		seq  int64 = 1
	)
	one := func(c *mcpconn.Conn, worker int, h *hist.H, ok *uint64, rec bool) error {
		seq++
		text = mcpconn.EchoText(text, worker, seq)
		t0 := time.Now()
		err := c.Call(seq, string(text))
		lat := time.Since(t0)
		if err != nil {
			res.Fail.Add(err)
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
		for n := 0; n < loop.MaxCallsPerSlice && time.Now().Before(until); n++ {
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
		b0, errB = b.procs[0].Probe(false)
		r0, errR = b.redis.cpuNS()
	}
	t0 := time.Now()
	ok := pairs(t0.Add(measure), true)
	res.Window = time.Since(t0)
	if !ok || !cpu {
		return res
	}
	if b1, err := b.procs[0].Probe(false); err == nil && errB == nil {
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
	Fail               loop.Failures
}

func (r *relayAgg) add(s *relaySlice) {
	r.Direct.Merge(&s.Direct)
	r.Relayed.Merge(&s.Relayed)
	r.Rounds = append(r.Rounds, s)
	r.Fail.Merge(&s.Fail)
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

// Relay paths: where a relay slice's calls go.
const (
	pathDirect  = "direct"  // straight to the session's owner
	pathRelayed = "relayed" // to another replica, which relays them
)

// runPathSlice drives conns connections, each with its own session
// created on a (the owner), whose calls go straight to a (pathDirect) or
// to b, which relays them to a (pathRelayed). CPU is a's, b's and
// Redis's over the measured window, on both paths alike, so the two
// differ only by what the relay costs.
func runPathSlice(a, b *target, path string, conns int, warmup, measure, timeout time.Duration) *sliceResult {
	both := &target{procs: append(append([]*child(nil), a.procs...), b.procs...), redis: a.redis}
	var (
		cpu0, cpu1 int64
		err0, err1 error
	)
	r := loop.Run(loop.Spec{Conns: conns, Warmup: warmup, Measure: measure,
		Setup: func(w int) (loop.Worker, error) {
			base := int64(w) << 32
			ca, err := mcpconn.Dial(a.ep, timeout)
			if err != nil {
				return loop.Worker{}, err
			}
			if err := ca.Initialize(base+1, true); err != nil {
				return loop.Worker{Close: func() { ca.Close() }}, err
			}
			to, closeAll := ca, func() { ca.EndSession(); ca.Close() }
			if path == pathRelayed {
				cb, err := mcpconn.Dial(b.ep, timeout)
				if err != nil {
					return loop.Worker{Close: closeAll}, err
				}
				cb.SetSession(ca.Session())
				to, closeAll = cb, func() { cb.Close(); ca.EndSession(); ca.Close() }
			}
			return loop.Worker{
				Call:  func(seq int64, text []byte) error { return to.Call(base+seq, string(text)) },
				Close: closeAll,
			}, nil
		},
		Before: func(*loop.Result) { cpu0, err0 = both.cpuNS() },
		After:  func(*loop.Result) { cpu1, err1 = both.cpuNS() },
	})
	res := &sliceResult{Result: r, CPUNS: -1}
	switch {
	case err0 != nil:
		res.Fail.Add(fmt.Errorf("probe: %w", err0))
	case err1 != nil:
		res.Fail.Add(fmt.Errorf("probe: %w", err1))
	default:
		res.CPUNS = cpu1 - cpu0
	}
	return res
}
