package mcp

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var plainSchemas = []string{
	`{"type":"object","properties":{"text":{"description":"d","type":"string"}},"required":["text"],"additionalProperties":false}`,
	`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"},"c":{"type":"array","items":{"type":"string"}},"d":{"type":"object","properties":{"e":{"type":"boolean"}},"required":["e"],"additionalProperties":false}},"required":["a","c"],"additionalProperties":false}`,
	`{"type":"object","properties":{"n":{"type":["number","null"]},"x":{}},"additionalProperties":true}`,
	`{"type":"object","properties":{"i":{"type":"integer"},"arr":{"type":"array","items":{"type":"array","items":{"type":"integer"}}}}}`,
	`{"type":"object"}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","title":"t","properties":{"q":{"type":"string","default":"x","examples":["y"]}}}`,
}

// FuzzPlainSchema holds the fast path to the validator: whatever it
// accepts, the validator accepts.
func FuzzPlainSchema(f *testing.F) {
	for _, s := range []string{`{"text":"x"}`, `{"text":1}`, `{}`, `{"a":"","c":[]}`, `{"a":"","c":["x",1]}`,
		`{"a":"","c":[],"d":{"e":true}}`, `{"a":"","c":[],"d":{}}`, `{"n":1.5,"x":[{}]}`, `{"n":null}`, `{"i":1.0}`,
		`{"i":1e2}`, `{"i":-0}`, `{"arr":[[1,2],[3.0]]}`, `{"q":"z"}`, `{"q":2}`, `{"text":"x","extra":1}`} {
		f.Add([]byte(s))
	}
	var compiled []*compiledSchema
	for _, raw := range plainSchemas {
		c, err := compileSchema(json.RawMessage(raw), true)
		require.NoError(f, err)
		require.NotNil(f, c.plain, raw)
		compiled = append(compiled, c)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) || !utf8.Valid(data) {
			return
		}
		for i, c := range compiled {
			tree, err := decodeValue(data)
			if err != nil {
				return
			}
			if c.plain.accepts(tree) {
				if err := c.validateValue(tree); err != nil {
					t.Fatalf("schema %s: the fast path accepted %s, the validator said %v", plainSchemas[i], data, err)
				}
			}
		}
	})
}

func TestPlainSchemaCompiles(t *testing.T) {
	for raw, plain := range map[string]bool{
		`{"type":"object","properties":{"a":{"type":"string","minLength":1}}}`:       false,
		`{"type":"object","properties":{"a":{"enum":["x"]}}}`:                        false,
		`{"type":"object","$defs":{"x":{}},"properties":{"a":{"$ref":"#/$defs/x"}}}`: false,
		`{"type":"object","additionalProperties":{"type":"string"}}`:                 false,
		`{"type":"object","properties":{"a":{"type":"string","format":"email"}}}`:    false,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`:      false,
		`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`:    true,
	} {
		c, err := compileSchema(json.RawMessage(raw), true)
		require.NoError(t, err, raw)
		assert.Equal(t, plain, c.plain != nil, raw)
	}
}
