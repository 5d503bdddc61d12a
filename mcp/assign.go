package mcp

import (
	"encoding"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Typed arguments from the validated tree. A tool's arguments are decoded
// once into the generic tree the schema validator walks (decodeValue:
// strings unescaped, numbers kept as their literals); an assigner then
// sets the handler's typed input from that tree, as json.Unmarshal would
// from the same JSON, sharing its strings instead of unescaping every
// byte a second time. Types whose decoding it does not know (custom
// unmarshalers, embedded structs, ",string" fields, []byte, arrays, maps
// with non-string keys, non-empty interfaces) are decoded by
// json.Unmarshal as before, and so is any input an assigner refuses, so
// that errors read exactly as encoding/json's.

// assigner sets v (addressable, holding its zero value) from x, a node of
// the tree decodeValue builds. An error means "let encoding/json decide".
type assigner func(v reflect.Value, x any) error

// errAssign: the tree does not fit the type, or fits it in a way only
// encoding/json can settle (two keys folding to one field).
var errAssign = errors.New("mcp: arguments do not fit the type")

var (
	typeJSONUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	typeTextUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// newAssigner returns the assigner of t, nil when json.Unmarshal must
// decode t.
func newAssigner(t reflect.Type) assigner {
	return compileAssigner(t, map[reflect.Type]*assigner{})
}

func compileAssigner(t reflect.Type, seen map[reflect.Type]*assigner) assigner {
	if p, ok := seen[t]; ok {
		// A recursive type: its assigner is being built; call through
		// the slot once it is filled.
		return func(v reflect.Value, x any) error { return (*p)(v, x) }
	}
	if t == typeNumber || t.Implements(typeJSONUnmarshaler) || t.Implements(typeTextUnmarshaler) ||
		reflect.PointerTo(t).Implements(typeJSONUnmarshaler) || reflect.PointerTo(t).Implements(typeTextUnmarshaler) {
		return nil
	}
	slot := new(assigner)
	seen[t] = slot
	a := compileKind(t, seen)
	if a == nil {
		return nil
	}
	*slot = a
	return a
}

func compileKind(t reflect.Type, seen map[reflect.Type]*assigner) assigner {
	switch t.Kind() {
	case reflect.Bool:
		return assignBool
	case reflect.String:
		return assignString
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return assignInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return assignUint
	case reflect.Float32, reflect.Float64:
		return assignFloat
	case reflect.Interface:
		if t.NumMethod() != 0 {
			return nil
		}
		return assignAny
	case reflect.Pointer:
		elem := compileAssigner(t.Elem(), seen)
		if elem == nil {
			return nil
		}
		return func(v reflect.Value, x any) error {
			if x == nil {
				v.SetZero()
				return nil
			}
			if v.IsNil() {
				v.Set(reflect.New(t.Elem()))
			}
			return elem(v.Elem(), x)
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil // base64 strings
		}
		elem := compileAssigner(t.Elem(), seen)
		if elem == nil {
			return nil
		}
		return func(v reflect.Value, x any) error {
			switch a := x.(type) {
			case nil:
				v.SetZero()
				return nil
			case []any:
				s := reflect.MakeSlice(t, len(a), len(a))
				for i, e := range a {
					if err := elem(s.Index(i), e); err != nil {
						return err
					}
				}
				v.Set(s)
				return nil
			}
			return errAssign
		}
	case reflect.Map:
		kt := t.Key()
		if kt.Kind() != reflect.String || kt.Implements(typeTextUnmarshaler) || reflect.PointerTo(kt).Implements(typeTextUnmarshaler) {
			return nil
		}
		elem := compileAssigner(t.Elem(), seen)
		if elem == nil {
			return nil
		}
		return func(v reflect.Value, x any) error {
			switch m := x.(type) {
			case nil:
				v.SetZero()
				return nil
			case map[string]any:
				if v.IsNil() {
					v.Set(reflect.MakeMapWithSize(t, len(m)))
				}
				for k, e := range m {
					ev := reflect.New(t.Elem()).Elem()
					if err := elem(ev, e); err != nil {
						return err
					}
					v.SetMapIndex(reflect.ValueOf(k).Convert(kt), ev)
				}
				return nil
			}
			return errAssign
		}
	case reflect.Struct:
		return compileStruct(t, seen)
	}
	return nil // arrays, channels, functions, complex numbers
}

// assignedField is a struct field an assigner sets.
type assignedField struct {
	index  int
	assign assigner
}

func compileStruct(t reflect.Type, seen map[reflect.Type]*assigner) assigner {
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).Anonymous {
			return nil // promotion and embedded pointers: encoding/json's
		}
	}
	exact := map[string]int{}
	folded := map[string]int{}
	var fields []assignedField
	for _, f := range structFields(t) {
		if f.asString || !validTagName(f.name) {
			return nil
		}
		a := compileAssigner(f.typ, seen)
		if a == nil {
			return nil
		}
		n := len(fields)
		fields = append(fields, assignedField{index: f.index[0], assign: a})
		exact[f.name] = n
		if k := foldName(f.name); !hasKey(folded, k) {
			folded[k] = n
		}
	}
	return func(v reflect.Value, x any) error {
		m, ok := x.(map[string]any)
		if !ok {
			if x == nil {
				return nil
			}
			return errAssign
		}
		var set uint64 // which fields a key reached, for the first 64
		for k, e := range m {
			n, ok := exact[k]
			if !ok {
				if n, ok = folded[foldName(k)]; !ok {
					continue
				}
			}
			if n < 64 {
				if set&(1<<n) != 0 {
					return errAssign // two keys, one field: JSON order decides
				}
				set |= 1 << n
			} else if len(m) > 1 {
				return errAssign
			}
			f := fields[n]
			if err := f.assign(v.Field(f.index), e); err != nil {
				return err
			}
		}
		return nil
	}
}

func hasKey(m map[string]int, k string) bool {
	_, ok := m[k]
	return ok
}

// foldName is encoding/json's case folding of field names: ASCII letters
// to upper case, other runes to the smallest of their fold set.
func foldName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			b.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		for {
			r2 := unicode.SimpleFold(r)
			if r2 <= r {
				r = r2
				break
			}
			r = r2
		}
		b.WriteRune(r)
		i += n
	}
	return b.String()
}

// validTagName is encoding/json's rule for a usable json tag name.
func validTagName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

func assignBool(v reflect.Value, x any) error {
	switch b := x.(type) {
	case nil:
		return nil
	case bool:
		v.SetBool(b)
		return nil
	}
	return errAssign
}

func assignString(v reflect.Value, x any) error {
	switch s := x.(type) {
	case nil:
		return nil
	case string:
		v.SetString(s)
		return nil
	}
	return errAssign
}

func assignInt(v reflect.Value, x any) error {
	switch n := x.(type) {
	case nil:
		return nil
	case json.Number:
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || v.OverflowInt(i) {
			return errAssign
		}
		v.SetInt(i)
		return nil
	}
	return errAssign
}

func assignUint(v reflect.Value, x any) error {
	switch n := x.(type) {
	case nil:
		return nil
	case json.Number:
		u, err := strconv.ParseUint(string(n), 10, 64)
		if err != nil || v.OverflowUint(u) {
			return errAssign
		}
		v.SetUint(u)
		return nil
	}
	return errAssign
}

func assignFloat(v reflect.Value, x any) error {
	switch n := x.(type) {
	case nil:
		return nil
	case json.Number:
		f, err := strconv.ParseFloat(string(n), v.Type().Bits())
		if err != nil || v.OverflowFloat(f) {
			return errAssign
		}
		v.SetFloat(f)
		return nil
	}
	return errAssign
}

// assignAny sets an empty interface to the value encoding/json would give
// it: the tree itself, its numbers turned into float64 in place (the tree
// is the call's own and nothing reads it afterwards).
func assignAny(v reflect.Value, x any) error {
	x, err := plainTree(x)
	if err != nil {
		return err
	}
	if x == nil {
		v.SetZero()
		return nil
	}
	v.Set(reflect.ValueOf(x))
	return nil
}

func plainTree(x any) (any, error) {
	switch t := x.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil {
			return nil, errAssign
		}
		return f, nil
	case map[string]any:
		for k, e := range t {
			p, err := plainTree(e)
			if err != nil {
				return nil, err
			}
			t[k] = p
		}
	case []any:
		for i, e := range t {
			p, err := plainTree(e)
			if err != nil {
				return nil, err
			}
			t[i] = p
		}
	}
	return x, nil
}
