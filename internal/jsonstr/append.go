package jsonstr

import (
	"encoding/binary"
	"math/bits"
	"slices"
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
	// escapeWords takes most of s; the loop here takes the bytes it
	// leaves (runes of four bytes, the rare forms of three, U+2028 and
	// U+2029, invalid UTF-8) and grows dst when the words need room. The
	// last bytes, and a dst that a caller sized exactly, go through
	// append.
	buf := dst[:cap(dst)]
	n := len(dst)
	i := 0
	for {
		n, i = escapeWords(buf, n, s, i)
		if i+8 > len(s) {
			break
		}
		if len(buf)-n < wordRoom {
			if len(s)-i <= growAfter {
				break
			}
			buf = slices.Grow(buf[:n], len(s)-i+wordRoom)
			buf = buf[:cap(buf)]
			continue
		}
		// s[i] is 0x80 or above: appendSpecial writes its escape, or
		// reads past a rune that is written as it is.
		out, start, next, valid := appendSpecial(buf[:n], s, i, i, ok)
		out = append(out, s[start:next]...)
		buf, n, i, ok = out[:cap(out)], len(out), next, valid
	}
	dst = buf[:n]
	start := i // s[start:] is not written yet
	for k := i; k < len(s); {
		if c := s[k]; c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' {
			k++
			continue
		}
		dst, start, k, ok = appendSpecial(dst, s, start, k, ok)
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), ok
}

// escapeWords writes s from i into buf from n, eight bytes at a time,
// and returns where it stopped in each: before a byte that ShortRune
// does not know (a rune of four bytes, U+2028, invalid UTF-8), when fewer
// than eight bytes of s are left, or when buf has less than wordRoom past
// n. A word is written before it is looked at: its ASCII and its runes
// of two and three bytes stay as written; at a byte to escape, the word
// is taken up to it, the escape is written over what follows, and the
// next word starts after it. Text such as source code needs an escape
// every few bytes, so an escape costs a few instructions here, not a
// copy of the run before it.
func escapeWords(buf []byte, n int, s string, i int) (int, int) {
	for i+8 <= len(s) && n+wordRoom <= len(buf) {
		t := s[i : i+8]
		w := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
			uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
		binary.LittleEndian.PutUint64(buf[n:], w)
		take := 8 // bytes of the word that stay as written
		for m := SpecialMask(w); m != 0; {
			k := bits.TrailingZeros64(m) >> 3
			c := t[k]
			if c >= utf8.RuneSelf {
				size := ShortRune(s, i+k)
				switch {
				case size == 0:
					return n + k, i + k
				case k+size <= 8:
					m = UnmarkBefore(m, k+size)
					continue
				}
				take = k // the rune starts the next word
				break
			}
			i, n = i+k+1, n+k
			if e := shortEscapes[c]; e != 0 {
				b := buf[n : n+2]
				b[0], b[1] = '\\', e
				n += 2
			} else {
				b := buf[n : n+6]
				b[0], b[1], b[2], b[3], b[4], b[5] = '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF]
				n += 6
			}
			take = 0
			break
		}
		i += take
		n += take
	}
	return n, i
}

// wordRoom is the room the eight-byte loop needs past what it has
// written: a word, and an escape of six bytes that starts in it.
const wordRoom = 16

// growAfter is how much of s must be left for the eight-byte loop to
// grow dst rather than leave the rest to append: a caller who sized dst
// for the whole answer never sees it grown for the loop's room.
const growAfter = 64

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
