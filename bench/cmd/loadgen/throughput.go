package main

import (
	"fmt"
	"syscall"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/hist"
	"github.com/saguaro-go/saguaro/bench/internal/loop"
	"github.com/saguaro-go/saguaro/bench/internal/mcpconn"
	"github.com/saguaro-go/saguaro/bench/internal/probe"
	"github.com/saguaro-go/saguaro/bench/internal/serve"
)

// sliceResult is one measured slice of one configuration at one
// concurrency.
type sliceResult struct {
	*loop.Result
	Before probe.Snapshot
	After  probe.Snapshot
	// SelfCPUNS is the load generator's own CPU time during the window.
	SelfCPUNS int64
}

// sliceSpec says what one slice sends.
type sliceSpec struct {
	Conns int
	// Progress calls the "progress" tool with a progressToken and checks
	// the streamed notifications, instead of "echo".
	Progress bool
	// Share makes connections share sessions two by two (stateful
	// configurations only), so two calls of one session are in flight at
	// once: each call's notifications must still reach its own stream.
	Share bool
	// Call, when set, makes each worker's call function instead of echo
	// or progress: on the worker's connection c, with request ids base +
	// seq (the payload workload).
	Call func(c *mcpconn.Conn, base int64) func(seq int64, text []byte) error
	// Drain reads the probe with no call in flight (loop.Spec.Drain), so
	// that the figures per call are exact for calls long next to the
	// slice.
	Drain bool
}

// runSlice drives one server with spec.Conns connections (loop.Run):
// connect (and initialize, when stateful), warm up, read the probe,
// measure for measure, read the probe again, stop, end the sessions.
//
// A failed check is counted and the connection goes on (its response was
// read in full); a transport error ends the connection.
func runSlice(s *server, spec sliceSpec, warmup, measure, timeout time.Duration) *sliceResult {
	res := &sliceResult{}
	conns := spec.Conns
	share := spec.Share && s.cfg.Stateful
	// With share, worker 2k owns the session and 2k+1 borrows it.
	pairSession := make([]chan string, (conns+1)/2)
	pairDone := make([]chan struct{}, (conns+1)/2)
	for i := range pairSession {
		pairSession[i] = make(chan string, 1)
		pairDone[i] = make(chan struct{})
	}
	setup := func(w int) (loop.Worker, error) {
		borrower := share && w%2 == 1 // with an odd count, the last owner is alone
		c, err := mcpconn.Dial(s.ep, timeout)
		switch {
		case err != nil:
		case borrower:
			select {
			case sid := <-pairSession[w/2]:
				if sid == "" {
					err = fmt.Errorf("setup: the session owner failed")
				}
				c.SetSession(sid)
			case <-time.After(timeout):
				err = fmt.Errorf("setup: no session from the owner")
			}
		case s.cfg.Stateful:
			err = c.Initialize(int64(w)<<32+1, true)
		}
		if share && !borrower {
			sid := ""
			if err == nil {
				sid = c.Session()
			}
			pairSession[w/2] <- sid // buffered: never blocks
		}
		if err != nil {
			return loop.Worker{Close: func() {
				if c != nil {
					c.Close()
				}
				if borrower {
					close(pairDone[w/2])
				}
			}}, err
		}
		var token []byte
		base := int64(w) << 32
		wk := loop.Worker{Call: func(seq int64, text []byte) error {
			if spec.Progress {
				token = append(append(token[:0], 'p'), text...)
				return c.CallProgress(base+seq, string(text), string(token), serve.ProgressSteps)
			}
			return c.Call(base+seq, string(text))
		}}
		if spec.Call != nil {
			wk.Call = spec.Call(c, base)
		}
		switch {
		case borrower:
			wk.Close = func() { c.SetSession(""); close(pairDone[w/2]); c.Close() }
		case share && w+1 < conns:
			// DELETE only once the borrower has stopped calling.
			wk.Close = func() {
				select {
				case <-pairDone[w/2]:
				case <-time.After(timeout):
				}
				c.EndSession()
				c.Close()
			}
		default:
			wk.Close = func() { c.EndSession(); c.Close() }
		}
		return wk, nil
	}
	var self0 int64
	res.Result = loop.Run(loop.Spec{Conns: conns, Warmup: warmup, Measure: measure, Setup: setup, Drain: spec.Drain,
		Before: func(r *loop.Result) {
			var err error
			if res.Before, err = s.Probe(false); err != nil {
				r.Fail.Add(fmt.Errorf("probe: %w", err))
			}
			self0 = selfCPU()
		},
		After: func(r *loop.Result) {
			res.SelfCPUNS = selfCPU() - self0
			var err error
			if res.After, err = s.Probe(false); err != nil {
				r.Fail.Add(fmt.Errorf("probe: %w", err))
			}
		},
	})
	return res
}

// tpAgg sums the slices of one cell.
type tpAgg struct {
	Slices    int
	OK        uint64
	Window    time.Duration
	Hist      hist.H
	CPUNS     int64
	Allocs    uint64
	Bytes     uint64
	GCs       uint64
	SliceRPS  []float64
	Fail      loop.Failures
	MaxRSS    uint64
	Goroutine uint64
	SelfCPUNS int64
}

func (a *tpAgg) add(r *sliceResult) {
	a.Slices++
	a.OK += r.OK
	a.Window += r.Window
	a.SelfCPUNS += r.SelfCPUNS
	a.Hist.Merge(&r.Hist)
	if r.After.UnixNano != 0 && r.Before.UnixNano != 0 {
		a.CPUNS += r.After.CPUNS() - r.Before.CPUNS()
		a.Allocs += r.After.AllocObjs - r.Before.AllocObjs
		a.Bytes += r.After.AllocBytes - r.Before.AllocBytes
		a.GCs += r.After.GCCycles - r.Before.GCCycles
		a.MaxRSS = max(a.MaxRSS, r.After.MaxRSS)
		a.Goroutine = max(a.Goroutine, r.After.Goroutines)
	}
	if r.Window > 0 {
		a.SliceRPS = append(a.SliceRPS, float64(r.OK)/r.Window.Seconds())
	}
	a.Fail.Merge(&r.Fail)
}

// medianRPS is the median of the slices' rates: robust to a slice that
// other work on the machine slowed down.
func (a *tpAgg) medianRPS() float64 { return loop.Median(a.SliceRPS) }

// ratioTo is the median over rounds of this configuration's rate divided
// by base's rate in the same round. Slices of one round run back to back,
// so slow drift of the machine cancels out.
func (a *tpAgg) ratioTo(base *tpAgg) float64 { return loop.RoundRatio(a.SliceRPS, base.SliceRPS) }

func (a *tpAgg) perReq(v float64) float64 {
	if a.OK == 0 {
		return 0
	}
	return v / float64(a.OK)
}

// selfCPU is this process's user+system CPU time in nanoseconds.
func selfCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
