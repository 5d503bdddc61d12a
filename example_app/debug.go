package main

import (
	"context"
	"encoding/json"
	"errors"
	"expvar"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"runtime/debug"
	"time"
)

// debugHandler serves what an operator (or a soak test) reads off a
// running process, on a listener of its own that must never face the
// internet:
//
//	GET  /debug/vars      expvar: cmdline and runtime.MemStats
//	GET  /debug/runtime   goroutines, heap in use, live MCP sessions (JSON)
//	POST /debug/gc        forced garbage collections (pools emptied, memory
//	                      returned to the OS), then the same JSON as /debug/runtime
//	     /debug/pprof/…   net/http/pprof's profiles
func (a *app) debugHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /debug/vars", expvar.Handler())
	mux.HandleFunc("GET /debug/runtime", a.runtimeStats)
	mux.HandleFunc("POST /debug/gc", func(w http.ResponseWriter, r *http.Request) {
		// Two collections empty the sync.Pools (the first moves them
		// to their victim caches), so what remains is what is held.
		runtime.GC()
		runtime.GC()
		debug.FreeOSMemory()
		a.runtimeStats(w, r)
	})
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// runtimeStats is the body of /debug/runtime.
type runtimeStats struct {
	Goroutines int    `json:"goroutines"`
	HeapAlloc  uint64 `json:"heap_alloc"`   // bytes of live and not yet collected objects
	HeapInuse  uint64 `json:"heap_inuse"`   // bytes in spans in use
	Sys        uint64 `json:"sys"`          // bytes obtained from the OS
	NumGC      uint32 `json:"num_gc"`       // collections so far
	Sessions   int    `json:"mcp_sessions"` // live MCP sessions held here
}

func (a *app) runtimeStats(w http.ResponseWriter, _ *http.Request) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	st := runtimeStats{Goroutines: runtime.NumGoroutine(), HeapAlloc: ms.HeapAlloc, HeapInuse: ms.HeapInuse,
		Sys: ms.Sys, NumGC: ms.NumGC}
	if a.endpoint != nil {
		st.Sessions = a.endpoint.Sessions()
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(st)
}

// serveDebug serves debugHandler on ln until ctx ends.
func (a *app) serveDebug(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: a.debugHandler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("debug listener: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		a.logger.Warn("debug listener did not stop cleanly", slog.Any("error", err))
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("debug listener: %w", err)
	}
	return nil
}
