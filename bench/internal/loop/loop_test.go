package loop

import (
	"errors"
	"testing"

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
