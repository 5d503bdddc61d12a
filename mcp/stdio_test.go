package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/saguaro-go/saguaro/mcp/internal/conn"
	"github.com/saguaro-go/saguaro/mcp/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stdioClient drives ServeConn over the stdio framing on pipes, as a
// process that started the server would.
type stdioClient struct {
	t    *testing.T
	in   *io.PipeWriter // the server's stdin
	out  *bufio.Reader  // the server's stdout
	done chan error
	msgs chan rpcLine
}

// rpcLine is one line the server wrote, decoded.
type rpcLine struct {
	raw    string
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func startStdio(t *testing.T, h Handler, opts *ConnOptions) *stdioClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	lg, _ := quietLogger()
	o := &ConnOptions{Logger: lg, MaxMessageBytes: 1 << 16, ShutdownTimeout: time.Second}
	if opts != nil {
		o.Identity, o.QueueSize, o.RequestTimeout, o.Telemetry, o.Scopes = opts.Identity, opts.QueueSize, opts.RequestTimeout, opts.Telemetry, opts.Scopes
		o.MaxBatch, o.MaxAnswerBytes = opts.MaxBatch, opts.MaxAnswerBytes
		if opts.ShutdownTimeout != 0 {
			o.ShutdownTimeout = opts.ShutdownTimeout
		}
	}
	c := &stdioClient{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan error, 1), msgs: make(chan rpcLine, 256)}
	go func() {
		err := ServeConn(context.Background(), h, newTestLines(inR, outW, o.MaxMessageBytes), o)
		outW.Close()
		c.done <- err
	}()
	go func() {
		defer close(c.msgs)
		for {
			line, err := c.out.ReadString('\n')
			if err != nil {
				return
			}
			var m rpcLine
			if json.Unmarshal([]byte(line), &m) != nil {
				m.Method = "!unparsable"
			}
			m.raw = strings.TrimSuffix(line, "\n")
			c.msgs <- m
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			t.Error("ServeConn did not return after its input ended")
		}
		for range c.msgs {
		}
	})
	return c
}

func (c *stdioClient) send(line string) {
	c.t.Helper()
	_, err := io.WriteString(c.in, line+"\n")
	require.NoError(c.t, err)
}

// next returns the next line the server wrote.
func (c *stdioClient) next() rpcLine {
	c.t.Helper()
	select {
	case m, ok := <-c.msgs:
		require.True(c.t, ok, "the server's output ended")
		return m
	case <-time.After(10 * time.Second):
		c.t.Fatal("no line from the server")
	}
	return rpcLine{}
}

// reply reads lines until the response with id, and returns it and the
// lines before it.
func (c *stdioClient) reply(id string) (rpcLine, []rpcLine) {
	c.t.Helper()
	var before []rpcLine
	for {
		m := c.next()
		if string(m.ID) == id && m.Method == "" {
			return m, before
		}
		before = append(before, m)
	}
}

func (c *stdioClient) open(rev, caps string) {
	c.t.Helper()
	c.send(initBody(rev, caps))
	m, _ := c.reply("0")
	require.Nil(c.t, m.Error, m.raw)
	c.send(note("notifications/initialized", ""))
}

func textOf(t *testing.T, m rpcLine) string {
	t.Helper()
	require.Nil(t, m.Error, m.raw)
	var r struct {
		Content []struct{ Text string } `json:"content"`
	}
	require.NoError(t, json.Unmarshal(m.Result, &r))
	require.NotEmpty(t, r.Content, m.raw)
	return r.Content[0].Text
}

func TestStdioSession(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := startStdio(t, f.srv, nil)

	c.send(req(`"x"`, "tools/list", ""))
	m, _ := c.reply(`"x"`)
	require.NotNil(t, m.Error, "a request before initialize")
	assert.Equal(t, -32600, m.Error.Code)
	c.send(req(`"p"`, "ping", ""))
	m, _ = c.reply(`"p"`)
	assert.JSONEq(t, `{}`, string(m.Result), "ping needs no session")

	c.open("2025-11-25", clientCapsAll)
	c.send(initBody("2025-11-25", "{}"))
	m, _ = c.reply("0")
	require.NotNil(t, m.Error)
	assert.Equal(t, -32600, m.Error.Code, "a second initialize")

	// Progress and logs of a call come before its result, in order.
	c.send(toolCallToken("2", "progress", `{"n":3}`, `"tok"`))
	m, before := c.reply("2")
	assert.Equal(t, "done tok", textOf(t, m))
	require.Len(t, before, 3)
	for i, n := range before {
		assert.Equal(t, "notifications/progress", n.Method)
		assert.Contains(t, string(n.Params), `"progressToken":"tok","progress":`+string(rune('1'+i)))
	}
	c.send(req("3", "logging/setLevel", `{"level":"warning"}`))
	c.reply("3")
	c.send(toolCall("4", "logs", `{"n":2}`))
	m, before = c.reply("4")
	assert.Equal(t, "logged 2", textOf(t, m))
	for _, n := range before {
		assert.Contains(t, n.raw, `"level":"warning"`, "below the level set nothing is sent")
	}

	// A panicking tool answers InternalError, without the panic's text.
	c.send(toolCall("5", "panic", "{}"))
	m, _ = c.reply("5")
	require.NotNil(t, m.Error)
	assert.Equal(t, -32603, m.Error.Code)
	assert.NotContains(t, m.raw, "secret-panic-detail")

	// Garbage, a batch outside 2025-03-26 and an oversized line are
	// answered with id null; the session goes on.
	c.send(`{"jsonrpc":"2.0",`)
	m, _ = c.reply("null")
	assert.Equal(t, -32700, m.Error.Code)
	c.send(`[` + req("6", "ping", "") + `]`)
	m, _ = c.reply("null")
	assert.Equal(t, -32600, m.Error.Code)
	c.send(toolCall("7", "echo", `{"text":"`+strings.Repeat("x", 1<<17)+`"}`))
	m, _ = c.reply("null")
	assert.Equal(t, -32600, m.Error.Code)
	assert.Contains(t, m.Error.Message, "too large")
	c.send(toolCall("8", "echo", `{"text":"still here"}`))
	m, _ = c.reply("8")
	assert.Equal(t, "still here", textOf(t, m))
}

func TestStdioConcurrencyAndCancellation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := startStdio(t, f.srv, nil)
	c.open("2025-11-25", "{}")

	c.send(toolCall("10", "block", "{}"))
	require.Equal(t, "10", <-f.started)
	// A blocked tool does not hold up ping.
	c.send(req("11", "ping", ""))
	m, _ := c.reply("11")
	assert.JSONEq(t, `{}`, string(m.Result))
	// Cancelled, it ends, and gets no response.
	c.send(note("notifications/cancelled", `{"requestId":10,"reason":"enough"}`))
	c.send(req("12", "ping", ""))
	m, before := c.reply("12")
	assert.JSONEq(t, `{}`, string(m.Result))
	for _, b := range before {
		assert.NotEqual(t, "10", string(b.ID), "a cancelled request got a response: %s", b.raw)
	}
}

// The end of the input: the calls running finish and their answers are
// written; what still runs shortly before ShutdownTimeout is cancelled
// and answered; a server→client request fails at once, its answer being
// unable to arrive; ServeConn returns nil.
func TestStdioInputEnd(t *testing.T) {
	t.Parallel()
	// The margin between the cancellation and the timeout is a tenth of
	// it: 200 ms, room enough on a loaded machine for the answer to go out.
	const timeout = 2 * time.Second
	f := newFixture(t)
	c := startStdio(t, f.srv, &ConnOptions{ShutdownTimeout: timeout})
	c.open("2025-11-25", clientCapsAll)

	c.send(toolCall("1", "gated", "{}"))
	require.Equal(t, "notifications/message", c.next().Method, "gated runs")
	c.send(toolCall("2", "block", "{}"))
	require.Equal(t, "2", <-f.started)
	c.send(toolCall("3", "sample", `{"text":"hi"}`))
	require.Equal(t, "sampling/createMessage", c.next().Method)
	start := time.Now()
	require.NoError(t, c.in.Close())

	// The sampling request's answer can no longer come: the tool's error.
	m, _ := c.reply("3")
	require.Nil(t, m.Error, m.raw)
	assert.Contains(t, string(m.Result), `"isError":true`, m.raw)
	// gated finishes after the input ended, and answers.
	f.gate <- struct{}{}
	m, _ = c.reply("1")
	assert.Equal(t, "gated done", textOf(t, m))
	// block ignores nothing, but never ends by itself: cancelled a tenth
	// of the timeout before it ends, it is answered "Request cancelled".
	m, _ = c.reply("2")
	require.NotNil(t, m.Error, m.raw)
	assert.Equal(t, "Request cancelled", m.Error.Message)
	took := time.Since(start)
	assert.GreaterOrEqual(t, took, timeout-timeout/10-50*time.Millisecond, "block ran until shortly before the timeout")
	select {
	case err := <-c.done:
		assert.NoError(t, err)
		c.done <- err // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatal("the end of the input did not end the session")
	}
	assert.Less(t, time.Since(start), timeout+500*time.Millisecond)
}

// The end of the input with nothing running ends the session at once.
func TestStdioInputEndIdle(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := startStdio(t, f.srv, &ConnOptions{ShutdownTimeout: 10 * time.Second})
	c.open("2025-11-25", "{}")
	c.send(toolCall("1", "echo", `{"text":"last words"}`))
	start := time.Now()
	require.NoError(t, c.in.Close())
	m, _ := c.reply("1")
	assert.Equal(t, "last words", textOf(t, m))
	select {
	case err := <-c.done:
		assert.NoError(t, err)
		c.done <- err
	case <-time.After(5 * time.Second):
		t.Fatal("the end of the input did not end the session")
	}
	assert.Less(t, time.Since(start), time.Second, "nothing ran: no wait for the timeout")
}

func TestStdioServerRequests(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := startStdio(t, f.srv, nil)
	c.open("2025-11-25", clientCapsAll)
	c.send(toolCall("20", "sample", `{"text":"hi"}`))
	r := c.next()
	require.Equal(t, "sampling/createMessage", r.Method, r.raw)
	c.send(`{"jsonrpc":"2.0","id":` + string(r.ID) + `,"result":{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m"}}`)
	m, _ := c.reply("20")
	assert.Equal(t, "sampled hello by m", textOf(t, m))

	// The client's refusal is the tool's error, not the call's.
	c.send(toolCall("21", "elicit", `{"text":"name?"}`))
	r = c.next()
	require.Equal(t, "elicitation/create", r.Method)
	c.send(`{"jsonrpc":"2.0","id":` + string(r.ID) + `,"error":{"code":-1,"message":"no"}}`)
	m, _ = c.reply("21")
	require.Nil(t, m.Error)
	assert.Contains(t, string(m.Result), `"isError":true`)
}

func TestStdioStatefulTurns(t *testing.T) {
	t.Parallel()
	h := newSlowHandler()
	c := startStdio(t, h, &ConnOptions{QueueSize: 1})
	c.open("2025-11-25", "{}")
	c.send(req("30", "logging/setLevel", `{"level":"info"}`))
	require.Equal(t, "30", <-h.entered)
	c.send(req("31", "logging/setLevel", `{"level":"info"}`))
	time.Sleep(50 * time.Millisecond) // 31 waits for the turn
	c.send(req("32", "logging/setLevel", `{"level":"info"}`))
	m, _ := c.reply("32")
	require.NotNil(t, m.Error, "over the queue")
	assert.Contains(t, m.Error.Message, "Server overloaded")
	h.release <- struct{}{}
	c.reply("30")
	require.Equal(t, "31", <-h.entered)
	h.release <- struct{}{}
	c.reply("31")
	c.send(completeBody("33", "x"))
	m, _ = c.reply("33")
	assert.Contains(t, string(m.Result), `"values":["2"]`, "both stateful calls kept their state")
}

func TestStdioBatchAndChanges(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := startStdio(t, f.srv, nil)
	c.open("2025-03-26", "{}")
	c.send(`[` + req("40", "ping", "") + `,` + note("notifications/progress", `{"progressToken":1,"progress":1}`) + `,` + toolCall("41", "echo", `{"text":"b"}`) + `]`)
	m := c.next()
	require.True(t, strings.HasPrefix(m.raw, "["), m.raw)
	var batch []rpcLine
	require.NoError(t, json.Unmarshal([]byte(m.raw), &batch))
	require.Len(t, batch, 2)
	assert.Equal(t, "40", string(batch[0].ID))
	assert.Equal(t, "41", string(batch[1].ID))

	c.send(req("42", "resources/subscribe", `{"uri":"test://watched"}`))
	c.reply("42")
	f.srv.ResourceUpdated("test://other")
	f.srv.ResourceUpdated("test://watched")
	require.NoError(t, AddTool(f.srv, &Tool{Name: "late"}, func(context.Context, *CallToolRequest, fixtureArgs) (string, error) { return "", nil }))
	n := c.next()
	assert.Equal(t, "notifications/resources/updated", n.Method, "only the subscribed resource")
	assert.JSONEq(t, `{"uri":"test://watched"}`, string(n.Params))
	assert.Equal(t, "notifications/tools/list_changed", c.next().Method)
}

func TestStdioModern(t *testing.T) {
	t.Parallel()
	s, _, _ := modernFixture(t)
	c := startStdio(t, s, &ConnOptions{Identity: "ann"})
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`

	c.send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`)
	m, _ := c.reply("1")
	require.Nil(t, m.Error, m.raw)
	assert.Contains(t, string(m.Result), `"resultType":"complete"`)

	// A handler's elicitation is an input_required result; the repeated
	// request with the answer and the state completes.
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask",` + meta + `}}`)
	m, _ = c.reply("2")
	require.Nil(t, m.Error, m.raw)
	var ir struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
	}
	require.NoError(t, json.Unmarshal(m.Result, &ir))
	require.Equal(t, "input_required", ir.ResultType, m.raw)
	var key string
	for k := range ir.InputRequests {
		key = k
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask","inputResponses":{"` + key +
		`":{"action":"accept","content":{"name":"Stdio"}}},"requestState":"` + ir.RequestState + `",` + meta + `}}`)
	m, _ = c.reply("3")
	require.Nil(t, m.Error, m.raw)
	assert.Contains(t, string(m.Result), "hello Std")

	// Errors of the revision: an unknown version, missing _meta parts.
	c.send(`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	m, _ = c.reply("4")
	assert.Equal(t, -32022, m.Error.Code)
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	m, _ = c.reply("5")
	assert.Equal(t, -32602, m.Error.Code)
	c.send(`{"jsonrpc":"2.0","id":6,"method":"ping","params":{` + meta + `}}`)
	m, _ = c.reply("6")
	assert.Equal(t, -32601, m.Error.Code, "ping is not a 2026-07-28 method")

	// subscriptions/listen: the acknowledgement, the changes asked for,
	// every one stamped; cancelled, it stops without an answer.
	c.send(`{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + meta + `}}`)
	ack := c.next()
	require.Equal(t, "notifications/subscriptions/acknowledged", ack.Method, ack.raw)
	assert.Contains(t, string(ack.Params), `"io.modelcontextprotocol/subscriptionId":"sub"`)
	require.NoError(t, AddTool(s, &Tool{Name: "late"}, func(context.Context, *CallToolRequest, struct{}) (string, error) { return "", nil }))
	ch := c.next()
	assert.Equal(t, "notifications/tools/list_changed", ch.Method)
	assert.Contains(t, string(ch.Params), `"io.modelcontextprotocol/subscriptionId":"sub"`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sub",` + meta + `}}`)
	c.send(`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{` + meta + `}}`)
	m, before := c.reply("7")
	require.Nil(t, m.Error)
	for _, b := range before {
		assert.NotEqual(t, `"sub"`, string(b.ID), "a cancelled subscription got a response")
	}
}

// newTestLines is the stdio framing over pipes.
func newTestLines(r io.Reader, w io.Writer, max int) Conn { return conn.NewLines(r, w, max) }

// A connection that fails to write ends the session with its error.
func TestServeConnWriteError(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	in := make(chan []byte, 1)
	in <- []byte(initBody("2025-11-25", "{}"))
	lg, _ := quietLogger()
	err := ServeConn(context.Background(), f.srv, &failingConn{in: in}, &ConnOptions{Logger: lg})
	require.Error(t, err)
	assert.True(t, errors.Is(err, errWriteFailed), "%v", err)
}

var errWriteFailed = errors.New("write failed")

type failingConn struct{ in chan []byte }

func (c *failingConn) Read(ctx context.Context) ([]byte, error) {
	select {
	case b := <-c.in:
		return b, nil
	case <-time.After(200 * time.Millisecond):
		return nil, io.EOF
	}
}

func (c *failingConn) Write(context.Context, []byte, jsonrpc.ID) error { return errWriteFailed }

// ServeConn returns ShutdownTimeout after ctx ends, whether a handler
// ignores its context or the client stopped reading its output.
func TestServeConnShutdownIsBounded(t *testing.T) {
	t.Parallel()
	const timeout = 200 * time.Millisecond
	run := func(t *testing.T, h Handler, out io.Writer) (time.Duration, error) {
		inR, inW := io.Pipe()
		defer inW.Close()
		ctx, cancel := context.WithCancel(context.Background())
		lg, _ := quietLogger()
		done := make(chan error, 1)
		go func() {
			done <- ServeConn(ctx, h, newTestLines(inR, out, 1<<16), &ConnOptions{Logger: lg, ShutdownTimeout: timeout})
		}()
		_, err := io.WriteString(inW, initBody("2025-11-25", "{}")+"\n"+toolCall("1", "stuck", `{}`)+"\n")
		require.NoError(t, err)
		time.Sleep(100 * time.Millisecond) // the call runs, or its answer waits for the client
		start := time.Now()
		cancel()
		select {
		case err := <-done:
			return time.Since(start), err
		case <-time.After(10 * time.Second):
			t.Fatal("ServeConn did not return after its context ended")
			return 0, nil
		}
	}

	t.Run("handler ignores its context", func(t *testing.T) {
		srv := NewServer(Implementation{Name: "stuck", Version: "1"}, nil)
		release := make(chan struct{})
		require.NoError(t, AddTool(srv, &Tool{Name: "stuck"}, func(context.Context, *CallToolRequest, struct{}) (string, error) {
			<-release
			return "late", nil
		}))
		took, err := run(t, srv, io.Discard)
		close(release)
		require.ErrorIs(t, err, ErrCallsRunning)
		assert.GreaterOrEqual(t, took, timeout)
		assert.Less(t, took, timeout+time.Second)
	})
	t.Run("client stopped reading", func(t *testing.T) {
		srv := NewServer(Implementation{Name: "stuck", Version: "1"}, nil)
		require.NoError(t, AddTool(srv, &Tool{Name: "stuck"}, func(context.Context, *CallToolRequest, struct{}) (string, error) {
			return strings.Repeat("x", 1<<17), nil // more than the framing buffers
		}))
		outR, outW := io.Pipe() // nobody reads outR
		took, err := run(t, srv, outW)
		outR.Close() // the blocked write fails, and its goroutine ends
		require.ErrorIs(t, err, ErrCallsRunning)
		assert.Less(t, took, timeout+time.Second)
	})
}

// A subscriptions/listen open when the input ends ends with it: nothing
// waits for the timeout.
func TestStdioInputEndListen(t *testing.T) {
	t.Parallel()
	s, _, _ := modernFixture(t)
	c := startStdio(t, s, &ConnOptions{ShutdownTimeout: 10 * time.Second})
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	c.send(`{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + meta + `}}`)
	require.Equal(t, "notifications/subscriptions/acknowledged", c.next().Method)
	start := time.Now()
	require.NoError(t, c.in.Close())
	select {
	case err := <-c.done:
		assert.NoError(t, err)
		c.done <- err
	case <-time.After(5 * time.Second):
		t.Fatal("the end of the input did not end the session")
	}
	assert.Less(t, time.Since(start), time.Second, "the listen stream ended with the input")
}
