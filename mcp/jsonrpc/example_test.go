package jsonrpc_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcp/jsonrpc"
)

// Fraction is the divide tool's input.
type Fraction struct {
	Numerator   int `json:"numerator"`
	Denominator int `json:"denominator"`
}

// A handler that returns a *jsonrpc.Error answers with exactly that error,
// where any other error of a tool would be a tool result with isError.
func ExampleNewError() {
	srv := mcp.NewServer(mcp.Implementation{Name: "strict", Version: "1"}, nil)
	err := mcp.AddTool(srv, &mcp.Tool{Name: "divide"}, func(_ context.Context, _ *mcp.CallToolRequest, in Fraction) (string, error) {
		if in.Denominator == 0 {
			return "", jsonrpc.NewError(jsonrpc.InvalidParams, "Invalid params: division by zero")
		}
		return fmt.Sprint(in.Numerator / in.Denominator), nil
	})
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(mcp.Controller(&mcp.Options{Handler: srv}))
	defer ts.Close()

	req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"divide","arguments":{"numerator":1,"denominator":0}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(string(body))
	// Output:
	// {"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: division by zero"}}
}
