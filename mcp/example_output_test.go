package mcp_test

import (
	"context"
	"fmt"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcp/mcptest"
)

// A tool whose Out is not a struct: MCP's structuredContent is always an
// object, so an int (or a bool, a slice, …) is sent as {"result": value}
// and the inferred output schema describes that object. A nil slice is
// sent as [], never null.
func ExampleAddTool_scalarOutput() {
	srv := mcp.NewServer(mcp.Implementation{Name: "calc", Version: "1.0.0"}, nil)
	type SumIn struct {
		Numbers []int `json:"numbers"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "sum", Description: "Add numbers"},
		func(ctx context.Context, req *mcp.CallToolRequest, in SumIn) (int, error) {
			total := 0
			for _, n := range in.Numbers {
				total += n
			}
			return total, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "evens", Description: "The even numbers"},
		func(ctx context.Context, req *mcp.CallToolRequest, in SumIn) ([]int, error) {
			var evens []int
			for _, n := range in.Numbers {
				if n%2 == 0 {
					evens = append(evens, n)
				}
			}
			return evens, nil
		})

	ctx := context.Background()
	c, err := mcptest.Dial(ctx, srv, nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	tools, _ := c.ListTools(ctx)
	for _, t := range tools {
		fmt.Printf("%s: %s\n", t.Name, t.OutputSchema)
	}
	for _, name := range []string{"sum", "evens"} {
		res, _ := c.CallTool(ctx, name, SumIn{Numbers: []int{1, 3, 5}})
		fmt.Printf("%s\n", res.StructuredContent)
	}
	// mcptest.CallTool undoes the wrapping.
	n, err := mcptest.CallTool[int](ctx, c, "sum", SumIn{Numbers: []int{1, 2}})
	fmt.Println(n, err)
	// Output:
	// evens: {"type":"object","properties":{"result":{"type":"array","items":{"type":"integer"}}},"required":["result"],"additionalProperties":false}
	// sum: {"type":"object","properties":{"result":{"type":"integer"}},"required":["result"],"additionalProperties":false}
	// {"result":9}
	// {"result":[]}
	// 3 <nil>
}
