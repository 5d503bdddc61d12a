package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A 2026-07-28 client over real HTTP, against a Server with the tools the
// tests need.

type modernServer struct {
	t       *testing.T
	url     string
	srv     *Server
	hc      *http.Client
	started chan struct{} // test_block began
	ended   chan error    // test_block's context ended
}

func modernFixture(t *testing.T) (*Server, chan struct{}, chan error) {
	return modernFixtureWith(t, &ServerOptions{Tasks: &TaskOptions{}})
}

// modernFixtureWith is modernFixture on a Server with so.
func modernFixtureWith(t *testing.T, so *ServerOptions) (*Server, chan struct{}, chan error) {
	s := NewServer(Implementation{Name: "modern-test", Version: "1.0"}, so)
	started, ended := make(chan struct{}, 4), make(chan error, 4)
	must := func(err error) {
		t.Helper()
		require.NoError(t, err)
	}
	nameSchema := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)
	ask := func(ctx context.Context, r *Request, key string) (string, error) {
		res, err := r.Elicit(WithInputKey(ctx, key), &ElicitParams{Message: key + "?", RequestedSchema: nameSchema})
		if err != nil {
			return "", err
		}
		v, _ := res.Content["name"].(string)
		return v, nil
	}
	must(AddTool(s, &Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{` +
		`"region":{"type":"string","x-mcp-header":"Region"},"priority":{"type":"integer","x-mcp-header":"Priority"},` +
		`"verbose":{"type":"boolean","x-mcp-header":"Verbose"},"opts":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}}}}`)},
		func(_ context.Context, _ *CallToolRequest, in map[string]any) (string, error) {
			b, _ := json.Marshal(in)
			return string(b), nil
		}))
	must(AddTool(s, &Tool{Name: "ask"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		n, err := ask(ctx, &req.Request, "name")
		return "hello " + n, err
	}))
	must(AddTool(s, &Tool{Name: "ask_twice"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		a, err := ask(ctx, &req.Request, "first")
		if err != nil {
			return "", err
		}
		b, err := ask(ctx, &req.Request, "second")
		return a + "+" + b, err
	}))
	must(AddTool(s, &Tool{Name: "ask_many"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		a, err1 := ask(ctx, &req.Request, "a")
		b, err2 := ask(ctx, &req.Request, "b")
		roots, err3 := req.ListRoots(WithInputKey(ctx, "roots"))
		if err := errors.Join(err1, err2, err3); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %s %d", a, b, len(roots.Roots)), nil
	}))
	must(AddTool(s, &Tool{Name: "needs_sampling"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		_, err := req.CreateMessage(ctx, &CreateMessageParams{MaxTokens: 1})
		return "sampled", err
	}))
	must(AddTool(s, &Tool{Name: "test_block"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		_ = req.Progress(ctx, 1, 2, "started")
		started <- struct{}{}
		<-ctx.Done()
		ended <- ctx.Err()
		return "", ctx.Err()
	}))
	must(AddTool(s, &Tool{Name: "log_it"}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		_ = req.Log(ctx, LogInfo, "t", "info line")
		_ = req.Log(ctx, LogError, "t", "error line")
		return "logged", nil
	}))
	must(AddTool(s, &Tool{Name: "task_sleep", TaskSupport: TaskOptional}, func(ctx context.Context, _ *CallToolRequest, in struct {
		Ms int `json:"ms"`
	}) (string, error) {
		select {
		case <-time.After(time.Duration(in.Ms) * time.Millisecond):
			return "slept", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}))
	must(AddTool(s, &Tool{Name: "task_required", TaskSupport: TaskRequired}, func(context.Context, *CallToolRequest, struct{}) (string, error) {
		return "", errors.New("tool failed")
	}))
	must(AddTool(s, &Tool{Name: "task_ask", TaskSupport: TaskOptional}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		n, err := ask(ctx, &req.Request, "who")
		return "hi " + n, err
	}))
	must(AddTool(s, &Tool{Name: "task_deferred", TaskSupport: TaskRequired, DeferTask: true}, func(ctx context.Context, req *CallToolRequest, _ struct{}) (string, error) {
		n, err := ask(ctx, &req.Request, "who")
		if err != nil {
			return "", err
		}
		ctx = req.StartTask(ctx)
		_ = ctx
		return "later " + n, nil
	}))
	must(s.AddResource(&Resource{URI: "test://r", Name: "r"}, func(_ context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
		return &ReadResourceResult{Contents: []*ResourceContents{{URI: req.URI, Text: "r"}}}, nil
	}))
	must(s.AddPrompt(&Prompt{Name: "p"}, func(ctx context.Context, req *GetPromptRequest) (*GetPromptResult, error) {
		n, err := ask(ctx, &req.Request, "topic")
		if err != nil {
			return nil, err
		}
		return &GetPromptResult{Messages: []*PromptMessage{{Role: RoleUser, Content: Text("about " + n)}}}, nil
	}))
	return s, started, ended
}

func startModern(t *testing.T, o *Options) *modernServer {
	return startModernWith(t, o, &ServerOptions{Tasks: &TaskOptions{}})
}

// startModernWith is startModern on a Server with so.
func startModernWith(t *testing.T, o *Options, so *ServerOptions) *modernServer {
	t.Helper()
	s, started, ended := modernFixtureWith(t, so)
	opts := Options{Handler: s, Sessions: &SessionOptions{}, Logger: modQuietLog()}
	if o != nil {
		opts.Identity, opts.Listen, opts.Limits, opts.Telemetry = o.Identity, o.Listen, o.Limits, o.Telemetry
		if o.Sessions == nil && o.Handler != nil {
			opts.Sessions = nil
		}
	}
	hs := httptest.NewServer(Controller(&opts))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	return &modernServer{t: t, url: hs.URL, srv: s, hc: hs.Client(), started: started, ended: ended}
}

func modQuietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// mreq is one 2026-07-28 request under test.
type mreq struct {
	id     any // default 7
	method string
	params map[string]any
	caps   any               // clientCapabilities (default {elicitation, sampling, roots})
	meta   map[string]any    // replaces _meta entirely when non-nil
	hdr    map[string]string // header overrides; "" deletes
	raw    string            // a raw body instead of the above
}

type mresp struct {
	status int
	ctype  string
	id     json.RawMessage
	hasID  bool
	result map[string]any
	err    *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	frames []map[string]any // SSE messages before the response
}

func modDefaultCaps() map[string]any {
	return map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}, "roots": map[string]any{}}
}

func (m *modernServer) build(q mreq) *http.Request {
	t := m.t
	var body []byte
	params := map[string]any{}
	for k, v := range q.params {
		params[k] = v
	}
	if q.raw != "" {
		body = []byte(q.raw)
	} else {
		meta := q.meta
		if meta == nil {
			caps := q.caps
			if caps == nil {
				caps = modDefaultCaps()
			}
			meta = map[string]any{metaProtocol: "2026-07-28", metaClientCaps: caps,
				metaClientInfo: map[string]any{"name": "t", "version": "1"}}
		}
		if len(meta) > 0 {
			params["_meta"] = meta
		}
		id := q.id
		if id == nil {
			id = 7
		}
		msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": q.method, "params": params}
		var err error
		body, err = json.Marshal(msg)
		require.NoError(t, err)
	}
	r, err := http.NewRequest(http.MethodPost, m.url, strings.NewReader(string(body)))
	require.NoError(t, err)
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", q.method)
	for _, k := range []string{"name", "uri", "taskId"} {
		if s, ok := params[k].(string); ok {
			r.Header.Set("Mcp-Name", s)
		}
	}
	for k, v := range q.hdr {
		if v == "" {
			r.Header.Del(k)
		} else {
			r.Header[http.CanonicalHeaderKey(k)] = strings.Split(v, "\n")
		}
	}
	return r
}

func (m *modernServer) do(q mreq) mresp {
	m.t.Helper()
	resp, err := m.hc.Do(m.build(q))
	require.NoError(m.t, err)
	defer resp.Body.Close()
	out := mresp{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type")}
	var msgs [][]byte
	if strings.HasPrefix(out.ctype, "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				msgs = append(msgs, []byte(d))
			}
		}
	} else {
		b, _ := io.ReadAll(resp.Body)
		if len(b) > 0 {
			msgs = append(msgs, b)
		}
	}
	for i, b := range msgs {
		var env map[string]json.RawMessage
		require.NoError(m.t, json.Unmarshal(b, &env), "%s", b)
		if i < len(msgs)-1 {
			var f map[string]any
			_ = json.Unmarshal(b, &f)
			out.frames = append(out.frames, f)
			continue
		}
		out.id, out.hasID = env["id"]
		if r, ok := env["result"]; ok {
			require.NoError(m.t, json.Unmarshal(r, &out.result))
		}
		if e, ok := env["error"]; ok {
			require.NoError(m.t, json.Unmarshal(e, &out.err))
		}
	}
	return out
}

func (r mresp) code() int {
	if r.err == nil {
		return 0
	}
	return r.err.Code
}

func TestModernRequestErrors(t *testing.T) {
	m := startModern(t, nil)
	okMeta := func() map[string]any {
		return map[string]any{metaProtocol: "2026-07-28", metaClientCaps: map[string]any{}}
	}
	echo := func(args map[string]any, hdr map[string]string) mreq {
		return mreq{method: "tools/call", params: map[string]any{"name": "echo", "arguments": args}, hdr: hdr}
	}
	cases := []struct {
		name   string
		q      mreq
		status int
		code   int // 0: a result
	}{
		{"no _meta", mreq{method: "tools/list", meta: map[string]any{}}, 400, -32602},
		{"_meta without protocolVersion", mreq{method: "tools/list", meta: map[string]any{metaClientCaps: map[string]any{}}}, 400, -32602},
		{"_meta without clientCapabilities", mreq{method: "tools/list", meta: map[string]any{metaProtocol: "2026-07-28"}}, 400, -32602},
		{"clientCapabilities not an object", mreq{method: "tools/list", meta: map[string]any{metaProtocol: "2026-07-28", metaClientCaps: "all"}}, 400, -32602},
		{"bad logLevel", mreq{method: "tools/list", meta: map[string]any{metaProtocol: "2026-07-28", metaClientCaps: map[string]any{}, metaLogLevel: "loud"}}, 400, -32602},
		{"clientInfo is optional", mreq{method: "tools/list", meta: okMeta()}, 200, 0},
		{"version header missing", mreq{method: "tools/list", hdr: map[string]string{"MCP-Protocol-Version": ""}}, 400, -32020},
		{"version header repeated", mreq{method: "tools/list", hdr: map[string]string{"MCP-Protocol-Version": "2026-07-28\n2026-07-28"}}, 400, -32020},
		{"version header differs from _meta", mreq{method: "tools/list", meta: map[string]any{metaProtocol: "v999", metaClientCaps: map[string]any{}}}, 400, -32020},
		{"unsupported version", mreq{method: "tools/list", meta: map[string]any{metaProtocol: "v999", metaClientCaps: map[string]any{}}, hdr: map[string]string{"MCP-Protocol-Version": "v999"}}, 400, -32022},
		{"unsupported version without _meta", mreq{method: "tools/list", meta: map[string]any{}, hdr: map[string]string{"MCP-Protocol-Version": "v999"}}, 400, -32022},
		{"legacy version in _meta", mreq{method: "tools/list", meta: map[string]any{metaProtocol: "2025-11-25", metaClientCaps: map[string]any{}}, hdr: map[string]string{"MCP-Protocol-Version": ""}}, 400, -32020},
		{"Mcp-Method missing", mreq{method: "tools/list", hdr: map[string]string{"Mcp-Method": ""}}, 400, -32020},
		{"Mcp-Method differs", mreq{method: "tools/list", hdr: map[string]string{"Mcp-Method": "prompts/list"}}, 400, -32020},
		{"Mcp-Method value is case-sensitive", mreq{method: "tools/list", hdr: map[string]string{"Mcp-Method": "TOOLS/LIST"}}, 400, -32020},
		{"Mcp-Method with whitespace", mreq{method: "tools/list", hdr: map[string]string{"Mcp-Method": "  tools/list "}}, 200, 0},
		{"unknown method", mreq{method: "no/such"}, 404, -32601},
		{"initialize is legacy", mreq{method: "initialize"}, 404, -32601},
		{"ping is legacy", mreq{method: "ping"}, 404, -32601},
		{"logging/setLevel is legacy", mreq{method: "logging/setLevel", params: map[string]any{"level": "info"}}, 404, -32601},
		{"resources/subscribe is legacy", mreq{method: "resources/subscribe", params: map[string]any{"uri": "test://r"}}, 404, -32601},
		{"tasks/result is gone", mreq{method: "tasks/result", params: map[string]any{"taskId": "x"}}, 404, -32601},
		{"Mcp-Name missing", mreq{method: "tools/call", params: map[string]any{"name": "echo"}, hdr: map[string]string{"Mcp-Name": ""}}, 400, -32020},
		{"Mcp-Name differs", mreq{method: "tools/call", params: map[string]any{"name": "echo"}, hdr: map[string]string{"Mcp-Name": "ask"}}, 400, -32020},
		{"Mcp-Name with whitespace", mreq{method: "tools/call", params: map[string]any{"name": "echo"}, hdr: map[string]string{"Mcp-Name": "  echo  "}}, 200, 0},
		{"Mcp-Name in base64", mreq{method: "tools/call", params: map[string]any{"name": "echo"}, hdr: map[string]string{"Mcp-Name": "=?base64?ZWNobw==?="}}, 200, 0},
		{"Mcp-Name bad base64", mreq{method: "tools/call", params: map[string]any{"name": "echo"}, hdr: map[string]string{"Mcp-Name": "=?base64?ZWNobw?="}}, 400, -32020},
		{"Mcp-Name for resources/read is the uri", mreq{method: "resources/read", params: map[string]any{"uri": "test://r"}, hdr: map[string]string{"Mcp-Name": "test://other"}}, 400, -32020},
		{"Mcp-Name for prompts/get", mreq{method: "prompts/get", params: map[string]any{"name": "p"}, hdr: map[string]string{"Mcp-Name": ""}}, 400, -32020},
		{"Mcp-Param matches", echo(map[string]any{"region": "us-east1"}, map[string]string{"Mcp-Param-Region": "us-east1"}), 200, 0},
		{"Mcp-Param name is case-insensitive", echo(map[string]any{"region": "us"}, map[string]string{"mcp-param-region": "us"}), 200, 0},
		{"Mcp-Param missing", echo(map[string]any{"region": "us"}, nil), 400, -32020},
		{"Mcp-Param differs", echo(map[string]any{"region": "us"}, map[string]string{"Mcp-Param-Region": "eu"}), 400, -32020},
		{"Mcp-Param without its argument", echo(map[string]any{}, map[string]string{"Mcp-Param-Region": "eu"}), 400, -32020},
		{"Mcp-Param for a null argument is omitted", echo(map[string]any{"region": nil}, nil), 200, 0},
		{"Mcp-Param base64", echo(map[string]any{"region": "Hello"}, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8=?="}), 200, 0},
		{"Mcp-Param base64 of non-ASCII", echo(map[string]any{"region": "Région"}, map[string]string{"Mcp-Param-Region": "=?base64?UsOpZ2lvbg==?="}), 200, 0},
		{"Mcp-Param base64 bad padding", echo(map[string]any{"region": "Hello"}, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8?="}), 400, -32020},
		{"Mcp-Param base64 bad characters", echo(map[string]any{"region": "Hello"}, map[string]string{"Mcp-Param-Region": "=?base64?SGVs!!!bG8=?="}), 400, -32020},
		{"Mcp-Param without the prefix is literal", echo(map[string]any{"region": "SGVsbG8="}, map[string]string{"Mcp-Param-Region": "SGVsbG8="}), 200, 0},
		{"Mcp-Param without the suffix is literal", echo(map[string]any{"region": "=?base64?SGVsbG8="}, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8="}), 200, 0},
		{"Mcp-Param integer compared as a number", echo(map[string]any{"priority": 42}, map[string]string{"Mcp-Param-Priority": "042"}), 200, 0},
		{"Mcp-Param integer differs", echo(map[string]any{"priority": 42}, map[string]string{"Mcp-Param-Priority": "43"}), 400, -32020},
		{"Mcp-Param integer not a number", echo(map[string]any{"priority": 42}, map[string]string{"Mcp-Param-Priority": "0x2a"}), 400, -32020},
		{"Mcp-Param boolean", echo(map[string]any{"verbose": true}, map[string]string{"Mcp-Param-Verbose": "true"}), 200, 0},
		{"Mcp-Param boolean is case-sensitive", echo(map[string]any{"verbose": true}, map[string]string{"Mcp-Param-Verbose": "TRUE"}), 400, -32020},
		{"Mcp-Param nested property", echo(map[string]any{"opts": map[string]any{"zone": "a"}}, map[string]string{"Mcp-Param-Zone": "a"}), 200, 0},
		{"Mcp-Param nested property missing", echo(map[string]any{"opts": map[string]any{"zone": "a"}}, nil), 400, -32020},
		{"undeclared capability", mreq{method: "tools/call", params: map[string]any{"name": "needs_sampling"}, caps: map[string]any{}}, 400, -32021},
		{"resource not found", mreq{method: "resources/read", params: map[string]any{"uri": "test://none"}}, 200, -32602},
		{"client response", mreq{raw: `{"jsonrpc":"2.0","id":7,"result":{}}`, method: "x"}, 400, -32600},
		{"string id", mreq{id: "abc", method: "no/such"}, 404, -32601},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := m.do(c.q)
			assert.Equal(t, c.status, r.status)
			assert.Equal(t, c.code, r.code(), "error %+v", r.err)
			if c.code != 0 {
				want := `7`
				if c.q.id != nil {
					want = `"abc"`
				}
				assert.JSONEq(t, want, string(r.id), "errors carry the request id")
			} else {
				assert.Equal(t, "complete", r.result["resultType"])
			}
		})
	}

	t.Run("unsupported version data", func(t *testing.T) {
		r := m.do(mreq{method: "tools/list", meta: map[string]any{metaProtocol: "v999", metaClientCaps: map[string]any{}},
			hdr: map[string]string{"MCP-Protocol-Version": "v999"}})
		require.NotNil(t, r.err)
		assert.JSONEq(t, `{"supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26"],"requested":"v999"}`, string(r.err.Data))
	})
	t.Run("missing capability data", func(t *testing.T) {
		r := m.do(mreq{method: "tools/call", params: map[string]any{"name": "needs_sampling"}, caps: map[string]any{}})
		require.NotNil(t, r.err)
		assert.JSONEq(t, `{"requiredCapabilities":{"sampling":{}}}`, string(r.err.Data))
	})
	t.Run("parse error has no id", func(t *testing.T) {
		r := m.do(mreq{raw: `{"jsonrpc":`, method: "x"})
		assert.Equal(t, 400, r.status)
		assert.Equal(t, -32700, r.code())
		assert.False(t, r.hasID, "an unknown id is left out, not null")
	})
	t.Run("notification is accepted", func(t *testing.T) {
		r := m.do(mreq{raw: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, method: "notifications/cancelled"})
		assert.Equal(t, http.StatusAccepted, r.status)
	})
	t.Run("modern _meta without the header is modern", func(t *testing.T) {
		r := m.do(mreq{method: "tools/list", hdr: map[string]string{"MCP-Protocol-Version": ""}})
		assert.Equal(t, -32020, r.code())
	})
	t.Run("a session id is ignored", func(t *testing.T) {
		r := m.do(mreq{method: "tools/list", hdr: map[string]string{"Mcp-Session-Id": "nonsense"}})
		assert.Equal(t, 200, r.status)
		assert.Equal(t, "complete", r.result["resultType"])
	})
}

func TestModernLegacyUnaffected(t *testing.T) {
	m := startModern(t, nil)
	r := m.do(mreq{raw: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		method: "initialize", hdr: map[string]string{"MCP-Protocol-Version": "", "Mcp-Method": ""}})
	assert.Equal(t, 200, r.status)
	assert.Equal(t, "2025-11-25", r.result["protocolVersion"])
	assert.Nil(t, r.result["resultType"], "legacy results keep their shape")
	caps, _ := r.result["capabilities"].(map[string]any)
	assert.Nil(t, caps["extensions"], "extensions are declared to 2026-07-28 clients only")
}

func TestModernDiscoverAndEnvelope(t *testing.T) {
	m := startModernWith(t, nil, &ServerOptions{Tasks: &TaskOptions{},
		CacheHints: map[string]CacheHint{"tools/list": {TTL: 90 * time.Second, Scope: CachePublic}}})
	r := m.do(mreq{method: "server/discover"})
	require.Nil(t, r.err)
	assert.Equal(t, "complete", r.result["resultType"])
	assert.Equal(t, []any{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}, r.result["supportedVersions"])
	caps := r.result["capabilities"].(map[string]any)
	assert.Contains(t, caps, "tools")
	assert.Equal(t, map[string]any{ExtTasks: map[string]any{}}, caps["extensions"])
	assert.EqualValues(t, 0, r.result["ttlMs"])
	assert.Equal(t, "private", r.result["cacheScope"])
	meta := r.result["_meta"].(map[string]any)
	assert.Equal(t, map[string]any{"name": "modern-test", "version": "1.0"}, meta[metaServerInfo])

	r = m.do(mreq{method: "tools/list"})
	assert.EqualValues(t, 90000, r.result["ttlMs"])
	assert.Equal(t, "public", r.result["cacheScope"])
	r = m.do(mreq{method: "resources/read", params: map[string]any{"uri": "test://r"}})
	assert.Equal(t, "private", r.result["cacheScope"])
	r = m.do(mreq{method: "tools/call", params: map[string]any{"name": "ask"}, caps: map[string]any{}})
	assert.Equal(t, -32021, r.code(), "elicitation undeclared")
	r = m.do(mreq{method: "tools/call", params: map[string]any{"name": "echo", "arguments": map[string]any{}}})
	assert.NotContains(t, r.result, "ttlMs", "tools/call is not cacheable")
	assert.Contains(t, r.result["_meta"], metaServerInfo)
}

func TestModernLogLevel(t *testing.T) {
	m := startModern(t, nil)
	r := m.do(mreq{method: "tools/call", params: map[string]any{"name": "log_it"}})
	assert.Empty(t, r.frames, "no logs without _meta logLevel")
	assert.True(t, strings.HasPrefix(r.ctype, "application/json"))
	r = m.do(mreq{method: "tools/call", params: map[string]any{"name": "log_it"},
		meta: map[string]any{metaProtocol: "2026-07-28", metaClientCaps: map[string]any{}, metaLogLevel: "error"}})
	require.Len(t, r.frames, 1, "the error line only")
	assert.Equal(t, "notifications/message", r.frames[0]["method"])
	assert.Equal(t, "complete", r.result["resultType"])
}

func TestModernClosingTheStreamCancels(t *testing.T) {
	m := startModern(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := mreq{method: "tools/call", params: map[string]any{"name": "test_block"}, meta: map[string]any{metaProtocol: "2026-07-28", metaClientCaps: map[string]any{}, "progressToken": "p1"}}
	req := m.build(q).WithContext(ctx)
	resp, err := m.hc.Do(req)
	require.NoError(t, err)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	<-m.started
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	assert.Contains(t, line, "notifications/progress")
	cancel()
	resp.Body.Close()
	select {
	case err := <-m.ended:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(5 * time.Second):
		t.Fatal("closing the response stream did not cancel the call")
	}
}

func TestScanParamHeaders(t *testing.T) {
	cases := []struct {
		name, schema string
		ok           bool
		want         string
	}{
		{"valid", `{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"},"b":{"type":"boolean","x-mcp-header":"B"}}}`, true, "Region,N,B"},
		{"nested through properties", `{"type":"object","properties":{"o":{"type":"object","properties":{"z":{"type":"string","x-mcp-header":"Zone"}}}}}`, true, "Zone"},
		{"empty name", `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":""}}}`, false, ""},
		{"not a string name", `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":1}}}`, false, ""},
		{"number", `{"type":"object","properties":{"v":{"type":"number","x-mcp-header":"V"}}}`, false, ""},
		{"object", `{"type":"object","properties":{"v":{"type":"object","x-mcp-header":"V"}}}`, false, ""},
		{"array", `{"type":"object","properties":{"v":{"type":"array","items":{"type":"string"},"x-mcp-header":"V"}}}`, false, ""},
		{"null", `{"type":"object","properties":{"v":{"type":"null","x-mcp-header":"V"}}}`, false, ""},
		{"no type", `{"type":"object","properties":{"v":{"x-mcp-header":"V"}}}`, false, ""},
		{"under items", `{"type":"object","properties":{"v":{"type":"array","items":{"type":"string","x-mcp-header":"V"}}}}`, false, ""},
		{"under anyOf", `{"type":"object","properties":{"v":{"anyOf":[{"type":"string","x-mcp-header":"V"}]}}}`, false, ""},
		{"under $defs", `{"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"V"}}}`, false, ""},
		{"on the root", `{"type":"object","x-mcp-header":"V"}`, false, ""},
		{"duplicate", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"R"},"b":{"type":"string","x-mcp-header":"R"}}}`, false, ""},
		{"duplicate ignoring case", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"MyField"},"b":{"type":"string","x-mcp-header":"myfield"}}}`, false, ""},
		{"space", `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"My Region"}}}`, false, ""},
		{"colon", `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"Region:Primary"}}}`, false, ""},
		{"non-ASCII", `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"Région"}}}`, false, ""},
		{"control character", `{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"Region\t1"}}}`, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := scanParamHeaders(json.RawMessage(c.schema))
			if !c.ok {
				assert.Error(t, err)
				s := NewServer(Implementation{Name: "x", Version: "1"}, nil)
				err := s.AddToolRaw(&Tool{Name: "t", InputSchema: json.RawMessage(c.schema)}, func(context.Context, *CallToolRequest) (*CallToolResult, error) { return nil, nil })
				assert.ErrorIs(t, err, ErrInvalidSchema, "registration refuses it")
				return
			}
			require.NoError(t, err)
			var names []string
			for _, h := range got {
				names = append(names, h.Name)
			}
			assert.ElementsMatch(t, strings.Split(c.want, ","), names)
		})
	}
}
