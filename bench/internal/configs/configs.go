// Package configs is the table of server configurations the benchmark runs.
// It is the single source of truth: the Makefile asks the load generator
// (loadgen -print-builds) which binaries to build from it.
package configs

// Config is one server configuration: one binary, one process.
type Config struct {
	// Name is the binary's name and the label in the results.
	Name string
	// Library is the library under test ("bare", "go-sdk", "mcp-go", "saguaro").
	Library string
	// Pkg is the main package, relative to the bench module.
	Pkg string
	// Mode is baked into the binary with -ldflags "-X main.mode=...".
	Mode string
	// Stateful configurations get initialize + notifications/initialized per
	// connection and the Mcp-Session-Id header; only they run the churn and
	// idle-session workloads.
	Stateful bool
	// Pending, when set, says why the configuration cannot be built yet; it
	// is listed in the results as not measured.
	Pending string
	// Kind is what the server serves: KindMCP (the echo tool at /mcp, for
	// the tools/call, progress, churn and idle workloads) or KindSSE (an
	// event stream at /events and a publish endpoint, for the fan-out
	// workload only).
	Kind string
	// Protocol is the revision the load generator speaks to the server:
	// "" for ProtocolLegacy (2025-11-25, initialize on stateful servers) or
	// ProtocolModern (2026-07-28: stateless, no initialize, the revision and
	// client capabilities in every request's _meta and the Mcp-Method and
	// Mcp-Name headers). Modern configurations run the tools/call and
	// progress workloads only.
	Protocol string
	// Only, when set, names the one workload the configuration runs
	// ("throughput"): a configuration that exists to split another's
	// figure stays out of the workloads it tells nothing about.
	Only string
}

// Runs reports whether c takes part in the workload (one of loadgen's
// -workloads names); the workload's own conditions (stateful, SSE,
// protocol) still apply.
func (c Config) Runs(workload string) bool { return c.Only == "" || c.Only == workload }

// Protocol revisions the load generator speaks.
const (
	ProtocolLegacy = ""
	ProtocolModern = "2026-07-28"
)

// IsModern reports whether the load generator speaks 2026-07-28 to c.
func (c Config) IsModern() bool { return c.Protocol == ProtocolModern }

// Kinds of configuration.
const (
	KindMCP = ""
	KindSSE = "sse"
)

// IsSSE reports whether c is a fan-out (Server-Sent Events) configuration.
func (c Config) IsSSE() bool { return c.Kind == KindSSE }

// All lists every configuration, bare first (the ratios are against it).
var All = []Config{
	{Name: "bare", Library: "bare", Pkg: "./servers/bare", Mode: "plain"},
	{Name: "gosdk-stateless", Library: "go-sdk", Pkg: "./servers/gosdk", Mode: "stateless"},
	{Name: "gosdk-stateful", Library: "go-sdk", Pkg: "./servers/gosdk", Mode: "stateful", Stateful: true},
	{Name: "mcpgo-stateless", Library: "mcp-go", Pkg: "./servers/mcpgo", Mode: "stateless"},
	{Name: "mcpgo-stateful", Library: "mcp-go", Pkg: "./servers/mcpgo", Mode: "stateful", Stateful: true},

	// saguaro: stateless, with sessions, and stateful behind the realistic
	// production stack (logging preset + JWT verifier, internal/stack).
	{Name: "saguaro-stateless", Library: "saguaro", Pkg: "./servers/saguaro", Mode: "stateless"},
	{Name: "saguaro-stateful", Library: "saguaro", Pkg: "./servers/saguaro", Mode: "stateful", Stateful: true},
	{Name: "saguaro-stack", Library: "saguaro", Pkg: "./servers/saguaro", Mode: "stack", Stateful: true},
	// saguaro-stateful sent saguaro-stack's bearer token, which it does
	// not check: the stack's cost split into its larger request (what
	// net/http spends reading the header) and its layers.
	{Name: "saguaro-token", Library: "saguaro", Pkg: "./servers/saguaro", Mode: "token", Stateful: true, Only: "throughput"},
	// saguaro-stateful with OpenTelemetry: metrics, then metrics and every
	// call traced.
	{Name: "saguaro-metrics", Library: "saguaro", Pkg: "./servers/saguaro", Mode: "metrics", Stateful: true},
	{Name: "saguaro-traced", Library: "saguaro", Pkg: "./servers/saguaro", Mode: "traced", Stateful: true},
	// The saguaro-stateless server, spoken to in 2026-07-28 (stateless by
	// the revision: no initialize, no session) on the same endpoint.
	{Name: "saguaro-modern", Library: "saguaro", Pkg: "./servers/saguaro", Mode: "stateless", Protocol: ProtocolModern},

	// SSE fan-out (one event to every connected client): the hand-written
	// ceiling first, then saguaro's sse.Hub feeding controller loops (what
	// users get, as example_app/events.go does it) and feeding sse.Writer
	// in a plain handler, then go-sse's Server with its default provider
	// (Joe), bare and with a replay log like saguaro's Hub always keeps.
	{Name: "sse-bare", Library: "bare", Pkg: "./servers/ssebare", Mode: "channels", Kind: KindSSE},
	{Name: "sse-saguaro", Library: "saguaro", Pkg: "./servers/ssesaguaro", Mode: "loop", Kind: KindSSE},
	{Name: "sse-saguaro-writer", Library: "saguaro", Pkg: "./servers/ssesaguaro", Mode: "writer", Kind: KindSSE},
	{Name: "sse-gosse", Library: "go-sse", Pkg: "./servers/gosse", Mode: "joe", Kind: KindSSE},
	{Name: "sse-gosse-replay", Library: "go-sse", Pkg: "./servers/gosse", Mode: "replay", Kind: KindSSE},
}

// Stdio lists the stdio servers of the stdio workload, one process per
// client: each serves the echo tool on its standard input and output
// (mode "stdio" of the library's server). They run that workload only,
// and are kept out of All, whose workloads are HTTP.
var Stdio = []Config{
	{Name: "gosdk-stdio", Library: "go-sdk", Pkg: "./servers/gosdk", Mode: "stdio", Stateful: true},
	{Name: "mcpgo-stdio", Library: "mcp-go", Pkg: "./servers/mcpgo", Mode: "stdio", Stateful: true},
	{Name: "saguaro-stdio", Library: "saguaro", Pkg: "./servers/saguaro", Mode: "stdio", Stateful: true},
}

// Bare is the name of the baseline configuration.
const Bare = "bare"

// SSEBare is the name of the fan-out workload's baseline configuration.
const SSEBare = "sse-bare"
