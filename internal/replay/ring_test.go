package replay

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func seqs(r *Ring[string], after int64) []int64 {
	var out []int64
	r.After(after, func(seq int64, _ string) bool { out = append(out, seq); return true })
	return out
}

func TestRingBounds(t *testing.T) {
	r := NewRing[string](3, 10)
	assert.Equal(t, 0, r.Len())
	_, ok := r.Oldest()
	assert.False(t, ok)
	for i := int64(1); i <= 5; i++ {
		r.Push(i, "x", 2)
	}
	assert.Equal(t, []int64{1, 2, 3, 4, 5}, seqs(&r, 0), "the owner drops, not Push")
	assert.True(t, r.Over())
	for r.Over() {
		r.DropOldest()
	}
	assert.Equal(t, []int64{3, 4, 5}, seqs(&r, 0))
	assert.Equal(t, 6, r.Bytes())
	assert.False(t, r.Over())
	assert.True(t, r.Full())
	r.DropOldest()
	r.Push(6, "big", 9)
	assert.True(t, r.Over(), "past the byte bound")
	for r.Over() {
		r.DropOldest()
	}
	assert.Equal(t, []int64{6}, seqs(&r, 0), "the newest stays, whatever its size")
	assert.Equal(t, []int64{}, append([]int64{}, seqs(&r, 6)...))
}

func TestRingGrowsInOrder(t *testing.T) {
	var r Ring[int] // no bounds
	for i := range 100 {
		r.Push(int64(i+1), i, 1)
		if i%3 == 0 {
			r.DropOldest()
		}
	}
	var got []int
	r.After(90, func(_ int64, v int) bool { got = append(got, v); return v < 95 })
	assert.Equal(t, []int{90, 91, 92, 93, 94, 95}, got, "in order, and fn stops the walk")
	oldest, _ := r.Oldest()
	assert.Equal(t, int64(35), oldest)
	assert.Equal(t, 66, r.Len())
}
