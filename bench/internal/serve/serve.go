// Package serve is the shared main of every benchmark server: flags, two
// loopback listeners (the MCP endpoint and the probe), the ready line the
// load generator waits for, and the ways a server stops by itself.
//
// A server binary prints exactly one line starting with ReadyPrefix to
// stdout, followed by a JSON Ready, once both listeners accept connections.
// It exits on SIGINT/SIGTERM, when its stdin reaches EOF (the load generator
// holds the other end, so a crashed load generator leaves no orphans), or
// after -max-lifetime.
package serve

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/probe"
)

// ReadyPrefix starts the ready line on stdout.
const ReadyPrefix = "BENCH-READY "

// MCPPath is where every server serves MCP.
const MCPPath = "/mcp"

// EventsPath is where fan-out servers serve their event stream (GET), and
// PublishPath where the load generator asks them to publish one event
// (POST ?seq=N; see package fanout).
const (
	EventsPath  = "/events"
	PublishPath = "/publish"
)

// ProgressSteps is how many notifications/progress the "progress" tool
// sends before its result, when the call carries a progressToken.
const ProgressSteps = 5

// Options are what a configuration's build function gets from the flags.
type Options struct {
	// Mode selects the variant of a library's server (for example
	// "stateless" or "stateful"); it is baked into each binary at link time.
	Mode string
	// IdleTimeout is the session idle timeout / reaper TTL to configure, for
	// libraries that have one.
	IdleTimeout time.Duration
	// Progress asks for a set-up whose calls can carry notifications on
	// their own response stream (the progress workload). Libraries that
	// pick the response mode per call ignore it; go-sdk turns
	// JSONResponse off.
	Progress bool
	// PayloadDocs are the sizes, in KiB, of the documents to serve as
	// resources for the payload workload: payload.Document(kib<<10) at
	// payload.DocURI(kib), media type payload.MIMEType (-payload-docs;
	// none unless given, so the other workloads' servers stay as they
	// were).
	PayloadDocs []int
}

// Built is what a build function returns.
type Built struct {
	// Handler serves MCP; it is mounted at MCPPath. Fan-out servers leave
	// it nil (MCPPath then answers 404).
	Handler http.Handler
	// Routes are more handlers by exact path: fan-out servers put theirs at
	// EventsPath and PublishPath.
	Routes map[string]http.Handler
	// Headers are added by the load generator to every MCP request (for
	// example a bearer token the server minted for itself).
	Headers map[string]string
	// Notes says how the library was configured, for the results page.
	Notes string
	// Close, if set, runs before the process exits.
	Close func()
	// Stdio, when set, makes the server a stdio one (the "stdio" mode):
	// it serves MCP on standard input and output until its input ends or
	// ctx does, and Handler and Routes are not served. The ready line
	// then goes to standard error (standard output carries the protocol),
	// with MCPURL StdioURL.
	Stdio func(ctx context.Context) error
}

// StdioURL is the MCPURL of a stdio server's ready line.
const StdioURL = "stdio:"

// Ready is the JSON on the ready line.
type Ready struct {
	Name        string            `json:"name"`
	Mode        string            `json:"mode"`
	PID         int               `json:"pid"`
	MCPURL      string            `json:"mcp_url"`
	EventsURL   string            `json:"events_url,omitempty"`
	PublishURL  string            `json:"publish_url,omitempty"`
	ProbeURL    string            `json:"probe_url"`
	Headers     map[string]string `json:"headers,omitempty"`
	Notes       string            `json:"notes,omitempty"`
	IdleTimeout string            `json:"idle_timeout"`
	GOMAXPROCS  int               `json:"gomaxprocs"`
	GoVersion   string            `json:"go_version"`
	Deps        map[string]string `json:"deps,omitempty"`
}

// ParseReady parses a ready line (with or without its prefix).
func ParseReady(line string) (Ready, error) {
	var r Ready
	line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), strings.TrimSpace(ReadyPrefix)))
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		return r, fmt.Errorf("bad ready line: %w", err)
	}
	if r.MCPURL == "" || r.ProbeURL == "" {
		return r, errors.New("bad ready line: missing URLs")
	}
	return r, nil
}

// Main runs a benchmark server. name is the library's name; mode is the
// link-time default of -mode.
func Main(name, mode string, build func(Options) (Built, error)) {
	log.SetFlags(0)
	log.SetPrefix(name + ": ")
	addr := flag.String("addr", "127.0.0.1:0", "MCP listen address (loopback only)")
	admin := flag.String("admin", "127.0.0.1:0", "probe listen address (loopback only)")
	flag.StringVar(&mode, "mode", mode, "server variant")
	idle := flag.Duration("idle-timeout", 10*time.Minute, "session idle timeout / reaper TTL")
	progress := flag.Bool("progress", false, "set up for the progress workload (see Options.Progress)")
	docs := flag.String("payload-docs", "", "comma-separated sizes in KiB of the documents to serve for the payload workload (see Options.PayloadDocs)")
	maxLife := flag.Duration("max-lifetime", 30*time.Minute, "exit after this long whatever happens")
	flag.Parse()

	opts := Options{Mode: mode, IdleTimeout: *idle, Progress: *progress}
	var err error
	if opts.PayloadDocs, err = ParseKiB(*docs); err != nil {
		log.Fatalf("-payload-docs: %v", err)
	}
	b, err := build(opts)
	if err != nil {
		log.Fatalf("build %s: %v", mode, err)
	}
	if b.Stdio != nil {
		mainStdio(name, mode, *admin, *maxLife, b)
		return
	}
	mcpLn := listenLoopback(*addr)
	adminLn := listenLoopback(*admin)

	mux := http.NewServeMux()
	if b.Handler != nil {
		mux.Handle(MCPPath, b.Handler)
		mux.Handle(MCPPath+"/", b.Handler)
	}
	for path, h := range b.Routes {
		mux.Handle(path, h)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(os.Stderr, name+" http: ", 0)}
	adm := &http.Server{Handler: probeMux(), ReadHeaderTimeout: 10 * time.Second}

	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(mcpLn) }()
	go func() { errc <- adm.Serve(adminLn) }()

	ready := Ready{
		Name:        name,
		Mode:        mode,
		PID:         os.Getpid(),
		MCPURL:      "http://" + mcpLn.Addr().String() + MCPPath,
		ProbeURL:    "http://" + adminLn.Addr().String() + probe.Path,
		Headers:     b.Headers,
		Notes:       b.Notes,
		IdleTimeout: idle.String(),
		GOMAXPROCS:  runtime.GOMAXPROCS(0),
		GoVersion:   runtime.Version(),
		Deps:        deps(),
	}
	if b.Routes[EventsPath] != nil {
		ready.EventsURL = "http://" + mcpLn.Addr().String() + EventsPath
	}
	if b.Routes[PublishPath] != nil {
		ready.PublishURL = "http://" + mcpLn.Addr().String() + PublishPath
	}
	PrintReady(ready)
	AwaitExit(*maxLife, errc)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = adm.Shutdown(ctx)
	_ = srv.Shutdown(ctx)
	_ = srv.Close()
	if b.Close != nil {
		b.Close()
	}
}

// mainStdio runs a stdio server: the probe on its loopback listener, the
// ready line on standard error, then MCP on standard input and output
// until the input ends (the load generator closed it), a signal, or
// maxLife.
func mainStdio(name, mode, admin string, maxLife time.Duration, b Built) {
	adminLn := listenLoopback(admin)
	adm := &http.Server{Handler: probeMux(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = adm.Serve(adminLn) }()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, maxLife)
	defer cancel()
	r := Ready{Name: name, Mode: mode, PID: os.Getpid(), MCPURL: StdioURL,
		ProbeURL: "http://" + adminLn.Addr().String() + probe.Path, Notes: b.Notes,
		GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version(), Deps: deps()}
	line, _ := json.Marshal(r)
	fmt.Fprintf(os.Stderr, "%s%s\n", ReadyPrefix, line)
	if err := b.Stdio(ctx); err != nil {
		log.Printf("stdio: %v", err)
	}
	sctx, scancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer scancel()
	_ = adm.Shutdown(sctx)
	if b.Close != nil {
		b.Close()
	}
}

// ParseKiB parses a comma-separated list of sizes in KiB (positive, at
// most 64 MiB); "" is none.
func ParseKiB(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 64<<10 {
			return nil, fmt.Errorf("bad size %q: want KiB from 1 to 65536", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// PrintReady prints the ready line on stdout: ReadyPrefix and r as JSON.
func PrintReady(r Ready) {
	line, _ := json.Marshal(r)
	fmt.Fprintf(os.Stdout, "%s%s\n", ReadyPrefix, line)
}

// AwaitExit returns when the process should shut down: on SIGINT or
// SIGTERM, at EOF on stdin (the load generator is gone or done), after
// maxLife, or when a listener fails (errc; logged).
func AwaitExit(maxLife time.Duration, errc <-chan error) {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	stdinEOF := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(stdinEOF)
	}()
	select {
	case <-stop:
	case <-stdinEOF:
	case <-time.After(maxLife):
		log.Printf("max lifetime %v reached", maxLife)
	case err := <-errc:
		log.Printf("serve: %v", err)
	}
}

// probeMux serves the probe and, on the same loopback admin listener, the
// runtime profiles (net/http/pprof's handlers), so a workload can be
// profiled in the server it measures (loadgen -fanout-profile).
func probeMux() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(probe.Path, probe.Handler())
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	return mux
}

func listenLoopback(addr string) net.Listener {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		log.Fatalf("listen %q: %v", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		log.Fatalf("listen %q: only loopback addresses are allowed", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatalf("listen %q: %v", addr, err)
	}
	return ln
}

// deps reports the versions of the modules the results page names.
func deps() map[string]string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	out := map[string]string{}
	for _, d := range bi.Deps {
		for _, want := range []string{"modelcontextprotocol/go-sdk", "mark3labs/mcp-go", "saguaro-go/saguaro", "go-chi/chi", "go-chi/httplog", "golang-jwt/jwt", "tmaxmax/go-sse"} {
			if strings.Contains(d.Path, want) {
				v := d.Version
				if d.Replace != nil {
					v = "=> " + d.Replace.Path
					if d.Replace.Version != "" {
						v += " " + d.Replace.Version
					}
				}
				out[d.Path] = v
			}
		}
	}
	return out
}
