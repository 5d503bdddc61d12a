package wire

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/saguaro-go/saguaro/internal/jsonstr"
)

type idKind uint8

const (
	idNone idKind = iota
	idInt
	idString
)

// ID is a JSON-RPC request id: absent, an integer (int64) or a string. It
// keeps its JSON type, so an id echoed back has the type the client sent.
// The zero ID is "absent": it marks a notification and encodes as null in
// an error response. IDs are comparable with ==, so they work as map keys
// (a string "1" and an integer 1 are different ids).
type ID struct {
	kind idKind
	num  int64
	str  string
}

// Int returns an integer id.
func Int(n int64) ID { return ID{kind: idInt, num: n} }

// StringID returns a string id. Pitfall: to format any id for logs use the
// ID's String method, which quotes string ids.
func StringID(s string) ID { return ID{kind: idString, str: s} }

// IsZero reports whether the id is absent (a notification, or null).
func (id ID) IsZero() bool { return id.kind == idNone }

// IsString reports whether the id is a JSON string.
func (id ID) IsString() bool { return id.kind == idString }

// IsInt reports whether the id is a JSON integer.
func (id ID) IsInt() bool { return id.kind == idInt }

// IntValue returns the integer value and true for an integer id.
func (id ID) IntValue() (int64, bool) { return id.num, id.kind == idInt }

// StringValue returns the string value and true for a string id.
func (id ID) StringValue() (string, bool) { return id.str, id.kind == idString }

// String formats the id for logs: integers in decimal, strings quoted,
// absent as "null".
func (id ID) String() string {
	switch id.kind {
	case idInt:
		return strconv.FormatInt(id.num, 10)
	case idString:
		return strconv.Quote(id.str)
	}
	return "null"
}

// AppendJSON appends the id's JSON encoding (null when absent).
func (id ID) AppendJSON(dst []byte) []byte {
	switch id.kind {
	case idInt:
		return strconv.AppendInt(dst, id.num, 10)
	case idString:
		return jsonstr.AppendString(dst, id.str)
	}
	return append(dst, "null"...)
}

// MarshalJSON implements json.Marshaler.
func (id ID) MarshalJSON() ([]byte, error) { return id.AppendJSON(nil), nil }

// UnmarshalJSON implements json.Unmarshaler with the strict rules of
// ParseID; null yields the zero ID.
func (id *ID) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*id = ID{}
		return nil
	}
	v, ok := ParseID(b)
	if !ok {
		return errID
	}
	*id = v
	return nil
}

// ParseID parses a raw JSON value as a request id: a string, or an integer
// literal (no fraction, no exponent) that fits in int64. Anything else,
// including null, reports false.
func ParseID(raw []byte) (ID, bool) {
	if len(raw) == 0 {
		return ID{}, false
	}
	switch c := raw[0]; {
	case c == '"':
		s, ok := unquote(raw)
		if !ok {
			return ID{}, false
		}
		return ID{kind: idString, str: s}, true
	case c == '-' || (c >= '0' && c <= '9'):
		if !isIntegerLiteral(raw) {
			return ID{}, false
		}
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return ID{}, false
		}
		return ID{kind: idInt, num: n}, true
	}
	return ID{}, false
}

// isIntegerLiteral reports whether raw is -?(0|[1-9][0-9]*).
func isIntegerLiteral(raw []byte) bool {
	i := 0
	if raw[0] == '-' {
		i++
	}
	if i == len(raw) {
		return false
	}
	if raw[i] == '0' {
		return i+1 == len(raw)
	}
	for ; i < len(raw); i++ {
		if raw[i] < '0' || raw[i] > '9' {
			return false
		}
	}
	return true
}

// unquote decodes a raw JSON string token of validated JSON: it copies
// the runs between escapes once and decodes the escapes as encoding/json
// does (an unpaired surrogate becomes U+FFFD). It does not look for what
// validation rejects (control characters, invalid UTF-8), so it must only
// see validated input; on anything else it never panics, and reports
// false for a malformed escape.
func unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	i := nextBackslash(body, 0)
	if i == len(body) {
		return string(body), true
	}
	b := make([]byte, 0, len(body))
	start := 0
	for i < len(body) {
		b = append(b, body[start:i]...)
		var ok bool
		if b, start, ok = appendEscapeTo(b, body, i); !ok {
			return "", false
		}
		i = nextBackslash(body, start)
	}
	b = append(b, body[start:]...)
	return unsafe.String(unsafe.SliceData(b), len(b)), true
}

// appendEscapeTo decodes the escape at s[i] (a backslash) onto dst and
// returns the index past it, or false for a malformed escape. A \u
// escape of a surrogate that does not start a valid pair is U+FFFD, as
// encoding/json has it.
func appendEscapeTo(dst, s []byte, i int) ([]byte, int, bool) {
	if i+1 >= len(s) {
		return dst, 0, false
	}
	c := s[i+1]
	if c < utf8.RuneSelf {
		if e := shortUnescapes[c]; e != 0 {
			return append(dst, e), i + 2, true
		}
	}
	if c != 'u' {
		return dst, 0, false
	}
	r := hex4(s[i:])
	if r < 0 {
		return dst, 0, false
	}
	i += 6
	if utf16.IsSurrogate(r) {
		if r2 := hex4(s[i:]); r2 >= 0 {
			if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
				return utf8.AppendRune(dst, pair), i + 6, true
			}
		}
		r = utf8.RuneError
	}
	return utf8.AppendRune(dst, r), i, true
}

// nextBackslash returns the index of the first '\\' in s at or after i,
// or len(s): eight bytes at a time, as escapes in text are a few bytes
// apart and a call per escape costs more than the search.
func nextBackslash(s []byte, i int) int {
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64(s[i:]) ^ (ones * '\\')
		if m := (x - ones) &^ x & highs; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(s); i++ {
		if s[i] == '\\' {
			return i
		}
	}
	return len(s)
}

// hex4 reads the escape \uXXXX at the start of s; -1 when s does not
// start with one.
func hex4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}
