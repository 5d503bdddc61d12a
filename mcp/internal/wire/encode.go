package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/bits"
	"reflect"
	"sync"
	"unicode/utf8"
)

// ErrInvalidUTF8 is returned by Marshal when a string in the value holds
// invalid UTF-8. encoding/json would silently replace such bytes with
// U+FFFD; MCP peers would then see data the handler never produced, so the
// engine answers InternalError instead.
var ErrInvalidUTF8 = errors.New("jsonrpc: value holds invalid UTF-8")

// Constant parts of every envelope, encoded once.
const (
	prefixID     = `{"jsonrpc":"2.0","id":`
	partResult   = `,"result":`
	partError    = `,"error":`
	prefixMethod = `{"jsonrpc":"2.0","method":`
	partParams   = `,"params":`
	partID       = `,"id":`
)

// AppendResponse appends a success response. result must be valid,
// UTF-8-clean JSON (an encoded result object); it is copied as is.
func AppendResponse(dst []byte, id ID, result []byte) []byte {
	dst = append(dst, prefixID...)
	dst = id.AppendJSON(dst)
	dst = append(dst, partResult...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// AppendErrorResponse appends an error response; a zero id encodes as null.
// The message is forced to valid UTF-8; Data is dropped if it cannot be
// encoded cleanly.
func AppendErrorResponse(dst []byte, id ID, e *Error) []byte {
	dst = append(dst, prefixID...)
	dst = id.AppendJSON(dst)
	dst = append(dst, partError...)
	return appendErrorObject(dst, e)
}

func appendErrorObject(dst []byte, e *Error) []byte {
	dst = append(dst, `{"code":`...)
	dst = appendInt(dst, int64(e.Code))
	dst = append(dst, `,"message":`...)
	dst = AppendString(dst, validMessage(e.Message))
	if e.Data != nil {
		if raw, err := Marshal(e.Data); err == nil {
			dst = append(dst, `,"data":`...)
			dst = append(dst, raw...)
		}
	}
	return append(dst, "}}"...)
}

// AppendNotification appends a notification; params must be valid JSON or
// nil (then the member is omitted).
func AppendNotification(dst []byte, method string, params []byte) []byte {
	dst = append(dst, prefixMethod...)
	dst = AppendString(dst, method)
	if params != nil {
		dst = append(dst, partParams...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// AppendRequest appends a request (server→client); params as for
// AppendNotification.
func AppendRequest(dst []byte, id ID, method string, params []byte) []byte {
	dst = append(dst, prefixMethod...)
	dst = AppendString(dst, method)
	if params != nil {
		dst = append(dst, partParams...)
		dst = append(dst, params...)
	}
	dst = append(dst, partID...)
	dst = id.AppendJSON(dst)
	return append(dst, '}')
}

func appendInt(dst []byte, n int64) []byte {
	return Int(n).AppendJSON(dst)
}

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
		m := specialMask(uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56)
		for m = unmarkBefore(m, next-i); m != 0; m = unmarkBefore(m, next-i) {
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
			if size := seqLen(s, k); size > 0 && (size != 3 || c != 0xE2 || s[k+1] != 0x80 || s[k+2]&0xFE != 0xA8) {
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
	size := seqLen(s, k)
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

// unmarkBefore clears the marks of a word's first n bytes: what a
// scanner has read already (the rest of a rune or an escape, the byte it
// just handled).
func unmarkBefore(m uint64, n int) uint64 {
	if n <= 0 {
		return m
	}
	if n >= 8 {
		return 0
	}
	return m &^ (1<<(uint(n)*8) - 1)
}

// shortEscapes holds, at each ASCII byte that has a two-byte escape, the
// escape's second byte, else 0.
const shortEscapes = "\x00\x00\x00\x00\x00\x00\x00\x00\x00tn\x00\x00r\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\\\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"

// specialMask marks exactly (in the high bit of each byte) the bytes of x
// that a string scanner must look at: below 0x20, '"', '\\', or 0x80 and
// above. Unlike plainMask it has no false marks, so that every marked
// byte of a word can be taken in turn.
func specialMask(x uint64) uint64 {
	const low7 = 0x7F7F7F7F7F7F7F7F
	y := x & low7
	lt := ^(y + ones*(0x80-0x20))
	q := ^((y ^ ones*'"') + low7)
	b := ^((y ^ ones*'\\') + low7)
	return (lt | q | b | x) & highs
}

// Marshal encodes v with encoding/json and refuses a value that holds
// invalid UTF-8 (ErrInvalidUTF8), which encoding/json would otherwise
// coerce without a word. The check is a byte scan of the output; only when
// it finds a coerced-looking escape does it walk v to confirm.
func Marshal(v any) ([]byte, error) {
	out, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if !utf8.Valid(out) {
		return nil, ErrInvalidUTF8
	}
	if hasReplacementEscape(out) && hasInvalidUTF8(reflect.ValueOf(v), 0) {
		return nil, ErrInvalidUTF8
	}
	return out, nil
}

// hasReplacementEscape reports whether out contains the escape `\ufffd`
// that encoding/json writes for an invalid byte (a literal U+FFFD in a
// valid string is written raw, and a literal backslash is doubled).
func hasReplacementEscape(out []byte) bool {
	for off := 0; ; {
		j := bytes.Index(out[off:], replacementEscape)
		if j < 0 {
			return false
		}
		j += off
		n := 0
		for k := j; k >= 0 && out[k] == '\\'; k-- {
			n++
		}
		if n%2 == 1 {
			return true
		}
		off = j + len(replacementEscape)
	}
}

var replacementEscape = []byte(`\ufffd`)

var marshalerType = reflect.TypeFor[json.Marshaler]()

// hasInvalidUTF8 walks v the way encoding/json would and reports a string
// (or map key) holding invalid UTF-8. Depth is bounded against cycles.
func hasInvalidUTF8(v reflect.Value, depth int) bool {
	if depth > 1000 || !v.IsValid() {
		return false
	}
	if v.Kind() != reflect.Pointer && v.Kind() != reflect.Interface && v.Type().Implements(marshalerType) {
		return false // its own encoding; utf8.Valid on the output covered it
	}
	switch v.Kind() {
	case reflect.String:
		return !utf8.ValidString(v.String())
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return false
		}
		return hasInvalidUTF8(v.Elem(), depth+1)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() && hasInvalidUTF8(v.Field(i), depth+1) {
				return true
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if hasInvalidUTF8(it.Key(), depth+1) || hasInvalidUTF8(it.Value(), depth+1) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return false // base64
		}
		for i := 0; i < v.Len(); i++ {
			if hasInvalidUTF8(v.Index(i), depth+1) {
				return true
			}
		}
	}
	return false
}

// Buffer pooling for encoders on the hot path.

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooled bounds the buffers kept in the pool, so one huge response does
// not pin its memory forever.
const maxPooled = 64 << 10

// GetBuffer returns an empty buffer from a shared pool. Pass it back with
// PutBuffer when done, and never touch it afterwards.
func GetBuffer() *[]byte {
	b := bufPool.Get().(*[]byte)
	*b = (*b)[:0]
	return b
}

// PutBuffer returns a buffer to the pool; oversized buffers are dropped.
func PutBuffer(b *[]byte) {
	if b == nil || cap(*b) > maxPooled {
		return
	}
	bufPool.Put(b)
}

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
// 0x20, '"' and '\\'.
func escapeMask(x uint64) uint64 {
	const low7 = 0x7F7F7F7F7F7F7F7F
	y := x & low7
	lt := ^(y + ones*(0x80-0x20))
	q := ^((y ^ ones*'"') + low7)
	b := ^((y ^ ones*'\\') + low7)
	return (lt | q | b) &^ x & highs
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
