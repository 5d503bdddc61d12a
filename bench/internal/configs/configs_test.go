package configs

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// workloads are loadgen's -workloads names a configuration can be limited to.
var workloads = []string{"throughput", "payload", "progress", "churn", "idle", "fanout"}

func TestTable(t *testing.T) {
	if len(All) == 0 || All[0].Name != Bare {
		t.Fatalf("bare must come first: the ratios are against it")
	}
	sseBare := -1
	for i, c := range All {
		if c.IsSSE() && sseBare < 0 {
			sseBare = i
		}
	}
	if sseBare < 0 || All[sseBare].Name != SSEBare {
		t.Fatalf("sse-bare must come first among the fan-out configurations")
	}
	seen := map[string]bool{}
	for _, c := range All {
		if c.Name == "" || c.Library == "" || c.Pkg == "" || c.Mode == "" {
			t.Errorf("incomplete entry %+v", c)
		}
		if seen[c.Name] {
			t.Errorf("duplicate name %q", c.Name)
		}
		seen[c.Name] = true
		if c.IsModern() && (c.Stateful || c.IsSSE()) {
			t.Errorf("%s: a 2026-07-28 configuration is stateless MCP", c.Name)
		}
		if c.Protocol != ProtocolLegacy && c.Protocol != ProtocolModern {
			t.Errorf("%s: unknown protocol %q", c.Name, c.Protocol)
		}
		if c.Only != "" && !slices.Contains(workloads, c.Only) {
			t.Errorf("%s: unknown workload %q", c.Name, c.Only)
		}
		for _, w := range workloads {
			if want := c.Only == "" || c.Only == w; c.Runs(w) != want {
				t.Errorf("%s: Runs(%q) = %v with Only %q", c.Name, w, !want, c.Only)
			}
		}
		if c.Pending != "" {
			continue
		}
		if _, err := os.Stat(filepath.Join("..", "..", c.Pkg, "main.go")); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
}
