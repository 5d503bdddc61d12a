package mcp

// Bounded work per request, on every transport: a batch has at most
// MaxBatch messages, one answer at most MaxAnswerBytes whatever its
// handler returns, a batch's answers together as much, and text leaves
// without HTML escaping.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// boundMax is the answer bound the tests set.
const boundMax = 64 << 10

// bigServer serves results of any size: the tool "big" and the prompt
// "big" answer n bytes of text, the resource test://big/{n} n bytes, and
// "notes" a typed result whose text is all '<'. ran counts the calls of
// "big" that ran.
func bigServer(t testing.TB) (*Server, *atomic.Int64) {
	s := NewServer(Implementation{Name: "big", Version: "1"}, nil)
	var ran atomic.Int64
	type nIn struct {
		N int `json:"n"`
	}
	require.NoError(t, s.AddToolRaw(&Tool{Name: "big"}, func(_ context.Context, r *CallToolRequest) (*CallToolResult, error) {
		ran.Add(1)
		var in nIn
		if err := json.Unmarshal(r.Arguments, &in); err != nil {
			return nil, err
		}
		return &CallToolResult{Content: []Content{Text(strings.Repeat("x", in.N))}}, nil
	}))
	type notesOut struct {
		Notes string `json:"notes"`
	}
	require.NoError(t, AddTool(s, &Tool{Name: "notes"}, func(_ context.Context, _ *CallToolRequest, in nIn) (notesOut, error) {
		return notesOut{Notes: strings.Repeat("<", in.N)}, nil
	}))
	require.NoError(t, s.AddResourceTemplate(&ResourceTemplate{URITemplate: "test://big/{n}", Name: "big"},
		func(_ context.Context, r *ReadResourceRequest) (*ReadResourceResult, error) {
			var n int
			_, _ = fmt.Sscanf(r.URI, "test://big/%d", &n)
			return &ReadResourceResult{Contents: []*ResourceContents{{URI: r.URI, Text: strings.Repeat("r", n)}}}, nil
		}))
	require.NoError(t, s.AddPrompt(&Prompt{Name: "big", Arguments: []*PromptArgument{{Name: "n"}}},
		func(_ context.Context, r *GetPromptRequest) (*GetPromptResult, error) {
			var n int
			_, _ = fmt.Sscanf(r.Arguments["n"], "%d", &n)
			return &GetPromptResult{Messages: []*PromptMessage{{Role: RoleUser, Content: Text(strings.Repeat("p", n))}}}, nil
		}))
	return s, &ran
}

// boundTransport sends one request body and returns the raw answer.
type boundTransport struct {
	name string
	send func(t *testing.T, body string) string
}

// boundTransports serves h on every transport with the tests' bounds:
// Streamable HTTP with a 2025-11-25 session and without sessions, and
// stdio with a session.
func boundTransports(t *testing.T, h Handler, logs *syncBuffer) []boundTransport {
	lg := slog.New(slog.NewTextHandler(logs, nil))
	limits := &Limits{MaxAnswerBytes: boundMax, MaxBatch: 8}
	session := startServer(t, &Options{Handler: h, Sessions: &SessionOptions{}, Limits: limits, Logger: lg})
	sid := session.open("2025-11-25", "{}")
	alone := startServer(t, &Options{Handler: h, Limits: limits, Logger: lg})
	stdio := startStdio(t, h, &ConnOptions{MaxAnswerBytes: boundMax, MaxBatch: 8})
	stdio.open("2025-11-25", "{}")
	httpSend := func(ts *tserver, sid string) func(*testing.T, string) string {
		return func(t *testing.T, body string) string {
			return readJSONRaw(t, ts.post(sid, body))
		}
	}
	return []boundTransport{
		{"http session", httpSend(session, sid)},
		{"http stateless", httpSend(alone, "")},
		{"stdio", func(t *testing.T, body string) string {
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			require.NoError(t, json.Unmarshal([]byte(body), &m))
			stdio.send(body)
			line, _ := stdio.reply(string(m.ID))
			return line.raw
		}},
	}
}

// readJSONRaw reads a 200 JSON answer whole.
func readJSONRaw(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	return string(b)
}

func TestAnswerBoundEveryMethodEveryTransport(t *testing.T) {
	t.Parallel()
	s, _ := bigServer(t)
	logs := &syncBuffer{}
	big := boundMax + 1
	for _, tr := range boundTransports(t, s, logs) {
		t.Run(tr.name, func(t *testing.T) {
			// Under the bound, the answer is whole.
			raw := tr.send(t, toolCall("1", "big", `{"n":1000}`))
			assert.Contains(t, raw, strings.Repeat("x", 1000))

			// Over it, a tool answers a tool error that says why.
			raw = tr.send(t, toolCall("2", "big", fmt.Sprintf(`{"n":%d}`, big)))
			var m rpcMsg
			require.NoError(t, json.Unmarshal([]byte(raw), &m), raw)
			require.Nil(t, m.Error, raw)
			assert.True(t, resultIsError(t, m), raw)
			assert.Contains(t, raw, "not sent")
			assert.Less(t, len(raw), 1024)

			// A typed result's structured content is checked once encoded.
			raw = tr.send(t, toolCall("3", "notes", fmt.Sprintf(`{"n":%d}`, boundMax/2+1)))
			assert.Contains(t, raw, "not sent")
			assert.Less(t, len(raw), 1024)

			// Other methods answer -32603.
			for id, body := range map[string]string{
				"4": req("4", "resources/read", fmt.Sprintf(`{"uri":"test://big/%d"}`, big)),
				"5": req("5", "prompts/get", fmt.Sprintf(`{"name":"big","arguments":{"n":"%d"}}`, big)),
			} {
				raw = tr.send(t, body)
				require.NoError(t, json.Unmarshal([]byte(raw), &m), raw)
				require.NotNil(t, m.Error, "request %s: %s", id, raw)
				assert.Equal(t, -32603, m.Error.Code)
				assert.Contains(t, m.Error.Message, "bytes this server sends")
				assert.Less(t, len(raw), 1024)
			}
		})
	}
	out := logs.String()
	assert.Contains(t, out, "tool=big")
	assert.Contains(t, out, "tool=notes")
	assert.Contains(t, out, "resource=test://big/")
	assert.Contains(t, out, "prompt=big")
}

func resultIsError(t *testing.T, m rpcMsg) bool {
	t.Helper()
	var r struct {
		IsError bool `json:"isError"`
	}
	require.NoError(t, json.Unmarshal(m.Result, &r))
	return r.IsError
}

func TestAnswerBoundModern(t *testing.T) {
	t.Parallel()
	s, _ := bigServer(t)
	hs := httptest.NewServer(Controller(&Options{Handler: s, Logger: modQuietLog(), Limits: &Limits{MaxAnswerBytes: boundMax}}))
	t.Cleanup(hs.Close)
	m := &modernServer{t: t, url: hs.URL, srv: s, hc: hs.Client()}

	r := m.do(mreq{method: "tools/call", params: map[string]any{"name": "big", "arguments": map[string]any{"n": boundMax + 1}}})
	require.Equal(t, http.StatusOK, r.status)
	require.Nil(t, r.err)
	assert.Equal(t, true, r.result["isError"])
	assert.Equal(t, "complete", r.result["resultType"])

	r = m.do(mreq{method: "resources/read", params: map[string]any{"uri": fmt.Sprintf("test://big/%d", boundMax+1)}})
	require.NotNil(t, r.err)
	assert.Equal(t, -32603, r.err.Code)

	r = m.do(mreq{method: "tools/call", params: map[string]any{"name": "big", "arguments": map[string]any{"n": 100}}})
	require.Nil(t, r.err)
	assert.Equal(t, nil, r.result["isError"])
}

// The text of a typed result keeps <, > and &: its structured content and
// the text block that repeats it grow by the JSON quoting of the text
// block only, not sixfold.
func TestAnswersAreNotHTMLEscaped(t *testing.T) {
	t.Parallel()
	s, _ := bigServer(t)
	ts := startServer(t, &Options{Handler: s})
	raw := readJSONRaw(t, ts.post("", toolCall("1", "notes", `{"n":4000}`)))
	assert.NotContains(t, raw, `\u003c`)
	assert.Contains(t, raw, strings.Repeat("<", 4000))
	assert.Less(t, len(raw), 2*4000+512, "structured content and its text block, each once")
}

func TestBatchOverMaxBatchRunsNothing(t *testing.T) {
	t.Parallel()
	s, ran := bigServer(t)
	ts := startServer(t, &Options{Handler: s, Limits: &Limits{MaxBatch: 8}})
	stdio := startStdio(t, s, &ConnOptions{MaxBatch: 8})
	stdio.open("2025-03-26", "{}")
	batch := func(n int) string {
		items := make([]string, n)
		for i := range items {
			items[i] = toolCall(fmt.Sprint(i+1), "big", `{"n":10}`)
		}
		return "[" + strings.Join(items, ",") + "]"
	}

	m := readError(t, ts.post("", batch(9), "MCP-Protocol-Version", "2025-03-26"), http.StatusBadRequest, -32600)
	assert.Contains(t, m.Error.Message, "at most 8")
	stdio.send(batch(300))
	line := stdio.next()
	require.NotNil(t, line.Error, line.raw)
	assert.Equal(t, -32600, line.Error.Code)
	assert.Equal(t, "null", string(line.ID))
	assert.Equal(t, int64(0), ran.Load(), "no part of a refused batch runs")

	// At the bound, every request is answered.
	raw := readJSONRaw(t, ts.post("", batch(8), "MCP-Protocol-Version", "2025-03-26"))
	var answers []rpcMsg
	require.NoError(t, json.Unmarshal([]byte(raw), &answers))
	assert.Len(t, answers, 8)
	assert.Equal(t, int64(8), ran.Load())
}

// A batch's answers stay within MaxAnswerBytes together: the answer that
// would pass it is dropped, and the requests after it are not run; every
// request gets an answer.
func TestBatchAnswerBudget(t *testing.T) {
	t.Parallel()
	s, ran := bigServer(t)
	ts := startServer(t, &Options{Handler: s, Limits: &Limits{MaxBatch: 20, MaxAnswerBytes: boundMax}})
	stdio := startStdio(t, s, &ConnOptions{MaxBatch: 20, MaxAnswerBytes: boundMax})
	stdio.open("2025-03-26", "{}")
	items := make([]string, 20)
	for i := range items {
		items[i] = toolCall(fmt.Sprint(i+1), "big", `{"n":10000}`)
	}
	body := "[" + strings.Join(items, ",") + "]"

	check := func(raw string) {
		t.Helper()
		assert.Less(t, len(raw), boundMax+20*300, "the budget and an error per request")
		var answers []rpcMsg
		require.NoError(t, json.Unmarshal([]byte(raw), &answers), raw)
		require.Len(t, answers, 20)
		whole, dropped, notRun := 0, 0, 0
		for i, a := range answers {
			assert.Equal(t, fmt.Sprint(i+1), string(a.ID))
			switch {
			case a.Error == nil:
				whole++
			case strings.Contains(a.Error.Message, "dropped"):
				dropped++
			case strings.Contains(a.Error.Message, "not run"):
				notRun++
			}
		}
		assert.Equal(t, 6, whole, "six answers of ~10 KB fit in 64 KiB")
		assert.Equal(t, 1, dropped)
		assert.Equal(t, 13, notRun)
	}
	check(readJSONRaw(t, ts.post("", body, "MCP-Protocol-Version", "2025-03-26")))
	assert.Equal(t, int64(7), ran.Load(), "the requests after the budget do not run")
	stdio.send(body)
	check(stdio.next().raw)
	assert.Equal(t, int64(14), ran.Load())
}

// What serving an over-bound answer allocates does not grow with what the
// handler returned: the result is refused before it is encoded.
func TestAnswerBoundAllocation(t *testing.T) {
	s := NewServer(Implementation{Name: "big", Version: "1"}, nil)
	huge := &CallToolResult{Content: []Content{Text(strings.Repeat("x", 16<<20))}}
	require.NoError(t, s.AddToolRaw(&Tool{Name: "huge"}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return huge, nil
	}))
	ts := startServer(t, &Options{Handler: s, Limits: &Limits{MaxAnswerBytes: boundMax}})
	body := toolCall("1", "huge", `{}`)
	for range 3 {
		readJSONRaw(t, ts.post("", body))
	}
	var before, after runtime.MemStats
	const n = 20
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		readJSONRaw(t, ts.post("", body))
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / n
	assert.Less(t, per, uint64(256<<10), "a 16 MiB result refused costs %d bytes a request", per)
}

// A batch's answers leave as they are ready: the first is on the wire
// while a later request still runs.
func TestBatchAnswersLeaveAsTheyAreReady(t *testing.T) {
	t.Parallel()
	s := NewServer(Implementation{Name: "gate", Version: "1"}, nil)
	gate := make(chan struct{})
	require.NoError(t, AddTool(s, &Tool{Name: "wait"}, func(ctx context.Context, _ *CallToolRequest, _ struct{}) (string, error) {
		select {
		case <-gate:
			return "released", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}))
	ts := startServer(t, &Options{Handler: s})
	resp := ts.post("", `[`+req("1", "ping", "")+`,`+toolCall("2", "wait", `{}`)+`]`, "MCP-Protocol-Version", "2025-03-26")
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	first := make([]byte, 64)
	n, err := io.ReadAtLeast(resp.Body, first, len(`[{"jsonrpc":"2.0","id":1,"result":{}}`))
	require.NoError(t, err)
	assert.Equal(t, `[{"jsonrpc":"2.0","id":1,"result":{}}`, string(first[:n]), "the ping's answer, before the tool is released")
	close(gate)
	rest, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var answers []rpcMsg
	require.NoError(t, json.Unmarshal(append(first[:n], rest...), &answers))
	require.Len(t, answers, 2)
	assert.Contains(t, string(answers[1].Result), "released")
}
