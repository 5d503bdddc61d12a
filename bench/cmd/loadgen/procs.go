package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/configs"
	"github.com/saguaro-go/saguaro/bench/internal/probe"
	"github.com/saguaro-go/saguaro/bench/internal/serve"
)

// server is one running server process.
type server struct {
	cfg     configs.Config
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	ready   serve.Ready
	ep      *endpoint
	logPath string
	logFile *os.File
	exited  chan struct{}
	hc      *http.Client
}

// startServer runs the configuration's binary with the given extra flags and
// waits for its ready line.
func startServer(o *options, phase string, cfg configs.Config, args ...string) (*server, error) {
	binDir, logDir := o.binDir, o.logDir
	bin := filepath.Join(binDir, cfg.Name)
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s not built (run make -C bench build): %w", bin, err)
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	logPath := filepath.Join(logDir, cfg.Name+"."+phase+".log")
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args = append([]string{"-addr", "127.0.0.1:0", "-admin", "127.0.0.1:0"}, args...)
	cmd := exec.Command(bin, args...)
	if o.pin {
		cmd = exec.Command("taskset", append([]string{"-c", "0", bin}, args...)...)
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	}
	cmd.Stderr = lf
	stdin, err := cmd.StdinPipe()
	if err != nil {
		lf.Close()
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		lf.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, err
	}
	s := &server{cfg: cfg, cmd: cmd, stdin: stdin, logPath: logPath, logFile: lf, exited: make(chan struct{}),
		hc: &http.Client{Timeout: 30 * time.Second}}
	lines := make(chan string, 1)
	go func() {
		br := bufio.NewReader(stdout)
		line, err := br.ReadString('\n')
		if err != nil {
			close(lines)
		} else {
			lines <- line
		}
		_, _ = io.Copy(lf, br) // the rest of stdout goes to the log
	}()
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	select {
	case line, ok := <-lines:
		if !ok {
			s.stop()
			return nil, fmt.Errorf("%s exited before it was ready; see %s", cfg.Name, logPath)
		}
		r, err := serve.ParseReady(line)
		if err != nil {
			s.stop()
			return nil, fmt.Errorf("%s: %w", cfg.Name, err)
		}
		s.ready = r
	case <-time.After(20 * time.Second):
		s.stop()
		return nil, fmt.Errorf("%s not ready after 20s; see %s", cfg.Name, logPath)
	}
	ep, err := newEndpoint(s.ready.MCPURL, s.ready.Headers)
	if err != nil {
		s.stop()
		return nil, err
	}
	ep.modern = cfg.IsModern()
	s.ep = ep
	return s, nil
}

// probe reads the server's own figures.
func (s *server) probe(gc bool) (probe.Snapshot, error) {
	u := s.ready.ProbeURL
	if gc {
		u += "?gc=1"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return probe.Snapshot{}, err
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return probe.Snapshot{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return probe.Snapshot{}, fmt.Errorf("probe %s: HTTP %d", u, resp.StatusCode)
	}
	var snap probe.Snapshot
	if err := json.NewDecoder(resp.Body).Decode(&snap); err != nil {
		return probe.Snapshot{}, err
	}
	return snap, nil
}

// stop closes the server's stdin (it exits on EOF), then kills it if it is
// still there after five seconds.
func (s *server) stop() {
	_ = s.stdin.Close()
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	_ = s.logFile.Close()
}

// logLines counts the lines the server wrote to its log (stderr and the
// rest of stdout).
func (s *server) logLines() int {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return -1
	}
	return bytes.Count(b, []byte("\n"))
}

// stopAll stops every server, whatever happened.
func stopAll(ss []*server) {
	for _, s := range ss {
		if s != nil {
			s.stop()
		}
	}
}

func isPending(c configs.Config) bool { return strings.TrimSpace(c.Pending) != "" }
