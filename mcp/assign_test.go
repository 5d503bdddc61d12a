package mcp

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

type assignLevel string

type assignNode struct {
	Name string      `json:"name"`
	Next *assignNode `json:"next,omitempty"`
}

type assignAll struct {
	Text   string              `json:"text,omitempty"`
	Level  assignLevel         `json:"level,omitempty"`
	N      int                 `json:"n,omitempty"`
	I8     int8                `json:"i8,omitempty"`
	U16    uint16              `json:"u16,omitempty"`
	U      uint                `json:"u,omitempty"`
	F32    float32             `json:"f32,omitempty"`
	F      float64             `json:"f,omitempty"`
	B      bool                `json:"b,omitempty"`
	P      *int                `json:"p,omitempty"`
	PP     **string            `json:"pp,omitempty"`
	Tags   []string            `json:"tags,omitempty"`
	Grid   [][]int             `json:"grid,omitempty"`
	Attrs  map[string]any      `json:"attrs,omitempty"`
	Counts map[string]int      `json:"counts,omitempty"`
	Any    any                 `json:"any,omitempty"`
	Node   assignNode          `json:"node,omitempty"`
	List   []assignNode        `json:"list,omitempty"`
	Dash   string              `json:"-"`
	NoTag  string              `json:",omitempty"`
	Upper  string              `json:"UPPER,omitempty"`
	Kelvin string              `json:"k,omitempty"`
	Levels map[assignLevel]int `json:"levels,omitempty"`
}

// FuzzAssign holds the assigner to encoding/json: whenever it accepts a
// tree, json.Unmarshal of the same JSON accepts it too and gives the same
// value.
func FuzzAssign(f *testing.F) {
	for _, s := range []string{
		`{"text":"a\u00e9\n","level":"x","n":-3,"i8":127,"u16":65535,"u":0,"f32":1.5e3,"f":-0.25,"b":true}`,
		`{"p":4,"pp":"s","tags":["a","b"],"grid":[[1],[2,3]],"attrs":{"x":[1,{"y":null}]},"counts":{"a":1}}`,
		`{"any":{"a":[1.5,"b",true,null]},"node":{"name":"n","next":{"name":"m"}},"list":[{"name":"l"},null]}`,
		`{"-":"x","Dash":"y","DashC":"z","notag":"lower","upper":"u","K":"kelvin","\u212a":"K sign","levels":{"a":1}}`,
		`{"i8":128}`, `{"u":-1}`, `{"n":1.0}`, `{"n":1e2}`, `{"f32":1e40}`, `{"any":1e400}`, `{"text":1}`,
		`{"tags":"x"}`, `{"node":[]}`, `{"text":"a","TEXT":"b"}`, `{"text":null,"p":null,"tags":null,"attrs":null}`,
		`{"tags":[]}`, `{"counts":{"a":null}}`, `{"list":[{"next":{"next":{"name":"deep"}}}]}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	assign := newAssigner(reflect.TypeFor[assignAll]())
	anyAssign := newAssigner(reflect.TypeFor[map[string]any]())
	require.NotNil(f, assign)
	require.NotNil(f, anyAssign)
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) || !utf8.Valid(data) { // what reaches a tool is both
			return
		}
		for _, c := range []struct {
			a    assigner
			make func() any
		}{
			{assign, func() any { return new(assignAll) }},
			{anyAssign, func() any { return new(map[string]any) }},
		} {
			var d treeDecoder
			tree, err := d.value(data)
			if err != nil || d.dup {
				return // with a repeated key the tree is not used
			}
			got := c.make()
			if c.a(reflect.ValueOf(got).Elem(), tree) != nil {
				continue // encoding/json decides
			}
			want := c.make()
			if err := json.Unmarshal(data, want); err != nil {
				t.Fatalf("the assigner accepted %s, encoding/json said %v", data, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s:\nassigned %#v\nunmarshal %#v", data, got, want)
			}
		}
	})
}

func TestAssignerFallsBack(t *testing.T) {
	type embedded struct{ A string }
	for _, typ := range []reflect.Type{
		reflect.TypeFor[time.Time](),
		reflect.TypeFor[json.RawMessage](),
		reflect.TypeFor[json.Number](),
		reflect.TypeFor[[]byte](),
		reflect.TypeFor[[2]int](),
		reflect.TypeFor[map[int]string](),
		reflect.TypeFor[struct{ embedded }](),
		reflect.TypeFor[struct {
			N int `json:"n,string"`
		}](),
		reflect.TypeFor[struct{ E error }](),
		reflect.TypeFor[struct {
			T time.Time `json:"t"`
		}](),
	} {
		assert.Nil(t, newAssigner(typ), "%v", typ)
	}
}

// A tool's typed input is the same whichever way it was decoded; a type
// mismatch reads as encoding/json's error.
func TestToolArgumentsAssigned(t *testing.T) {
	s := NewServer(Implementation{Name: "s", Version: "1"}, nil)
	var got assignAll
	require.NoError(t, AddTool(s, &Tool{Name: "all"}, func(_ context.Context, _ *CallToolRequest, in assignAll) (string, error) {
		got = in
		return "ok", nil
	}))
	e := newEngine(s, engineOptions{})
	args := `{"text":"hé","n":7,"tags":["a"],"any":{"x":1},"node":{"name":"n","next":{"name":"m"}},"attrs":{"k":[true]}}`
	r := dispatchBody(t, e, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"all","arguments":`+args+`}}`)
	require.Nil(t, r.Err)
	var want assignAll
	require.NoError(t, json.Unmarshal([]byte(args), &want))
	assert.Equal(t, want, got, "%s", r.Result)

	r = dispatchBody(t, e, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"all","arguments":{"node":{"next":{"name":5}}}}}`)
	require.Nil(t, r.Err)
	assert.Contains(t, string(r.Result), "Invalid arguments for tool all")
}

func dispatchBody(t *testing.T, e *engine, body string) protocol.Reply {
	t.Helper()
	m, derr := wire.Decode([]byte(body))
	require.Nil(t, derr)
	c := testCall(&m, Rev20251125)
	return e.Dispatch(context.Background(), &c, nil)
}
