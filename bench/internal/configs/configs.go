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
}

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
}

// Bare is the name of the baseline configuration.
const Bare = "bare"
