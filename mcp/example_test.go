package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

type GreetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

type GreetOut struct {
	Greeting string `json:"greeting"`
}

// serve decodes one body, dispatches it and prints the response, as a
// stateless transport would.
func serve(e *mcp.Engine, body string) {
	m, err := e.Decoder().Decode([]byte(body))
	if err != nil {
		fmt.Println(string(wire.AppendErrorResponse(nil, m.ID, err)))
		return
	}
	call := mcp.CallOf(&m, mcp.Rev20251125)
	reply := e.Dispatch(context.Background(), &call, nil)
	fmt.Println(string(reply.AppendTo(nil, m.ID)))
}

func ExampleAddTool() {
	srv := mcp.NewServer(mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	err := mcp.AddTool(srv, &mcp.Tool{Name: "greet", Description: "Say hello"},
		func(ctx context.Context, req *mcp.CallToolRequest, in GreetIn) (GreetOut, error) {
			return GreetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})
	if err != nil {
		panic(err)
	}
	e := mcp.NewEngine(srv, nil)
	serve(e, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ann"}}}`)
	serve(e, `{"jsonrpc":"2.0","id":"2","method":"tools/call","params":{"name":"greet","arguments":{}}}`)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"greeting\":\"Hello, Ann!\"}"}],"structuredContent":{"greeting":"Hello, Ann!"}}}
	// {"jsonrpc":"2.0","id":"2","result":{"content":[{"type":"text","text":"Invalid arguments for tool greet: /: missing property 'name'"}],"isError":true}}
}

func ExampleEngine_Dispatch() {
	srv := mcp.NewServer(mcp.Implementation{Name: "demo", Version: "1"}, &mcp.ServerOptions{Instructions: "Be brief."})
	_ = srv.AddResource(&mcp.Resource{URI: "docs://readme", Name: "readme", MIMEType: "text/markdown"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, MIMEType: "text/markdown", Text: "# hi"}}}, nil
		})
	e := mcp.NewEngine(srv, nil)
	serve(e, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	serve(e, `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"docs://readme"}}`)
	serve(e, `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"docs://missing"}}`)
	serve(e, `{"jsonrpc":"2.0","id":4,"method":"prompts/list"}`)
	serve(e, `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"resources":{"subscribe":true,"listChanged":true},"logging":{}},"serverInfo":{"name":"demo","version":"1"},"instructions":"Be brief."}}
	// {"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"docs://readme","mimeType":"text/markdown","text":"# hi"}]}}
	// {"jsonrpc":"2.0","id":3,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"docs://missing"}}}
	// {"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Method not found: prompts/list"}}
	// {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: id must be a string or an integer"}}
}

func ExampleRequest_Progress() {
	srv := mcp.NewServer(mcp.Implementation{Name: "slow", Version: "1"}, nil)
	_ = mcp.AddTool(srv, &mcp.Tool{Name: "work"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (string, error) {
		for i := 1; i <= 2; i++ {
			if err := req.Progress(ctx, float64(i), 2, "step"); err != nil {
				return "", err
			}
		}
		return "done", nil
	})
	e := mcp.NewEngine(srv, nil)
	m, _ := e.Decoder().Decode([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"work","_meta":{"progressToken":"job-1"}}}`))
	call := mcp.CallOf(&m, mcp.Rev20251125)
	call.Outbound = printOutbound{}
	reply := e.Dispatch(context.Background(), &call, nil)
	fmt.Println(string(reply.AppendTo(nil, m.ID)))
	// Output:
	// notifications/progress {"progressToken":"job-1","progress":1,"total":2,"message":"step"}
	// notifications/progress {"progressToken":"job-1","progress":2,"total":2,"message":"step"}
	// {"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"done"}]}}
}

// printOutbound prints notifications; it has no way to ask the client.
type printOutbound struct{ mcp.DiscardOutbound }

func (printOutbound) Notify(ctx context.Context, method string, params json.RawMessage) error {
	fmt.Println(method, string(params))
	return nil
}
