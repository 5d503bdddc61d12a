package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The stdio transport as a real process: the test binary, started again
// with stdioChildEnv set, serves a small server with ServeStdio on its
// standard input and output, the way a desktop client starts a server.

const stdioChildEnv = "SAGUARO_TEST_STDIO_SERVER"

// stdioChildShutdown is the child's ConnOptions.ShutdownTimeout.
const stdioChildShutdown = 3 * time.Second

// stdioChild is the child's main: it serves until ServeStdio returns, and
// exits 0 when that is nil, 1 otherwise. SIGTERM ends it as a shutdown.
func stdioChild() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	srv := NewServer(Implementation{Name: "stdio-child", Version: "1"}, nil)
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(AddTool(srv, &Tool{Name: "echo"}, func(ctx context.Context, r *CallToolRequest, in EchoIn) (string, error) {
		return in.Text, nil
	}))
	// block reports progress once, so the client knows it runs, then
	// waits for its context, and says on standard error that it ended.
	must(AddTool(srv, &Tool{Name: "block"}, func(ctx context.Context, r *CallToolRequest, in struct{}) (string, error) {
		if err := r.Progress(ctx, 1, 0, "running"); err != nil {
			return "", err
		}
		<-ctx.Done()
		fmt.Fprintf(os.Stderr, "block %s ended: %v\n", r.ID.String(), ctx.Err())
		return "", ctx.Err()
	}))
	// slow answers after 300 ms, whatever happens meanwhile.
	must(AddTool(srv, &Tool{Name: "slow"}, func(ctx context.Context, r *CallToolRequest, in EchoIn) (string, error) {
		time.Sleep(300 * time.Millisecond)
		return "slow " + in.Text, nil
	}))
	if err := ServeStdio(ctx, srv, &ConnOptions{Logger: logger, ShutdownTimeout: stdioChildShutdown}); err != nil {
		fmt.Fprintln(os.Stderr, "ServeStdio:", err)
		return 1
	}
	fmt.Fprintln(os.Stderr, "ServeStdio returned nil")
	return 0
}

// stdioProc is the child process and the client's ends of its pipes.
type stdioProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    io.ReadCloser
	stderr *syncBuffer
	lines  chan string
	exited chan struct{}
	err    error // cmd.Wait's, once exited is closed
}

func startStdioProc(t *testing.T) *stdioProc {
	t.Helper()
	if testing.Short() {
		t.Skip("starts processes")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe)
	// The race detector's runtime waits a second at exit unless told not
	// to, which the exit-time checks would count.
	cmd.Env = append(os.Environ(), stdioChildEnv+"=1", "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	p := &stdioProc{t: t, cmd: cmd, stderr: &syncBuffer{}, lines: make(chan string, 1024), exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	p.in, err = cmd.StdinPipe()
	require.NoError(t, err)
	p.out, err = cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var reading sync.WaitGroup
	reading.Add(1)
	go func() {
		defer reading.Done()
		defer close(p.lines)
		r := bufio.NewReaderSize(p.out, 1<<16)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			p.lines <- strings.TrimSuffix(line, "\n")
		}
	}()
	go func() {
		reading.Wait() // Wait closes the pipes: read them to the end first
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("server's standard error:\n%s", p.stderr.String())
		}
	})
	return p
}

func (p *stdioProc) send(line string) {
	p.t.Helper()
	_, err := io.WriteString(p.in, line+"\n")
	require.NoError(p.t, err)
}

// next returns the next line the server wrote.
func (p *stdioProc) next() string {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		require.True(p.t, ok, "the server's output ended")
		return l
	case <-time.After(10 * time.Second):
		p.t.Fatal("no line from the server in 10 s")
	}
	return ""
}

// open initializes the session.
func (p *stdioProc) open() {
	p.t.Helper()
	p.send(initBody("2025-11-25", "{}"))
	require.Contains(p.t, p.next(), `"protocolVersion":"2025-11-25"`)
	p.send(note("notifications/initialized", ""))
}

// ping checks the server still answers, and that nothing came before.
func (p *stdioProc) ping(id string) {
	p.t.Helper()
	p.send(req(id, "ping", ""))
	assert.Equal(p.t, `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`, p.next(), "nothing is written before the ping's answer")
}

// peakMiB is the server's peak resident memory so far, or -1 where
// /proc does not say.
func (p *stdioProc) peakMiB() int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			require.NoError(p.t, err)
			return kb >> 10
		}
	}
	return -1
}

// exit waits for the process to end within d and returns its exit code.
func (p *stdioProc) exit(d time.Duration) int {
	p.t.Helper()
	select {
	case <-p.exited:
	case <-time.After(d):
		p.t.Fatalf("the server did not exit within %v", d)
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode() // -1 when a signal killed it
	}
	require.NoError(p.t, p.err)
	return 0
}

// blockCall starts the block tool with id and waits until it runs.
func (p *stdioProc) blockCall(id string) {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"block","arguments":{},"_meta":{"progressToken":"b"}}}`)
	assert.Equal(p.t, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"b","progress":1,"message":"running"}}`, p.next())
}

func TestStdioProcessBadLines(t *testing.T) {
	t.Parallel()
	p := startStdioProc(t)
	parseError := `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`

	p.send(`this is not JSON`)
	assert.Equal(t, parseError, p.next())
	p.ping("1")
	p.open()
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":`)
	assert.Equal(t, parseError, p.next(), "a message cut short")
	p.ping("3")

	// Invalid UTF-8 in a string, and in a method name.
	badUTF8 := `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: body is not valid UTF-8"}}`
	p.send("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"a\xffb\"}}}")
	assert.Equal(t, badUTF8, p.next(), "invalid UTF-8 in an argument")
	p.send("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"pi\xc3ng\"}")
	assert.Equal(t, badUTF8, p.next(), "invalid UTF-8 in the method")
	p.ping("6")

	// Responses to requests the server never sent are dropped unanswered.
	p.send(`{"jsonrpc":"2.0","id":"never-sent","result":{}}`)
	p.send(`{"jsonrpc":"2.0","id":424242,"error":{"code":-32000,"message":"no"}}`)
	p.send(`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`)
	p.ping("8")
	p.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still serving"}}}`)
	assert.Equal(t, `{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"still serving"}]}}`, p.next())

	require.NoError(t, p.in.Close())
	assert.Equal(t, 0, p.exit(time.Second))
	assert.NotContains(t, p.stderr.String(), "panic")
}

// A line of 100 MiB with no newline: answered as soon as it crosses the
// limit (4 MiB), read and dropped to its end with bounded memory, and the
// next line served.
func TestStdioProcessHugeLine(t *testing.T) {
	t.Parallel()
	p := startStdioProc(t)
	p.open()
	before := p.peakMiB()
	head := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	_, err := io.WriteString(p.in, head)
	require.NoError(t, err)
	// 5 MiB, past the limit: the answer comes while the line is unfinished.
	for range 5 {
		_, err := p.in.Write(chunk)
		require.NoError(t, err)
	}
	assert.Equal(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: message too large"}}`, p.next())
	// The other 95 MiB are read and dropped.
	for range 95 {
		_, err := p.in.Write(chunk)
		require.NoError(t, err)
	}
	p.send("") // the line's end
	p.ping("2")
	if before >= 0 {
		after := p.peakMiB()
		t.Logf("server's peak resident memory: %d MiB before the line, %d MiB after", before, after)
		// The limit is 4 MiB: a message up to it is kept while it grows
		// (by 1.25x steps, the garbage of each step waiting for a
		// collection); the race detector's shadow memory multiplies all of
		// it. What matters is that nothing scales with the line's 100 MiB.
		bound := 24
		if raceDetector {
			bound = 64
		}
		assert.Less(t, after-before, bound, "the server's peak resident memory grew by %d MiB for a 100 MiB line", after-before)
	}
	require.NoError(t, p.in.Close())
	assert.Equal(t, 0, p.exit(time.Second))
}

// 10,000 requests written without waiting for answers: every one
// answered once, correctly.
func TestStdioProcessPipelined(t *testing.T) {
	t.Parallel()
	p := startStdioProc(t)
	p.open()
	const n = 10000
	go func() {
		w := bufio.NewWriter(p.in)
		for i := range n {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"n%d"}}}`+"\n", i, i)
		}
		_ = w.Flush()
	}()
	seen := make([]bool, n)
	for range n {
		line := p.next()
		var id int
		var text string
		_, err := fmt.Sscanf(line, `{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"n%s`, &id, &text)
		require.NoError(t, err, line)
		require.True(t, id >= 0 && id < n && !seen[id], "id %d answered twice or unknown", id)
		seen[id] = true
		require.Equal(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"n%d"}]}}`, id, id), line)
	}
	p.ping("-1")
	require.NoError(t, p.in.Close())
	assert.Equal(t, 0, p.exit(time.Second))
}

// Standard input closed while calls run: the one that ends by itself
// answers; the one that never does is cancelled shortly before
// ShutdownTimeout and answered; the process exits 0 within the timeout.
func TestStdioProcessStdinClosed(t *testing.T) {
	t.Parallel()
	p := startStdioProc(t)
	p.open()
	p.blockCall("1")
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"text":"done"}}}`)
	start := time.Now()
	require.NoError(t, p.in.Close())
	assert.Equal(t, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"slow done"}]}}`, p.next())
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Request cancelled"}}`, p.next())
	assert.Equal(t, 0, p.exit(stdioChildShutdown))
	took := time.Since(start)
	t.Logf("exited %v after its input closed", took)
	assert.Less(t, took, stdioChildShutdown+500*time.Millisecond)
	assert.Contains(t, p.stderr.String(), "block 1 ended: context canceled")
	assert.Contains(t, p.stderr.String(), "ServeStdio returned nil")
}

// The smoke test of a shell: every line written at once, then the end of
// the input (printf '…' | server). The call is answered, and the process
// exits 0 at once.
func TestStdioProcessPrintf(t *testing.T) {
	t.Parallel()
	p := startStdioProc(t)
	_, err := io.WriteString(p.in, initBody("2025-11-25", "{}")+"\n"+note("notifications/initialized", "")+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"text":"hi"}}}`)
	require.NoError(t, err)
	require.NoError(t, p.in.Close()) // the last line has no newline, as printf's often has none
	assert.Contains(t, p.next(), `"protocolVersion":"2025-11-25"`)
	assert.Equal(t, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"slow hi"}]}}`, p.next())
	assert.Equal(t, 0, p.exit(stdioChildShutdown))
	assert.Contains(t, p.stderr.String(), "ServeStdio returned nil")
}

// Standard output closed by the client: the next write fails (EPIPE, not
// a SIGPIPE death), the server stops reading, cancels what runs and exits 0.
func TestStdioProcessStdoutClosed(t *testing.T) {
	t.Parallel()
	p := startStdioProc(t)
	p.open()
	p.blockCall("1")
	require.NoError(t, p.out.Close())
	p.send(req("2", "ping", "")) // its answer meets the closed pipe
	assert.Equal(t, 0, p.exit(time.Second), "exit status: %v", p.err)
	assert.Contains(t, p.stderr.String(), "block 1 ended: context canceled")
	assert.Contains(t, p.stderr.String(), "ServeStdio returned nil")
	// Its input is no longer read: writing to it fails.
	_, err := io.WriteString(p.in, req("3", "ping", "")+"\n")
	assert.Error(t, err)
}

// SIGTERM: the calls running are cancelled and answered, and the process
// exits 0 within a second.
func TestStdioProcessSIGTERM(t *testing.T) {
	t.Parallel()
	p := startStdioProc(t)
	p.open()
	p.blockCall("1")
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Request cancelled"}}`, p.next())
	assert.Equal(t, 0, p.exit(time.Second))
	assert.Contains(t, p.stderr.String(), "block 1 ended: context canceled")
	assert.Contains(t, p.stderr.String(), "ServeStdio returned nil")
}
