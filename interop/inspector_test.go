package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exampleTools are the tools the example app serves.
var exampleTools = []string{"add_task", "complete_task", "import_tasks", "list_tasks", "search_tasks", "summarize_tasks"}

// inspector runs the project's .ci/inspector.sh (Node 22 and the pinned
// MCP Inspector, installed on first use) with args, as the README tells a
// developer to, and returns its stdout and stderr.
func inspector(t *testing.T, args ...string) (stdout []byte, stderr string) {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a first install included
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, ".ci", "inspector.sh"), args...)
	cmd.SysProcAttr = procAttr()
	// The Inspector keeps a catalog of servers in the home folder; the
	// test's is its own.
	cmd.Env = append(os.Environ(), "MCP_CATALOG_PATH="+filepath.Join(t.TempDir(), "mcp.json"))
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	out, err := cmd.Output()
	require.NoError(t, err, "inspector.sh %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), out, errBuf.String())
	return out, errBuf.String()
}

// checkInspectorTools asserts the Inspector listed exactly the example
// app's tools and, under --strict, reported no schema problem at all.
func checkInspectorTools(t *testing.T, out []byte, stderr string) {
	t.Helper()
	var list struct {
		Tools []struct {
			Name         string          `json:"name"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(out, &list), "%s", out)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		assert.NotContains(t, string(tl.OutputSchema), `"null"`, "%s: a slice is an array, never null", tl.Name)
	}
	assert.ElementsMatch(t, exampleTools, names)
	for _, line := range strings.Split(stderr, "\n") {
		assert.False(t, strings.HasPrefix(line, "Warning:") || strings.HasPrefix(line, "Error:") ||
			strings.Contains(line, " warnings across") || strings.Contains(line, " errors,"),
			"the Inspector's --strict found a schema problem:\n%s", stderr)
	}
}

// The MCP Inspector's CLI, through the project's own script, lists the
// example app's tools over stdio (starting the app itself) and over HTTP
// (with the app's development token), with --strict and no schema warning,
// and calls a tool.
func TestInspectorCLI(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil && os.Getenv("CI") == "" {
		t.Skip("no npm here: nothing can install the Inspector")
	}
	bin, err := exampleAppBin()
	require.NoError(t, err)

	t.Run("stdio", func(t *testing.T) {
		data := filepath.Join(t.TempDir(), "board.db")
		out, stderr := inspector(t, bin, "-stdio", "-data", data, "--method", "tools/list", "--strict")
		checkInspectorTools(t, out, stderr)

		out, _ = inspector(t, bin, "-stdio", "-data", data, "--method", "tools/call", "--tool-name", "list_tasks")
		var res struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
		}
		require.NoError(t, json.Unmarshal(out, &res), "%s", out)
		assert.JSONEq(t, `{"tasks":[]}`, string(res.StructuredContent), "an empty board lists [] tasks, not null")
	})

	t.Run("http", func(t *testing.T) {
		app := startExampleApp(t)
		auth := "Authorization: Bearer " + app.token
		out, stderr := inspector(t, app.base+"/mcp", "--transport", "http", "--header", auth, "--method", "tools/list", "--strict")
		checkInspectorTools(t, out, stderr)

		out, _ = inspector(t, app.base+"/mcp", "--transport", "http", "--header", auth,
			"--method", "tools/call", "--tool-name", "add_task", "--tool-arg", "title=from the Inspector")
		var res struct {
			StructuredContent struct {
				Title string   `json:"title"`
				Tags  []string `json:"tags"`
			} `json:"structuredContent"`
			IsError bool `json:"isError"`
		}
		require.NoError(t, json.Unmarshal(out, &res), "%s", out)
		assert.False(t, res.IsError, "%s", out)
		assert.Equal(t, "from the Inspector", res.StructuredContent.Title)
		code, body := app.api(t, "GET", "/api/tasks", "")
		assert.Equal(t, 200, code)
		assert.Contains(t, body, "from the Inspector")
	})
}
