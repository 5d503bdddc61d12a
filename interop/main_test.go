// Package interop drives saguaro's conformance fixture server
// (../example_app/conformance) with the two peer Go MCP clients,
// github.com/modelcontextprotocol/go-sdk and github.com/mark3labs/mcp-go,
// at each legacy protocol revision. It is its own module so that the
// library never depends on the peer SDKs.
package interop

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// legacyRevisions are the protocol revisions that use initialize and
// sessions; every client is pinned to each in turn.
var legacyRevisions = []string{"2025-03-26", "2025-06-18", "2025-11-25"}

// fixtureURL is the MCP endpoint of the fixture server that TestMain runs
// for the whole test binary; fixtureBin is its binary, which the cluster
// tests start again as replicas.
var fixtureURL, fixtureBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "saguaro-interop-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop:", err)
		return 1
	}
	defer os.RemoveAll(dir)

	bin := filepath.Join(dir, "fixture")
	if err := buildFixture(bin); err != nil {
		fmt.Fprintln(os.Stderr, "interop: building the fixture:", err)
		return 1
	}
	fixtureBin = bin
	fx, err := startFixture(bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop: starting the fixture:", err)
		return 1
	}
	fixtureURL = fx.url

	code := m.Run()

	if err := fx.stop(); err != nil {
		fmt.Fprintln(os.Stderr, "interop: stopping the fixture:", err)
		if code == 0 {
			code = 1
		}
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "interop: goroutine leak:", err)
			code = 1
		}
	}
	return code
}

// buildFixture compiles ../example_app/conformance into bin. It builds in
// the example app's own module (../example_app), so this module needs none
// of the fixture's dependencies.
func buildFixture(bin string) error {
	// go test puts its own GOROOT/bin first on PATH.
	cmd := exec.Command("go", "build", "-o", bin, "./conformance")
	cmd.Dir = "../example_app"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w\n%s", err, out.String())
	}
	return nil
}

// fixture is the running fixture process.
type fixture struct {
	cmd    *exec.Cmd
	url    string
	done   chan struct{} // closed when the process has exited
	err    error         // its exit status, once done is closed
	stderr *lockedWriter
}

// startFixture runs bin on a free loopback port (the kernel picks it: the
// fixture prints the address it bound), with args, and waits until it
// answers.
func startFixture(bin string, args ...string) (*fixture, error) {
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	cmd.SysProcAttr = procAttr() // dies with the test binary (Linux)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	fx := &fixture{cmd: cmd, done: make(chan struct{}), stderr: &lockedWriter{w: &bytes.Buffer{}}}
	cmd.Stderr = fx.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		first := true
		for sc.Scan() {
			if first {
				lines <- sc.Text()
				first = false
			}
		}
		close(lines)
		fx.err = cmd.Wait()
		close(fx.done)
	}()

	// "conformance fixture at http://127.0.0.1:PORT/mcp"
	select {
	case line, ok := <-lines:
		i := strings.Index(line, "http://")
		if !ok || i < 0 {
			fx.kill()
			return nil, fmt.Errorf("unexpected first line %q; stderr: %s", line, fx.stderr)
		}
		fx.url = strings.TrimSpace(line[i:])
	case <-time.After(30 * time.Second):
		fx.kill()
		return nil, errors.New("no address printed within 30s")
	}
	if err := waitAnswers(fx.url, fx.done, 10*time.Second); err != nil {
		fx.kill()
		return nil, fmt.Errorf("%w; stderr: %s", err, fx.stderr)
	}
	return fx, nil
}

// waitAnswers polls url until the server answers an HTTP request at all.
func waitAnswers(url string, exited <-chan struct{}, limit time.Duration) error {
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	deadline := time.Now().Add(limit)
	for {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := hc.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			return nil
		}
		select {
		case <-exited:
			return errors.New("fixture exited before it answered")
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("fixture did not answer within %s: %w", limit, err)
		}
	}
}

// stop asks the fixture to shut down (SIGTERM), and kills it if it has
// not exited within 10s. It reports an unclean exit.
func (fx *fixture) stop() error {
	_ = fx.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-fx.done:
		if fx.err != nil {
			return fmt.Errorf("fixture exited with %w; stderr: %s", fx.err, fx.stderr)
		}
		return nil
	case <-time.After(10 * time.Second):
		fx.kill()
		return fmt.Errorf("fixture ignored SIGTERM for 10s and was killed; stderr: %s", fx.stderr)
	}
}

func (fx *fixture) kill() {
	_ = fx.cmd.Process.Kill()
	<-fx.done
}

// lockedWriter serialises writes to w and reads through String.
type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}
