package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"go/format"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README's "Your first server", as a newcomer follows it: its main.go,
// read from README.md between the marked fences, is made a module of its
// own in a temporary folder (go mod init, a replace of saguaro to this
// checkout, go mod tidy), built and run; the official Go SDK's client
// then uses it over HTTP with the token it printed, and over stdio; and
// the README's stdio smoke test runs exactly as written.

// readmeBlock returns the fenced block that follows the line starting
// with marker in the README, without its fences.
func readmeBlock(t *testing.T, readme, marker string) string {
	t.Helper()
	i := strings.Index(readme, "\n"+marker)
	require.GreaterOrEqual(t, i, 0, "README.md has no %q", marker)
	rest := readme[i+1:]
	open := strings.Index(rest, "\n```")
	require.GreaterOrEqual(t, open, 0, "no fenced block after %q", marker)
	rest = rest[open+1:]
	body := rest[strings.Index(rest, "\n")+1:]
	end := strings.Index(body, "\n```")
	require.GreaterOrEqual(t, end, 0, "the block after %q is not closed", marker)
	return body[:end+1]
}

// firstServer is the built first server: its folder (a module) and binary.
type firstServer struct {
	dir, bin, readme string
}

func buildFirstServer(t *testing.T) firstServer {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	readme := string(b)
	src := readmeBlock(t, readme, "<!-- first-server main.go")
	require.Contains(t, src, "package main")
	formatted, err := format.Source([]byte(src))
	require.NoError(t, err)
	require.Equal(t, string(formatted), src, "the README's main.go is not gofmt'ed")

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644))
	// The checkout's go.sum holds every checksum the module needs, so the
	// build needs neither the network nor the checksum database.
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	goCmd := func(args ...string) {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
	}
	goCmd("mod", "init", "hello")
	goCmd("mod", "edit", "-replace", "github.com/saguaro-go/saguaro="+root)
	goCmd("mod", "tidy")
	goCmd("vet", ".")
	goCmd("build", "-o", "hello", ".")
	return firstServer{dir: dir, bin: filepath.Join(dir, "hello"), readme: readme}
}

func TestReadmeFirstServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	fs := buildFirstServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	t.Run("http", func(t *testing.T) {
		cmd := exec.Command(fs.bin, "-addr", "127.0.0.1:0")
		cmd.SysProcAttr = procAttr()
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		stderr := &lockedWriter{w: &bytes.Buffer{}}
		cmd.Stderr = stderr
		require.NoError(t, cmd.Start())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		exited := false
		t.Cleanup(func() {
			if !exited {
				_ = cmd.Process.Kill()
				<-done
			}
		})

		// What it prints is two lines to paste into a shell.
		var mcpURL, token string
		sc := bufio.NewScanner(stdout)
		for (mcpURL == "" || token == "") && sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "export MCP="); ok {
				mcpURL = v
			}
			if v, ok := strings.CutPrefix(sc.Text(), "export TOKEN="); ok {
				token = v
			}
		}
		require.True(t, strings.HasPrefix(mcpURL, "http://127.0.0.1:"), "MCP=%q; stderr:\n%s", mcpURL, stderr)
		require.NotEmpty(t, token)
		go func() { _, _ = io.Copy(io.Discard, stdout) }()
		base := strings.TrimSuffix(mcpURL, "/mcp")

		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		plain := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		// No token: 401 with the challenge that names the metadata, which
		// is served in the open.
		res, err := plain.Post(mcpURL, "application/json", strings.NewReader(`{}`))
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
		assert.Contains(t, res.Header.Get("WWW-Authenticate"), `resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`)
		res, err = plain.Get(base + "/.well-known/oauth-protected-resource/mcp")
		require.NoError(t, err)
		md, _ := io.ReadAll(res.Body)
		res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode)
		assert.Contains(t, string(md), `"resource":"`+mcpURL+`"`)
		res, err = plain.Get(base + "/readyz")
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode)

		// The official Go SDK's client, with the printed token.
		client := gomcp.NewClient(&gomcp.Implementation{Name: "readme", Version: "0"}, nil)
		cs, err := client.Connect(ctx, &gomcp.StreamableClientTransport{Endpoint: mcpURL,
			HTTPClient: &http.Client{Transport: bearer{token: token, base: tr}}}, nil)
		require.NoError(t, err)
		checkFirstServer(ctx, t, cs)
		require.NoError(t, cs.Close())

		// Its request lines are httplog's, with the MCP method and tool.
		assert.Eventually(t, func() bool {
			return strings.Contains(stderr.String(), `"mcp.method":"tools/call"`) && strings.Contains(stderr.String(), `"mcp.tool":"greet"`)
		}, 5*time.Second, 20*time.Millisecond, "no request line with the MCP attributes:\n%s", stderr)

		// SIGTERM: a graceful stop, exit status 0.
		require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		select {
		case err := <-done:
			exited = true
			assert.NoError(t, err, "stderr:\n%s", stderr)
		case <-time.After(15 * time.Second):
			t.Fatalf("the first server did not stop on SIGTERM; stderr:\n%s", stderr)
		}
	})

	t.Run("stdio", func(t *testing.T) {
		client := gomcp.NewClient(&gomcp.Implementation{Name: "readme", Version: "0"}, nil)
		cmd := exec.Command(fs.bin, "-stdio")
		cmd.SysProcAttr = procAttr()
		cs, err := client.Connect(ctx, &gomcp.CommandTransport{Command: cmd}, nil)
		require.NoError(t, err)
		checkFirstServer(ctx, t, cs)
		require.NoError(t, cs.Close())
	})

	t.Run("smoke test", func(t *testing.T) {
		line := strings.TrimSpace(readmeBlock(t, fs.readme, "<!-- stdio smoke test"))
		require.True(t, strings.HasSuffix(line, "| go run . -stdio"), "%s", line)
		cmd := exec.CommandContext(ctx, "bash", "-c", line)
		cmd.Dir = fs.dir
		cmd.Env = append(os.Environ(), "GOWORK=off")
		cmd.SysProcAttr = procAttr()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, "stderr:\n%s", stderr.String())
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		require.Len(t, lines, 2, "%s", out)
		assert.Contains(t, lines[0], `"protocolVersion":"2025-11-25"`)
		assert.Equal(t, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"greeting\":\"Hello, Ann!\"}"}],"structuredContent":{"greeting":"Hello, Ann!"}}}`, lines[1])
	})
}

// checkFirstServer lists and calls the first server's tool and reads its
// resource.
func checkFirstServer(ctx context.Context, t *testing.T, cs *gomcp.ClientSession) {
	t.Helper()
	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 1)
	assert.Equal(t, "greet", tools.Tools[0].Name)
	schema, _ := json.Marshal(tools.Tools[0].InputSchema)
	assert.JSONEq(t, `{"type":"object","properties":{"name":{"type":"string","description":"who to greet"}},"required":["name"],"additionalProperties":false}`, string(schema))

	res, err := cs.CallTool(ctx, &gomcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "Ann"}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	out, _ := json.Marshal(res.StructuredContent)
	assert.JSONEq(t, `{"greeting":"Hello, Ann!"}`, string(out))

	// Arguments the schema refuses are the tool's error, which a model reads.
	res, err = cs.CallTool(ctx, &gomcp.CallToolParams{Name: "greet", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.True(t, res.IsError)

	rr, err := cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: "hello://motd"})
	require.NoError(t, err)
	require.Len(t, rr.Contents, 1)
	assert.Equal(t, "Be kind.", rr.Contents[0].Text)
}
