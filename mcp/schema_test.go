package mcp

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type inferAddress struct {
	Street string `json:"street"`
	City   string `json:"city" jsonschema:"the city"`
}

type inferEmbedded struct {
	Shared string `json:"shared"`
}

type inferInput struct {
	inferEmbedded
	Name    string          `json:"name" jsonschema:"who to greet"`
	Nick    *string         `json:"nick"`
	Tags    []string        `json:"tags,omitempty"`
	Counts  map[string]int  `json:"counts"`
	Home    inferAddress    `json:"home"`
	Work    *inferAddress   `json:"work,omitempty"`
	When    time.Time       `json:"when"`
	Blob    []byte          `json:"blob,omitempty"`
	Age     uint8           `json:"age"`
	Ratio   float64         `json:"ratio,string"`
	Any     any             `json:"any,omitempty"`
	Raw     json.RawMessage `json:"raw,omitempty"`
	Fixed   [2]int          `json:"fixed"`
	Skipped string          `json:"-"`
	//lint:ignore U1000 an unexported field must not appear in the schema
	private  string
	Default  string            // no tag: Go name
	Children map[string]string `json:"children,omitzero"`
}

type inferTree struct {
	Value    int          `json:"value"`
	Children []*inferTree `json:"children,omitempty"`
}

func inferMap(t *testing.T, typ reflect.Type, output bool) map[string]any {
	t.Helper()
	raw, err := inferSchema(typ, output)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if _, err := compileSchema(raw, true); err != nil {
		t.Fatalf("inferred schema does not compile: %v\n%s", err, raw)
	}
	return m
}

func TestInferSchema(t *testing.T) {
	m := inferMap(t, reflect.TypeFor[inferInput](), false)
	if m["type"] != "object" || m["additionalProperties"] != false {
		t.Errorf("root: %v", m)
	}
	props := m["properties"].(map[string]any)
	wantProps := []string{"shared", "name", "nick", "tags", "counts", "home", "work", "when", "blob", "age", "ratio", "any", "raw", "fixed", "Default", "children"}
	for _, p := range wantProps {
		if _, ok := props[p]; !ok {
			t.Errorf("missing property %q", p)
		}
	}
	if len(props) != len(wantProps) {
		t.Errorf("properties %v", props)
	}
	req := map[string]bool{}
	for _, r := range m["required"].([]any) {
		req[r.(string)] = true
	}
	for _, p := range []string{"shared", "name", "counts", "home", "when", "age", "ratio", "fixed", "Default"} {
		if !req[p] {
			t.Errorf("%q should be required", p)
		}
	}
	for _, p := range []string{"nick", "tags", "work", "blob", "any", "raw", "children"} {
		if req[p] {
			t.Errorf("%q should be optional", p)
		}
	}
	get := func(p string) map[string]any { return props[p].(map[string]any) }
	if get("name")["description"] != "who to greet" || get("name")["type"] != "string" {
		t.Errorf("name: %v", get("name"))
	}
	if get("nick")["type"] != "string" {
		t.Errorf("input pointers are not nullable: %v", get("nick"))
	}
	if get("tags")["type"] != "array" || get("tags")["items"].(map[string]any)["type"] != "string" {
		t.Errorf("tags: %v", get("tags"))
	}
	if get("counts")["additionalProperties"].(map[string]any)["type"] != "integer" {
		t.Errorf("counts: %v", get("counts"))
	}
	home := get("home")
	if home["additionalProperties"] != false || home["properties"].(map[string]any)["city"].(map[string]any)["description"] != "the city" {
		t.Errorf("home: %v", home)
	}
	if get("when")["format"] != "date-time" || get("blob")["contentEncoding"] != "base64" {
		t.Errorf("when/blob: %v %v", get("when"), get("blob"))
	}
	if get("age")["minimum"] != 0.0 || get("ratio")["type"] != "string" || get("fixed")["maxItems"] != 2.0 {
		t.Errorf("age/ratio/fixed: %v %v %v", get("age"), get("ratio"), get("fixed"))
	}
	if len(get("any")) != 0 || len(get("raw")) != 0 {
		t.Errorf("any/raw: %v %v", get("any"), get("raw"))
	}
}

// TestInferSchemaOutputNullOnlyForPointers: in an output schema a slice
// is an "array" and a map an "object" (a typed tool sends nil ones as []
// and {}); only a pointer, which Go encodes as null when nil, may be null.
func TestInferSchemaOutputNullOnlyForPointers(t *testing.T) {
	m := inferMap(t, reflect.TypeFor[inferInput](), true)
	props := m["properties"].(map[string]any)
	if typ := props["nick"].(map[string]any)["type"]; !reflect.DeepEqual(typ, []any{"string", "null"}) {
		t.Errorf("output nick: %v", typ)
	}
	for _, p := range []string{"counts", "tags", "blob", "fixed", "children"} {
		if typ := props[p].(map[string]any)["type"]; reflect.TypeOf(typ).Kind() != reflect.String {
			t.Errorf("output %s: %v, want one type, not null", p, typ)
		}
	}
	if props["fixed"].(map[string]any)["items"].(map[string]any)["type"] != "integer" {
		t.Errorf("a [2]int is an array of integers: %v", props["fixed"])
	}
	// A zero value, as a typed tool sends it, validates.
	raw, _ := inferSchema(reflect.TypeFor[inferInput](), true)
	c, err := compileSchema(raw, true)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(inferInput{})
	out = newOutputShape(reflect.TypeFor[inferInput]()).structured(out)
	if err := c.validate(out); err != nil {
		t.Errorf("zero value output does not validate: %v\n%s", err, out)
	}
	// A [N]byte is an array of numbers in encoding/json, not base64.
	m = inferMap(t, reflect.TypeFor[struct {
		A [4]byte `json:"a"`
		B []byte  `json:"b"`
	}](), true)
	props = m["properties"].(map[string]any)
	if props["a"].(map[string]any)["type"] != "array" || props["b"].(map[string]any)["contentEncoding"] != "base64" {
		t.Errorf("byte array and slice: %v", props)
	}
}

func TestInferSchemaRecursiveUsesDefs(t *testing.T) {
	raw, err := inferSchema(reflect.TypeFor[inferTree](), false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"$ref":"#/$defs/inferTree"`) || !strings.Contains(string(raw), `"$defs":{"inferTree":{`) {
		t.Errorf("no $defs: %s", raw)
	}
	c, err := compileSchema(raw, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.validate([]byte(`{"value":1,"children":[{"value":2,"children":[{"value":3}]}]}`)); err != nil {
		t.Error(err)
	}
	if err := c.validate([]byte(`{"value":1,"children":[{"value":"x"}]}`)); err == nil {
		t.Error("nested type error accepted")
	}
}

func TestInferSchemaRejectsUnsupported(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[struct{ C chan int }](),
		reflect.TypeFor[struct{ F func() }](),
		reflect.TypeFor[struct{ Z complex128 }](),
		reflect.TypeFor[struct{ M map[[2]int]string }](),
	} {
		if _, err := inferSchema(typ, false); !errors.Is(err, errUnsupportedGo) {
			t.Errorf("%s: %v", typ, err)
		}
	}
}

func TestStructFieldsConflicts(t *testing.T) {
	type A struct {
		Y     string
		Inner string `json:"inner"`
	}
	type B struct {
		Y string
	}
	type C struct {
		A
		B
		Z     string `json:"z"`
		Inner int    `json:"inner"` // shallower: wins over A.Inner
	}
	var names []string
	for _, f := range structFields(reflect.TypeFor[C]()) {
		names = append(names, f.name+":"+f.typ.Kind().String())
	}
	if strings.Join(names, ",") != "z:string,inner:int" {
		t.Errorf("got %v: ambiguous Y must drop, the shallower inner wins", names)
	}
}

func TestCompileSchema(t *testing.T) {
	for _, bad := range []string{
		`{"type":"string"}`, `true`, `[]`, `{"type":"object","properties":5}`,
		`{"type":"object","$ref":"https://example.com/s.json"}`, `{"type":"object","minLength":-1}`, `{`,
	} {
		if _, err := compileSchema(json.RawMessage(bad), true); !errors.Is(err, ErrInvalidSchema) {
			t.Errorf("%s: %v", bad, err)
		}
	}
	c, err := compileSchema(json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"n":{"type":"integer","maximum":9007199254740993}}}`), true)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.validate([]byte(`{"n":9007199254740994}`)); err == nil {
		t.Error("large integers must be compared exactly")
	}
}

// Long strings hidden from the validator (a schema that looks at no
// string's content) validate as the strings they are; a schema that does
// look sees them whole.
func TestLongStringsValidateWhole(t *testing.T) {
	long := func(c string) string { return strings.Repeat(c, 300) }
	for _, tc := range []struct {
		schema, instance string
		ok, opaque       bool
	}{
		{`{"type":"object","properties":{"t":{"type":"string"}}}`, `{"t":"` + long("a") + `"}`, true, true},
		{`{"type":"object","properties":{"t":{"type":"integer"}}}`, `{"t":"` + long("a") + `"}`, false, true},
		{`{"type":"object","properties":{"t":{"type":"array","uniqueItems":true}}}`, `{"t":["` + long("a") + `","` + long("b") + `"]}`, true, false},
		{`{"type":"object","properties":{"t":{"type":"array","uniqueItems":true}}}`, `{"t":["` + long("a") + `","` + long("a") + `"]}`, false, false},
		{`{"type":"object","properties":{"t":{"maxLength":299}}}`, `{"t":"` + long("a") + `"}`, false, false},
		{`{"type":"object","properties":{"t":{"enum":[""]}}}`, `{"t":"` + long("a") + `"}`, false, false},
		{`{"type":"object","properties":{"t":{"pattern":"^a+$"}}}`, `{"t":"` + long("a") + `"}`, true, false},
	} {
		c, err := compileSchema(json.RawMessage(tc.schema), true)
		require.NoError(t, err)
		assert.Equal(t, tc.opaque, c.opaque, tc.schema)
		tree, err := c.check([]byte(tc.instance))
		assert.Equal(t, tc.ok, err == nil, "%s: %v", tc.schema, err)
		if tc.ok {
			assert.Contains(t, string(must(json.Marshal(tree))), long(tc.instance[7:8]), "the tree keeps its strings")
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
