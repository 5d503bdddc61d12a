package loop

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/check"
)

func TestFailures(t *testing.T) {
	var f, g Failures
	f.Add(&check.Error{Kind: "echo", Detail: "one"})
	f.Add(&check.Error{Kind: "echo", Detail: "two"})
	g.Add(&check.Error{Kind: "id", Detail: "three"})
	g.Merge(&f)
	if g.Total() != 3 || g.FirstMessage() != "echo: one" {
		t.Fatalf("total %d, first %q", g.Total(), g.FirstMessage())
	}
	if s := g.Summary(); s != "2× echo, first: echo: one; 1× id, first: id: three" {
		t.Fatalf("summary %q", s)
	}
	var empty Failures
	if empty.Total() != 0 || empty.FirstMessage() != "" || empty.Summary() != "" {
		t.Fatal("empty Failures not empty")
	}
}

func TestRunCountsAndStops(t *testing.T) {
	r := Run(Spec{Conns: 3, Measure: 20e6, Setup: func(w int) (Worker, error) {
		if w == 2 {
			return Worker{}, errors.New("no")
		}
		return Worker{Call: func(seq int64, text []byte) error {
			if seq%5 == 0 {
				return &check.Error{Kind: "echo", Detail: string(text)}
			}
			return nil
		}}, nil
	}})
	if r.OK == 0 || r.Hist.Count() != r.OK || r.Fail.Count["echo"] == 0 || r.Window <= 0 {
		t.Fatalf("OK %d, hist %d, failures %v", r.OK, r.Hist.Count(), r.Fail.Count)
	}
	if n := r.Fail.Count[check.Kind(errors.New("setup: no"))]; n != 1 {
		t.Fatalf("setup failures %v", r.Fail.Count)
	}
}

func TestMedianAndRoundRatio(t *testing.T) {
	if Median(nil) != 0 || Median([]float64{3, 1, 2}) != 2 || Median([]float64{4, 1, 2, 3}) != 2.5 {
		t.Fatal("Median")
	}
	if r := RoundRatio([]float64{2, 6, 9}, []float64{1, 0, 3}); r != 2.5 {
		t.Fatalf("RoundRatio %v", r)
	}
}

// With Drain, Before and After see no call in flight, OK counts exactly
// the calls made between them, and Close comes after After.
func TestRunDrain(t *testing.T) {
	var inFlight, started, closed atomic.Int64
	var measuring atomic.Bool
	var atBefore, atAfter, closedAtAfter, startedInWindow int64 = -1, -1, -1, 0
	r := Run(Spec{Conns: 4, Warmup: 20 * time.Millisecond, Measure: 30 * time.Millisecond, Drain: true,
		Setup: func(w int) (Worker, error) {
			return Worker{
				Call: func(seq int64, text []byte) error {
					inFlight.Add(1)
					if measuring.Load() {
						started.Add(1)
					}
					time.Sleep(7 * time.Millisecond)
					inFlight.Add(-1)
					return nil
				},
				Close: func() { closed.Add(1) },
			}, nil
		},
		Before: func(*Result) { atBefore = inFlight.Load(); measuring.Store(true) },
		After: func(*Result) {
			measuring.Store(false)
			atAfter, closedAtAfter, startedInWindow = inFlight.Load(), closed.Load(), started.Load()
		},
	})
	if atBefore != 0 || atAfter != 0 {
		t.Fatalf("calls in flight: %d at Before, %d at After", atBefore, atAfter)
	}
	if closedAtAfter != 0 || closed.Load() != 4 {
		t.Fatalf("closed %d before After, %d in all", closedAtAfter, closed.Load())
	}
	if r.OK == 0 || uint64(startedInWindow) != r.OK || r.Hist.Count() != r.OK {
		t.Fatalf("OK %d, calls started in the window %d, histogram %d", r.OK, startedInWindow, r.Hist.Count())
	}
	if r.Window < 30*time.Millisecond || r.Fail.Total() != 0 {
		t.Fatalf("window %v, failures %v", r.Window, r.Fail.Count)
	}
}

// With Drain, a worker whose setup failed or whose connection broke in
// the warm-up does not hold the slice up.
func TestRunDrainWithBrokenWorkers(t *testing.T) {
	r := Run(Spec{Conns: 3, Warmup: 10 * time.Millisecond, Measure: 10 * time.Millisecond, Drain: true,
		Setup: func(w int) (Worker, error) {
			switch w {
			case 0:
				return Worker{}, errors.New("no")
			case 1:
				return Worker{Call: func(int64, []byte) error { return errors.New("connection reset") }}, nil
			}
			return Worker{Call: func(int64, []byte) error { time.Sleep(time.Millisecond); return nil }}, nil
		}})
	// The setup error and the broken connection.
	if r.OK == 0 || r.Fail.Count["transport"] != 2 {
		t.Fatalf("OK %d, failures %v", r.OK, r.Fail.Count)
	}
}
