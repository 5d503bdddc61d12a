package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"
)

// What a typed tool's structured output costs: a struct whose slices are
// all set (the encoded output has no null, so it is sent as encoded), the
// same struct with nil slices (each null is replaced by [] or {}), and an
// int (wrapped as {"result": n}).
//
//	go test -run '^$' -bench StructuredOutput -benchmem ./mcp/

type benchOutItem struct {
	Name string   `json:"name"`
	Tags []string `json:"tags"`
}

type benchOut struct {
	ID    string         `json:"id"`
	Title string         `json:"title"`
	Tags  []string       `json:"tags"`
	Items []benchOutItem `json:"items"`
	Done  bool           `json:"done"`
}

func BenchmarkStructuredOutput(b *testing.B) {
	full := benchOut{ID: "t1", Title: "Write the tests", Tags: []string{"backend", "urgent"},
		Items: []benchOutItem{{Name: "a", Tags: []string{"x"}}, {Name: "b", Tags: []string{"y"}}}}
	nils := benchOut{ID: "t1", Title: "Write the tests", Items: []benchOutItem{{Name: "a"}, {Name: "b"}}}
	s := NewServer(Implementation{Name: "bench", Version: "1"}, nil)
	for name, v := range map[string]benchOut{"full": full, "nil": nils} {
		if err := AddTool(s, &Tool{Name: name}, func(context.Context, *CallToolRequest, struct{}) (benchOut, error) { return v, nil }); err != nil {
			b.Fatal(err)
		}
	}
	if err := AddTool(s, &Tool{Name: "int"}, func(context.Context, *CallToolRequest, struct{}) (int, error) { return 42, nil }); err != nil {
		b.Fatal(err)
	}
	e := newEngine(s, engineOptions{})
	ctx := context.Background()
	for _, name := range []string{"full", "nil", "int"} {
		b.Run(name, func(b *testing.B) {
			call := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"` + name + `","arguments":{}}}`)
			var sink bytes.Buffer
			serveEngine(e, ctx, call, &sink)
			if !bytes.Contains(sink.Bytes(), []byte(`"structuredContent":{`)) || bytes.Contains(sink.Bytes(), []byte(`null`)) {
				b.Fatalf("reply %s", sink.Bytes())
			}
			b.ReportAllocs()
			for b.Loop() {
				sink.Reset()
				serveEngine(e, ctx, call, &sink)
			}
		})
	}
}

// BenchmarkOutputFill is the walk alone that replaces the nulls of nil
// slices in an encoded output.
func BenchmarkOutputFill(b *testing.B) {
	shape := newOutputShape(reflect.TypeFor[benchOut]())
	raw, _ := json.Marshal(benchOut{ID: "t1", Title: "Write the tests", Items: []benchOutItem{{Name: "a"}, {Name: "b"}}})
	b.ReportAllocs()
	for b.Loop() {
		if out := shape.structured(raw); bytes.Contains(out, nullLiteral) {
			b.Fatalf("%s", out)
		}
	}
}
