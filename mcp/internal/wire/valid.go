package wire

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
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
	var stackBuf [32]byte
	stack := stackBuf[:0]
	n := len(data)
	i := 0
value:
	i = skipSpace(data, i)
	if i >= n {
		return false
	}
	switch data[i] {
	case '{':
		if len(stack) == maxDepth {
			return false
		}
		i = skipSpace(data, i+1)
		if i < n && data[i] == '}' {
			i++
			goto next
		}
		stack = append(stack, '{')
		goto key
	case '[':
		if len(stack) == maxDepth {
			return false
		}
		i = skipSpace(data, i+1)
		if i < n && data[i] == ']' {
			i++
			goto next
		}
		stack = append(stack, '[')
		goto value
	case '"':
		if i = scanString(data, i); i < 0 {
			return false
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
	goto next
key:
	i = skipSpace(data, i)
	if i >= n || data[i] != '"' {
		return false
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
	for {
		for i+8 <= n {
			m := plainMask(binary.LittleEndian.Uint64(data[i:]))
			if m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= n {
			return -1
		}
		c := data[i]
		switch {
		case c == '"':
			return i + 1
		case c == '\\':
			if i+1 >= n {
				return -1
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > n || !isHex(data[i+2]) || !isHex(data[i+3]) || !isHex(data[i+4]) || !isHex(data[i+5]) {
					return -1
				}
				i += 6
			default:
				return -1
			}
		case c < 0x20:
			return -1
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return -1
			}
			i += size
		}
	}
}

// plainMask marks (in the high bit of each byte) the bytes of x that a
// string scanner must stop at: below 0x20, '"', '\\', or 0x80 and above.
// Only the lowest marked byte is exact: borrows may mark bytes above it.
func plainMask(x uint64) uint64 {
	lt := (x - ones*0x20) &^ x
	q := x ^ (ones * '"')
	q = (q - ones) &^ q
	b := x ^ (ones * '\\')
	b = (b - ones) &^ b
	return (lt | q | b | x) & highs
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
