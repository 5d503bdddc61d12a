package main

// The launcher behind -replicas N: N replicas of this fixture, sharing
// their sessions on Redis, behind a round-robin reverse proxy with no
// stickiness, so that consecutive requests of one session land on
// different replicas, which relay them to the session's owner. It is
// how .ci/conformance.sh runs the official suite against a cluster
// (CONFORMANCE_REPLICAS=3).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/saguaro-go/saguaro/mcpredis"
)

// launch is what runReplicas starts.
type launch struct {
	n           int    // replicas
	addr        string // where the proxy listens (-addr)
	redisURL    string // passed on as -redis
	prefix      string // passed on as -prefix: every replica shares it
	cleanPrefix bool   // the prefix is this run's own: delete its keys at exit
	accessLog   bool   // log every proxied request (-proxy-log)
}

// replica is one child process and what the proxy knows of it.
type replica struct {
	name   string // "replica1", ...: the prefix of its log lines
	cmd    *exec.Cmd
	target *url.URL      // http://127.0.0.1:PORT, once it listens
	alive  atomic.Bool   // false once it exited: the proxy skips it
	exited chan struct{} // closed when cmd.Wait returned
	err    error         // cmd.Wait's error, once exited is closed
}

// readyTimeout bounds how long a replica may take to join the cluster
// and listen.
const readyTimeout = 30 * time.Second

// runReplicas starts l.n replicas of this binary, waits until each
// listens, and then serves a round-robin reverse proxy over them on
// l.addr until ctx ends (SIGTERM, SIGINT); then it stops the proxy and
// the replicas. The proxy listens only once every replica does, so that
// whoever waits for the port (.ci/conformance.sh) waits for the
// replicas too, and sees the launcher exit when one cannot start. A
// replica that dies meanwhile is logged and left out of the rotation;
// when none is left, runReplicas stops and fails.
func runReplicas(ctx context.Context, logger *slog.Logger, l *launch) (err error) {
	if l.cleanPrefix {
		defer cleanup(logger, l)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this binary: %w", err)
	}
	reps := make([]*replica, 0, l.n)
	defer func() { stopReplicas(logger, reps) }()
	for i := 1; i <= l.n; i++ {
		r, err := startReplica(ctx, exe, fmt.Sprintf("replica%d", i), l)
		if err != nil {
			return err
		}
		reps = append(reps, r)
	}
	ln, err := net.Listen("tcp", l.addr)
	if err != nil {
		return err
	}
	defer func() { _ = ln.Close() }()

	var next atomic.Uint64
	var stopping atomic.Bool
	defer stopping.Store(true) // before stopReplicas, deferred earlier
	allDead := make(chan struct{})
	var allDeadOnce sync.Once
	for _, r := range reps {
		go func() {
			<-r.exited
			if stopping.Load() || ctx.Err() != nil {
				return
			}
			logger.Error("a replica exited; the proxy leaves it out",
				slog.String("replica", r.name), slog.Any("error", r.err))
			for _, o := range reps {
				if o.alive.Load() {
					return
				}
			}
			allDeadOnce.Do(func() { close(allDead) })
		}()
	}
	proxy := &httputil.ReverseProxy{
		// Round robin over the live replicas, no stickiness: a session's
		// requests land anywhere. The client's Host header goes on
		// unchanged, as a load balancer in front of the replicas keeps it.
		Rewrite: func(pr *httputil.ProxyRequest) {
			var t *replica
			for range reps {
				r := reps[next.Add(1)%uint64(len(reps))]
				if r.alive.Load() {
					t = r
					break
				}
			}
			if t == nil {
				t = reps[0] // all dead: the proxy answers 502
			}
			if to, ok := pr.In.Context().Value(routedKey{}).(*string); ok {
				*to = t.name
			}
			pr.SetURL(t.target)
			pr.Out.Host = pr.In.Host
		},
		// Event streams go through as they are written.
		FlushInterval: -1,
		ErrorLog:      slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Full duplex, or event streams break at random: when a replica
		// answers with its headers (an event stream starts at once)
		// while the proxy's transport still reads the client's body (its
		// last Read, which finds EOF, comes after the bytes went out),
		// net/http's server discards and closes that body on
		// WriteHeader; the transport's Read then fails ("invalid Read on
		// closed Body"), it takes that for a failed request write and
		// closes the connection to the replica, and the stream being
		// copied from it ends with "use of closed network connection".
		// Full duplex leaves the body alone.
		_ = http.NewResponseController(w).EnableFullDuplex()
		proxy.ServeHTTP(w, r)
	})
	if l.accessLog {
		h = logRequests(logger, h)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return streams },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	names := make([]string, len(reps))
	for i, r := range reps {
		names[i] = r.target.Host
	}
	fmt.Printf("conformance fixture at http://%s/mcp (round robin over %d replicas: %s; Redis prefix %s)\n",
		ln.Addr(), len(reps), strings.Join(names, " "), l.prefix)

	select {
	case err = <-errc:
	case <-allDead:
		err = errors.New("every replica exited")
	case <-ctx.Done():
	}
	// Stop the proxy first (its streams end with it), then the replicas
	// (the deferred stopReplicas).
	endStreams()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if serr := srv.Shutdown(sctx); serr != nil && err == nil {
		err = serr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// startReplica starts this binary as replica name on a free loopback port
// (-addr 127.0.0.1:0: the kernel picks it, so there is no race for it)
// and waits until it announces that it listens, which it does once it
// has joined the cluster. Its stderr, and its stdout after the
// announcement, go to ours, each line prefixed with [name].
func startReplica(ctx context.Context, exe, name string, l *launch) (*replica, error) {
	cmd := exec.Command(exe, "-addr", "127.0.0.1:0", "-redis", l.redisURL, "-prefix", l.prefix)
	cmd.SysProcAttr = childSysProcAttr()
	cmd.Stdin = nil
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	r := &replica{name: name, cmd: cmd, exited: make(chan struct{})}
	r.alive.Store(true)
	tag := "[" + name + "] "
	var pipes sync.WaitGroup
	pipes.Add(1)
	go func() {
		defer pipes.Done()
		copyLines(os.Stderr, stderr, tag)
	}()
	// The first stdout line is the announcement: "conformance fixture at
	// http://127.0.0.1:PORT/mcp".
	addr := make(chan string, 1)
	pipes.Add(1)
	go func() {
		defer pipes.Done()
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(os.Stdout, tag+line)
			if rest, ok := strings.CutPrefix(line, "conformance fixture at http://"); ok {
				addr <- strings.TrimSuffix(rest, "/mcp")
			}
		}
		close(addr)
		for sc.Scan() {
			fmt.Fprintln(os.Stdout, tag+sc.Text())
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		// Wait only after the pipes are drained (os/exec's rule).
		pipes.Wait()
		r.err = cmd.Wait()
		r.alive.Store(false)
		close(r.exited)
	}()

	timer := time.NewTimer(readyTimeout)
	defer timer.Stop()
	select {
	case a, ok := <-addr:
		if !ok {
			// Its stdout ended, or did not start with the announcement.
			_ = cmd.Process.Kill()
			<-r.exited
			return nil, fmt.Errorf("%s did not announce its address (exit: %v)", name, r.err)
		}
		r.target = &url.URL{Scheme: "http", Host: a}
		return r, nil
	case <-timer.C:
		err = fmt.Errorf("%s did not listen within %s", name, readyTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	_ = cmd.Process.Kill()
	<-r.exited
	return nil, err
}

// copyLines copies r to w line by line, each line prefixed with tag.
func copyLines(w io.Writer, r io.Reader, tag string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fmt.Fprintln(w, tag+sc.Text())
	}
	_, _ = io.Copy(io.Discard, r)
}

// stopReplicas sends SIGTERM to every replica still running, waits up
// to 10 s for them to exit (each releases its sessions and leaves the
// cluster), then kills what is left.
func stopReplicas(logger *slog.Logger, reps []*replica) {
	for _, r := range reps {
		if r.alive.Load() {
			_ = r.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for _, r := range reps {
		select {
		case <-r.exited:
		case <-deadline.C:
			logger.Warn("a replica did not stop in time; killing it", slog.String("replica", r.name))
			_ = r.cmd.Process.Kill()
			<-r.exited
		}
	}
}

// cleanup deletes the keys this run left under its own prefix on Redis
// (the shared keys never expire; session records would for a while).
func cleanup(logger *slog.Logger, l *launch) {
	rdb, err := mcpredis.NewClient(redisClientURL(l.redisURL))
	if err != nil {
		logger.Warn("cleaning up Redis", slog.Any("error", err))
		return
	}
	defer func() { _ = rdb.Close() }()
	deletePrefix(rdb, l.prefix)
}

// routedKey is the context key under which logRequests learns the
// replica the proxy chose.
type routedKey struct{}

// logRequests logs every request the proxy serves, at the moment it
// ends: the replica it went to, its HTTP method, session, JSON-RPC
// method and id, the status, and how long it took.
func logRequests(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var body []byte
		if r.Body != nil && r.Body != http.NoBody {
			// Read it whole (JSON-RPC bodies are small), so that the proxy
			// forwards it from memory; only a body beyond 1 MiB is read
			// on from the client.
			const limit = 1 << 20
			body, _ = io.ReadAll(io.LimitReader(r.Body, limit))
			if len(body) < limit {
				r.Body = io.NopCloser(bytes.NewReader(body))
			} else {
				r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
			}
		}
		var msg struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &msg)
		to := new(string)
		sw := &statusWriter{ResponseWriter: w}
		// Deferred: the proxy panics (http.ErrAbortHandler) when a client
		// leaves a stream.
		defer func() {
			logger.Warn("proxy", slog.String("to", *to), slog.String("http", r.Method),
				slog.String("session", r.Header.Get("Mcp-Session-Id")),
				slog.String("rpc", msg.Method), slog.String("name", msg.Params.Name), slog.String("id", string(msg.ID)),
				slog.Int("status", sw.status), slog.Duration("took", time.Since(start).Round(time.Millisecond)))
		}()
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), routedKey{}, to)))
	})
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer
// (flushes, full duplex).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
