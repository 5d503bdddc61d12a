package mcptest_test

import (
	"context"
	"fmt"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcp/mcptest"
)

type GreetIn struct {
	Name string `json:"name"`
}

type GreetOut struct {
	Greeting string `json:"greeting"`
}

// A test calls a typed tool and reads its progress, with no HTTP. In a
// test, Connect(t, srv, nil) does what Dial and Close do here.
func Example() {
	srv := mcp.NewServer(mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *mcp.CallToolRequest, in GreetIn) (GreetOut, error) {
		req.Progress(ctx, 1, 1, "looking up "+in.Name)
		return GreetOut{Greeting: "Hello, " + in.Name + "!"}, nil
	})

	ctx := context.Background()
	c, err := mcptest.Dial(ctx, srv, nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	var notes mcptest.Notes
	out, err := mcptest.CallTool[GreetOut](ctx, c, "greet", GreetIn{Name: "Ann"}, mcptest.Record(&notes))
	fmt.Println(out.Greeting, err)
	fmt.Println(notes.Progress[0].Message)
	// Output:
	// Hello, Ann! <nil>
	// looking up Ann
}

// The server's questions to the user are answered by the test, the same
// way in every revision: in 2026-07-28 the client repeats the call with
// the answers.
func ExampleOptions_elicit() {
	srv := mcp.NewServer(mcp.Implementation{Name: "asker", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (string, error) {
		res, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return "", err
		}
		return fmt.Sprint("hello ", res.Content["name"]), nil
	})
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		c, err := mcptest.Dial(context.Background(), srv, &mcptest.Options{Revision: rev,
			Elicit: func(_ context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ann"}}, nil
			}})
		if err != nil {
			panic(err)
		}
		out, err := mcptest.CallTool[string](context.Background(), c, "ask", nil)
		fmt.Println(rev, out, err)
		c.Close()
	}
	// Output:
	// 2025-11-25 hello Ann <nil>
	// 2026-07-28 hello Ann <nil>
}
