package mcp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

type fuzzOutNode struct {
	N    int           `json:"n"`
	Kids []fuzzOutNode `json:"kids"`
}

type fuzzOut struct {
	S     []string            `json:"s"`
	M     map[string][]int    `json:"m"`
	P     *[]int              `json:"p"`
	B     []byte              `json:"b"`
	A     [2][]int            `json:"a"`
	L     [][]string          `json:"l"`
	O     []*fuzzOutNode      `json:"o"`
	T     fuzzOutNode         `json:"t"`
	X     any                 `json:"x"`
	Skip  []int               `json:"skip,omitempty"`
	Str   int                 `json:"str,string"`
	Quote map[string]struct{} `json:"q<&>"`
}

// FuzzOutputFill: whatever value of a type full of slices and maps a tool
// returns, what is sent is valid JSON, matches the inferred output schema,
// and holds no null for a slice or map; sending it again changes nothing.
func FuzzOutputFill(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"s":["a"],"m":{"k":null},"p":[1],"b":"AQI=","a":[null,[1]],"l":[null,["x"]],"o":[null,{"n":1}],"t":{"kids":[{"kids":null}]},"x":[null],"str":"3","q<&>":{"a":{}}}`))
	typ := reflect.TypeFor[fuzzOut]()
	shape := newOutputShape(typ)
	schema, err := inferOutputSchema(typ, shape.wrap)
	if err != nil {
		f.Fatal(err)
	}
	c, err := compileSchema(schema, true)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v fuzzOut
		if json.Unmarshal(data, &v) != nil {
			return
		}
		// The tool path's encoder (no HTML escaping), and encoding/json's
		// (which escapes <, > and & in keys as well as values).
		for _, marshal := range []func(any) ([]byte, error){wire.Marshal, json.Marshal} {
			raw, err := marshal(v)
			if err != nil {
				return
			}
			out := shape.structured(raw)
			if !json.Valid(out) {
				t.Fatalf("not JSON: %s (from %s)", out, raw)
			}
			if err := c.validate(out); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			var back fuzzOut
			if err := json.Unmarshal(out, &back); err != nil {
				t.Fatal(err)
			}
			again, _ := marshal(back)
			if again = shape.structured(again); !bytes.Equal(again, out) {
				t.Fatalf("sent again:\n%s\nfirst:\n%s", again, out)
			}
		}
	})
}
