package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcp/mcptest"
)

type outItem struct {
	Name string   `json:"name"`
	Tags []string `json:"tags"`
}

type outNode struct {
	Value    int       `json:"value"`
	Children []outNode `json:"children"`
}

// outAll has every place a nil slice or map can hide in a struct's JSON.
type outAll struct {
	List     []string            `json:"list"`
	Counts   map[string]int      `json:"counts"`
	Items    []outItem           `json:"items"`
	Nested   [][]int             `json:"nested"`
	ByKey    map[string][]string `json:"byKey"`
	Blob     []byte              `json:"blob"`
	Fixed    [2]byte             `json:"fixed"`
	Maybe    *[]int              `json:"maybe"`
	Ptrs     []*outItem          `json:"ptrs"`
	Skipped  []int               `json:"skipped,omitempty"`
	Tree     outNode             `json:"tree"`
	Any      any                 `json:"any"`
	Escaped  []int               `json:"a<b"`
	Embedded                     // flattened, as encoding/json does
}

type Embedded struct {
	Inner []int `json:"inner"`
}

// callRaw calls a tool and returns the raw result and the tool's raw
// outputSchema from tools/list, as a client sees them.
func callRaw(t *testing.T, c *mcptest.Client, name string) (result, schema json.RawMessage) {
	t.Helper()
	ctx := context.Background()
	var list struct {
		Tools []struct {
			Name         string          `json:"name"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	require.NoError(t, c.Call(ctx, "tools/list", nil, &list))
	for _, tl := range list.Tools {
		if tl.Name == name {
			schema = tl.OutputSchema
		}
	}
	require.NoError(t, c.Call(ctx, "tools/call", map[string]any{"name": name, "arguments": map[string]any{}}, &result))
	return result, schema
}

// checkStructured asserts what the MCP spec asks of a structured result:
// structuredContent is an object, it validates against the tool's own
// outputSchema (by a validator of its own, not the server's), and the text
// block mirrors it.
func checkStructured(t *testing.T, result, schema json.RawMessage) json.RawMessage {
	t.Helper()
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	require.NoError(t, json.Unmarshal(result, &res), "%s", result)
	require.False(t, res.IsError, "%s", result)
	sc := res.StructuredContent
	require.True(t, bytes.HasPrefix(sc, []byte("{")), "structuredContent is an object: %s", sc)
	require.Len(t, res.Content, 1)
	assert.JSONEq(t, string(sc), res.Content[0].Text, "the text block mirrors structuredContent")
	require.NotEmpty(t, schema, "a typed tool has an output schema")

	doc, err := sjs.UnmarshalJSON(bytes.NewReader(schema))
	require.NoError(t, err)
	comp := sjs.NewCompiler()
	comp.DefaultDraft(sjs.Draft2020)
	require.NoError(t, comp.AddResource("urn:out", doc))
	s, err := comp.Compile("urn:out")
	require.NoError(t, err, "%s", schema)
	inst, err := sjs.UnmarshalJSON(bytes.NewReader(sc))
	require.NoError(t, err)
	require.NoError(t, s.Validate(inst), "structuredContent %s against its outputSchema %s", sc, schema)
	return sc
}

func addTyped[Out any](t *testing.T, s *mcp.Server, name string, out Out) {
	t.Helper()
	require.NoError(t, mcp.AddTool(s, &mcp.Tool{Name: name}, func(context.Context, *mcp.CallToolRequest, struct{}) (Out, error) {
		return out, nil
	}))
}

// TestStructuredOutputNilSlices: a nil slice or map is sent as [] or {},
// an empty one likewise, and both validate against a schema that types
// slices as arrays and maps as objects, never null. A nil pointer stays
// null and its schema allows it.
func TestStructuredOutputNilSlices(t *testing.T) {
	srv := mcp.NewServer(mcp.Implementation{Name: "out", Version: "1"}, nil)
	addTyped(t, srv, "nil", outAll{
		Items: []outItem{{Name: "a"}},
		Ptrs:  []*outItem{nil, {Name: "b"}},
		Tree:  outNode{Children: []outNode{{Value: 2}}},
	})
	addTyped(t, srv, "empty", outAll{
		List: []string{}, Counts: map[string]int{}, Items: []outItem{}, Nested: [][]int{{}, nil},
		ByKey: map[string][]string{"k": nil, "l": {}}, Blob: []byte{}, Ptrs: []*outItem{}, Skipped: []int{},
		Tree: outNode{Children: []outNode{}}, Escaped: []int{}, Embedded: Embedded{Inner: []int{}},
	})
	c := mcptest.Connect(t, srv, nil)

	res, schema := callRaw(t, c, "nil")
	assert.Equal(t, 2, strings.Count(string(schema), `"null"`),
		"only the pointer field and the pointer items may be null: %s", schema)
	assert.Contains(t, string(schema), `"maybe":{"type":["array","null"]`)
	sc := checkStructured(t, res, schema)
	assert.JSONEq(t, `{"list":[],"counts":{},"items":[{"name":"a","tags":[]}],"nested":[],"byKey":{},
		"blob":"","fixed":[0,0],"maybe":null,"ptrs":[null,{"name":"b","tags":[]}],
		"tree":{"value":0,"children":[{"value":2,"children":[]}]},"any":null,"a\u003cb":[],"inner":[]}`, string(sc))

	res, schema = callRaw(t, c, "empty")
	sc = checkStructured(t, res, schema)
	assert.JSONEq(t, `{"list":[],"counts":{},"items":[],"nested":[[],[]],"byKey":{"k":[],"l":[]},
		"blob":"","fixed":[0,0],"maybe":null,"ptrs":[],"tree":{"value":0,"children":[]},"any":null,
		"a\u003cb":[],"inner":[]}`, string(sc))
}

type Celsius float64

// TestStructuredOutputWrapped: an Out whose JSON is not an object is sent
// as {"result": value}, with the output schema of that object.
func TestStructuredOutputWrapped(t *testing.T) {
	srv := mcp.NewServer(mcp.Implementation{Name: "out", Version: "1"}, nil)
	when := time.Date(2025, 11, 25, 12, 0, 0, 0, time.UTC)
	var nilInt *int
	addTyped(t, srv, "int", 42)
	addTyped(t, srv, "named", Celsius(21.5))
	addTyped(t, srv, "bool", true)
	addTyped(t, srv, "slice", []string{"a"})
	addTyped(t, srv, "nil-slice", []outItem(nil))
	addTyped(t, srv, "items", []outItem{{Name: "x"}})
	addTyped(t, srv, "time", when)
	addTyped(t, srv, "nil-pointer", nilInt)
	addTyped(t, srv, "map", map[string][]int{"a": nil})
	addTyped(t, srv, "nil-map", map[string]int(nil))
	addTyped[any](t, srv, "any-number", 7)
	addTyped[any](t, srv, "any-object", map[string]int{"n": 1})
	addTyped(t, srv, "raw", json.RawMessage(`[1,2]`))
	c := mcptest.Connect(t, srv, nil)

	for name, want := range map[string]string{
		"int":         `{"result":42}`,
		"named":       `{"result":21.5}`,
		"bool":        `{"result":true}`,
		"slice":       `{"result":["a"]}`,
		"nil-slice":   `{"result":[]}`,
		"items":       `{"result":[{"name":"x","tags":[]}]}`,
		"time":        `{"result":"2025-11-25T12:00:00Z"}`,
		"nil-pointer": `{"result":null}`,
		"map":         `{"a":[]}`, // a map is an object already
		"nil-map":     `{}`,
	} {
		t.Run(name, func(t *testing.T) {
			res, schema := callRaw(t, c, name)
			assert.JSONEq(t, want, string(checkStructured(t, res, schema)))
		})
	}
	// Out of an interface type has no schema; a value that is not an
	// object is wrapped all the same.
	for name, want := range map[string]string{"any-number": `{"result":7}`, "any-object": `{"n":1}`, "raw": `{"result":[1,2]}`} {
		res, schema := callRaw(t, c, name)
		assert.Empty(t, schema, name)
		var r struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
		}
		require.NoError(t, json.Unmarshal(res, &r))
		assert.JSONEq(t, want, string(r.StructuredContent), name)
	}

	// The test client undoes the wrapping.
	n, err := mcptest.CallTool[int](context.Background(), c, "int", nil)
	require.NoError(t, err)
	assert.Equal(t, 42, n)
	items, err := mcptest.CallTool[[]outItem](context.Background(), c, "items", nil)
	require.NoError(t, err)
	assert.Equal(t, []outItem{{Name: "x", Tags: []string{}}}, items)
}
