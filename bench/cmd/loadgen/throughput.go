package main

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/check"
	"github.com/saguaro-go/saguaro/bench/internal/hist"
	"github.com/saguaro-go/saguaro/bench/internal/probe"
	"github.com/saguaro-go/saguaro/bench/internal/serve"
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

// sliceResult is one measured slice of one configuration at one
// concurrency.
type sliceResult struct {
	OK     uint64
	Window time.Duration
	Hist   hist.H
	Before probe.Snapshot
	After  probe.Snapshot
	Fail   failures
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
}

// runSlice drives one server with spec.Conns connections: connect (and
// initialize, when stateful), warm up, read the probe, measure for
// measure, read the probe again, stop, end the sessions.
//
// A failed check is counted and the connection goes on (its response was
// read in full); a transport error ends the connection.
func runSlice(s *server, spec sliceSpec, warmup, measure, timeout time.Duration) *sliceResult {
	res := &sliceResult{}
	conns := spec.Conns
	share := spec.Share && s.cfg.Stateful
	var (
		recording atomic.Bool
		stop      atomic.Bool
		ready     sync.WaitGroup
		done      sync.WaitGroup
		okCount   atomic.Uint64
		hmu       sync.Mutex
	)
	// With share, worker 2k owns the session and 2k+1 borrows it.
	pairSession := make([]chan string, (conns+1)/2)
	pairDone := make([]chan struct{}, (conns+1)/2)
	for i := range pairSession {
		pairSession[i] = make(chan string, 1)
		pairDone[i] = make(chan struct{})
	}
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
			borrower := share && w%2 == 1 // with an odd count, the last owner is alone
			c, err := dial(s.ep, timeout)
			switch {
			case err != nil:
			case borrower:
				select {
				case sid := <-pairSession[w/2]:
					if sid == "" {
						err = fmt.Errorf("setup: the session owner failed")
					}
					c.session = sid
				case <-time.After(timeout):
					err = fmt.Errorf("setup: no session from the owner")
				}
			case s.cfg.Stateful:
				err = c.initialize(int64(w)<<32+1, true)
			}
			if share && !borrower {
				sid := ""
				if err == nil {
					sid = c.session
				}
				pairSession[w/2] <- sid // buffered: never blocks
			}
			ready.Done()
			if err != nil {
				res.Fail.add(fmt.Errorf("setup: %w", err))
				if c != nil {
					c.Close()
				}
				if borrower {
					close(pairDone[w/2])
				}
				return
			}
			defer c.Close()
			if borrower {
				defer func() { c.session = ""; close(pairDone[w/2]) }()
			} else {
				defer c.endSession()
				if share && w+1 < conns {
					// DELETE only once the borrower has stopped calling.
					defer func() {
						select {
						case <-pairDone[w/2]:
						case <-time.After(timeout):
						}
					}()
				}
			}
			<-start
			var text, token []byte
			base := int64(w) << 32
			for seq := int64(2); seq < maxCallsPerSlice && !stop.Load(); seq++ {
				text = echoText(text, w, seq)
				t0 := time.Now()
				if spec.Progress {
					token = append(append(token[:0], 'p'), text...)
					err = c.callProgress(base+seq, string(text), string(token), serve.ProgressSteps)
				} else {
					err = c.call(base+seq, string(text))
				}
				lat := time.Since(t0)
				if err != nil {
					if check.Kind(err) == "transport" {
						if !stop.Load() {
							res.Fail.add(err)
						}
						return // the connection's state is unknown
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
	var err error
	if res.Before, err = s.probe(false); err != nil {
		res.Fail.add(fmt.Errorf("probe: %w", err))
	}
	self0 := selfCPU()
	t0 := time.Now()
	recording.Store(true)
	time.Sleep(measure)
	recording.Store(false)
	res.Window = time.Since(t0)
	res.SelfCPUNS = selfCPU() - self0
	if res.After, err = s.probe(false); err != nil {
		res.Fail.add(fmt.Errorf("probe: %w", err))
	}
	stop.Store(true)
	done.Wait()
	res.OK = okCount.Load()
	return res
}

// tpKey names one cell of the throughput table.
type tpKey struct {
	Config string
	Conns  int
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
	Fail      failures
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
	a.Fail.merge(&r.Fail)
}

// medianRPS is the median of the slices' rates: robust to a slice that
// other work on the machine slowed down.
func (a *tpAgg) medianRPS() float64 { return median(a.SliceRPS) }

// ratioTo is the median over rounds of this configuration's rate divided
// by base's rate in the same round. Slices of one round run back to back,
// so slow drift of the machine cancels out.
func (a *tpAgg) ratioTo(base *tpAgg) float64 {
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

func (a *tpAgg) rps() float64 {
	if a.Window <= 0 {
		return 0
	}
	return float64(a.OK) / a.Window.Seconds()
}

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
