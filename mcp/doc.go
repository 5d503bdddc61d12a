// Package mcp is saguaro's Model Context Protocol server: the protocol
// engine that every transport shares, the handler contract, and a
// registry (Server) that implements it for the common case.
//
// # Layers
//
//   - mcp/jsonrpc decodes a body once (params stay raw) and encodes replies.
//   - Engine.Dispatch is the one method table: revision and capability
//     gates, params validation, the handler callback under a crash guard,
//     and result encoding. It is a pure function of (Call, state): tests
//     call it without HTTP, and sessions (issue 4) apply the protocol.Effect it
//     reports.
//   - Handler and its optional interfaces (ToolHandler, ResourceHandler,
//     …) are the low-level contract: callbacks get the session's state and
//     return the new one. What a handler does not implement is not
//     advertised and answers MethodNotFound.
//   - Server is the high-level registry: typed tools with JSON Schemas
//     inferred once at registration and arguments validated per call,
//     resources, URI templates, prompts, completions, cursors.
//   - Request gives handlers the back channel (Progress, Log,
//     CreateMessage, Elicit, ListRoots) through the protocol.Outbound the transport
//     supplies for each call.
//
// # Decisions where the spec leaves room
//
//   - Revisions: 2025-03-26, 2025-06-18 and 2025-11-25 (the legacy era,
//     initialize and sessions), and 2026-07-28 (stateless) on the same
//     endpoint. initialize echoes a supported legacy version and otherwise
//     offers 2025-11-25. A legacy call without a revision is served as
//     2025-03-26.
//   - A request to a method that exists only as a notification, and a
//     notification named after a request method, are MethodNotFound and
//     dropped respectively.
//   - Params must be an object (or absent); member names match
//     case-sensitively; unknown members are ignored.
//   - A tool's own error, and invalid arguments from 2025-11-25 on, are a
//     result with isError; in 2025-03-26 and 2025-06-18 invalid arguments
//     are InvalidParams. An unknown tool or prompt is InvalidParams.
//   - A panic is InternalError "Internal error" with no detail; the
//     previous state is kept and the panic is logged with its stack.
//     Other hidden handler errors are logged the same way.
//   - A result holding invalid UTF-8 is InternalError: it is never
//     silently altered.
//   - Until the client sets a log level, Request.Log sends every level.
//   - List pages are ordered by name (URI for resources) and cursors name
//     the last item of the previous page, sealed with an HMAC: a page
//     survives insertions and removals, and a tampered cursor is
//     InvalidParams.
//
// # The 2026-07-28 era
//
// A POST is served as 2026-07-28 when its MCP-Protocol-Version header
// names a revision that is not a legacy one, or when its params carry
// _meta["io.modelcontextprotocol/protocolVersion"]; everything else
// follows the legacy rules, so a 2025 client and a 2026 client share one
// endpoint and one set of handlers. Such a request is stateless: it
// ignores Mcp-Session-Id, carries its client capabilities in _meta, and
// is checked as modern.go documents (header mismatches -32020 with 400,
// missing _meta -32602 with 400, unsupported versions -32022 with
// {supported, requested}, unknown or legacy-only methods 404 with
// -32601). Every error carries the request's id.
//
//   - server/discover answers initialize's questions; every result carries
//     resultType and _meta serverInfo, and the cacheable ones ttlMs and
//     cacheScope (Options.CacheHints; default 0 and private).
//   - A handler's Elicit, CreateMessage and ListRoots become an
//     input_required result (tools/call, prompts/get, resources/read):
//     the client repeats the request with the answers and the sealed
//     requestState (sealed with ServerOptions.Keys), and the handler runs again from
//     the start. Name requests with WithInputKey; return every unanswered
//     request's error (errors.Join) to ask for several at once. A request
//     the client's capabilities do not cover is -32021.
//   - Request.Log sends only when the request set _meta logLevel, at that
//     level or above; notifications go on the request's own event stream,
//     and closing that stream cancels the call's context.
//   - subscriptions/listen is a long-lived stream of list changes and
//     resource updates (ListenOptions bounds it).
//   - Resource not found is -32602 with data {uri}.
//   - Extensions, advertised under capabilities.extensions only when
//     enabled: tasks (Options.Tasks, Tool.TaskSupport) and skills
//     (Server.AddSkill).
//
// # The HTTP endpoint
//
// Controller serves the Streamable HTTP transport as one http.Handler:
//
//	srv := mcp.NewServer(mcp.Implementation{Name: "tasks", Version: "1.0.0"}, nil)
//	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes"}, echo)
//	r.With(verifier.Handler, auth.Required()).Mount("/mcp", mcp.Controller(&mcp.Options{
//		Handler:  srv,
//		Sessions: &mcp.SessionOptions{}, // nil: stateless
//		Identity: auth.Identity,         // bind sessions to the token's subject
//		Attrs:    middleware.SetAttrs,   // MCP attributes on the request's log line
//	}))
//
// Every stream is a controller loop (package controller). A call that
// emits progress, log messages or server→client requests before its result
// is answered as an event stream when the client accepts one; a quiet call
// is answered as JSON. Without sessions only a call that asks for progress
// (a progressToken) is run that way; other stateless calls take the
// synchronous path and their notifications are dropped, since nothing could
// have asked for them. Session streams outlive their connections: events carry
// session-unique ids "<stream>-<seq>", each connection opens with a
// priming event (an id, empty data, and retry) in every revision, and GET
// with Last-Event-ID resumes exactly the stream the id belongs to.
// Request.CloseStream ends a connection on purpose (2025-11-25 polling).
//
// Decisions where the transport spec is silent, checked in this order:
//
//	method other than POST (GET, DELETE with sessions)   405, Allow
//	Origin present and not own/listed/loopback           403
//	Host not loopback-named on a loopback listener       403 (DNS rebinding)
//	several Mcp-Session-Id headers                       400
//	unknown session, or bound to another identity        404 (its existence is not revealed)
//	Accept lacks application/json or text/event-stream   406
//	Content-Type not application/json                    415
//	MCP-Protocol-Version not served                      400, -32022 {supported, requested}
//	body over Options.MaxBodyBytes (4 MiB)               413
//	body not JSON, not UTF-8, or not JSON-RPC            400, -32700 or -32600
//	no Mcp-Session-Id on a non-initialize request        400 (sessions on)
//	initialize on an existing session                    400, -32600
//	batch outside 2025-03-26                             400, -32600
//	notification or client response                      202
//	session store full (SessionOptions.MaxSessions)      503, Retry-After
//	a second GET stream on one session                   409
//	DELETE of a session                                  204
//	stateful callback queue full (QueueSize)             -32603 "Server overloaded"
//
// A session holds no goroutine while idle; it is reaped after
// SessionOptions.IdleTimeout, never while a call or stream holds it. A
// call's context ends with notifications/cancelled, the session's end, the
// request timeout, or, when its stream's client left, ResumeGrace later
// unless the client resumed.
//
// # Replicas
//
// With Options.Cluster (package mcpredis on Redis) the sessions are shared
// by the replicas of a server behind a load balancer with no stickiness;
// Cluster documents the model (an owner runs each session; other replicas
// relay its requests there; a replica whose owner is gone takes the
// session over). The answers the transport spec does not give:
//
//	session store does not answer                        503, Retry-After: 1, -32603
//	session moving between replicas (a race)             503, Retry-After: 1, -32603
//	owner unreachable for a reason other than being gone 502, -32603
//	a relayed request reaching the wrong replica         421 (the relaying replica then takes over)
//	resuming a POST stream whose call died with its      200, one event: that call's -32603
//	  replica (the id names the call)                       error response, then the stream ends
//	a session whose state cannot move, owner gone        404 (the client initializes again)
//
// Registry changes announced on one replica reach every replica's sessions
// and subscriptions/listen streams; each replica must register the same
// tools, resources and prompts. The 2026-07-28 era is stateless and needs
// no relay, except for its tasks, which live in the process that runs
// them: their ids name that replica, and tasks/get, tasks/update,
// tasks/cancel and subscriptions/listen with taskIds are relayed there (a
// task whose replica is gone is unknown, -32602).
package mcp
