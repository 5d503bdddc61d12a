package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"unicode/utf8"

	"github.com/saguaro-go/saguaro/internal/jsonstr"
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
	dst = jsonstr.AppendString(dst, validMessage(e.Message))
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
	dst = jsonstr.AppendString(dst, method)
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
	dst = jsonstr.AppendString(dst, method)
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

// Marshal encodes v with encoding/json, without its HTML escaping: MCP is
// not HTML, and < > & written as \u003c… would make text six times its
// size (thirteen times in a text block that quotes the JSON again). It
// refuses a value that holds invalid UTF-8 (ErrInvalidUTF8), which
// encoding/json would otherwise coerce without a word. The check is a byte
// scan of the output; only when it finds a coerced-looking escape does it
// walk v to confirm.
func Marshal(v any) ([]byte, error) {
	w := marshalPool.Get().(*bytes.Buffer)
	defer putMarshalBuffer(w)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	out := bytes.Clone(bytes.TrimSuffix(w.Bytes(), []byte{'\n'}))
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

// marshalPool holds Marshal's encoding buffers; Marshal returns a copy of
// what it wrote, as json.Marshal does.
var marshalPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func putMarshalBuffer(w *bytes.Buffer) {
	if w.Cap() > maxPooled {
		return
	}
	w.Reset()
	marshalPool.Put(w)
}

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
			// An embedded struct of an unexported type is encoded too:
			// its exported fields are promoted.
			if f := v.Type().Field(i); (f.IsExported() || f.Anonymous) && hasInvalidUTF8(v.Field(i), depth+1) {
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
