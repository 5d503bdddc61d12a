package jsonstr

import (
	"math/bits"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string. Control characters, quotes,
// backslashes and U+2028/U+2029 are escaped; HTML characters are not.
// Invalid UTF-8 bytes become U+FFFD: check utf8.ValidString first when the
// string came from handler code and replacement is not acceptable.
func AppendString(dst []byte, s string) []byte {
	dst, _ = AppendStringValid(dst, s)
	return dst
}

// AppendStringValid is AppendString that also reports whether s was valid
// UTF-8 (false: invalid bytes were replaced), so that a caller who must
// refuse invalid text need not read s a second time.
func AppendStringValid(dst []byte, s string) ([]byte, bool) {
	ok := true
	dst = append(dst, '"')
	start := 0 // s[start:] is not written yet
	next := 0  // s[:next] is read
	i := 0
	// Eight bytes at a time: every byte that needs a look is marked, and
	// the marked bytes of a word are taken in turn.
	for ; i+8 <= len(s); i += 8 {
		m := SpecialMask(uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56)
		for m = UnmarkBefore(m, next-i); m != 0; m = UnmarkBefore(m, next-i) {
			k := i + bits.TrailingZeros64(m)>>3
			c := s[k]
			if c < utf8.RuneSelf { // a marked ASCII byte is escaped
				dst = append(dst, s[start:k]...)
				if e := shortEscapes[c]; e != 0 {
					dst = append(dst, '\\', e)
				} else {
					dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
				}
				start, next = k+1, k+1
				continue
			}
			if size := SeqLen(s, k); size > 0 && (size != 3 || c != 0xE2 || s[k+1] != 0x80 || s[k+2]&0xFE != 0xA8) {
				next = k + size // a rune written as it is
				continue
			}
			dst, start, next, ok = appendSpecial(dst, s, start, k, ok)
		}
		if next > i+8 {
			i = next - 8 // a rune that runs into the next word
		}
	}
	for k := max(i, next); k < len(s); {
		if c := s[k]; c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' {
			k++
			continue
		}
		dst, start, k, ok = appendSpecial(dst, s, start, k, ok)
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), ok
}

// appendSpecial handles the byte at s[k] that needs a look: it writes
// what is pending of s (from start) and the byte's escape when it needs
// one. It returns the new start, the index past what it read, and ok
// cleared when it met invalid UTF-8.
func appendSpecial(dst []byte, s string, start, k int, ok bool) ([]byte, int, int, bool) {
	c := s[k]
	if c < utf8.RuneSelf {
		if c >= 0x20 && c != '"' && c != '\\' {
			return dst, start, k + 1, ok
		}
		dst = append(dst, s[start:k]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		return dst, k + 1, k + 1, ok
	}
	size := SeqLen(s, k)
	switch {
	case size == 0:
		dst = append(dst, s[start:k]...)
		dst = append(dst, `\ufffd`...)
		return dst, k + 1, k + 1, false
	case size == 3 && c == 0xE2 && s[k+1] == 0x80 && s[k+2]&0xFE == 0xA8: // U+2028, U+2029
		dst = append(dst, s[start:k]...)
		dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[s[k+2]&1+8])
		return dst, k + 3, k + 3, ok
	}
	return dst, start, k + size, ok
}

// shortEscapes holds, at each ASCII byte that has a two-byte escape, the
// escape's second byte, else 0.
const shortEscapes = "\x00\x00\x00\x00\x00\x00\x00\x00\x00tn\x00\x00r\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\\\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
