package mcp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	gjs "github.com/google/jsonschema-go/jsonschema"
	sjs "github.com/santhosh-tekuri/jsonschema/v6"
)

// These benchmarks chose the validator: each validates tool arguments
// from their raw JSON, decoding included, as tools/call must.

const (
	benchSchemaEcho   = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`
	benchSchemaNested = `{"type":"object","$defs":{"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}},"required":["city"]}},"properties":{"name":{"type":"string","minLength":1},"tags":{"type":"array","items":{"type":"string"}},"age":{"type":"integer","minimum":0},"address":{"$ref":"#/$defs/address"}},"required":["name"],"additionalProperties":false}`
)

var (
	benchArgsEcho   = []byte(`{"text":"hello, world"}`)
	benchArgsNested = []byte(`{"name":"ann","tags":["a","b","c"],"age":41,"address":{"street":"Main","city":"Tucson"}}`)
)

func benchGoogle(b *testing.B, schema string, args []byte) {
	var s gjs.Schema
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		b.Fatal(err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var v any
		if err := json.Unmarshal(args, &v); err != nil {
			b.Fatal(err)
		}
		if err := r.Validate(v); err != nil {
			b.Fatal(err)
		}
	}
}

func benchSanthoshStd(b *testing.B, schema string, args []byte) {
	c := sjs.NewCompiler()
	doc, _ := sjs.UnmarshalJSON(bytes.NewReader([]byte(schema)))
	if err := c.AddResource("urn:s", doc); err != nil {
		b.Fatal(err)
	}
	sch, err := c.Compile("urn:s")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		v, err := sjs.UnmarshalJSON(bytes.NewReader(args))
		if err != nil {
			b.Fatal(err)
		}
		if err := sch.Validate(v); err != nil {
			b.Fatal(err)
		}
	}
}

// benchOurs is what the Server does: santhosh with decodeValue.
func benchOurs(b *testing.B, schema string, args []byte) {
	c, err := compileSchema(json.RawMessage(schema), true)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.validate(args); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateEchoGoogle(b *testing.B)   { benchGoogle(b, benchSchemaEcho, benchArgsEcho) }
func BenchmarkValidateEchoSanthosh(b *testing.B) { benchSanthoshStd(b, benchSchemaEcho, benchArgsEcho) }
func BenchmarkValidateEchoOurs(b *testing.B)     { benchOurs(b, benchSchemaEcho, benchArgsEcho) }
func BenchmarkValidateNestedGoogle(b *testing.B) { benchGoogle(b, benchSchemaNested, benchArgsNested) }
func BenchmarkValidateNestedSanthosh(b *testing.B) {
	benchSanthoshStd(b, benchSchemaNested, benchArgsNested)
}
func BenchmarkValidateNestedOurs(b *testing.B) { benchOurs(b, benchSchemaNested, benchArgsNested) }

type benchInferType struct {
	Name    string            `json:"name" jsonschema:"who"`
	Tags    []string          `json:"tags,omitempty"`
	Age     *int              `json:"age"`
	Address *benchInferType   `json:"next,omitempty"`
	Extra   map[string]string `json:"extra"`
}

func BenchmarkInferOurs(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := inferSchema(reflect.TypeFor[benchInferType](), false); err != nil {
			b.Fatal(err)
		}
	}
}

type benchInferFlat struct {
	Name string            `json:"name" jsonschema:"who"`
	Tags []string          `json:"tags,omitempty"`
	Age  *int              `json:"age"`
	Map  map[string]string `json:"extra"`
}

func BenchmarkInferGoogle(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		s, err := gjs.For[benchInferFlat](nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInferOursFlat(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := inferSchema(reflect.TypeFor[benchInferFlat](), false); err != nil {
			b.Fatal(err)
		}
	}
}
