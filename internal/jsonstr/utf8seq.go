package jsonstr

// SeqLen returns the length of the valid UTF-8 sequence of a multi-byte
// rune that starts at s[i] (s[i] >= 0x80), or 0 when there is none (a
// stray continuation byte, an overlong form, a surrogate, a rune past
// U+10FFFF, a sequence cut short): unicode/utf8's rules, inline, for the
// hot loops that meet accented letters every few bytes.
func SeqLen[T ~string | ~[]byte](s T, i int) int {
	c := s[i]
	switch {
	case c < 0xC2:
		return 0
	case c < 0xE0:
		if i+1 < len(s) && s[i+1]&0xC0 == 0x80 {
			return 2
		}
		return 0
	case c < 0xF0:
		if i+2 >= len(s) {
			return 0
		}
		lo, hi := byte(0x80), byte(0xBF)
		switch c {
		case 0xE0:
			lo = 0xA0
		case 0xED:
			hi = 0x9F
		}
		if c1 := s[i+1]; c1 < lo || c1 > hi || s[i+2]&0xC0 != 0x80 {
			return 0
		}
		return 3
	case c < 0xF5:
		if i+3 >= len(s) {
			return 0
		}
		lo, hi := byte(0x80), byte(0xBF)
		switch c {
		case 0xF0:
			lo = 0x90
		case 0xF4:
			hi = 0x8F
		}
		if c1 := s[i+1]; c1 < lo || c1 > hi || s[i+2]&0xC0 != 0x80 || s[i+3]&0xC0 != 0x80 {
			return 0
		}
		return 4
	}
	return 0
}

// ShortRune returns the length of the valid rune of two or three bytes at
// s[i] (0x80 or above), other than U+2028 and U+2029, or 0 for any other
// byte there, which SeqLen decides: the letters of most scripts, in a
// few tests.
func ShortRune[T ~string | ~[]byte](s T, i int) int {
	c := s[i]
	if c >= 0xC2 && c < 0xE0 && i+1 < len(s) && s[i+1]&0xC0 == 0x80 {
		return 2
	}
	if c >= 0xE1 && c < 0xF0 && c != 0xED && i+2 < len(s) {
		c1, c2 := s[i+1], s[i+2]
		if c1&0xC0 == 0x80 && c2&0xC0 == 0x80 && (c != 0xE2 || c1 != 0x80 || c2&0xFE != 0xA8) {
			return 3
		}
	}
	return 0
}
