//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/example_app/database"
	"github.com/saguaro-go/saguaro/example_app/database/dbtest"
	"github.com/saguaro-go/saguaro/example_app/oauth"
	"github.com/saguaro-go/saguaro/mcpredis/redistest"
	"github.com/saguaro-go/saguaro/sse"
)

// The app's life cycle as an orchestrator drives it: the real binary,
// started as a process, sent SIGTERM, with its stores up, down or hung.

// proc is one running example_app.
type proc struct {
	cmd    *exec.Cmd
	url    string // the replica's own base URL
	token  string
	done   chan struct{}
	err    error // the exit status, once done is closed
	stderr *lockedBuffer
}

// lockedBuffer collects log output written from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// events is the log without its request lines.
func (l *lockedBuffer) events() string {
	var out []string
	for line := range strings.Lines(l.String()) {
		if !strings.Contains(line, ` msg="GET `) && !strings.Contains(line, ` msg="POST `) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}

// start runs the app with args (and -addr 127.0.0.1:0 -dev-login), env
// added to the test's, and waits for its token.
func start(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	if testing.Short() {
		t.Skip("starts processes")
	}
	bin, err := exampleBin()
	require.NoError(t, err)
	p := &proc{done: make(chan struct{}), stderr: &lockedBuffer{}}
	p.cmd = exec.Command(bin, append([]string{"-addr", "127.0.0.1:0", "-dev-login"}, args...)...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p.cmd.Stderr = p.stderr
	stdout, err := p.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	ready := make(chan struct{})
	var listening string
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, "example_app replica on "); ok {
				p.url, _, _ = strings.Cut(rest, ",")
			}
			if rest, ok := strings.CutPrefix(line, "example_app listening on "); ok {
				listening, _, _ = strings.Cut(rest, " ")
			}
			if tok, ok := strings.CutPrefix(line, "export TOKEN="); ok {
				p.token = tok
				close(ready)
			}
		}
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	select {
	case <-ready:
	case <-p.done:
		t.Fatalf("example_app exited: %v\n%s", p.err, p.stderr)
	case <-time.After(60 * time.Second):
		t.Fatalf("example_app printed no token\n%s", p.stderr)
	}
	if p.url == "" {
		p.url = listening
	}
	return p
}

// terminate sends SIGTERM and returns how long the process took to exit,
// and its exit code; the test fails if it outlives limit.
func (p *proc) terminate(t *testing.T, limit time.Duration) (time.Duration, int) {
	t.Helper()
	begin := time.Now()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	return p.wait(t, begin, limit)
}

// wait waits for the process signalled at begin to exit, as terminate.
func (p *proc) wait(t *testing.T, begin time.Time, limit time.Duration) (time.Duration, int) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(limit - time.Since(begin)):
		t.Fatalf("example_app still ran %v after SIGTERM\n%s", limit, p.stderr)
	}
	took := time.Since(begin)
	code := 0
	var exit *exec.ExitError
	if errors.As(p.err, &exit) {
		require.True(t, exit.Exited(), "ended by a signal: %v\n%s", p.err, p.stderr)
		code = exit.ExitCode()
	} else {
		require.NoError(t, p.err)
	}
	return took, code
}

// client speaks MCP to the replicas. A session is bound to its caller,
// and each caller may hold only so many (mcp.Limits.Sessions): session i
// is the caller of tokens[i/perToken]'s.
type client struct {
	hc       *http.Client
	tokens   []string
	perToken int
}

func newClient(tokens ...string) *client {
	return &client{tokens: tokens, perToken: 200, hc: &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 32}}}
}

// token is the token of session i's caller.
func (c *client) token(i int) string { return c.tokens[i/c.perToken%len(c.tokens)] }

// callerTokens mints n tokens of n users ("load-1", …) with the signing
// key the replicas share in the database dbURL, for tokens' audience
// base+"/mcp".
func callerTokens(t *testing.T, dbURL, base string, n int) []string {
	t.Helper()
	ctx := context.Background()
	db, err := database.Open(ctx, dbURL)
	require.NoError(t, err)
	defer db.Close()
	srv, err := oauth.New(ctx, db, oauth.Options{Issuer: base, Resource: base + "/mcp", Scopes: []string{scopeRead, scopeWrite}})
	require.NoError(t, err)
	defer srv.Close()
	tokens := make([]string, n)
	for i := range tokens {
		tokens[i], err = srv.DevToken(ctx, fmt.Sprintf("load-%d", i+1), scopeRead+" "+scopeWrite, time.Hour)
		require.NoError(t, err)
	}
	return tokens
}

// post sends one JSON-RPC message to base's MCP endpoint as session i's
// caller.
func (c *client) post(ctx context.Context, i int, base, sid, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token(i))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	return c.hc.Do(req)
}

// open starts session i on base with the client's capabilities caps.
func (c *client) open(ctx context.Context, i int, base, caps string) (string, error) {
	res, err := c.post(ctx, i, base, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",`+
		`"capabilities":`+caps+`,"clientInfo":{"name":"lifecycle","version":"1"}}}`)
	if err != nil {
		return "", err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	sid := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != http.StatusOK || sid == "" {
		return "", fmt.Errorf("initialize: %d", res.StatusCode)
	}
	res, err = c.post(ctx, i, base, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		return "", err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusAccepted {
		return "", fmt.Errorf("notifications/initialized: %d", res.StatusCode)
	}
	return sid, nil
}

// openMany opens n sessions on base, 16 at a time.
func (c *client) openMany(t *testing.T, base string, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ids := make([]string, n)
	work := make(chan int)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range work {
				sid, err := c.open(ctx, i, base, "{}")
				if err != nil {
					errs <- err
					return
				}
				ids[i] = sid
			}
		})
	}
	begin := time.Now()
feed:
	for i := range n {
		select {
		case work <- i:
		case err := <-errs:
			close(work)
			wg.Wait()
			t.Fatalf("opening session %d: %v", i, err)
			break feed
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatalf("opening sessions: %v", err)
	default:
	}
	t.Logf("opened %d sessions in %v", n, time.Since(begin).Round(time.Millisecond))
	return ids
}

// status GETs base+path and returns the status (0 when it cannot connect).
func status(base, path string) int {
	hc := &http.Client{Timeout: 3 * time.Second}
	res, err := hc.Get(base + path)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// balancerURL is the replicas' shared base URL (the tokens' audience);
// nothing listens there: the tests talk to each replica.
const balancerURL = "http://127.0.0.1:1"

// clusterArgs is what the replicas of one test share: the load balancer's
// URL, PostgreSQL, and Redis with a prefix of the test's own.
func clusterArgs(t *testing.T, redisURL string) (env, args []string, dbURL string) {
	prefix := redistest.Prefix(t)
	dbURL = dbtest.URL(t)
	return []string{baseURLEnv + "=" + balancerURL},
		[]string{"-db", dbURL, "-redis", redisURL, "-redis-prefix", prefix}, dbURL
}

// TestSIGTERMHandsSessionsOver: a replica holding 10,000 sessions exits
// within its shutdown timeout on SIGTERM, with status 0, and the other
// replica serves those sessions afterwards (it takes each over at its
// next request).
func TestSIGTERMHandsSessionsOver(t *testing.T) {
	const sessions = 10_000
	rs := redistest.Start(t)
	env, args, dbURL := clusterArgs(t, rs.URL())
	args = append(args, "-drain-delay", "200ms", "-shutdown-timeout", "10s")
	a := start(t, env, args...)
	b := start(t, env, args...)
	c := newClient(callerTokens(t, dbURL, balancerURL, sessions/200)...)
	ids := c.openMany(t, a.url, sessions)

	took, code := a.terminate(t, 15*time.Second)
	t.Logf("SIGTERM with %d sessions: exited %d after %v", sessions, code, took.Round(time.Millisecond))
	assert.Equal(t, 0, code, "exit status\n%s", a.stderr)
	assert.Less(t, took, 10*time.Second)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sample := 500
	for _, i := range rand.Perm(sessions)[:sample] {
		res, err := c.post(ctx, i, b.url, ids[i], `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_tasks","arguments":{}}}`)
		require.NoError(t, err)
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, "session %s on the other replica: %s", ids[i], body)
		require.Contains(t, string(body), `"result"`, "%s", body)
	}
}

// TestSIGTERMWithRedisDown: with Redis stopped, or hung (it accepts
// connections and answers nothing), a replica holding 5,000 sessions
// still exits within its shutdown timeout; it reports, by its status,
// that the sessions were not released.
func TestSIGTERMWithRedisDown(t *testing.T) {
	const sessions = 5_000
	for _, how := range []string{"stopped", "hung"} {
		t.Run(how, func(t *testing.T) {
			rs := redistest.Start(t)
			env, args, dbURL := clusterArgs(t, rs.URL())
			a := start(t, env, append(args, "-drain-delay", "100ms", "-shutdown-timeout", "5s")...)
			newClient(callerTokens(t, dbURL, balancerURL, sessions/200)...).openMany(t, a.url, sessions)
			if how == "stopped" {
				rs.Stop()
			} else {
				rs.Pause()
			}
			took, code := a.terminate(t, 10*time.Second)
			t.Logf("SIGTERM with Redis %s and %d sessions: exited %d after %v; its log:\n%s", how, sessions, code, took.Round(time.Millisecond), a.stderr.events())
			assert.Less(t, took, 5*time.Second+500*time.Millisecond, "%s", a.stderr)
			assert.Equal(t, 1, code, "the sessions could not be released\n%s", a.stderr)
			assert.Contains(t, a.stderr.String(), "shutdown: MCP sessions")
		})
	}
}

// TestSIGTERMDrainsCalls: at SIGTERM /readyz answers 503 at once while
// the listener still accepts; a call in flight whose client answers its
// sampling request during the shutdown finishes with its result; one
// whose client never answers is cancelled at the deadline and answered
// "Request cancelled", and the exit status says so.
func TestSIGTERMDrainsCalls(t *testing.T) {
	a := start(t, nil, "-data", filepath.Join(t.TempDir(), "board.db"), "-drain-delay", "500ms", "-shutdown-timeout", "4s")
	c := newClient(a.token)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.Equal(t, http.StatusOK, status(a.url, "/readyz"))

	// Two summaries, each waiting for the client's model (sampling).
	summarize := func() (sid string, rd *sse.Reader, body io.Closer, sampling json.RawMessage) {
		sid, err := c.open(ctx, 0, a.url, `{"sampling":{}}`)
		require.NoError(t, err)
		res, err := c.post(ctx, 0, a.url, sid, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"summarize_tasks","arguments":{}}}`)
		require.NoError(t, err)
		require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
		rd = sse.NewReader(res.Body)
		for {
			ev, err := rd.Next()
			require.NoError(t, err)
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if len(ev.Data) > 0 && json.Unmarshal(ev.Data, &m) == nil && m.Method == "sampling/createMessage" {
				return sid, rd, res.Body, m.ID
			}
		}
	}
	answered, answeredRd, answeredBody, samplingID := summarize()
	defer answeredBody.Close()
	_, stuckRd, stuckBody, _ := summarize()
	defer stuckBody.Close()

	flipped := time.Now()
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGTERM))
	require.Eventually(t, func() bool { return status(a.url, "/readyz") == http.StatusServiceUnavailable },
		2*time.Second, 10*time.Millisecond, "/readyz does not turn 503")
	t.Logf("/readyz 503 %v after SIGTERM", time.Since(flipped).Round(time.Millisecond))
	assert.Equal(t, http.StatusOK, status(a.url, "/healthz"), "liveness stays 200 while draining")

	// The client answers the first call's sampling request now.
	res, err := c.post(ctx, 0, a.url, answered, `{"jsonrpc":"2.0","id":`+string(samplingID)+`,"result":{"role":"assistant",`+
		`"content":{"type":"text","text":"All quiet."},"model":"test-model"}}`)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusAccepted, res.StatusCode)
	last := func(rd *sse.Reader) string {
		var data string
		for {
			ev, err := rd.Next()
			if err != nil {
				return data
			}
			if len(ev.Data) > 0 {
				data = string(ev.Data)
			}
		}
	}
	assert.Contains(t, last(answeredRd), `All quiet.`, "the drained call's result")
	t.Logf("drained call answered %v after SIGTERM", time.Since(flipped).Round(time.Millisecond))
	final := last(stuckRd)
	t.Logf("cut call answered %v after SIGTERM: %s", time.Since(flipped).Round(time.Millisecond), final)
	assert.Contains(t, final, `"code":-32603`, "the cut call's answer")
	assert.Contains(t, final, `Request cancelled`)

	took, code := a.wait(t, flipped, 10*time.Second)
	t.Logf("stderr:\n%s", a.stderr)
	assert.Less(t, took, 4*time.Second+500*time.Millisecond)
	assert.Equal(t, 1, code, "a call was cut\n%s", a.stderr)
	assert.Equal(t, 0, status(a.url, "/healthz"), "the listener is closed")
}

// TestReadyzFollowsRedis: the first /readyz after Redis went away,
// stopped or frozen, answers 503 within a second, and 200 again once it
// is back; /healthz stays 200 throughout.
func TestReadyzFollowsRedis(t *testing.T) {
	rs := redistest.Start(t)
	env, args, _ := clusterArgs(t, rs.URL())
	a := start(t, env, args...)
	require.Equal(t, http.StatusOK, status(a.url, "/readyz"))
	// The first probe after Redis went away already says 503, within the
	// probe's second.
	unready := func(what string) {
		t.Helper()
		asked := time.Now()
		code := status(a.url, "/readyz")
		took := time.Since(asked)
		t.Logf("/readyz %d in %v, asked as Redis was %s", code, took.Round(time.Millisecond), what)
		assert.Equal(t, http.StatusServiceUnavailable, code, "Redis %s", what)
		assert.Less(t, took, time.Second+300*time.Millisecond, "Redis %s", what)
		assert.Equal(t, http.StatusOK, status(a.url, "/healthz"))
	}
	ready := func() {
		t.Helper()
		require.Eventually(t, func() bool { return status(a.url, "/readyz") == http.StatusOK },
			10*time.Second, 20*time.Millisecond, "/readyz does not come back")
	}

	rs.Stop()
	unready("stopped")
	rs.Restart()
	ready()
	rs.Pause() // frozen: it answers nothing, and the probe's second decides
	unready("frozen")
	rs.Resume()
	ready()
}
