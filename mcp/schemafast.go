package mcp

import (
	"encoding/json"
	"strings"
)

// A fast path for plain schemas. The schemas AddTool infers from Go types,
// and most hand-written tool schemas, use a handful of keywords: type,
// properties, required, additionalProperties false, items, and
// annotations. For such a schema a valid instance is recognised here
// without the general validator, whose machinery costs more than the rest
// of a small call. Only "valid" is decided here: an instance this walk
// does not accept goes to the general validator, which gives the verdict
// and the error text, so the outcome is always the validator's.

// plainSchema is a schema of the plain keywords, compiled.
type plainSchema struct {
	types    uint8 // of the plainType bits; 0: any type
	props    map[string]*plainSchema
	required []string
	closed   bool // additionalProperties false
	items    *plainSchema
}

const (
	plainObject uint8 = 1 << iota
	plainArray
	plainString
	plainInteger
	plainNumber
	plainBoolean
	plainNull
)

var plainTypeNames = map[string]uint8{
	"object": plainObject, "array": plainArray, "string": plainString, "integer": plainInteger,
	"number": plainNumber, "boolean": plainBoolean, "null": plainNull,
}

// compilePlain returns the plain form of a decoded schema document, or
// false when it uses any other keyword (or a form of one this walk does
// not know).
func compilePlain(doc any) (*plainSchema, bool) {
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, false
	}
	s := &plainSchema{}
	for k, v := range m {
		switch k {
		case "description", "title", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly":
		case "$schema":
			if v != "https://json-schema.org/draft/2020-12/schema" {
				return nil, false
			}
		case "type":
			switch t := v.(type) {
			case string:
				if s.types = plainTypeNames[t]; s.types == 0 {
					return nil, false
				}
			case []any:
				for _, x := range t {
					name, _ := x.(string)
					bit := plainTypeNames[name]
					if bit == 0 {
						return nil, false
					}
					s.types |= bit
				}
				if s.types == 0 {
					return nil, false
				}
			default:
				return nil, false
			}
		case "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			s.props = make(map[string]*plainSchema, len(props))
			for name, p := range props {
				if s.props[name], ok = compilePlain(p); !ok {
					return nil, false
				}
			}
		case "required":
			list, ok := v.([]any)
			if !ok {
				return nil, false
			}
			for _, x := range list {
				name, ok := x.(string)
				if !ok {
					return nil, false
				}
				s.required = append(s.required, name)
			}
		case "additionalProperties":
			b, ok := v.(bool)
			if !ok {
				return nil, false
			}
			s.closed = !b
		case "items":
			if s.items, ok = compilePlain(v); !ok {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return s, true
}

// accepts reports whether v, a tree of decodeValue, is valid for s; false
// also when this walk cannot tell (a number with a fraction or exponent
// where an integer is wanted).
func (s *plainSchema) accepts(v any) bool {
	if s.types != 0 && s.types&plainKind(v) == 0 {
		return false
	}
	switch x := v.(type) {
	case map[string]any:
		for _, r := range s.required {
			if _, ok := x[r]; !ok {
				return false
			}
		}
		for k, e := range x {
			p, ok := s.props[k]
			if !ok {
				if s.closed {
					return false
				}
				continue
			}
			if !p.accepts(e) {
				return false
			}
		}
	case []any:
		if s.items != nil {
			for _, e := range x {
				if !s.items.accepts(e) {
					return false
				}
			}
		}
	}
	return true
}

// plainKind is the type bits a tree value has: a number written without
// fraction or exponent is an integer and a number.
func plainKind(v any) uint8 {
	switch x := v.(type) {
	case map[string]any:
		return plainObject
	case []any:
		return plainArray
	case string:
		return plainString
	case bool:
		return plainBoolean
	case nil:
		return plainNull
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			return plainNumber
		}
		return plainNumber | plainInteger
	}
	return 0
}
