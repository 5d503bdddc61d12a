package wire

import (
	"bytes"
	"errors"
)

// The scanner below walks JSON that has already been validated (valid),
// so it only needs to find token boundaries; it never recurses, and
// never panics on other input.

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(data []byte, i int) int {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

// skipString returns the index just past the string token starting at i.
// It searches for the closing quote (a quote preceded by an even number of
// backslashes) rather than reading the string byte by byte.
func skipString(data []byte, i int) int {
	for i++; i < len(data); {
		j := bytes.IndexByte(data[i:], '"')
		if j < 0 {
			break
		}
		q := i + j
		escaped := false
		for p := q - 1; p >= i && data[p] == '\\'; p-- {
			escaped = !escaped
		}
		if !escaped {
			return q + 1
		}
		i = q + 1
	}
	return len(data)
}

// skipValue is the package's skipValue, by the tape when it has the
// value.
func (t *Tape) skipValue(data []byte, i int) int {
	if end, ok := t.skip(data, i); ok {
		return end
	}
	return skipValue(data, i)
}

// skipValue returns the index just past the value starting at i.
func skipValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				i = skipString(data, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(data)
	}
	for i < len(data) {
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// errNotObject is returned by EachMember for input that is not an object.
var errNotObject = errors.New("jsonrpc: not a JSON object")

// EachMember calls fn for each member of the JSON object obj, in order,
// with the raw key token (quotes included, escapes kept) and the raw value.
// It stops at the first error fn returns and returns it. Pitfall: obj must
// be valid JSON (as every Params of a decoded Message is); on other input
// the result is unspecified but EachMember never panics. Use Key to compare
// keys that may contain escapes.
func EachMember(obj []byte, fn func(key, value []byte) error) error {
	return (*Tape)(nil).EachMember(obj, fn)
}

// EachMember is the package's EachMember over a slice of the tape's body,
// jumping over the long values the tape knows.
func (t *Tape) EachMember(obj []byte, fn func(key, value []byte) error) error {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return errNotObject
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	for i < len(obj) {
		if obj[i] != '"' {
			return errNotObject
		}
		ks := i
		i = skipString(obj, i)
		key := obj[ks:i]
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] != ':' {
			return errNotObject
		}
		i = skipSpace(obj, i+1)
		if i >= len(obj) {
			return errNotObject
		}
		vs := i
		i = t.skipValue(obj, i)
		if err := fn(key, obj[vs:i]); err != nil {
			return err
		}
		i = skipSpace(obj, i)
		if i >= len(obj) {
			return errNotObject
		}
		if obj[i] == '}' {
			return nil
		}
		if obj[i] != ',' {
			return errNotObject
		}
		i = skipSpace(obj, i+1)
	}
	return errNotObject
}

// Key returns the decoded name of a raw key token from EachMember. Without
// escapes it does not allocate when compared directly:
// string(key[1:len(key)-1]) == "name". Key handles the escaped forms.
func Key(raw []byte) string {
	s, _ := unquote(raw)
	return s
}

// KeyIs reports whether the raw key token names want, case-sensitively,
// decoding escapes only when present.
func KeyIs(raw []byte, want string) bool {
	if len(raw) < 2 {
		return false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c == '\\' {
			return Key(raw) == want
		}
	}
	return string(body) == want
}

// Unquote decodes a raw JSON string value; false if raw is not a string.
func Unquote(raw []byte) (string, bool) { return unquote(raw) }

// EachElement calls fn for each element of the JSON array arr, in order,
// with the raw value. Like EachMember it expects valid JSON and never
// panics on other input.
func EachElement(arr []byte, fn func(value []byte) error) error {
	return (*Tape)(nil).EachElement(arr, fn)
}

// EachElement is the package's EachElement over a slice of the tape's
// body, jumping over the long values the tape knows.
func (t *Tape) EachElement(arr []byte, fn func(value []byte) error) error {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return errNotArray
	}
	i = skipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return nil
	}
	for i < len(arr) {
		vs := i
		i = t.skipValue(arr, i)
		if err := fn(arr[vs:i]); err != nil {
			return err
		}
		i = skipSpace(arr, i)
		if i >= len(arr) {
			return errNotArray
		}
		if arr[i] == ']' {
			return nil
		}
		if arr[i] != ',' {
			return errNotArray
		}
		i = skipSpace(arr, i+1)
	}
	return errNotArray
}

var errNotArray = errors.New("jsonrpc: not a JSON array")
