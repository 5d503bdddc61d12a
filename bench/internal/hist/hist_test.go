package hist

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestIndexIsMonotoneAndBounded(t *testing.T) {
	prev := -1
	for _, v := range []uint64{0, 1, 31, 32, 33, 63, 64, 65, 1000, 1 << 20, 1<<40 + 12345, math.MaxInt64} {
		i := index(v)
		if i < prev || i >= nBucket {
			t.Fatalf("index(%d) = %d (prev %d, n %d)", v, i, prev, nBucket)
		}
		if lo := lower(i); lo > v || (i+1 < nBucket && lower(i+1) <= v) {
			t.Fatalf("value %d not in bucket %d [%d, %d)", v, i, lo, lower(i+1))
		}
		prev = i
	}
}

func TestQuantilesWithinThreePercent(t *testing.T) {
	var h H
	r := rand.New(rand.NewPCG(1, 2))
	var all []time.Duration
	for range 100000 {
		d := time.Duration(r.ExpFloat64() * float64(300*time.Microsecond))
		h.Record(d)
		all = append(all, d)
	}
	slices.Sort(all)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		exact := all[int(q*float64(len(all)))-1]
		got := h.Quantile(q)
		if rel := math.Abs(float64(got-exact)) / float64(exact); rel > 0.03 {
			t.Errorf("q%.3f = %v, exact %v (%.1f%% off)", q, got, exact, rel*100)
		}
	}
	if h.Count() != 100000 || h.Max() != all[len(all)-1] {
		t.Fatalf("count %d max %v", h.Count(), h.Max())
	}
}

func TestMerge(t *testing.T) {
	var a, b H
	a.Record(time.Millisecond)
	b.Record(3 * time.Millisecond)
	b.Record(-time.Second)
	a.Merge(&b)
	if a.Count() != 3 || a.Max() != 3*time.Millisecond {
		t.Fatalf("count %d max %v", a.Count(), a.Max())
	}
	if q := a.Quantile(0.5); q < 970*time.Microsecond || q > 1030*time.Microsecond {
		t.Fatalf("median %v", q)
	}
	var empty H
	if empty.Quantile(0.5) != 0 {
		t.Fatal("empty quantile")
	}
}
