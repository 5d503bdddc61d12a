package cluster_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcp/cluster"
)

// Two replicas of one server share a Memory store: a session opened on
// one is served by it whichever replica the client's requests reach.
func ExampleMemory() {
	store := cluster.NewMemory()
	replica := func() (*httptest.Server, *mcp.Endpoint) {
		srv := mcp.NewServer(mcp.Implementation{Name: "echo", Version: "1"}, nil)
		ts := httptest.NewUnstartedServer(nil)
		mcp.AddTool(srv, &mcp.Tool{Name: "where"}, func(context.Context, *mcp.CallToolRequest, struct{}) (string, error) {
			return "served by " + ts.Listener.Addr().String(), nil
		})
		ep := mcp.Controller(&mcp.Options{Handler: srv, Cluster: store.Join("http://" + ts.Listener.Addr().String())})
		ts.Config.Handler = ep
		ts.Start()
		return ts, ep
	}
	a, epA := replica()
	defer a.Close()
	defer epA.Shutdown(context.Background())
	b, epB := replica()
	defer b.Close()
	defer epB.Shutdown(context.Background())

	post := func(url, sid, body string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp, string(out)
	}
	resp, _ := post(a.URL, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	post(b.URL, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	_, out := post(b.URL, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"where"}}`)
	fmt.Println(strings.Contains(out, "served by "+a.Listener.Addr().String()))
	// Output:
	// true
}
