package mcp

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/saguaro-go/saguaro/internal/jsonstr"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// encoder appends JSON for the engine's own result types without
// reflection. It records the first problem (invalid UTF-8, an unencodable
// value) and keeps going, so callers check err once at the end.
type encoder struct {
	b     []byte
	err   error
	first bool
}

func (e *encoder) open() {
	e.b = append(e.b, '{')
	e.first = true
}

func (e *encoder) close() {
	e.b = append(e.b, '}')
	e.first = false
}

func (e *encoder) key(k string) {
	if !e.first {
		e.b = append(e.b, ',')
	}
	e.first = false
	e.b = append(e.b, '"')
	e.b = append(e.b, k...)
	e.b = append(e.b, '"', ':')
}

func (e *encoder) str(s string) {
	if len(s) > 64 && cap(e.b)-len(e.b) < len(s)+2 {
		// Room for s encoded at once, rather than doubling the buffer
		// (and copying it) several times for a long text.
		e.b = slices.Grow(e.b, jsonstr.QuotedLen(s))
	}
	var ok bool
	if e.b, ok = jsonstr.AppendStringValid(e.b, s); !ok && e.err == nil {
		e.err = wire.ErrInvalidUTF8
	}
}

func (e *encoder) strField(k, v string) {
	e.key(k)
	e.str(v)
}

func (e *encoder) optStr(k, v string) {
	if v != "" {
		e.strField(k, v)
	}
}

func (e *encoder) boolField(k string, v bool) {
	e.key(k)
	e.b = strconv.AppendBool(e.b, v)
}

func (e *encoder) raw(r []byte) { e.b = append(e.b, r...) }

func (e *encoder) float(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		if e.err == nil {
			e.err = errNotFinite
		}
		e.b = append(e.b, '0')
		return
	}
	e.b = appendFloat(e.b, f)
}

// value encodes an arbitrary handler value with the UTF-8-checking
// Marshal; a json.RawMessage is checked, not re-encoded.
func (e *encoder) value(v any) {
	out, err := marshalChecked(v)
	if err != nil {
		if e.err == nil {
			e.err = err
		}
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(e.b, out...)
}

func marshalChecked(v any) ([]byte, error) {
	if r, ok := v.(json.RawMessage); ok {
		if !utf8.Valid(r) {
			return nil, wire.ErrInvalidUTF8
		}
		if !json.Valid(r) {
			return nil, errInvalidJSON
		}
		return r, nil
	}
	return wire.Marshal(v)
}

// appendFloat formats like encoding/json: plain notation for ordinary
// magnitudes, exponent form for very large or small ones.
func appendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	return strconv.AppendFloat(b, f, format, -1, 64)
}
