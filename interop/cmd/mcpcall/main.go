// Command mcpcall is a small MCP client built on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk), for trying an MCP endpoint that
// wants a bearer token:
//
//	go run ./cmd/mcpcall -url http://127.0.0.1:8080/mcp                      # list the tools
//	go run ./cmd/mcpcall -url http://127.0.0.1:8080/mcp -tool list_tasks
//	go run ./cmd/mcpcall -url http://127.0.0.1:8080/mcp -tool add_task -args '{"title":"x"}'
//
// The token comes from -token or the TOKEN environment variable. Progress
// notifications are printed as they arrive.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func main() {
	url := flag.String("url", "http://127.0.0.1:8080/mcp", "the MCP endpoint")
	token := flag.String("token", os.Getenv("TOKEN"), "bearer token (default $TOKEN)")
	tool := flag.String("tool", "", "tool to call; empty lists the tools")
	args := flag.String("args", "{}", "the tool's arguments, a JSON object")
	flag.Parse()
	if err := run(*url, *token, *tool, *args); err != nil {
		fmt.Fprintln(os.Stderr, "mcpcall:", err)
		os.Exit(1)
	}
}

func run(url, token, tool, args string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpcall", Version: "1.0.0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			fmt.Printf("progress %v/%v %s\n", r.Params.Progress, r.Params.Total, r.Params.Message)
		},
	})
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}}
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	fmt.Printf("connected: %s %s, protocol %s\n", cs.InitializeResult().ServerInfo.Name,
		cs.InitializeResult().ServerInfo.Version, cs.InitializeResult().ProtocolVersion)
	if tool == "" {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			return err
		}
		for _, t := range res.Tools {
			fmt.Printf("%-16s %s\n", t.Name, t.Description)
		}
		return nil
	}
	var in map[string]any
	if err := json.Unmarshal([]byte(args), &in); err != nil {
		return fmt.Errorf("-args: %w", err)
	}
	p := &mcp.CallToolParams{Name: tool, Arguments: in}
	p.SetProgressToken("mcpcall")
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		return err
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			fmt.Println(t.Text)
		}
	}
	if res.IsError {
		return fmt.Errorf("the tool reported an error")
	}
	return nil
}
