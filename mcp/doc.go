// Package mcp serves the Model Context Protocol: a registry of tools,
// resources and prompts ([Server]) served over Streamable HTTP by one
// http.Handler that speaks every revision from 2025-03-26 to 2026-07-28
// ([Controller]), over stdio ([ServeStdio]), and to a test client in the
// same process (package mcptest). A first server behind a chi router, the
// app's JWT auth and httplog's request lines:
//
//	srv := mcp.NewServer(mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
//	err := mcp.AddTool(srv, &mcp.Tool{Name: "greet", Description: "Say hello"},
//		func(ctx context.Context, req *mcp.CallToolRequest, in GreetIn) (GreetOut, error) {
//			return GreetOut{Greeting: "Hello, " + in.Name + "!"}, nil
//		})
//	v, err := auth.NewVerifier(ctx, &auth.Options{Resource: "https://api.example.com/mcp",
//		Issuer: "https://login.example.com", JWKS: &auth.JWKSOptions{URL: "https://login.example.com/jwks.json"}})
//	r := chi.NewRouter()
//	r.Use(middleware.Logging(logger, nil))
//	r.With(v.Handler, auth.Required()).Mount("/mcp", mcp.Controller(&mcp.Options{
//		Handler:  srv,
//		Sessions: &mcp.SessionOptions{}, // nil: every call on its own, statelessly
//		Identity: auth.Identity,         // a session belongs to the token's subject
//		Attrs:    httplog.SetAttrs,      // the MCP method and tool on the request's line
//	}))
//
// The repository's README has it as a whole main.go, with a graceful stop
// and stdio. A tool's input and output are Go types ([AddTool]); handlers
// reach the client through their [Request] (Progress, Log, CreateMessage,
// Elicit, ListRoots), the same code in every revision. Read on where each
// question is answered: what the server decides where the specification
// leaves room, [Server]; every HTTP status and the 2026-07-28 checks,
// [Controller]; every bound and its answer, [Limits]; stdio, [ServeStdio];
// replicas, Options.Cluster and package cluster; stopping, [Endpoint];
// method middleware, [MethodHandler]; per-caller tools, [Access];
// telemetry, [Telemetry]; MCP Apps views, [View]; a handler with state of its own, [Handler].
package mcp
