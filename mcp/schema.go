package mcp

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/saguaro-go/saguaro/internal/jsonstr"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// Schemas are inferred from Go types by a small walker of our own rather
// than google/jsonschema-go's For, which (v0.4.3) makes pointer fields
// required, types every slice as ["null","array"] even in inputs, fails on
// recursive types instead of using $defs, and changes behaviour with an
// environment variable. Validation uses santhosh-tekuri/jsonschema/v6
// (JSON Schema 2020-12, schemas checked against the metaschema at
// compile time, no network access); see the schema benchmarks for the
// figures that chose it.

// inferSchema returns the JSON Schema of t. A Go slice is an "array" and
// a map an "object", never null: a typed tool's output sends a nil slice
// or map as [] or {} (see outputShape). In output schemas a pointer Go
// encodes as null (nil, without omitempty) is allowed to be null, so a
// tool's real output always validates.
func inferSchema(t reflect.Type, output bool) (json.RawMessage, error) {
	return inferRoot(t, output, false)
}

// inferOutputSchema is the output schema of a tool whose Out is t; wrap
// (see outputShape) describes t as the "result" member of an object.
func inferOutputSchema(t reflect.Type, wrap bool) (json.RawMessage, error) {
	return inferRoot(t, true, wrap)
}

func inferRoot(t reflect.Type, output, wrap bool) (json.RawMessage, error) {
	in := &inferer{output: output, onStack: map[reflect.Type]bool{}, defName: map[reflect.Type]string{}}
	nullable := wrap && t.Kind() == reflect.Pointer
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var e encoder
	if wrap {
		e.b = append(e.b, `{"type":"object","properties":{"`+resultKey+`":`...)
	}
	if err := in.write(&e, t, nullable); err != nil {
		return nil, err
	}
	if wrap {
		e.b = append(e.b, `},"required":["`+resultKey+`"],"additionalProperties":false}`...)
	}
	if len(in.defs) > 0 {
		// Emit definitions until no new ones appear (a def may mark others).
		var d encoder
		d.open()
		for i := 0; i < len(in.defs); i++ {
			dt := in.defs[i]
			d.key(in.defName[dt])
			in.onStack[dt] = true
			if err := in.writeStruct(&d, dt); err != nil {
				return nil, err
			}
			in.onStack[dt] = false
		}
		d.close()
		e.b = append(e.b[:len(e.b)-1], `,"$defs":`...)
		e.b = append(e.b, d.b...)
		e.b = append(e.b, '}')
	}
	return e.b, e.err
}

type inferer struct {
	output  bool
	onStack map[reflect.Type]bool
	defName map[reflect.Type]string
	defs    []reflect.Type
}

var (
	typeTime         = reflect.TypeFor[time.Time]()
	typeRawMessage   = reflect.TypeFor[json.RawMessage]()
	typeNumber       = reflect.TypeFor[json.Number]()
	typeMarshaler    = reflect.TypeFor[json.Marshaler]()
	typeTextMarshal  = reflect.TypeFor[encoding.TextMarshaler]()
	typeCallToolRes  = reflect.TypeFor[*CallToolResult]()
	typeString       = reflect.TypeFor[string]()
	errUnsupportedGo = errors.New("type has no JSON encoding")
)

func (in *inferer) typ(e *encoder, name string, nullable bool) {
	e.key("type")
	if nullable {
		e.b = append(e.b, `["`...)
		e.b = append(e.b, name...)
		e.b = append(e.b, `","null"]`...)
		return
	}
	e.str(name)
}

// write emits the schema of t; nullable asks for null to be allowed (the
// caller decides: output values Go may encode as null).
func (in *inferer) write(e *encoder, t reflect.Type, nullable bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == typeTime:
		e.open()
		in.typ(e, "string", nullable)
		e.strField("format", "date-time")
		e.close()
		return nil
	case t == typeRawMessage:
		e.raw([]byte(`{}`))
		return nil
	case t == typeNumber:
		e.open()
		in.typ(e, "number", nullable)
		e.close()
		return nil
	case t.Implements(typeMarshaler) || reflect.PointerTo(t).Implements(typeMarshaler):
		e.raw([]byte(`{}`)) // its own encoding: anything
		return nil
	case t.Implements(typeTextMarshal) || reflect.PointerTo(t).Implements(typeTextMarshal):
		e.open()
		in.typ(e, "string", nullable)
		e.close()
		return nil
	}
	switch t.Kind() {
	case reflect.Bool:
		e.open()
		in.typ(e, "boolean", nullable)
		e.close()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.open()
		in.typ(e, "integer", nullable)
		e.close()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		e.open()
		in.typ(e, "integer", nullable)
		e.key("minimum")
		e.raw([]byte("0"))
		e.close()
	case reflect.Float32, reflect.Float64:
		e.open()
		in.typ(e, "number", nullable)
		e.close()
	case reflect.String:
		e.open()
		in.typ(e, "string", nullable)
		e.close()
	case reflect.Interface:
		e.raw([]byte(`{}`))
	case reflect.Slice, reflect.Array:
		if isByteSlice(t) { // a [N]byte is an array of numbers
			e.open()
			in.typ(e, "string", nullable)
			e.strField("contentEncoding", "base64")
			e.close()
			return nil
		}
		e.open()
		in.typ(e, "array", nullable)
		e.key("items")
		if err := in.write(e, t.Elem(), in.output && t.Elem().Kind() == reflect.Pointer); err != nil {
			return err
		}
		if t.Kind() == reflect.Array {
			e.key("minItems")
			e.b = strconv.AppendInt(e.b, int64(t.Len()), 10)
			e.key("maxItems")
			e.b = strconv.AppendInt(e.b, int64(t.Len()), 10)
		}
		e.close()
	case reflect.Map:
		k := t.Key()
		switch {
		case k.Kind() == reflect.String, k.Implements(typeTextMarshal):
		case k.Kind() >= reflect.Int && k.Kind() <= reflect.Uint64:
		default:
			return fmt.Errorf("%w: map key %s", errUnsupportedGo, k)
		}
		e.open()
		in.typ(e, "object", nullable)
		e.key("additionalProperties")
		if err := in.write(e, t.Elem(), in.output && t.Elem().Kind() == reflect.Pointer); err != nil {
			return err
		}
		e.close()
	case reflect.Struct:
		if in.onStack[t] {
			name, ok := in.defName[t]
			if !ok {
				name = in.newDefName(t)
				in.defs = append(in.defs, t)
			}
			if nullable {
				e.b = append(e.b, `{"anyOf":[{"$ref":"#/$defs/`...)
				e.b = append(e.b, name...)
				e.b = append(e.b, `"},{"type":"null"}]}`...)
			} else {
				e.b = append(e.b, `{"$ref":"#/$defs/`...)
				e.b = append(e.b, name...)
				e.b = append(e.b, `"}`...)
			}
			return nil
		}
		in.onStack[t] = true
		defer func() { in.onStack[t] = false }()
		if nullable {
			e.b = append(e.b, `{"anyOf":[`...)
			if err := in.writeStruct(e, t); err != nil {
				return err
			}
			e.b = append(e.b, `,{"type":"null"}]}`...)
			return nil
		}
		return in.writeStruct(e, t)
	default:
		return fmt.Errorf("%w: %s", errUnsupportedGo, t)
	}
	return nil
}

func (in *inferer) newDefName(t reflect.Type) string {
	base := t.Name()
	if base == "" {
		base = "T"
	}
	name := base
	for n := 2; ; n++ {
		taken := false
		for _, v := range in.defName {
			if v == name {
				taken = true
			}
		}
		if !taken {
			break
		}
		name = base + strconv.Itoa(n)
	}
	in.defName[t] = name
	return name
}

func (in *inferer) writeStruct(e *encoder, t reflect.Type) error {
	fields := structFields(t)
	e.open()
	e.strField("type", "object")
	var required []string
	if len(fields) > 0 {
		e.key("properties")
		e.open()
		for _, f := range fields {
			e.key(f.name)
			ft := f.typ
			if f.asString {
				e.open()
				in.typ(e, "string", false)
				if f.desc != "" {
					e.strField("description", f.desc)
				}
				e.close()
			} else {
				mark := len(e.b)
				nullable := in.output && !f.omitempty && ft.Kind() == reflect.Pointer
				if err := in.write(e, ft, nullable); err != nil {
					return fmt.Errorf("field %s: %w", f.name, err)
				}
				if f.desc != "" {
					addDescription(e, mark, f.desc)
				}
			}
			if !f.omitempty && ft.Kind() != reflect.Pointer {
				required = append(required, f.name)
			}
		}
		e.close()
	}
	if len(required) > 0 {
		e.key("required")
		e.value(required)
	}
	e.key("additionalProperties")
	e.raw([]byte("false"))
	e.close()
	return nil
}

// addDescription inserts "description" into the object schema written
// from mark (a "{...}" just appended).
func addDescription(e *encoder, mark int, desc string) {
	obj := e.b[mark:]
	if len(obj) < 2 || obj[0] != '{' {
		return
	}
	ins := jsonstr.AppendString([]byte(`"description":`), desc)
	if !utf8.ValidString(desc) && e.err == nil {
		e.err = wire.ErrInvalidUTF8
	}
	if len(obj) > 2 {
		ins = append(ins, ',')
	}
	rest := append([]byte(nil), obj[1:]...)
	e.b = append(append(e.b[:mark+1], ins...), rest...)
}

type structField struct {
	name      string
	index     []int
	typ       reflect.Type
	tagged    bool
	omitempty bool
	asString  bool
	desc      string
}

// structFields lists t's JSON fields the way encoding/json resolves them:
// embedded structs without a name are flattened, the shallowest field of a
// name wins, a tie is won by the only tagged one or drops the name.
func structFields(t reflect.Type) []structField {
	type level struct {
		t     reflect.Type
		index []int
	}
	var all []structField
	current := []level{{t: t}}
	visited := map[reflect.Type]bool{}
	for len(current) > 0 {
		var next []level
		for _, lv := range current {
			if visited[lv.t] {
				continue
			}
			visited[lv.t] = true
			for i := 0; i < lv.t.NumField(); i++ {
				sf := lv.t.Field(i)
				ft := sf.Type
				if sf.Anonymous {
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				index := append(slices.Clone(lv.index), i)
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					next = append(next, level{t: ft, index: index})
					continue
				}
				f := structField{name: name, index: index, typ: sf.Type, tagged: name != ""}
				if name == "" {
					f.name = sf.Name
				}
				for _, o := range strings.Split(opts, ",") {
					switch o {
					case "omitempty", "omitzero":
						f.omitempty = true
					case "string":
						switch sf.Type.Kind() {
						case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
							reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64, reflect.String:
							f.asString = true
						}
					}
				}
				f.desc = sf.Tag.Get("jsonschema")
				all = append(all, f)
			}
		}
		current = next
	}
	byName := map[string][]structField{}
	var order []string
	for _, f := range all {
		if _, ok := byName[f.name]; !ok {
			order = append(order, f.name)
		}
		byName[f.name] = append(byName[f.name], f)
	}
	var out []structField
	for _, name := range order {
		fs := byName[name]
		minDepth := len(fs[0].index)
		for _, f := range fs {
			minDepth = min(minDepth, len(f.index))
		}
		var top []structField
		for _, f := range fs {
			if len(f.index) == minDepth {
				top = append(top, f)
			}
		}
		if len(top) > 1 {
			var tagged []structField
			for _, f := range top {
				if f.tagged {
					tagged = append(tagged, f)
				}
			}
			if len(tagged) != 1 {
				continue
			}
			top = tagged
		}
		out = append(out, top[0])
	}
	slices.SortStableFunc(out, func(a, b structField) int { return slices.Compare(a.index, b.index) })
	return out
}

// compiledSchema is a schema prepared once for validation.
type compiledSchema struct {
	s *sjs.Schema
	// opaque: no keyword of the schema looks into a string value (see
	// stringKeywords), so a long string validates as any other string.
	opaque bool
	// plain is the schema's plain form (schemafast.go), nil when it uses
	// other keywords.
	plain *plainSchema
}

// stringKeywords are the keywords whose outcome depends on a string
// value's content: without any of them in a schema, only a string's type
// matters to it.
var stringKeywords = []string{"minLength", "maxLength", "pattern", "format", "enum", "const",
	"contentEncoding", "contentMediaType", "contentSchema", "uniqueItems"}

// mentions reports whether a schema document uses any of keys as a
// keyword anywhere (or as a property name, which errs on the safe side).
func mentions(doc any, keys []string) bool {
	switch t := doc.(type) {
	case map[string]any:
		for k, v := range t {
			if slices.Contains(keys, k) || mentions(v, keys) {
				return true
			}
		}
	case []any:
		for _, v := range t {
			if mentions(v, keys) {
				return true
			}
		}
	}
	return false
}

// noLoader refuses every external $ref: MCP forbids fetching schemas
// from the network, and a file:// reference has no business in a tool.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema %q is not loaded", url)
}

// compileSchema prepares raw (an encoded schema) for validation; when
// object is set the root must declare "type":"object" as MCP's inputSchema
// (and the outputSchema of 2025-06-18 and later) must.
func compileSchema(raw json.RawMessage, object bool) (*compiledSchema, error) {
	if !utf8.Valid(raw) || !json.Valid(raw) {
		return nil, fmt.Errorf("%w: not valid JSON", ErrInvalidSchema)
	}
	doc, err := decodeValue(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	if object {
		m, ok := doc.(map[string]any)
		if !ok || m["type"] != "object" {
			return nil, fmt.Errorf(`%w: the root must be {"type":"object", …}`, ErrInvalidSchema)
		}
	}
	c := sjs.NewCompiler()
	c.UseLoader(noLoader{})
	c.DefaultDraft(sjs.Draft2020)
	const loc = "urn:saguaro:schema"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	plain, _ := compilePlain(doc)
	return &compiledSchema{s: s, opaque: !mentions(doc, stringKeywords), plain: plain}, nil
}

// validate checks a raw JSON instance; the error text is short and meant
// for the model (no schema locations).
func (c *compiledSchema) validate(raw []byte) error {
	_, err := c.check(raw)
	return err
}

// check is validate that also returns the decoded instance (decodeValue's
// tree), so that the caller need not decode it again; nil when an object
// repeated a key, which only encoding/json decodes the way a typed
// handler expects.
func (c *compiledSchema) check(raw []byte) (any, error) { return c.checkOn(nil, raw) }

// checkOn is check reading raw with the message's tape.
func (c *compiledSchema) checkOn(tape *wire.Tape, raw []byte) (any, error) {
	d := treeDecoder{tape: tape}
	v, err := d.value(raw)
	if err != nil {
		return nil, err
	}
	if c.plain != nil && c.plain.accepts(v) {
		if d.dup {
			return nil, nil
		}
		return v, nil
	}
	var hidden []hiddenString
	if c.opaque {
		hidden = hideLongStrings(v, nil)
	}
	err = c.validateValue(v)
	for _, h := range hidden {
		h.restore()
	}
	if err != nil {
		return nil, err
	}
	if d.dup {
		return nil, nil
	}
	return v, nil
}

// The validator copies every string it checks, whatever the schema asks
// of it; under a schema that looks at no string's content (opaque), long
// strings are swapped for "" while it runs, and put back after.

// longString is the length from which a string is hidden from the
// validator.
const longString = 256

// hiddenString is a long string taken out of the tree, and where it was.
type hiddenString struct {
	m map[string]any
	k string
	a []any
	i int
	s string
}

func (h hiddenString) restore() {
	if h.m != nil {
		h.m[h.k] = h.s
	} else {
		h.a[h.i] = h.s
	}
}

// hideLongStrings replaces the long strings of a tree with "", appending
// to hidden what restores them.
func hideLongStrings(v any, hidden []hiddenString) []hiddenString {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if s, ok := x.(string); ok {
				if len(s) >= longString {
					hidden = append(hidden, hiddenString{m: t, k: k, s: s})
					t[k] = ""
				}
				continue
			}
			hidden = hideLongStrings(x, hidden)
		}
	case []any:
		for i, x := range t {
			if s, ok := x.(string); ok {
				if len(s) >= longString {
					hidden = append(hidden, hiddenString{a: t, i: i, s: s})
					t[i] = ""
				}
				continue
			}
			hidden = hideLongStrings(x, hidden)
		}
	}
	return hidden
}

func (c *compiledSchema) validateValue(v any) error {
	err := c.s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *sjs.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var msgs []string
	var walk func(u sjs.OutputUnit)
	walk = func(u sjs.OutputUnit) {
		if len(u.Errors) == 0 && u.Error != nil {
			loc := u.InstanceLocation
			if loc == "" {
				loc = "/"
			}
			msgs = append(msgs, loc+": "+u.Error.String())
		}
		for _, x := range u.Errors {
			walk(x)
		}
	}
	walk(*ve.BasicOutput())
	if len(msgs) == 0 {
		return errors.New("does not match the schema")
	}
	if len(msgs) > 5 {
		msgs = append(msgs[:5], "…")
	}
	return errors.New(strings.Join(msgs, "; "))
}

// schemaBytes encodes a user-given schema value (json.RawMessage is kept
// byte for byte after a validity check).
func schemaBytes(v any) (json.RawMessage, error) {
	raw, err := marshalChecked(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	return raw, nil
}
