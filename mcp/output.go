package mcp

import (
	"bytes"
	"reflect"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// How a typed tool's Out becomes structuredContent. MCP requires
// structuredContent to be a JSON object, and an inferred output schema
// to say exactly what is sent, so two things are decided here once, from
// Out's type, when the tool is added:
//
//   - Out whose JSON is not an object (a number, a bool, a named string,
//     a slice, an array, a type with its own MarshalJSON or MarshalText) is
//     sent as {"result": value}, the shape the official Python SDK also
//     uses, and its output schema describes that object.
//   - A nil slice or map, which encoding/json writes as null, is sent as
//     [] or {} (a nil []byte as ""), so that the inferred schema can type
//     a slice as "array" rather than ["array","null"], which clients that
//     check schemas strictly warn about. A nil pointer stays null, and its
//     schema allows it.

// resultKey is the member a non-object Out is wrapped in.
const resultKey = "result"

// outputShape is what AddTool prepared from Out's type.
type outputShape struct {
	// wrap: Out's JSON is never an object; it is sent as {"result": v}.
	wrap bool
	// dynamic: Out is an interface or json.RawMessage, whose JSON is known
	// only per value; a value that is not an object is wrapped.
	dynamic bool
	// fill says where a null in Out's JSON is Go's nil slice or map; nil
	// when Out has no slice or map.
	fill *fillPlan
}

func newOutputShape(t reflect.Type) *outputShape {
	base := t
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	o := &outputShape{}
	switch {
	case base.Kind() == reflect.Interface, base == typeRawMessage:
		o.dynamic = true
		return o
	case ownEncoding(base):
		o.wrap = true
	case base.Kind() == reflect.Struct:
	case base.Kind() == reflect.Map:
	default:
		o.wrap = true
	}
	o.fill = (&fillBuilder{seen: map[reflect.Type]*fillPlan{}}).plan(t)
	return o
}

// ownEncoding reports whether encoding/json encodes t through a method of
// its (or its pointer's) rather than by its kind; inferSchema treats such
// a type the same way.
func ownEncoding(t reflect.Type) bool {
	return t == typeTime || t == typeNumber ||
		t.Implements(typeMarshaler) || reflect.PointerTo(t).Implements(typeMarshaler) ||
		t.Implements(typeTextMarshal) || reflect.PointerTo(t).Implements(typeTextMarshal)
}

// structured turns Out's encoding into the structuredContent to send.
func (o *outputShape) structured(raw []byte) []byte {
	if o.fill != nil && bytes.Contains(raw, nullLiteral) {
		raw = o.fill.fill(make([]byte, 0, len(raw)+16), raw)
	}
	if o.wrap || o.dynamic && (len(raw) == 0 || raw[0] != '{') {
		w := make([]byte, 0, len(raw)+len(`{"result":}`))
		w = append(w, `{"`+resultKey+`":`...)
		w = append(w, raw...)
		return append(w, '}')
	}
	return raw
}

var nullLiteral = []byte("null")

// A fillPlan mirrors a Go type's JSON: where its encoding can hold a null
// that stands for a nil slice or map.
type fillPlan struct {
	kind   fillKind
	elem   *fillPlan            // pointer, slice, array, map: what it holds
	fields map[string]*fillPlan // struct: by JSON name
}

type fillKind uint8

const (
	fillPointer fillKind = iota // null stays null
	fillSlice                   // null is []
	fillBytes                   // a []byte: null is ""
	fillArray                   // a fixed array: never null
	fillMap                     // null is {}
	fillStruct                  // never null
)

type fillBuilder struct {
	seen map[reflect.Type]*fillPlan
}

// plan returns the fillPlan of t, nil when no null in t's encoding can
// stand for a nil slice or map. A recursive type gets a plan without
// looking further (a plan that finds nothing to fill costs a walk, not
// a wrong answer).
func (b *fillBuilder) plan(t reflect.Type) *fillPlan {
	if p, ok := b.seen[t]; ok {
		return p
	}
	if ownEncoding(t) || t == typeRawMessage {
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		if elem := b.plan(t.Elem()); elem != nil {
			return &fillPlan{kind: fillPointer, elem: elem}
		}
	case reflect.Slice:
		if isByteSlice(t) {
			return &fillPlan{kind: fillBytes}
		}
		p := &fillPlan{kind: fillSlice}
		b.seen[t] = p
		p.elem = b.plan(t.Elem())
		return p
	case reflect.Array:
		p := &fillPlan{kind: fillArray}
		b.seen[t] = p
		if p.elem = b.plan(t.Elem()); p.elem == nil {
			delete(b.seen, t)
			return nil
		}
		return p
	case reflect.Map:
		p := &fillPlan{kind: fillMap}
		b.seen[t] = p
		p.elem = b.plan(t.Elem())
		return p
	case reflect.Struct:
		p := &fillPlan{kind: fillStruct, fields: map[string]*fillPlan{}}
		b.seen[t] = p
		for _, f := range structFields(t) {
			if f.asString {
				continue
			}
			if fp := b.plan(f.typ); fp != nil {
				p.fields[f.name] = fp
			}
		}
		if len(p.fields) == 0 {
			delete(b.seen, t)
			return nil
		}
		return p
	}
	return nil
}

// isByteSlice reports whether encoding/json writes t as a base64 string.
func isByteSlice(t reflect.Type) bool {
	if t.Kind() != reflect.Slice || t.Elem().Kind() != reflect.Uint8 {
		return false
	}
	p := reflect.PointerTo(t.Elem())
	return !p.Implements(typeMarshaler) && !p.Implements(typeTextMarshal)
}

// fill appends raw, a value encoding/json wrote for p's type, to dst with
// each null that stands for a nil slice or map replaced.
func (p *fillPlan) fill(dst, raw []byte) []byte {
	if p == nil {
		return append(dst, raw...)
	}
	if string(raw) == "null" {
		switch p.kind {
		case fillSlice:
			return append(dst, "[]"...)
		case fillMap:
			return append(dst, "{}"...)
		case fillBytes:
			return append(dst, `""`...)
		}
		return append(dst, raw...)
	}
	switch p.kind {
	case fillPointer:
		return p.elem.fill(dst, raw)
	case fillSlice, fillArray:
		if p.elem == nil {
			break
		}
		dst = append(dst, '[')
		n := 0
		_ = wire.EachElement(raw, func(v []byte) error {
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = p.elem.fill(dst, v)
			return nil
		})
		return append(dst, ']')
	case fillMap, fillStruct:
		if p.kind == fillMap && p.elem == nil {
			break
		}
		dst = append(dst, '{')
		n := 0
		_ = wire.EachMember(raw, func(k, v []byte) error {
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = append(append(dst, k...), ':')
			if p.kind == fillMap {
				dst = p.elem.fill(dst, v)
			} else {
				dst = p.field(k).fill(dst, v)
			}
			return nil
		})
		return append(dst, '}')
	}
	return append(dst, raw...)
}

// field is the plan of a struct's member whose raw key token is k: looked
// up by the token's bytes when it has no escape (without allocating),
// else by its decoded name, so that it matches however the encoder
// escaped the key.
func (p *fillPlan) field(k []byte) *fillPlan {
	if body := k[1 : len(k)-1]; bytes.IndexByte(body, '\\') < 0 {
		return p.fields[string(body)]
	}
	return p.fields[wire.Key(k)]
}
