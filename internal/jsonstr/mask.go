package jsonstr

// SWAR constants: a byte-wise test of eight bytes at once.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// SpecialMask marks exactly (in the high bit of each byte) the bytes of
// the little-endian word x that a string scanner must look at: below
// 0x20, '"', '\\', or 0x80 and above. It has no false marks, so that
// every marked byte of a word can be taken in turn.
func SpecialMask(x uint64) uint64 {
	const low7 = 0x7F7F7F7F7F7F7F7F
	y := x & low7
	lt := ^(y + ones*(0x80-0x20))
	q := ^((y ^ ones*'"') + low7)
	b := ^((y ^ ones*'\\') + low7)
	return (lt | q | b | x) & highs
}

// UnmarkBefore clears the marks of a word's first n bytes: what a
// scanner has read already (the rest of a rune or an escape, the byte it
// just handled).
func UnmarkBefore(m uint64, n int) uint64 {
	if n <= 0 {
		return m
	}
	if n >= 8 {
		return 0
	}
	return m &^ (1<<(uint(n)*8) - 1)
}
