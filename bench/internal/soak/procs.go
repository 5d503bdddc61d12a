package soak

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrNotReady is returned when a child process does not say where it
// listens in time, or exits first.
var ErrNotReady = errors.New("soak: process not ready")

// process is one child process: an example_app, the balancer or
// redis-server. Its output goes to a log file; what the harness needs from
// it (its addresses, a token) is read off its standard output.
type process struct {
	name    string
	bin     string
	args    []string
	env     []string
	logPath string
	cred    *syscall.Credential // run as this user, when set

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	lines  map[string]string // first line with each wanted prefix → the rest
}

// wanted are the stdout prefixes the harness reads.
var wanted = []string{"export TOKEN=", "debug listener on http://", "example_app listening on ", "example_app replica on ", "roundrobin on "}

// start starts the process and waits until every prefix in need has been
// printed (none for redis-server, which is probed instead).
func (p *process) start(ctx context.Context, need ...string) error {
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("soak: log of %s: %w", p.name, err)
	}
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: p.cred}
	out, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return fmt.Errorf("soak: %s: %w", p.name, err)
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("soak: starting %s: %w", p.name, err)
	}
	exited := make(chan struct{})
	found := make(chan string, 16)
	lines := map[string]string{}
	var linesMu sync.Mutex
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logf, line)
			for _, w := range wanted {
				if rest, ok := strings.CutPrefix(line, w); ok {
					linesMu.Lock()
					if _, dup := lines[w]; !dup {
						lines[w] = rest
						found <- w
					}
					linesMu.Unlock()
				}
			}
		}
		_, _ = io.Copy(logf, out)
	}()
	go func() {
		<-copied
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()
	p.mu.Lock()
	p.cmd, p.exited = cmd, exited
	p.mu.Unlock()

	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	missing := map[string]bool{}
	for _, n := range need {
		missing[n] = true
	}
	for len(missing) > 0 {
		select {
		case w := <-found:
			delete(missing, w)
		case <-exited:
			return fmt.Errorf("%w: %s exited (see %s)", ErrNotReady, p.name, p.logPath)
		case <-deadline.C:
			p.kill()
			return fmt.Errorf("%w: %s printed no %v in 30 s (see %s)", ErrNotReady, p.name, need, p.logPath)
		case <-ctx.Done():
			p.kill()
			return ctx.Err()
		}
	}
	linesMu.Lock()
	p.mu.Lock()
	p.lines = lines
	p.mu.Unlock()
	linesMu.Unlock()
	return nil
}

// line returns what followed prefix on the process's standard output.
func (p *process) line(prefix string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lines[prefix]
}

// pid is the running process's id, 0 when none runs.
func (p *process) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	select {
	case <-p.exited:
		return 0
	default:
	}
	return p.cmd.Process.Pid
}

// kill sends SIGKILL and waits for the process to be reaped.
func (p *process) kill() {
	p.signal(syscall.SIGKILL)
}

// stop asks the process to end (SIGTERM), then kills it after 10 s.
func (p *process) stop() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		p.kill()
	}
}

func (p *process) signal(sig syscall.Signal) {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	<-exited
}

// freeAddr returns a 127.0.0.1 address nothing listens on at the moment.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("soak: a free port: %w", err)
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

// redisServer is a throwaway redis-server on a fixed port, which keeps
// nothing on disk, so that a restart starts it empty.
func redisServer(bin, addr, dir string) *process {
	_, port, _ := net.SplitHostPort(addr)
	return &process{name: "redis", bin: bin, logPath: filepath.Join(dir, "redis.log"),
		args: []string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}}
}

// waitDial waits until something accepts connections at addr.
func waitDial(ctx context.Context, addr string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: nothing listens on %s after %s", ErrNotReady, addr, within)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// procStatus reads a process's resident memory (bytes) and open file
// descriptors from /proc, and how many of those are TCP connections to
// one of poolPorts (the Redis and PostgreSQL connection pools).
func procStatus(pid int, poolPorts map[int]bool) (rss int64, fds, pooled int, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, 0, fmt.Errorf("soak: /proc: %w", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			rss = kb << 10
		}
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return rss, 0, 0, fmt.Errorf("soak: /proc: %w", err)
	}
	if len(poolPorts) == 0 {
		return rss, len(ents), 0, nil
	}
	remote := socketPorts(pid)
	for _, e := range ents {
		link, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		if inode, ok := strings.CutPrefix(link, "socket:["); ok && poolPorts[remote[strings.TrimSuffix(inode, "]")]] {
			pooled++
		}
	}
	return rss, len(ents), pooled, nil
}

// socketPorts maps the inode of each of a process's TCP sockets to its
// remote port, from /proc/PID/net/tcp and tcp6.
func socketPorts(pid int) map[string]int {
	out := map[string]int{}
	for _, f := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f))
		if err != nil {
			continue
		}
		for i, line := range strings.Split(string(b), "\n") {
			fields := strings.Fields(line)
			if i == 0 || len(fields) < 10 {
				continue
			}
			_, port, ok := strings.Cut(fields[2], ":")
			if !ok {
				continue
			}
			n, err := strconv.ParseInt(port, 16, 32)
			if err == nil {
				out[fields[9]] = int(n)
			}
		}
	}
	return out
}
