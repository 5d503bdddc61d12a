package interop

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBatchAmplificationIsBounded is the batch attack on the real example
// app: 50 tasks whose notes are 4,000 '<' each make list_tasks answer
// about 400 KB, and one 2025-03-26 batch of 300 list_tasks would have
// asked for 300 of them. Such a batch is refused whole (MaxBatch); the
// batches the server allows are answered within MaxAnswerBytes each, one
// answer in memory at a time; and the process's peak resident memory
// stays under 200 MB while 16 clients repeat both, and returns to what
// it was before once the garbage is collected.
func TestBatchAmplificationIsBounded(t *testing.T) {
	data := filepath.Join(t.TempDir(), "board.db")
	app := runExampleApp(t, nil, "-addr", "127.0.0.1:0", "-data", data, "-dev-login", "-debug-addr", "127.0.0.1:0")
	require.NotEmpty(t, app.debug, "the app printed no debug listener")
	notes := strings.Repeat("<", 4000)
	for i := range 50 {
		status, body := app.api(t, http.MethodPost, "/api/tasks", fmt.Sprintf(`{"title":"task %d","notes":%q}`, i, notes))
		require.Equal(t, http.StatusCreated, status, body)
	}
	heapBefore := collect(t, app)
	baseline := procKB(t, app.cmd.Process.Pid, "VmRSS")

	mcpPost := func(session, body string) (*http.Response, error) {
		req, err := http.NewRequest(http.MethodPost, app.base+"/mcp", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+app.token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		return http.DefaultClient.Do(req)
	}
	res, err := mcpPost("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"attacker","version":"1"}}}`)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	session := res.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, session)
	res, err = mcpPost(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.NoError(t, err)
	res.Body.Close()

	batch := func(n int) string {
		items := make([]string, n)
		for i := range items {
			items[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"list_tasks","arguments":{}}}`, i+1)
		}
		return "[" + strings.Join(items, ",") + "]"
	}
	// One answer: not HTML-escaped, so about twice the notes (structured
	// content and the text block), not thirteen times.
	res, err = mcpPost(session, batch(1))
	require.NoError(t, err)
	one, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, "%.300s", one)
	assert.Less(t, len(one), 50*4000*2+64<<10, "list_tasks answers %d bytes", len(one))

	// The batch of the attack is refused whole.
	res, err = mcpPost(session, batch(300))
	require.NoError(t, err)
	refused, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Contains(t, string(refused), `"code":-32600`)

	// Sixteen clients send it and the largest batch allowed, again and
	// again.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var largest int
	var failures []string
	for c := range 16 {
		wg.Go(func() {
			for round := range 4 {
				body := batch(32)
				if (c+round)%2 == 0 {
					body = batch(300)
				}
				res, err := mcpPost(session, body)
				if err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
					return
				}
				n, _ := io.Copy(io.Discard, res.Body)
				res.Body.Close()
				mu.Lock()
				largest = max(largest, int(n))
				if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusBadRequest && res.StatusCode != http.StatusTooManyRequests {
					failures = append(failures, res.Status)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	assert.Empty(t, failures)
	assert.LessOrEqual(t, largest, 8<<20+32*400, "a batch's answer stays within MaxAnswerBytes")

	peak := procKB(t, app.cmd.Process.Pid, "VmHWM")
	t.Logf("resident memory: %d MB before, peak %d MB, largest answer %d bytes", baseline>>10, peak>>10, largest)
	assert.Less(t, peak, 200<<10, "peak resident memory %d MB", peak>>10)

	// Nothing of the attack is kept: after a collection the heap and the
	// resident memory are back where they were (within what a few idle
	// sessions and the runtime's own caches hold).
	heapAfter := collect(t, app)
	after := procKB(t, app.cmd.Process.Pid, "VmRSS")
	t.Logf("after a collection: heap in use %d KB (before %d KB), resident %d MB", heapAfter>>10, heapBefore>>10, after>>10)
	assert.Less(t, heapAfter, heapBefore+8<<20, "heap in use after the attack")
	assert.Less(t, after, baseline+24<<10, "resident memory after the attack: %d MB against %d MB before", after>>10, baseline>>10)

	// The app goes on serving.
	status, body := app.api(t, http.MethodGet, "/api/tasks", "")
	require.Equal(t, http.StatusOK, status)
	var list struct {
		Tasks []json.RawMessage `json:"tasks"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &list))
	assert.Len(t, list.Tasks, 50)
}

// collect forces the app's collections through its debug listener and
// returns the heap in use after them.
func collect(t *testing.T, app *exampleApp) uint64 {
	t.Helper()
	res, err := http.Post(app.debug+"/debug/gc", "", nil)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var st struct {
		HeapInuse uint64 `json:"heap_inuse"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&st))
	return st.HeapInuse
}

// procKB reads a "Vm…: N kB" line of /proc/pid/status.
func procKB(t *testing.T, pid int, key string) int {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", key, pid)
	return 0
}
