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
