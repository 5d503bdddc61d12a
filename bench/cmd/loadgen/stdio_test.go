package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/configs"
)

// The stdio workload against the real servers, built as make does: every
// answer checked at both depths, and the server's figures read.
func TestStdioWorkload(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the stdio servers")
	}
	dir := t.TempDir()
	o := &options{binDir: dir, logDir: filepath.Join(dir, "logs"), stdio: stdioOptions{depths: []int{1, 16}, calls: 300, warmup: 50, rounds: 1}}
	for _, c := range configs.Stdio {
		build := exec.Command("go", "build", "-ldflags", "-X main.mode="+c.Mode, "-o", filepath.Join(dir, c.Name), c.Pkg)
		build.Dir = "../.."
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", c.Name, err, out)
		}
	}
	run := &runResult{Opts: o}
	start := time.Now()
	runStdioPhase(o, run)
	t.Logf("the phase took %v", time.Since(start))
	if len(run.StdioReady) != len(configs.Stdio) {
		t.Fatalf("%d servers started, want %d", len(run.StdioReady), len(configs.Stdio))
	}
	for _, c := range configs.Stdio {
		for _, d := range o.stdio.depths {
			agg := run.Stdio[stdioKey(c.Name, d)]
			if agg == nil || agg.Err != "" || len(agg.Slices) != 1 {
				t.Fatalf("%s at %d in flight: %+v", c.Name, d, agg)
			}
			s := agg.Slices[0]
			if s.Calls != 300 || s.Wall <= 0 || s.CPUNS <= 0 || s.AllocBytes == 0 {
				t.Errorf("%s at %d in flight: figures %+v", c.Name, d, s)
			}
		}
	}
	var page strings.Builder
	renderStdio(run, func(f string, args ...any) { fmt.Fprintf(&page, f, args...) })
	for _, want := range []string{"### lock-step (1 in flight)", "### 16 in flight", "| saguaro-stdio |", "| gosdk-stdio |", "| mcpgo-stdio |", "saguaro-stdio: calls/s "} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the section lacks %q:\n%s", want, page.String())
		}
	}
}

// The verdict line: ahead only when ahead of both peers.
func TestStdioVerdict(t *testing.T) {
	sl := func(cps, bytes float64) stdioSlice {
		return stdioSlice{Calls: 1000, Wall: time.Duration(1000 / cps * float64(time.Second)), CPUNS: 1e6, AllocBytes: uint64(bytes * 1000)}
	}
	r := &runResult{Stdio: map[string]*stdioAgg{
		stdioKey("saguaro-stdio", 1): {Slices: []stdioSlice{sl(5000, 2000)}},
		stdioKey("gosdk-stdio", 1):   {Slices: []stdioSlice{sl(2000, 200000)}},
		stdioKey("mcpgo-stdio", 1):   {Slices: []stdioSlice{sl(6000, 8000)}},
	}}
	got := stdioVerdict(r, 1)
	if !strings.Contains(got, "calls/s **not** ahead of both") || !strings.Contains(got, "bytes per call ahead of both") {
		t.Errorf("verdict %q", got)
	}
}
