// Package proc starts, probes and stops the benchmark's child processes:
// anything that speaks internal/serve's ready-line protocol (the server
// binaries, clusterbench's proxy). Each child's stderr and the rest of its
// stdout go to a log file; it exits when its stdin reaches EOF.
package proc

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
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/probe"
	"github.com/saguaro-go/saguaro/bench/internal/serve"
)

// ReadyTimeout is how long Start waits for the ready line.
const ReadyTimeout = 20 * time.Second

// Proc is one running child process.
type Proc struct {
	Name    string
	Ready   serve.Ready // its ready line
	LogPath string
	// HTTP is the client for its probe endpoint and other admin requests.
	HTTP    *http.Client
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	logFile *os.File
	exited  chan struct{}
}

// EarlyExitError says the process exited before its ready line (a
// replica given a port that another process took meanwhile, for example).
type EarlyExitError struct{ Name, Log string }

func (e *EarlyExitError) Error() string {
	return fmt.Sprintf("%s exited before it was ready; see %s", e.Name, e.Log)
}

// Start runs cmd (not yet started; its Stdin, Stdout and Stderr are set
// here), its stderr and the rest of its stdout to logPath, and waits for
// its ready line.
func Start(name, logPath string, cmd *exec.Cmd) (*Proc, error) {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
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
	p := &Proc{Name: name, LogPath: logPath, HTTP: &http.Client{Timeout: 30 * time.Second},
		cmd: cmd, stdin: stdin, logFile: lf, exited: make(chan struct{})}
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
		close(p.exited)
	}()
	select {
	case line, ok := <-lines:
		if !ok {
			p.Stop()
			return nil, &EarlyExitError{name, logPath}
		}
		r, err := serve.ParseReady(line)
		if err != nil {
			p.Stop()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		p.Ready = r
	case <-time.After(ReadyTimeout):
		p.Stop()
		return nil, fmt.Errorf("%s not ready after 20s; see %s", name, logPath)
	}
	return p, nil
}

// Probe reads the process's own figures from its probe endpoint
// (internal/probe), after a forced GC when gc is set.
func (p *Proc) Probe(gc bool) (probe.Snapshot, error) {
	u := p.Ready.ProbeURL
	if gc {
		u += "?gc=1"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return probe.Snapshot{}, err
	}
	resp, err := p.HTTP.Do(req)
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

// Stop closes the process's stdin (it exits on EOF), then kills it if it
// is still there after five seconds.
func (p *Proc) Stop() {
	_ = p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	_ = p.logFile.Close()
}

// LogLines counts the lines the process wrote to its log (stderr and the
// stdout after the ready line), -1 when the log cannot be read.
func (p *Proc) LogLines() int {
	b, err := os.ReadFile(p.LogPath)
	if err != nil {
		return -1
	}
	return bytes.Count(b, []byte("\n"))
}

// StartStdio runs cmd, a stdio server (serve.Built.Stdio): its ready line
// comes on stderr, whose rest goes to logPath, and its standard input and
// output carry MCP: they are returned (Stop closes the input, and the
// server exits at its end).
func StartStdio(name, logPath string, cmd *exec.Cmd) (*Proc, io.Writer, io.Reader, error) {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, nil, nil, err
	}
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, nil, nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		lf.Close()
		return nil, nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		lf.Close()
		return nil, nil, nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		lf.Close()
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, nil, nil, err
	}
	p := &Proc{Name: name, LogPath: logPath, HTTP: &http.Client{Timeout: 30 * time.Second},
		cmd: cmd, stdin: stdin, logFile: lf, exited: make(chan struct{})}
	lines := make(chan string, 1)
	go func() {
		br := bufio.NewReader(stderr)
		line, err := br.ReadString('\n')
		if err != nil {
			close(lines)
		} else {
			lines <- line
		}
		_, _ = io.Copy(lf, br)
	}()
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	select {
	case line, ok := <-lines:
		if !ok {
			p.Stop()
			return nil, nil, nil, &EarlyExitError{name, logPath}
		}
		r, err := serve.ParseReady(line)
		if err != nil {
			p.Stop()
			return nil, nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		p.Ready = r
	case <-time.After(ReadyTimeout):
		p.Stop()
		return nil, nil, nil, fmt.Errorf("%s not ready after 20s; see %s", name, logPath)
	}
	return p, stdin, stdout, nil
}
