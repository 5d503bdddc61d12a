package wire

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
	"unsafe"

	"github.com/saguaro-go/saguaro/internal/jsonstr"
)

// Validation in one pass. A body is checked once, byte by byte, for JSON
// syntax and for UTF-8 inside its strings (outside them JSON allows only
// ASCII); everything that walks it afterwards trusts it, and skips a
// string by searching for its closing quote instead of reading it.

// maxDepth bounds nesting as encoding/json does.
const maxDepth = 10000

// valid reports whether data is one JSON value, with optional white space
// around it, whose strings are valid UTF-8: utf8.Valid(data) &&
// json.Valid(data) in one pass.
func valid(data []byte) bool {
	return validate(data, nil)
}

// validate is valid recording data's long tokens on t when t is not nil.
func validate(data []byte, t *Tape) bool {
	var stackBuf [32]byte
	stack := stackBuf[:0]
	var startsBuf [32]int
	var starts []int // where each open container started, when recording
	if t != nil {
		starts = startsBuf[:0]
	}
	n := len(data)
	i := 0
	inParams := false // the value of the root's "params" member, when recording
value:
	i = skipSpace(data, i)
	if i >= n {
		return false
	}
	switch data[i] {
	case '{', '[':
		open := data[i]
		if len(stack) == maxDepth {
			return false
		}
		i = skipSpace(data, i+1)
		if i < n && data[i] == open+2 { // '}' and ']' follow their openers by two
			i++
			goto next
		}
		stack = append(stack, open)
		if t != nil {
			starts = append(starts, lastOpen(data, i))
		}
		if open == '{' {
			goto key
		}
		goto value
	case '"':
		start := i
		if t != nil && inParams {
			// A request's long string is decoded as it is validated: a
			// handler will want it, and this is its one reading.
			if end := skipString(data, i); end-start >= tapeMin {
				var str string
				if i, str = scanDecode(data, i, end); i < 0 {
					return false
				}
				t.spans = append(t.spans, span{start: start, end: i, str: str, decoded: true})
				break
			}
		}
		if i = scanString(data, i); i < 0 {
			return false
		}
		if t != nil && i-start >= tapeMin {
			t.spans = append(t.spans, span{start: start, end: i})
		}
	case 't':
		if !hasLiteral(data, i, "true") {
			return false
		}
		i += 4
	case 'f':
		if !hasLiteral(data, i, "false") {
			return false
		}
		i += 5
	case 'n':
		if !hasLiteral(data, i, "null") {
			return false
		}
		i += 4
	default:
		if i = scanNumber(data, i); i < 0 {
			return false
		}
	}
next:
	i = skipSpace(data, i)
	if len(stack) == 0 {
		return i == n
	}
	if i >= n {
		return false
	}
	switch top := stack[len(stack)-1]; data[i] {
	case ',':
		i++
		if top == '{' {
			goto key
		}
		goto value
	case '}':
		if top != '{' {
			return false
		}
	case ']':
		if top != '[' {
			return false
		}
	default:
		return false
	}
	stack = stack[:len(stack)-1]
	i++
	if t != nil {
		start := starts[len(starts)-1]
		starts = starts[:len(starts)-1]
		if i-start >= tapeMin {
			t.spans = append(t.spans, span{start: start, end: i})
		}
	}
	goto next
key:
	i = skipSpace(data, i)
	if i >= n || data[i] != '"' {
		return false
	}
	if t != nil && len(stack) == 1 {
		inParams = hasLiteral(data, i, `"params"`)
	}
	if i = scanString(data, i); i < 0 {
		return false
	}
	i = skipSpace(data, i)
	if i >= n || data[i] != ':' {
		return false
	}
	i++
	goto value
}

// lastOpen returns the index of the '{' or '[' before i (its white space
// skipped).
func lastOpen(data []byte, i int) int {
	for i--; i > 0 && data[i] != '{' && data[i] != '['; i-- {
	}
	return i
}

func hasLiteral(data []byte, i int, lit string) bool {
	return len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit
}

// scanNumber returns the index past the number at i, or -1:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func scanNumber(data []byte, i int) int {
	n := len(data)
	if i < n && data[i] == '-' {
		i++
	}
	switch {
	case i < n && data[i] == '0':
		i++
	case i < n && data[i] >= '1' && data[i] <= '9':
		for i++; i < n && isDigit(data[i]); i++ {
		}
	default:
		return -1
	}
	if i < n && data[i] == '.' {
		i++
		if i >= n || !isDigit(data[i]) {
			return -1
		}
		for i++; i < n && isDigit(data[i]); i++ {
		}
	}
	if i < n && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < n && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= n || !isDigit(data[i]) {
			return -1
		}
		for i++; i < n && isDigit(data[i]); i++ {
		}
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// SWAR constants: a byte-wise test of eight bytes at once.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// scanString checks the string token at i (data[i] == '"'): escapes, no
// control characters, valid UTF-8. It returns the index past its closing
// quote, or -1.
func scanString(data []byte, i int) int {
	n := len(data)
	i++
	next := i // data[:next] is read
	// Eight bytes at a time: every byte that needs a look is marked, and
	// the marked bytes of a word are taken in turn.
	for ; i+8 <= n; i += 8 {
		m := jsonstr.SpecialMask(binary.LittleEndian.Uint64(data[i:]))
		for m = jsonstr.UnmarkBefore(m, next-i); m != 0; m = jsonstr.UnmarkBefore(m, next-i) {
			k := i + bits.TrailingZeros64(m)>>3
			switch c := data[k]; {
			case c == '"':
				return k + 1
			case c == '\\':
				if next = escapeEnd(data, k); next < 0 {
					return -1
				}
			case c < 0x20:
				return -1
			default:
				size := jsonstr.SeqLen(data, k)
				if size == 0 {
					return -1
				}
				next = k + size
			}
		}
		if next > i+8 {
			i = next - 8
		}
	}
	for k := max(i, next); k < n; {
		switch c := data[k]; {
		case c == '"':
			return k + 1
		case c == '\\':
			if k = escapeEnd(data, k); k < 0 {
				return -1
			}
		case c < 0x20:
			return -1
		case c < utf8.RuneSelf:
			k++
		default:
			size := jsonstr.SeqLen(data, k)
			if size == 0 {
				return -1
			}
			k += size
		}
	}
	return -1
}

// escapeEnd checks the escape at data[k] (a backslash) and returns the
// index past it, or -1.
func escapeEnd(data []byte, k int) int {
	if k+1 >= len(data) {
		return -1
	}
	switch data[k+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return k + 2
	case 'u':
		if k+6 > len(data) || !isHex(data[k+2]) || !isHex(data[k+3]) || !isHex(data[k+4]) || !isHex(data[k+5]) {
			return -1
		}
		return k + 6
	}
	return -1
}

// scanDecode is scanString that also decodes the string, whose token
// ends at end (skipString's answer, known before it is validated): the
// index past the token, or -1, and its value. The value is written into
// one buffer the size of the token, eight bytes at a time by
// decodeWords; the bytes it leaves (a \u escape, a rare rune, the
// closing quote, the last few bytes) are taken here.
func scanDecode(data []byte, i, end int) (int, string) {
	if end <= i || end > len(data) {
		end = len(data)
	}
	buf := make([]byte, end-i+8) // the value is never longer than its token
	n := 0
	for p := i + 1; ; {
		n, p = decodeWords(buf, n, data, p)
		if p >= len(data) {
			return -1, ""
		}
		switch c := data[p]; {
		case c == '"':
			return p + 1, unsafe.String(unsafe.SliceData(buf), n)
		case c == '\\':
			var ok bool
			if buf, p, ok = appendEscapeTo(buf[:n], data, p); !ok {
				return -1, ""
			}
			n, buf = len(buf), buf[:cap(buf)]
		case c < 0x20:
			return -1, ""
		case c < utf8.RuneSelf:
			buf = append(buf[:n], c)
			n, buf = len(buf), buf[:cap(buf)]
			p++
		default:
			size := jsonstr.SeqLen(data, p)
			if size == 0 {
				return -1, ""
			}
			buf = append(buf[:n], data[p:p+size]...)
			n, buf = len(buf), buf[:cap(buf)]
			p += size
		}
	}
}

// decodeWords writes the string's bytes from data[p] into buf from n,
// eight bytes at a time, and returns where it stopped in each: at a byte
// it leaves to scanDecode, or when fewer than eight bytes of data are
// left or buf has less than eight past n. A word is written before it is
// looked at: its ASCII and its runes of two and three bytes stay as
// written; at a two-byte escape the word is taken up to it, its byte is
// written over what follows, and the next word starts after it.
func decodeWords(buf []byte, n int, data []byte, p int) (int, int) {
	for p+8 <= len(data) && n+8 <= len(buf) {
		t := data[p : p+8]
		w := binary.LittleEndian.Uint64(t)
		binary.LittleEndian.PutUint64(buf[n:], w)
		take := 8 // bytes of the word that stay as written
		for m := jsonstr.SpecialMask(w); m != 0; {
			k := bits.TrailingZeros64(m) >> 3
			c := t[k]
			if c >= utf8.RuneSelf {
				size := jsonstr.ShortRune(data, p+k)
				switch {
				case size == 0:
					return n + k, p + k
				case k+size <= 8:
					m = jsonstr.UnmarkBefore(m, k+size)
					continue
				}
				take = k // the rune starts the next word
				break
			}
			if c != '\\' || k == 7 || t[k+1] >= utf8.RuneSelf || shortUnescapes[t[k+1]] == 0 {
				return n + k, p + k
			}
			buf[n+k] = shortUnescapes[t[k+1]]
			p, n = p+k+2, n+k+1
			take = 0
			break
		}
		p += take
		n += take
	}
	return n, p
}

// shortUnescapes holds, at the second byte of each two-byte escape, the
// byte it stands for, else 0 (ASCII only: a byte of 0x80 or above is not
// an escape's).
const shortUnescapes = "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00/\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\\\x00\x00\x00\x00\x00\b\x00\x00\x00\f\x00\x00\x00\x00\x00\x00\x00\n\x00\x00\x00\r\x00\t\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
