package jsonstr

import "math/bits"

// QuotedLen returns the length of AppendString's output for s when s is
// valid UTF-8 without U+2028 or U+2029 (each of those, and each invalid
// byte, takes a few bytes more): what a buffer needs to hold s encoded,
// found eight bytes at a time, for a caller that sizes a buffer once.
func QuotedLen(s string) int {
	n := len(s) + 2
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if m := escapeMask(x); m != 0 {
			n += bits.OnesCount64(m)
			if c := controlMask(x); c != 0 {
				n += 4 * bits.OnesCount64(c) // \u00XX rather than two bytes
			}
		}
	}
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n++
		case c < 0x20:
			n += 5
		}
	}
	return n
}

// escapeMask marks exactly the ASCII bytes of x that are escaped: below
// 0x20, '"' and '\\', which are SpecialMask's marks but those of the
// non-ASCII bytes.
func escapeMask(x uint64) uint64 {
	return SpecialMask(x) &^ x
}

// controlMask marks exactly the bytes of x below 0x20 other than '\n',
// '\r' and '\t', whose escape is six bytes long.
func controlMask(x uint64) uint64 {
	const low7 = 0x7F7F7F7F7F7F7F7F
	y := x & low7
	lt := ^(y + ones*(0x80-0x20))
	n := (y ^ ones*'\n') + low7
	r := (y ^ ones*'\r') + low7
	t := (y ^ ones*'\t') + low7
	return lt & n & r & t &^ x & highs
}
