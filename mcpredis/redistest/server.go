package redistest

import (
	"bufio"
	"bytes"
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
	"testing"
	"time"
)

// Timeouts of a throwaway server's life.
const (
	readyTimeout = 5 * time.Second // until a started server answers PING
	termTimeout  = 5 * time.Second // from SIGTERM until SIGKILL
	closeTimeout = 2 * time.Second // from the process's exit until the port refuses
)

// bindAttempts is how many free ports [Start] tries: another process may
// take a port between the moment it is picked and redis-server binding it.
const bindAttempts = 5

// binaryCandidates are where Debian and others put redis-server when it is
// not on PATH. A variable so that the tests can take it away.
var binaryCandidates = []string{"/usr/sbin/redis-server", "/usr/bin/redis-server"}

// pickPort returns a loopback port that was free a moment ago. A variable
// so that the tests can hand out a taken one.
var pickPort = func() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// errAddrInUse is what start reports when redis-server could not bind its
// port, the one failure that another port can cure.
var errAddrInUse = errors.New("address already in use")

// findBinary returns the path of redis-server: on PATH, else at one of
// binaryCandidates.
func findBinary() (string, error) {
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p, nil
	}
	for _, p := range binaryCandidates {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("no redis-server binary (not on PATH, nor at %s)", strings.Join(binaryCandidates, " or "))
}

// Server is a redis-server process started by [Start] for one test. Its
// methods may be called from any goroutine, except [Server.Restart], which
// calls t.Fatalf and so belongs on the test's goroutine.
type Server struct {
	t    testing.TB
	bin  string
	dir  string // the server's working directory and log, t.TempDir()
	port int
	// extra are more redis-server arguments (a cluster node's).
	extra []string

	mu   sync.Mutex
	cmd  *exec.Cmd     // nil while stopped
	done chan struct{} // closed when cmd has exited
}

// Start starts a redis-server of the test's own on a free port of
// 127.0.0.1, keeping nothing on disk (--save "" --appendonly no), in a
// directory of t.TempDir(), and returns once it answers PING. It is stopped
// when the test ends (SIGTERM, then SIGKILL after 5s), so no process
// outlives the test.
//
// Without a redis-server binary the test is skipped, or fails when the
// environment variable CI is set. Call it from the test's goroutine.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := findBinary()
	if err != nil {
		unavailable(t, err.Error())
	}
	return start(t, bin)
}

// start is Start once the binary is known.
func start(t testing.TB, bin string) *Server {
	t.Helper()
	// TempDir before Cleanup: cleanups run last registered first, so the
	// server is stopped before its directory is removed.
	s := &Server{t: t, bin: bin, dir: t.TempDir()}
	t.Cleanup(s.Stop)
	var err error
	for range bindAttempts {
		if s.port, err = pickPort(); err != nil {
			t.Fatalf("redistest: picking a free port: %v", err)
		}
		if err = s.launch(); !errors.Is(err, errAddrInUse) {
			break
		}
		t.Logf("redistest: port %d was taken before redis-server could bind it; trying another", s.port)
	}
	if err != nil {
		t.Fatalf("redistest: starting redis-server: %v", err)
	}
	return s
}

// Addr returns the server's address, "127.0.0.1:port". It stays the same
// across [Server.Restart].
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL returns the server's URL, "redis://127.0.0.1:port", for
// redis.ParseURL. It stays the same across [Server.Restart].
func (s *Server) URL() string { return "redis://" + s.Addr() }

// Stop stops the server (SIGTERM, SIGKILL if it has not exited after 5s)
// and returns once the process has exited and its port refuses
// connections. Clients see their connections closed, as when Redis goes
// down. Stopping a stopped server does nothing; [Server.Restart] starts it
// again.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked()
}

// Kill ends the server at once (SIGKILL), as a crash does, and returns
// once its port refuses connections. [Server.Restart] starts it again.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		_ = s.cmd.Process.Kill()
	}
	s.stopLocked()
}

// Pause freezes the server (SIGSTOP): it keeps its port and its clients'
// connections, and the kernel still accepts new ones, but nothing is
// answered, as when Redis hangs or the network drops its packets.
// [Server.Resume] thaws it; Stop and the test's end thaw it first.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume thaws a server Pause froze (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(sig)
	}
}

// Restart stops the server and starts a new one on the same port, and
// returns once it answers PING: a Redis restart, as clients see it. The new
// server has no keys, since nothing was kept on disk. If it cannot start
// (say, another process took the port meanwhile) the test fails.
func (s *Server) Restart() {
	s.t.Helper()
	s.mu.Lock()
	s.stopLocked()
	s.mu.Unlock()
	// The port was free a moment ago, and redis-server binds with
	// SO_REUSEADDR, so only another process taking it fails this.
	if err := s.launch(); err != nil {
		s.t.Fatalf("redistest: restarting redis-server on %s: %v", s.Addr(), err)
	}
}

// stopLocked is Stop with s.mu held.
func (s *Server) stopLocked() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGCONT) // a paused server handles nothing
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(termTimeout):
		s.t.Logf("redistest: redis-server on %s ignored SIGTERM for %v; killing it", s.Addr(), termTimeout)
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd, s.done = nil, nil

	// The kernel closes the listening socket with the process, so this
	// normally returns at the first try.
	deadline := time.Now().Add(closeTimeout)
	for {
		c, err := net.DialTimeout("tcp", s.Addr(), 100*time.Millisecond)
		if err != nil {
			return
		}
		c.Close()
		if time.Now().After(deadline) {
			// Not ours any more: some other process listens there now.
			s.t.Logf("redistest: %s still accepts connections after redis-server exited (another process took the port?)", s.Addr())
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// launch starts redis-server on s.port and waits until it answers PING as
// itself (its INFO gives its own pid, not another server's that took the
// port). It returns errAddrInUse, wrapped, when the port was taken.
func (s *Server) launch() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("already running")
	}

	logPath := filepath.Join(s.dir, "redis.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	logStart, _ := logFile.Seek(0, io.SeekEnd)

	cmd := exec.Command(s.bin,
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", s.dir,
		"--daemonize", "no",
		"--logfile", "", // to stdout, which is the log file
	)
	cmd.Args = append(cmd.Args, s.extra...)
	cmd.Dir = s.dir
	cmd.Stdin = nil
	// An *os.File, so that exec starts no copying goroutine.
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()

	log := func() string {
		b, _ := os.ReadFile(logPath)
		if int64(len(b)) > logStart {
			b = b[logStart:]
		}
		if len(b) > 2000 {
			b = b[len(b)-2000:]
		}
		return strings.TrimSpace(string(b))
	}

	deadline := time.Now().Add(readyTimeout)
	for {
		select {
		case <-done:
			out := log()
			if strings.Contains(out, "Address already in use") {
				return fmt.Errorf("redis-server on port %d: %w", s.port, errAddrInUse)
			}
			return fmt.Errorf("redis-server exited before answering PING (%s); its output:\n%s", cmd.ProcessState, out)
		default:
		}
		pid, err := serverPID(s.Addr())
		if err == nil && pid == cmd.Process.Pid {
			s.cmd, s.done = cmd, done
			return nil
		}
		if err == nil {
			err = fmt.Errorf("another redis-server (pid %d) answers there", pid)
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-done
			return fmt.Errorf("redis-server on port %d did not answer PING within %v (last: %v); its output:\n%s", s.port, readyTimeout, err, log())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// serverPID PINGs the Redis at addr and returns the process_id its INFO
// server reports. It speaks RESP by hand: no client, no goroutine.
func serverPID(addr string) (int, error) {
	c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := io.WriteString(c, "*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n"); err != nil {
		return 0, err
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	if line != "+PONG\r\n" {
		return 0, fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	line, err = r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	if !strings.HasPrefix(line, "$") {
		return 0, fmt.Errorf("INFO answered %q", strings.TrimSpace(line))
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("INFO answered %q", strings.TrimSpace(line))
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, err
	}
	for l := range bytes.SplitSeq(body, []byte("\r\n")) {
		if v, ok := bytes.CutPrefix(l, []byte("process_id:")); ok {
			return strconv.Atoi(string(v))
		}
	}
	return 0, errors.New("INFO server has no process_id")
}
