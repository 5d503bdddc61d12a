// Package hist is a fixed-size log-linear latency histogram: 32 sub-buckets
// per power of two (about 3% relative error), no allocation per sample, so
// every request of a run can be recorded and merged across slices.
package hist

import (
	"math/bits"
	"time"
)

const (
	subBits = 5
	sub     = 1 << subBits
	nBucket = (64 - subBits + 1) * sub
)

// H counts durations in nanoseconds. The zero value is ready to use.
type H struct {
	counts [nBucket]uint64
	n      uint64
	max    int64
}

func index(v uint64) int {
	if v < sub {
		return int(v)
	}
	e := bits.Len64(v) - subBits - 1 // v>>e is in [sub, 2*sub)
	return (e+1)*sub + int(v>>uint(e)) - sub
}

// lower returns the smallest value that falls in bucket i.
func lower(i int) uint64 {
	if i < sub {
		return uint64(i)
	}
	e := i/sub - 1
	m := uint64(i%sub + sub)
	return m << uint(e)
}

// Record adds one duration (negative ones count as zero).
func (h *H) Record(d time.Duration) {
	v := int64(d)
	if v < 0 {
		v = 0
	}
	h.counts[index(uint64(v))]++
	h.n++
	if v > h.max {
		h.max = v
	}
}

// Merge adds o's samples to h.
func (h *H) Merge(o *H) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	if o.max > h.max {
		h.max = o.max
	}
}

// Count is the number of samples.
func (h *H) Count() uint64 { return h.n }

// Max is the largest sample.
func (h *H) Max() time.Duration { return time.Duration(h.max) }

// Quantile returns the q-quantile (0 < q <= 1) as the midpoint of the
// bucket that holds it, or 0 without samples.
func (h *H) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.5)
	if rank < 1 {
		rank = 1
	}
	if rank > h.n {
		rank = h.n
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo := lower(i)
			hi := lower(i + 1)
			v := lo + (hi-lo)/2
			if int64(v) > h.max {
				v = uint64(h.max)
			}
			return time.Duration(v)
		}
	}
	return time.Duration(h.max)
}
