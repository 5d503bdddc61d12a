// Package loop is the closed-loop measurement slice both load generators
// run: a number of workers, each on its own connection, sends one checked
// call at a time; after a warm-up, calls are recorded for a measured
// window, with hooks right before and after it (to read the servers' CPU
// figures), then the workers stop and clean up. It also holds what the
// slices are summed with: Failures by kind, and medians over rounds.
package loop

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/check"
	"github.com/saguaro-go/saguaro/bench/internal/hist"
	"github.com/saguaro-go/saguaro/bench/internal/mcpconn"
)

// MaxCallsPerSlice bounds every worker loop in count, whatever the clock
// does.
const MaxCallsPerSlice = 5_000_000

// Worker is one worker's connection, ready to call.
type Worker struct {
	// Call sends call number seq (ids are the caller's business) with the
	// echo text for it and checks the answer; an error of kind
	// "transport" ends the worker.
	Call func(seq int64, text []byte) error
	// Close, when not nil, ends the worker's session and connection. It
	// is also called when the setup failed.
	Close func()
}

// Spec says how to run one slice.
type Spec struct {
	Conns           int
	Warmup, Measure time.Duration
	// Setup connects worker w (and opens its session); an error is
	// counted as a "setup: …" failure and the worker does not call.
	Setup func(w int) (Worker, error)
	// Before runs after the warm-up, right before the measured window;
	// After right after it, while the workers still call (with Drain,
	// once they have all stopped). Either may be nil and may add
	// failures to the result.
	Before, After func(*Result)
	// Drain makes the window's edges exact, for calls that are long next
	// to it: at the end of the warm-up every worker finishes its call and
	// waits, Before runs with no call in flight, the workers start again
	// together, and at the end of Measure every worker finishes its call
	// and stops before After runs (and before Close). OK is then exactly
	// the calls made between Before and After, so a server's figures read
	// in those hooks, divided by OK, are per call without the calls cut
	// in two at the edges; Window runs until the last call ends.
	Drain bool
}

// Result is what one slice measured.
type Result struct {
	OK     uint64 // calls checked OK in the measured window
	Window time.Duration
	Hist   hist.H // their latencies
	Fail   Failures
}

// Run runs one slice: every worker is set up, then all start calling at
// once (sequence numbers from 2, with mcpconn.EchoText's text); after
// s.Warmup the calls are recorded for s.Measure, then the workers stop
// (see Spec.Drain for the other way). A failed check is counted and the
// worker goes on (the answer was read in full); a transport error ends
// the worker, and is counted unless the slice was stopping.
func Run(s Spec) *Result {
	res := &Result{}
	var (
		recording atomic.Bool
		warmEnd   atomic.Bool // Drain: the warm-up is over
		stop      atomic.Bool
		ready     sync.WaitGroup
		paused    sync.WaitGroup // Drain: every worker is out of the warm-up
		quiet     sync.WaitGroup // Drain: every worker has made its last call
		done      sync.WaitGroup
		hmu       sync.Mutex
		okCount   atomic.Uint64
	)
	start := make(chan struct{})
	resume := make(chan struct{})
	afterDone := make(chan struct{})
	ready.Add(s.Conns)
	paused.Add(s.Conns)
	quiet.Add(s.Conns)
	done.Add(s.Conns)
	for w := 0; w < s.Conns; w++ {
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
			wk, err := s.Setup(w)
			ready.Done()
			if wk.Close != nil {
				defer wk.Close()
			}
			// Deferred after Close, so they run before it, whatever ends
			// the worker; with Drain, Close waits for After.
			var isPaused, isQuiet bool
			signal := func(flag *bool, wg *sync.WaitGroup) {
				if !*flag {
					*flag = true
					wg.Done()
				}
			}
			defer func() {
				signal(&isQuiet, &quiet)
				if s.Drain {
					<-afterDone
				}
			}()
			defer signal(&isPaused, &paused)
			if err != nil {
				res.Fail.Add(fmt.Errorf("setup: %w", err))
				return
			}
			<-start
			var text []byte
			seq := int64(2)
			// calls until end is set; false when a transport error ended
			// the worker.
			calls := func(end *atomic.Bool, record func() bool) bool {
				for ; seq < MaxCallsPerSlice && !end.Load(); seq++ {
					text = mcpconn.EchoText(text, w, seq)
					t0 := time.Now()
					err := wk.Call(seq, text)
					lat := time.Since(t0)
					if err != nil {
						if check.Kind(err) == "transport" {
							// Without Drain a slice that is stopping
							// forgives it; with Drain every call of the
							// window must end well.
							if s.Drain || !stop.Load() {
								res.Fail.Add(err)
							}
							return false // the connection's state is unknown
						}
						res.Fail.Add(err)
						continue
					}
					if record() {
						h.Record(lat)
						ok++
					}
				}
				return true
			}
			if !s.Drain {
				calls(&stop, recording.Load)
				return
			}
			if !calls(&warmEnd, func() bool { return false }) {
				return
			}
			signal(&isPaused, &paused)
			<-resume
			calls(&stop, func() bool { return true })
		}(w)
	}
	ready.Wait()
	close(start)
	time.Sleep(s.Warmup)
	if s.Drain {
		warmEnd.Store(true)
		paused.Wait()
	}
	if s.Before != nil {
		s.Before(res)
	}
	t0 := time.Now()
	recording.Store(true)
	close(resume)
	time.Sleep(s.Measure)
	if s.Drain {
		stop.Store(true)
		quiet.Wait()
	}
	recording.Store(false)
	res.Window = time.Since(t0)
	if s.After != nil {
		s.After(res)
	}
	close(afterDone)
	stop.Store(true)
	done.Wait()
	res.OK = okCount.Load()
	return res
}

// Failures collects failed checks by kind (check.Kind), with the first
// message of each. It is safe for concurrent use.
type Failures struct {
	mu    sync.Mutex
	Count map[string]int    `json:"count,omitempty"`
	First map[string]string `json:"first,omitempty"`
}

// Add counts err under its kind.
func (f *Failures) Add(err error) {
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

// Merge adds o's counts, keeping f's first message of a kind when it has
// one.
func (f *Failures) Merge(o *Failures) {
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

// Total is the number of failures of every kind.
func (f *Failures) Total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.Count {
		n += c
	}
	return n
}

// kinds are the kinds seen, in order.
func (f *Failures) kinds() []string {
	kinds := make([]string, 0, len(f.First))
	for k := range f.First {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return kinds
}

// FirstMessage is the first message of the first kind in order, "" when
// nothing failed.
func (f *Failures) FirstMessage() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if kinds := f.kinds(); len(kinds) > 0 {
		return f.First[kinds[0]]
	}
	return ""
}

// Summary is every kind in order with its count and first message:
// "N× kind, first: message; …".
func (f *Failures) Summary() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := ""
	for i, k := range f.kinds() {
		if i > 0 {
			s += "; "
		}
		s += fmt.Sprintf("%d× %s, first: %s", f.Count[k], k, f.First[k])
	}
	return s
}

// Median is the median of xs, 0 when empty.
func Median(xs []float64) float64 {
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

// RoundRatio is the median over rounds of rates[i] / base[i], rounds
// where base is 0 left out: slices of one round run back to back, so slow
// drift of the machine cancels out.
func RoundRatio(rates, base []float64) float64 {
	var rs []float64
	for i := 0; i < len(rates) && i < len(base); i++ {
		if base[i] > 0 {
			rs = append(rs, rates[i]/base[i])
		}
	}
	return Median(rs)
}
