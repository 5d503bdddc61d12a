package wire

import (
	"math/bits"
	"sync"
)

// Big buffers hold encoded results of 4 KiB and more. They are pooled by
// size class (the power of two at or below their capacity, from 4 KiB to
// 16 MiB), so that a server answering big results at a steady rate reuses
// their memory instead of allocating and zeroing a buffer per answer. A
// buffer is made to measure when its pool has none big enough, so a
// caller that never gives its buffers back allocates what it asked for
// and no more.
const (
	bigMinShift = 12 // 4 KiB
	bigClasses  = 13 // up to 16 MiB
)

var bigPools [bigClasses]sync.Pool

// bigClass returns the class of buffers whose capacity is at least
// 1<<(class+bigMinShift) and below twice that, or -1 when n is outside
// every class.
func bigClass(n int) int {
	c := bits.Len(uint(n)) - 1 - bigMinShift
	if c < 0 || c >= bigClasses {
		return -1
	}
	return c
}

// GetBig returns an empty buffer with room for at least n bytes: a pooled
// one of n's class when there is one big enough, else a new one of
// exactly n. Give it back with PutBig once nothing refers to it any more:
// a buffer put back while a slice of it is still read is overwritten by
// its next user.
func GetBig(n int) []byte {
	if c := bigClass(n); c >= 0 {
		if p, ok := bigPools[c].Get().(*[]byte); ok && cap(*p) >= n {
			return (*p)[:0]
		}
	}
	return make([]byte, 0, n)
}

// PutBig gives back a buffer that GetBig returned, at any length but from
// its first byte (a slice that starts later is a smaller buffer, pooled
// as one). Buffers outside every class are left to the garbage collector.
func PutBig(b []byte) {
	if c := bigClass(cap(b)); c >= 0 {
		b = b[:0]
		bigPools[c].Put(&b)
	}
}
