package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/httplog/v3"
	"github.com/golang-jwt/jwt/v5"

	"github.com/saguaro-go/saguaro/auth"
	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcp/jsonrpc"
	"github.com/saguaro-go/saguaro/mcp/mcptest"
	"github.com/saguaro-go/saguaro/middleware"
)

type GreetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

type GreetOut struct {
	Greeting string `json:"greeting"`
}

// post sends one JSON-RPC message to an MCP endpoint, as a client does,
// and prints the answer: a JSON body, or the data of each event of an
// event stream.
func post(url, sid, body string, header ...string) string {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") == "text/event-stream" {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				fmt.Println(data)
			}
		}
	} else if b, _ := io.ReadAll(resp.Body); len(b) > 0 {
		fmt.Println(string(b))
	} else {
		fmt.Println(resp.Status)
	}
	return resp.Header.Get("Mcp-Session-Id")
}

// A server with one typed tool, and a call of it from a test client in
// the same process (package mcptest); mcp.Controller serves the same
// server over HTTP, mcp.ServeStdio over stdio.
func Example() {
	srv := mcp.NewServer(mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "greet", Description: "Say hello"},
		func(ctx context.Context, req *mcp.CallToolRequest, in GreetIn) (GreetOut, error) {
			return GreetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})

	ctx := context.Background()
	c, err := mcptest.Dial(ctx, srv, nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	out, err := mcptest.CallTool[GreetOut](ctx, c, "greet", GreetIn{Name: "Ann"})
	fmt.Println(out.Greeting, err)
	// Output:
	// Hello, Ann! <nil>
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
	ctx := context.Background()
	c, err := mcptest.Dial(ctx, srv, nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	res, err := c.CallTool(ctx, "greet", GreetIn{Name: "Ann"})
	fmt.Printf("%s %v\n", res.StructuredContent, err)
	// Arguments that do not match the input schema are the tool's error,
	// which the model reads.
	res, err = c.CallTool(ctx, "greet", map[string]any{})
	fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text, err)
	// Output:
	// {"greeting":"Hello, Ann!"} <nil>
	// true Invalid arguments for tool greet: /: missing property 'name' <nil>
}

func ExampleController() {
	srv := mcp.NewServer(mcp.Implementation{Name: "demo", Version: "1"}, &mcp.ServerOptions{Instructions: "Be brief."})
	_ = srv.AddResource(&mcp.Resource{URI: "docs://readme", Name: "readme", MIMEType: "text/markdown"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.URI, MIMEType: "text/markdown", Text: "# hi"}}}, nil
		})
	ep := mcp.Controller(&mcp.Options{Handler: srv, Sessions: &mcp.SessionOptions{}})
	ts := httptest.NewServer(ep)
	defer ts.Close()
	defer ep.Shutdown(context.Background())

	sid := post(ts.URL, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	post(ts.URL, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	post(ts.URL, sid, `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"docs://readme"}}`)
	post(ts.URL, sid, `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"docs://missing"}}`)
	post(ts.URL, sid, `{"jsonrpc":"2.0","id":4,"method":"prompts/list"}`)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"resources":{"subscribe":true,"listChanged":true},"logging":{}},"serverInfo":{"name":"demo","version":"1"},"instructions":"Be brief."}}
	// 202 Accepted
	// {"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"docs://readme","mimeType":"text/markdown","text":"# hi"}]}}
	// {"jsonrpc":"2.0","id":3,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"docs://missing"}}}
	// {"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Method not found: prompts/list"}}
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

	// A test client records the call's progress (Record gives the call a
	// progress token). Over HTTP, a call that asks for progress is
	// answered with an event stream that carries the notifications, then
	// the result; over stdio they are lines before the result's.
	ctx := context.Background()
	c, err := mcptest.Dial(ctx, srv, nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	var notes mcptest.Notes
	out, err := mcptest.CallTool[string](ctx, c, "work", nil, mcptest.Record(&notes))
	fmt.Println(out, err)
	for _, p := range notes.Progress {
		fmt.Println(p.Progress, p.Total, p.Message)
	}
	// Output:
	// done <nil>
	// 1 2 step
	// 2 2 step
}

// A main that serves over stdio, for clients that start the server as a
// process of their own: the client is the user who started it, so the
// identity comes from the environment.
func ExampleServeStdio() {
	srv := mcp.NewServer(mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *mcp.CallToolRequest, in GreetIn) (GreetOut, error) {
		return GreetOut{Greeting: "Hello, " + in.Name + "!"}, nil
	})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := mcp.ServeStdio(ctx, srv, &mcp.ConnOptions{Identity: os.Getenv("USER")}); err != nil {
		log.Fatal(err)
	}
}

// Method middleware: an audit line for every method, and a rule that keeps
// one tool from callers who are not its owner. It runs on every transport
// (here the in-process client of package mcptest; Controller and ServeStdio
// alike).
func ExampleMethodHandler() {
	audit := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, req *mcp.Request) (json.RawMessage, error) {
			res, err := next(ctx, req)
			if !req.ID.IsZero() { // requests, not notifications
				fmt.Printf("audit: %s %s by %q: err=%v\n", req.Method, req.Target(), req.Identity, err)
			}
			return res, err
		}
	}
	ownerOnly := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, req *mcp.Request) (json.RawMessage, error) {
			if req.Method == "tools/call" && req.Target() == "shutdown" && req.Identity != "root" {
				return nil, jsonrpc.NewError(jsonrpc.InvalidRequest, "Forbidden: only the owner may shut down")
			}
			return next(ctx, req)
		}
	}
	srv := mcp.NewServer(mcp.Implementation{Name: "audited", Version: "1.0.0"},
		&mcp.ServerOptions{Middleware: []func(mcp.MethodHandler) mcp.MethodHandler{audit, ownerOnly}})
	mcp.AddTool(srv, &mcp.Tool{Name: "greet"}, func(ctx context.Context, req *mcp.CallToolRequest, in GreetIn) (string, error) {
		return "Hello, " + in.Name + "!", nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "shutdown"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (string, error) {
		return "bye", nil
	})

	ctx := context.Background()
	c, err := mcptest.Dial(ctx, srv, &mcptest.Options{Server: &mcp.ConnOptions{Identity: "ann"}})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	out, err := mcptest.CallTool[string](ctx, c, "greet", GreetIn{Name: "Ann"})
	fmt.Println(out, err)
	_, err = c.CallTool(ctx, "shutdown", nil)
	fmt.Println(err)
	// Output:
	// audit: initialize  by "ann": err=<nil>
	// audit: tools/call greet by "ann": err=<nil>
	// Hello, Ann! <nil>
	// audit: tools/call shutdown by "ann": err=jsonrpc: -32600 Forbidden: only the owner may shut down
	// jsonrpc: -32600 Forbidden: only the owner may shut down
}

// Per-caller tools: a caller sees the tools its scopes allow. The write
// tool is listed to everyone, and a caller without tasks:write is asked to
// step up (over HTTP, 403 insufficient_scope naming the scope); the admin
// tool is hidden from whoever lacks admin, and a call of it is answered as
// for a tool that does not exist. The scopes come from Options.Scopes over
// HTTP (auth.Scopes) and ConnOptions.Scopes over stdio.
func ExampleAccess() {
	srv := mcp.NewServer(mcp.Implementation{Name: "board", Version: "1.0.0"}, nil)
	tool := func(name string, access *mcp.Access) {
		mcp.AddTool(srv, &mcp.Tool{Name: name, Access: access}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (string, error) {
			return name + " done", nil
		})
	}
	tool("list_tasks", nil)
	tool("add_task", &mcp.Access{Scopes: []string{"tasks:write"}})
	tool("purge_board", &mcp.Access{Scopes: []string{"admin"}, Hidden: true})

	ctx := context.Background()
	for _, scopes := range [][]string{{"tasks:read"}, {"tasks:read", "tasks:write", "admin"}} {
		c, err := mcptest.Dial(ctx, srv, &mcptest.Options{Server: &mcp.ConnOptions{Identity: "ann", Scopes: scopes}})
		if err != nil {
			panic(err)
		}
		tools, _ := c.ListTools(ctx)
		var names []string
		for _, t := range tools {
			names = append(names, t.Name)
		}
		fmt.Println(scopes, "sees", names)
		for _, name := range []string{"add_task", "purge_board"} {
			res, err := c.CallTool(ctx, name, nil)
			if err != nil {
				fmt.Println(" ", name+":", err)
				continue
			}
			fmt.Println(" ", name+":", res.Content[0].(*mcp.TextContent).Text)
		}
		c.Close()
	}
	// Output:
	// [tasks:read] sees [add_task list_tasks]
	//   add_task: jsonrpc: -32600 Forbidden: insufficient scope, needs tasks:write
	//   purge_board: jsonrpc: -32602 Invalid params: unknown tool: "purge_board"
	// [tasks:read tasks:write admin] sees [add_task list_tasks purge_board]
	//   add_task: add_task done
	//   purge_board: purge_board done
}

// The package documentation's wiring, run: a chi router, httplog's
// request lines with the MCP attributes on them, and the endpoint behind
// a JWT verifier (a static key here, where production gives the verifier
// its authorization server's JWKS).
func Example_router() {
	key := []byte("an-example-secret-of-32-bytes!!!")
	token, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": "https://login.example.com",
		"aud": "http://127.0.0.1/mcp", "sub": "ann", "exp": time.Now().Add(time.Hour).Unix()}).SignedString(key)

	srv := mcp.NewServer(mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	err := mcp.AddTool(srv, &mcp.Tool{Name: "greet", Description: "Say hello"},
		func(ctx context.Context, req *mcp.CallToolRequest, in GreetIn) (GreetOut, error) {
			return GreetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	v, err := auth.NewVerifier(ctx, &auth.Options{Resource: "http://127.0.0.1/mcp",
		Issuer: "https://login.example.com", Keys: []auth.Key{auth.HMACKey("HS256", key)}})
	if err != nil {
		panic(err)
	}
	defer v.Close()
	logger := slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{ReplaceAttr: httplog.SchemaECS.ReplaceAttr}))
	ep := mcp.Controller(&mcp.Options{
		Handler:  srv,
		Sessions: &mcp.SessionOptions{}, // nil: every call on its own, statelessly
		Identity: auth.Identity,         // a session belongs to the token's subject
		Attrs:    httplog.SetAttrs,      // the MCP method and tool on the request's line
	})
	defer ep.Shutdown(ctx)
	r := chi.NewRouter()
	r.Use(middleware.Logging(logger, nil))
	r.With(v.Handler, auth.Required()).Mount("/mcp", ep)

	call := func(token, body string) {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "greet")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		fmt.Println(w.Code, strings.TrimSpace(w.Body.String()))
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ann"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	call("", body)
	call(token, body)
	// Output:
	// 401 {"error":"unauthorized","error_description":"a bearer token is required"}
	// 200 {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"{\"greeting\":\"Hello, Ann!\"}"}],"structuredContent":{"greeting":"Hello, Ann!"},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"greeter","version":"1.0.0"}}}}
}
