package mcp

import (
	"encoding/json"
	"errors"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

var errValue = errors.New("mcp: malformed JSON value")

// decodeValue turns valid JSON into the generic tree a JSON Schema
// validator walks (map[string]any, []any, string, json.Number, bool, nil),
// keeping numbers exact. It is a fraction of encoding/json's cost for the
// same tree because the input is already known to be valid: it only
// slices, and unescapes strings.
func decodeValue(raw []byte) (any, error) {
	var d treeDecoder
	return d.value(raw)
}

// treeDecoder builds a tree and notes whether an object repeated a key
// (the tree keeps the last value; encoding/json would have decoded each).
type treeDecoder struct {
	tape *wire.Tape
	dup  bool
}

func (d *treeDecoder) value(raw []byte) (any, error) {
	if len(raw) == 0 {
		return nil, errValue
	}
	switch c := raw[0]; {
	case c == '{':
		m := map[string]any{}
		n := 0
		err := d.tape.EachMember(raw, func(k, v []byte) error {
			x, err := d.value(v)
			if err != nil {
				return err
			}
			m[wire.Key(k)] = x
			n++
			return nil
		})
		if n != len(m) {
			d.dup = true
		}
		return m, err
	case c == '[':
		a := []any{}
		err := d.tape.EachElement(raw, func(v []byte) error {
			x, err := d.value(v)
			if err != nil {
				return err
			}
			a = append(a, x)
			return nil
		})
		return a, err
	case c == '"':
		s, ok := d.tape.Unquote(raw)
		if !ok {
			return nil, errValue
		}
		return s, nil
	case c == 't':
		return true, nil
	case c == 'f':
		return false, nil
	case c == 'n':
		return nil, nil
	}
	return json.Number(raw), nil
}
