// Package probe is the admin endpoint every benchmark server exposes on its
// own port: a JSON snapshot of the process's CPU time (getrusage), its
// allocation counters and heap figures (runtime/metrics) and its goroutine
// count. The load generator reads it before and after each measured slice,
// so the figures it reports are the server's own, with the load generator's
// cost left out.
package probe

import (
	"encoding/json"
	"net/http"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Path is where Handler is mounted on the admin listener.
const Path = "/debug/bench"

// Snapshot is one reading. Counters (CPU, allocations, GC cycles) are
// cumulative since the process started; the rest are levels.
type Snapshot struct {
	UnixNano    int64  `json:"unix_nano"`
	UserNS      int64  `json:"user_ns"`       // getrusage user CPU time
	SysNS       int64  `json:"sys_ns"`        // getrusage system CPU time
	AllocObjs   uint64 `json:"alloc_objects"` // heap allocations, tiny ones included
	AllocBytes  uint64 `json:"alloc_bytes"`   // bytes of heap allocations
	GCCycles    uint64 `json:"gc_cycles"`
	HeapLive    uint64 `json:"heap_live"`    // marked live by the last GC
	HeapObjects uint64 `json:"heap_objects"` // bytes of heap objects, live or not yet swept
	StackBytes  uint64 `json:"stack_bytes"`  // goroutine stacks
	Goroutines  uint64 `json:"goroutines"`
	RSS         uint64 `json:"rss"`     // resident set now (0 where /proc is absent)
	MaxRSS      uint64 `json:"max_rss"` // peak resident set, from getrusage
	ForcedGC    bool   `json:"forced_gc"`
}

// CPUNS is user plus system CPU time in nanoseconds.
func (s Snapshot) CPUNS() int64 { return s.UserNS + s.SysNS }

var names = []string{
	"/gc/heap/allocs:objects",
	"/gc/heap/tiny/allocs:objects",
	"/gc/heap/allocs:bytes",
	"/gc/cycles/total:gc-cycles",
	"/gc/heap/live:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/sched/goroutines:goroutines",
}

// Read takes a snapshot. With gc set it first runs two full collections, so
// HeapLive is what the process retains rather than what it allocated lately.
func Read(gc bool) Snapshot {
	if gc {
		runtime.GC()
		runtime.GC()
	}
	samples := make([]metrics.Sample, len(names))
	for i, n := range names {
		samples[i].Name = n
	}
	metrics.Read(samples)
	u := func(i int) uint64 {
		if samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return samples[i].Value.Uint64()
	}
	s := Snapshot{
		UnixNano:    time.Now().UnixNano(),
		AllocObjs:   u(0) + u(1),
		AllocBytes:  u(2),
		GCCycles:    u(3),
		HeapLive:    u(4),
		HeapObjects: u(5),
		StackBytes:  u(6),
		Goroutines:  u(7),
		RSS:         rss(),
		ForcedGC:    gc,
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		s.UserNS = ru.Utime.Nano()
		s.SysNS = ru.Stime.Nano()
		s.MaxRSS = uint64(ru.Maxrss) * 1024 // kilobytes on Linux
	}
	return s
}

// rss reads the current resident set size from /proc/self/statm.
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}

// Handler answers GET with a Snapshot as JSON; ?gc=1 forces collections
// first (see Read).
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		s := Read(r.URL.Query().Get("gc") == "1")
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s)
	})
}
