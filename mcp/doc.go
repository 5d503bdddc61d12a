// Package mcp serves the Model Context Protocol from a Go program: a
// registry of tools, resources and prompts ([Server]) and the Streamable
// HTTP endpoint that serves it ([Controller]), every protocol revision
// from 2025-03-26 to 2026-07-28 on one http.Handler that mounts on a chi
// router behind the app's own middleware:
//
//	srv := mcp.NewServer(mcp.Implementation{Name: "tasks", Version: "1.0.0"}, nil)
//	mcp.AddTool(srv, &mcp.Tool{Name: "greet", Description: "Say hello"},
//		func(ctx context.Context, req *mcp.CallToolRequest, in GreetIn) (GreetOut, error) {
//			return GreetOut{Greeting: "Hello, " + in.Name + "!"}, nil
//		})
//	r.With(verifier.Handler, auth.Required()).Mount("/mcp", mcp.Controller(&mcp.Options{
//		Handler:  srv,
//		Sessions: &mcp.SessionOptions{}, // nil: every call on its own
//		Identity: auth.Identity,         // bind sessions to the token's subject
//		Attrs:    httplog.SetAttrs,      // MCP attributes on the request's log line
//	}))
//
// The same server runs over stdio with [ServeStdio] (or any connection
// that carries whole JSON-RPC messages, [ServeConn]), and package mcptest
// connects a client to it inside a test, with no HTTP and no sockets.
//
// A tool's input and output are Go types: their JSON Schemas are inferred
// once at registration, arguments are validated before the function runs,
// and the result is sent as structured content and as text. Handlers reach
// the client through their [Request]: Progress, Log, CreateMessage
// (sampling), Elicit and ListRoots, the same code in every revision.
// [Handler] is the low-level contract a Server implements, for servers
// that keep per-session state of their own.
//
// # How a call travels
//
// A tools/call of a session, hop by hop (the names are the files that
// hold each step; three packages, each entered through a named
// interface):
//
//  1. controller.go (package controller): the endpoint is a controller;
//     the request goes to its Handle (the controller.Controller
//     interface).
//  2. transport.go, post.go (mcp/internal/streamable, the Streamable HTTP
//     transport): the method and the Origin and Host rule, the headers,
//     the body read once into a pooled buffer and decoded once (params
//     stay raw), the session looked up (session.go).
//  3. session_post.go, call.go: tools/call may emit, so it gets a context
//     (cancelled by notifications/cancelled, the session's end, the
//     request timeout), a logical stream, and a worker goroutine; the
//     connection waits for the call's first output.
//  4. engine.go (this package): the worker calls the engine through the
//     transports' one interface (Dispatch): the method table, the
//     revision and capability gates, the crash guard; callTool builds the
//     CallToolRequest and calls the handler (the ToolHandler interface).
//  5. tool.go: the Server finds the tool, validates the arguments against
//     the schema compiled at registration, decodes them into the input
//     type, runs the function and encodes its result.
//  6. call.go, stream.go: the reply is encoded on the worker; when nothing
//     was emitted first it is answered as JSON on the waiting connection,
//     else it is the last event of the call's stream.
//
// Every transport (Streamable HTTP, the message connection of stdio and
// mcptest) reaches the engine through that one interface and nothing
// else, and keeps its sessions with the same session core. A call without
// a session skips step 2's lookup and, unless it asked for progress, step
// 3's stream and worker.
//
// # Decisions where the specification leaves room
//
//   - Revisions: 2025-03-26, 2025-06-18 and 2025-11-25 (initialize and
//     sessions), and 2026-07-28 (stateless) on the same endpoint.
//     initialize echoes a supported version and otherwise offers
//     2025-11-25. A call that states no revision is served as 2025-03-26.
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
//     the last item of the previous page, signed with ServerOptions.Keys:
//     a page survives insertions and removals, and a tampered cursor is
//     InvalidParams.
//
// # The 2026-07-28 revision
//
// A POST is served as 2026-07-28 when its MCP-Protocol-Version header
// names a revision that is not a legacy one, or when its params carry
// _meta["io.modelcontextprotocol/protocolVersion"]; everything else
// follows the legacy rules, so clients of both eras share one endpoint and
// one set of handlers. Such a request is stateless: it ignores
// Mcp-Session-Id, carries its client capabilities in _meta, and is checked
// in this order, each failure answered with the request's id:
//
//	Accept 406, Content-Type 415, body 413 / 400 (-32700, -32600)
//	_meta without protocolVersion or clientCapabilities  400 -32602
//	  (400 -32022 when the header names no servable revision)
//	MCP-Protocol-Version missing, repeated or ≠ _meta    400 -32020
//	a revision other than 2026-07-28                    400 -32022 {supported, requested}
//	Mcp-Method missing or ≠ method                       400 -32020
//	method unknown, legacy-only or not offered          404 -32601
//	Mcp-Name, Mcp-Param-* missing, ≠ body, bad value     400 -32020
//	_meta fields of the wrong type                       400 -32602
//
// Then the call runs. Its answer is JSON, or an event stream when the call
// emits notifications (progress, log messages when the request set _meta
// logLevel) before its result; a client that closes either cancels the
// call's context. Errors keep the HTTP statuses the revision defines:
// -32601 404, -32020, -32021 and -32022 400, anything else 200.
//
//   - server/discover answers initialize's questions; every result carries
//     resultType and _meta serverInfo, and the cacheable ones ttlMs and
//     cacheScope (ServerOptions.CacheHints; default 0 and private).
//   - A handler's Elicit, CreateMessage and ListRoots become an
//     input_required result (tools/call, prompts/get, resources/read):
//     the client repeats the request with the answers and the
//     requestState (sealed with ServerOptions.Keys), and the handler runs
//     again from the start. Name requests with WithInputKey; return every
//     unanswered request's error (errors.Join) to ask for several at
//     once. A request the client's capabilities do not cover is -32021.
//   - Request.Log sends only when the request set _meta logLevel, at that
//     level or above.
//   - subscriptions/listen is a long-lived stream of list changes and
//     resource updates (ListenOptions bounds it).
//   - Resource not found is -32602 with data {uri}.
//   - Extensions, advertised under capabilities.extensions only when
//     enabled: tasks (ServerOptions.Tasks, Tool.TaskSupport) and skills
//     (Server.AddSkill).
//
// # The HTTP endpoint
//
// Every stream is a controller loop (package controller). A call that
// emits progress, log messages or server→client requests before its result
// is answered as an event stream when the client accepts one; a quiet call
// is answered as JSON. Without sessions only a call that asks for progress
// (a progressToken) is run that way; other calls take the synchronous
// path and their notifications are dropped, since nothing could have
// asked for them. Session streams outlive their connections: events carry
// session-unique ids, each connection opens with a priming event (an id,
// empty data, and retry) in every revision, and GET with Last-Event-ID
// resumes exactly the stream the id belongs to. Request.CloseStream ends a
// connection on purpose (2025-11-25 polling).
//
// Decisions where the transport specification is silent, checked in this
// order:
//
//	method other than POST (GET, DELETE with sessions)   405, Allow
//	Origin present and not allowed, or Host not allowed  403 (see Options.AllowedOrigins)
//	POST from a caller with Limits.Calls in flight       429, Retry-After: 1, -32603
//	several Mcp-Session-Id headers                       400
//	unknown session, or bound to another identity        404 (its existence is not revealed)
//	Accept lacks application/json or text/event-stream   406
//	Content-Type not application/json                    415
//	MCP-Protocol-Version not served                      400, -32022 {supported, requested}
//	body over Options.MaxBodyBytes (4 MiB)               413
//	body not sent within Limits.BodyTimeout (30 s)       408, -32600, connection closed, logged
//	body not JSON, not UTF-8, or not JSON-RPC            400, -32700 or -32600
//	no Mcp-Session-Id on a non-initialize request        400 (sessions on)
//	initialize on an existing session                    400, -32600
//	batch outside 2025-03-26                             400, -32600
//	batch of more than Limits.MaxBatch (32) messages     400, -32600, nothing runs
//	notification or client response                      202
//	session store full (SessionOptions.MaxSessions)      503, Retry-After
//	caller holds Limits.Sessions sessions (initialize)   429, Retry-After: 30, -32603
//	a second GET stream on one session                   409
//	caller holds Limits.Streams streams (GET, listen)    429, Retry-After: 5, -32603
//	DELETE of a session                                  204
//	stateful callback queue full (QueueSize)             -32603 "Server overloaded"
//
// A session holds no goroutine while idle; it is reaped after
// SessionOptions.IdleTimeout, never while a call or stream holds it. A
// call's context ends with notifications/cancelled, the session's end, the
// request timeout, or, when its stream's client left, ResumeGrace later
// unless the client resumed.
//
// Over stdio ([ServeStdio]), where the specification only says one
// message per line and nothing else on standard output:
//
//	line not JSON, or not UTF-8                          -32700, id null; the session goes on
//	batch of more than ConnOptions.MaxBatch (32)         -32600, id null; nothing runs
//	line over ConnOptions.MaxMessageBytes (4 MiB)        -32600 "message too large", id null, written
//	                                                       as soon as the limit is crossed; the rest of
//	                                                       the line is read and dropped
//	response to a request the server never sent          dropped, nothing written
//	standard input ends (the client closed it)           running calls cancelled and answered -32603
//	                                                       "Request cancelled"; ServeStdio returns nil
//	standard output closed by the client (EPIPE)         reading stops, calls cancelled, nil; SIGPIPE
//	                                                       does not kill the process while ServeStdio runs
//	ctx cancelled (cancel it on SIGTERM)                 as at the end of input
//
// # Bounds
//
// No request makes the server do or hold more than these bounds, whatever
// its body says or its handler returns; each transport applies the ones
// that make sense for it (Options over HTTP, ConnOptions over stdio). A
// negative value turns a bound off.
//
//	bound                                     default    past it
//	Options.MaxBodyBytes                      4 MiB      413, -32600
//	ConnOptions.MaxMessageBytes               4 MiB      -32600, the line dropped
//	Limits.BodyTimeout                        30 s       408, -32600, connection closed, logged
//	Limits.MaxBatch, ConnOptions.MaxBatch     32         400, one -32600 error, id null; nothing runs
//	Limits.MaxAnswerBytes,                    8 MiB      tools/call: a tool error (isError) saying so;
//	  ConnOptions.MaxAnswerBytes: one answer               other methods -32603; Warn naming the method
//	                                                       and its tool, prompt or resource
//	the same, a batch's answers together      8 MiB      the answer that would pass it -32603
//	                                                       ("dropped"); the requests after it -32603
//	                                                       ("not run"), not run
//	Limits.Calls, per caller                  64         429, Retry-After: 1
//	Limits.Streams, per caller                32         429, Retry-After: 5
//	Limits.Sessions, per caller               256        429, Retry-After: 30
//	SessionOptions.MaxSessions                100,000    503, Retry-After
//	SessionOptions.QueueSize, per session     64         -32603 "Server overloaded"
//	SessionOptions.RequestTimeout             5 min      the call's context ends, -32603
//	SessionOptions.StreamEvents, per stream   128/1 MiB  an absent client loses the oldest
//	ListenOptions.MaxStreams                  10,000     429
//
// A result whose size is known before it is encoded (content blocks,
// resource contents) is refused without being encoded; text is written
// as it is, without HTML escaping (MCP is not HTML: < stays one byte). So
// one caller's answers in memory stay under Limits.Calls ×
// Limits.MaxAnswerBytes (512 MiB with the defaults, far less in
// practice), on top of what its handlers hold; lower both for a server
// whose tools return big results to untrusted callers.
//
// # Replicas
//
// With Options.Cluster (package mcpredis on Redis, or any implementation
// of package cluster's seams) the sessions are shared by the replicas of a
// server behind a load balancer with no stickiness; package cluster
// documents the model (an owner runs each session; other replicas relay
// its requests there; a replica whose owner is gone takes the session
// over). The answers the transport specification does not give:
//
//	session store does not answer                        503, Retry-After: 1, -32603
//	session store lost its data (restarted empty), until 503, Retry-After: 1, -32603, never 404
//	  every live replica has recorded its sessions again
//	session moving between replicas (a race)             503, Retry-After: 1, -32603
//	owner unreachable for a reason other than being gone 502, -32603
//	owner accepts a relay and does not answer (stopped)  once its lease lapses: taken over, the
//	                                                       request served; while it beats: 502,
//	                                                       -32603 after RequestTimeout + 1 s
//	owner stops while a relayed event stream is silent   once its lease lapses, the stream is cut
//	  (no keep-alive for twice KeepAlive)                  (the client resumes where it is taken over)
//	owner dies while a relayed answer streams            the client's answer is cut (it resumes
//	                                                       with Last-Event-ID); Warn with replica, session
//	a relayed request reaching the wrong replica         421 naming the replica that answered (the
//	                                                       relaying replica then finds the owner
//	                                                       again, or takes over when it is gone)
//	resuming a POST stream whose call died with its      200, one event: that call's -32603
//	  replica (the id names the call)                       error response, then the stream ends
//	a session whose state cannot move, owner gone        404 (the client initializes again)
//	a session's request that would start something       503, Retry-After: 1, Connection: close,
//	  (call, stream, initialize, DELETE) reaching a        -32603 (its retry reaches another replica,
//	  replica shutting down (Endpoint.Shutdown)            which takes the session over)
//	a call still running when Shutdown's ctx is about    -32603 "Request cancelled"
//	  to end
//
// Endpoint.Ready is the readiness an app's probe serves: ErrDraining from
// Endpoint.Drain or Shutdown on, the store's error while its Healthy
// method (mcpredis has one) fails. Endpoint.Shutdown releases the
// replica's sessions for the others to take over, bounded by its
// context; its documentation says what a shutdown cut short loses.
//
// Registry changes announced on one replica reach every replica's sessions
// and subscriptions/listen streams; changes of one kind made close
// together, on one replica or several, may reach them as one
// notification (the cluster's store decides: mcpredis waits
// ChangeWindow). Each replica must register the same tools, resources and
// prompts, and seal with the same ServerOptions.Keys.
// The 2026-07-28 revision is stateless and needs no relay, except for its
// tasks, which live in the process that runs them: their ids name that
// replica, and tasks/get, tasks/update, tasks/cancel and
// subscriptions/listen with taskIds are relayed there (a task whose
// replica is gone is unknown, -32602).
package mcp
