package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/probe"
	"github.com/saguaro-go/saguaro/bench/internal/serve"
)

// proc is one process this command started that speaks the ready-line
// protocol of internal/serve: a server binary, or this command as a proxy.
type proc struct {
	name    string
	role    string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	ready   serve.Ready
	logPath string
	logFile *os.File
	exited  chan struct{}
	hc      *http.Client
}

// errEarlyExit: the process exited before its ready line (a replica given
// a port that another process took meanwhile, for example).
type errEarlyExit struct{ name, log string }

func (e *errEarlyExit) Error() string {
	return fmt.Sprintf("%s exited before it was ready; see %s", e.name, e.log)
}

// startProc runs bin with args, its stderr and the rest of its stdout to
// logDir/name.log, and waits for its ready line.
func startProc(logDir, name, role, bin string, args ...string) (*proc, error) {
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	logPath := filepath.Join(logDir, name+".log")
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = lf
	cmd.SysProcAttr = sysProcAttr()
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
	p := &proc{name: name, role: role, cmd: cmd, stdin: stdin, logPath: logPath, logFile: lf,
		exited: make(chan struct{}), hc: &http.Client{Timeout: 30 * time.Second}}
	lines := make(chan string, 1)
	go func() {
		br := bufio.NewReader(stdout)
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
			p.stop()
			return nil, &errEarlyExit{name, logPath}
		}
		r, err := serve.ParseReady(line)
		if err != nil {
			p.stop()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		p.ready = r
	case <-time.After(20 * time.Second):
		p.stop()
		return nil, fmt.Errorf("%s not ready after 20s; see %s", name, logPath)
	}
	return p, nil
}

// startReplica starts a replica of a cluster: it must know its own
// address before it listens (its relay URL), so it is given a port that
// was free a moment ago, and another if that one was taken meanwhile.
func startReplica(logDir, name, bin string, args ...string) (*proc, error) {
	var err error
	for range 5 {
		var port int
		if port, err = freePort(); err != nil {
			return nil, err
		}
		a := append([]string{"-mode", "redis", "-addr", "127.0.0.1:" + strconv.Itoa(port), "-admin", "127.0.0.1:0"}, args...)
		var p *proc
		if p, err = startProc(logDir, name, "replica", bin, a...); err == nil {
			return p, nil
		}
		if _, early := err.(*errEarlyExit); !early {
			return nil, err
		}
	}
	return nil, err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// probe reads the process's own figures (internal/probe).
func (p *proc) probe() (probe.Snapshot, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.ready.ProbeURL, nil)
	if err != nil {
		return probe.Snapshot{}, err
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return probe.Snapshot{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return probe.Snapshot{}, fmt.Errorf("probe %s: HTTP %d", p.ready.ProbeURL, resp.StatusCode)
	}
	var snap probe.Snapshot
	if err := json.NewDecoder(resp.Body).Decode(&snap); err != nil {
		return probe.Snapshot{}, err
	}
	return snap, nil
}

// stop closes the process's stdin (it exits on EOF), then kills it if it
// is still there after five seconds.
func (p *proc) stop() {
	_ = p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	_ = p.logFile.Close()
}

// logLines counts the lines the process wrote to its log besides the
// ready line: warnings (a failed relay, Redis trouble) land there.
func (p *proc) logLines() int {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return -1
	}
	return bytes.Count(b, []byte("\n"))
}
