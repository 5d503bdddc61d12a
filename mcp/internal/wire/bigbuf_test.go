package wire

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBigBuffers(t *testing.T) {
	// A pool with nothing big enough makes the buffer to measure.
	for _, n := range []int{0, 1, 4 << 10, 300 << 10, 16<<20 + 1} {
		b := GetBig(n)
		assert.Zero(t, len(b))
		assert.Equal(t, n, cap(b))
	}
	// What is put back comes back, emptied, for a request it can hold
	// (sync.Pool may drop an item, as it does at random under the race
	// detector: a few tries).
	var c []byte
	for range 20 {
		b := append(GetBig(300<<10), "abc"...)
		PutBig(b)
		if c = GetBig(290 << 10); cap(c) == 300<<10 {
			break
		}
	}
	assert.Zero(t, len(c))
	assert.Equal(t, 300<<10, cap(c))
	assert.Equal(t, "abc", string(c[:3]), "the same memory")
	// One too small for the request is not handed out.
	PutBig(c)
	d := GetBig(310 << 10)
	assert.Equal(t, 310<<10, cap(d))
	// Outside every class: not pooled.
	PutBig(make([]byte, 0, 100))
	PutBig(make([]byte, 0, 32<<20))
	assert.Equal(t, -1, bigClass(100))
	assert.Equal(t, -1, bigClass(32<<20))
	assert.Equal(t, 0, bigClass(4<<10))
	assert.Equal(t, 0, bigClass(8<<10-1))
	assert.Equal(t, 1, bigClass(8<<10))
}
