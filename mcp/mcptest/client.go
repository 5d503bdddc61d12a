// Package mcptest connects an MCP client to your server inside a test, with
// no HTTP and no sockets: the server runs on the same engine as over HTTP
// and stdio (mcp.ServeConn), and the client speaks the protocol on a
// connection in memory. Call tools (typed results), list and read
// resources, get prompts, complete, set the log level, subscribe and
// receive updates; record each call's progress and log messages; answer
// the server's sampling, elicitation and roots requests with functions of
// your test; choose the revision, a legacy one with initialize and a
// session, or the stateless 2026-07-28.
//
//	c := mcptest.Connect(t, srv, nil)
//	out, err := mcptest.CallTool[GreetOut](ctx, c, "greet", GreetIn{Name: "Ann"})
package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcp/jsonrpc"
)

// Options configures Connect. A nil *Options means defaults.
type Options struct {
	// Revision is the protocol revision the client speaks: "2025-03-26",
	// "2025-06-18", "2025-11-25" (the default) or "2026-07-28", which has
	// no initialize and carries the client's capabilities in each
	// request's _meta.
	Revision string
	// Sampling, Elicit and Roots answer the server's requests; the client
	// declares the capability of each one that is set. In 2026-07-28 they
	// answer the inputRequests of input_required results, and the client
	// repeats the request with the answers.
	Sampling func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	Elicit   func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
	Roots    func(ctx context.Context) ([]mcp.Root, error)
	// Extensions are declared under capabilities.extensions (2026-07-28),
	// such as mcp.ExtTasks; mcp.ExtUI (every revision) is declared with
	// the view MIME type, as a host that renders MCP App views does.
	Extensions []string
	// Server configures the server's side of the connection (identity,
	// timeouts); nil means defaults.
	Server *mcp.ConnOptions
}

// Client is an MCP client connected to a server in the same process. It is
// safe for concurrent use.
type Client struct {
	opts   Options
	modern bool
	caps   json.RawMessage
	conn   *memConn
	served chan error
	stop   context.CancelFunc // ends ServeConn's context

	mu       sync.Mutex
	nextID   int64
	calls    map[int64]*pending
	logLevel string
	updates  chan string
	changes  chan string
	closed   bool
}

// pending is a request waiting for its response, with what its call sent.
type pending struct {
	done   chan struct{}
	result json.RawMessage
	err    *jsonrpc.Error
	notes  *Notes
	onNote func(method string, params json.RawMessage) // subscriptions/listen
}

// ErrClosed is what a call returns once the client is closed.
var ErrClosed = errors.New("mcptest: client closed")

// Connect serves h on a connection in memory and connects a client to it:
// with a legacy revision it initializes the session (and sends
// notifications/initialized). The test fails if that fails; the client is
// closed when the test ends, and the test fails if the server did not
// stop cleanly.
func Connect(t testing.TB, h mcp.Handler, opts *Options) *Client {
	t.Helper()
	c, err := Dial(context.Background(), h, opts)
	if err != nil {
		t.Fatalf("mcptest: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("mcptest: the server did not stop cleanly: %v", err)
		}
	})
	return c
}

// Dial is Connect without a test: the caller closes the client.
func Dial(ctx context.Context, h mcp.Handler, opts *Options) (*Client, error) {
	c := &Client{calls: map[int64]*pending{}, updates: make(chan string, 64), changes: make(chan string, 64),
		served: make(chan error, 1)}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.Revision == "" {
		c.opts.Revision = "2025-11-25"
	}
	c.modern = c.opts.Revision == "2026-07-28"
	c.caps = c.capabilities()
	c.conn = newMemConn(c)
	// Close cancels the server's context rather than only ending its
	// input, so that what still runs is cancelled at once: a test that
	// ends does not wait for its calls.
	sctx, stop := context.WithCancel(context.Background())
	c.stop = stop
	go func() { c.served <- mcp.ServeConn(sctx, h, c.conn, c.opts.Server) }()
	if c.modern {
		return c, nil
	}
	params := map[string]any{"protocolVersion": c.opts.Revision, "capabilities": c.caps,
		"clientInfo": map[string]string{"name": "mcptest", "version": "1"}}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := c.Call(ctx, "initialize", params, &res); err != nil {
		c.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if err := c.Notify(ctx, "notifications/initialized", nil); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// capabilities declares what the options answer.
func (c *Client) capabilities() json.RawMessage {
	caps := map[string]any{}
	if c.opts.Sampling != nil {
		caps["sampling"] = map[string]any{}
	}
	if c.opts.Elicit != nil {
		caps["elicitation"] = map[string]any{"form": map[string]any{}, "url": map[string]any{}}
	}
	if c.opts.Roots != nil {
		caps["roots"] = map[string]any{"listChanged": true}
	}
	if len(c.opts.Extensions) > 0 {
		ext := map[string]any{}
		for _, e := range c.opts.Extensions {
			ext[e] = map[string]any{}
			if e == mcp.ExtUI {
				ext[e] = map[string]any{"mimeTypes": []string{mcp.ViewMIMEType}}
			}
		}
		caps["extensions"] = ext
	}
	b, _ := json.Marshal(caps)
	return b
}

// Close ends the connection and returns once the server stopped: its
// calls still running are cancelled at once, as when a stdio server's
// context ends (a stdio client that only closes its input lets them
// finish first). It returns what mcp.ServeConn returned.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	calls := c.calls
	c.calls = map[int64]*pending{}
	c.mu.Unlock()
	for _, p := range calls {
		close(p.done)
	}
	c.stop()
	c.conn.close()
	return <-c.served
}

// Updates delivers the URI of every notifications/resources/updated the
// client hears (see Subscribe). It is buffered; updates beyond the buffer
// are dropped.
func (c *Client) Updates() <-chan string { return c.updates }

// Changes delivers the method of every list_changed notification the
// client hears ("notifications/tools/list_changed", …; see Watch).
func (c *Client) Changes() <-chan string { return c.changes }

// Notify sends a notification.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil || c.modern {
		p, err := c.params(params)
		if err != nil {
			return err
		}
		msg["params"] = p
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	return c.conn.send(ctx, b)
}

// Call sends a request and decodes its result into result (nil: ignored).
// A JSON-RPC error answer is returned as a *jsonrpc.Error. In 2026-07-28
// the request carries the client's _meta, and an input_required result is
// answered with the options' functions and the request repeated, until it
// completes.
func (c *Client) Call(ctx context.Context, method string, params any, result any, opts ...CallOption) error {
	var cfg callConfig
	for _, o := range opts {
		o(&cfg)
	}
	raw, err := c.roundTrips(ctx, method, params, &cfg)
	if err != nil || result == nil {
		return err
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("mcptest: %s result: %w", method, err)
	}
	return nil
}

// roundTrips sends the request, then, in 2026-07-28, answers its
// input_required results and repeats it.
func (c *Client) roundTrips(ctx context.Context, method string, params any, cfg *callConfig) (json.RawMessage, error) {
	p, err := c.params(params)
	if err != nil {
		return nil, err
	}
	if cfg.notes != nil {
		p["_meta"] = withProgressToken(p["_meta"])
	}
	for range 16 {
		raw, err := c.roundTrip(ctx, method, p, cfg.notes)
		if err != nil || !c.modern {
			return raw, err
		}
		var ir struct {
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  string                     `json:"requestState"`
		}
		if err := json.Unmarshal(raw, &ir); err != nil || ir.ResultType != "input_required" {
			return raw, nil
		}
		answers := map[string]json.RawMessage{}
		for key, req := range ir.InputRequests {
			var r struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if err := json.Unmarshal(req, &r); err != nil {
				return nil, fmt.Errorf("mcptest: input request %q: %w", key, err)
			}
			a, err := c.answer(ctx, r.Method, r.Params)
			if err != nil {
				return nil, fmt.Errorf("mcptest: input request %q: %w", key, err)
			}
			answers[key] = a
		}
		p["inputResponses"] = answers
		p["requestState"] = ir.RequestState
	}
	return nil, fmt.Errorf("mcptest: %s still asks for input after 16 rounds", method)
}

// params is the params object of a request: params encoded as an object,
// with the client's _meta in 2026-07-28.
func (c *Client) params(params any) (map[string]any, error) {
	p := map[string]any{}
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("mcptest: params: %w", err)
		}
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, fmt.Errorf("mcptest: params must encode to an object: %w", err)
		}
		if p == nil {
			p = map[string]any{} // params encoded to null
		}
	}
	if c.modern {
		meta, _ := p["_meta"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
		}
		meta["io.modelcontextprotocol/protocolVersion"] = "2026-07-28"
		meta["io.modelcontextprotocol/clientCapabilities"] = c.caps
		c.mu.Lock()
		if c.logLevel != "" {
			meta["io.modelcontextprotocol/logLevel"] = c.logLevel
		}
		c.mu.Unlock()
		p["_meta"] = meta
	}
	return p, nil
}

func withProgressToken(meta any) map[string]any {
	m, _ := meta.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	if _, ok := m["progressToken"]; !ok {
		m["progressToken"] = "mcptest"
	}
	return m
}

// roundTrip sends one request and waits for its response.
func (c *Client) roundTrip(ctx context.Context, method string, params map[string]any, notes *Notes) (json.RawMessage, error) {
	p := &pending{done: make(chan struct{}), notes: notes}
	id, err := c.start(p)
	if err != nil {
		return nil, err
	}
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}
	b, err := json.Marshal(msg)
	if err != nil {
		c.forget(id)
		return nil, fmt.Errorf("mcptest: %s: %w", method, err)
	}
	if err := c.conn.send(ctx, b); err != nil {
		c.forget(id)
		return nil, err
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		c.forget(id)
		_ = c.Notify(context.WithoutCancel(ctx), "notifications/cancelled", map[string]any{"requestId": id, "reason": ctx.Err().Error()})
		return nil, ctx.Err()
	}
	if p.err != nil {
		return nil, p.err
	}
	if p.result == nil {
		return nil, ErrClosed
	}
	return p.result, nil
}

// start registers a pending request and returns its id.
func (c *Client) start(p *pending) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, ErrClosed
	}
	c.nextID++
	c.calls[c.nextID] = p
	return c.nextID, nil
}

func (c *Client) forget(id int64) {
	c.mu.Lock()
	delete(c.calls, id)
	c.mu.Unlock()
}

// receive handles one message of the server, on the server's writer.
func (c *Client) receive(b []byte, related jsonrpc.ID) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
	}
	if len(b) > 0 && b[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(b, &batch) == nil {
			for _, one := range batch {
				c.receive(one, jsonrpc.ID{})
			}
		}
		return
	}
	if json.Unmarshal(b, &m) != nil {
		return
	}
	switch {
	case m.Method == "" && m.ID != nil: // a response
		var id int64
		if json.Unmarshal(m.ID, &id) != nil {
			return
		}
		c.mu.Lock()
		p := c.calls[id]
		delete(c.calls, id)
		c.mu.Unlock()
		if p == nil {
			return
		}
		p.result, p.err = m.Result, m.Error
		if p.result == nil && p.err == nil {
			p.result = json.RawMessage("null")
		}
		close(p.done)
	case m.ID != nil: // a server→client request
		go c.serveRequest(m.ID, m.Method, m.Params)
	default:
		c.note(m.Method, m.Params, related)
	}
}

// note delivers a notification: to the call it belongs to, and to
// Updates and Changes.
func (c *Client) note(method string, params json.RawMessage, related jsonrpc.ID) {
	if n, ok := related.IntValue(); ok {
		c.mu.Lock()
		p := c.calls[n]
		c.mu.Unlock()
		if p != nil && p.onNote != nil {
			p.onNote(method, params)
			return
		}
		if p != nil && p.notes != nil {
			p.notes.add(method, params)
		}
	}
	switch method {
	case "notifications/resources/updated":
		var u struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(params, &u) == nil {
			select {
			case c.updates <- u.URI:
			default:
			}
		}
	case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
		select {
		case c.changes <- method:
		default:
		}
	}
}

// serveRequest answers a server→client request with the options'
// functions.
func (c *Client) serveRequest(id json.RawMessage, method string, params json.RawMessage) {
	res, err := c.answer(context.Background(), method, params)
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if err != nil {
		e := &jsonrpc.Error{Code: -1, Message: err.Error()}
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			e = je
		}
		msg["error"] = e
	} else {
		msg["result"] = res
	}
	b, _ := json.Marshal(msg)
	_ = c.conn.send(context.Background(), b)
}

// answer runs the function of the options that answers method.
func (c *Client) answer(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	var res any
	var err error
	switch method {
	case "sampling/createMessage":
		if c.opts.Sampling == nil {
			return nil, jsonrpc.NewError(jsonrpc.MethodNotFound, "no sampling")
		}
		var p mcp.CreateMessageParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		res, err = c.opts.Sampling(ctx, &p)
	case "elicitation/create":
		if c.opts.Elicit == nil {
			return nil, jsonrpc.NewError(jsonrpc.MethodNotFound, "no elicitation")
		}
		var p mcp.ElicitParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		res, err = c.opts.Elicit(ctx, &p)
	case "roots/list":
		if c.opts.Roots == nil {
			return nil, jsonrpc.NewError(jsonrpc.MethodNotFound, "no roots")
		}
		var roots []mcp.Root
		roots, err = c.opts.Roots(ctx)
		res = &mcp.ListRootsResult{Roots: roots}
	case "ping":
		res = struct{}{}
	default:
		return nil, jsonrpc.NewError(jsonrpc.MethodNotFound, "Method not found: "+method)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

// memConn is the connection: the client's messages queue for the
// server's Read; the server's Write hands each message to the client.
type memConn struct {
	client *Client
	in     chan []byte
	done   chan struct{}
	once   sync.Once
}

func newMemConn(c *Client) *memConn {
	return &memConn{client: c, in: make(chan []byte, 64), done: make(chan struct{})}
}

func (m *memConn) send(ctx context.Context, b []byte) error {
	select {
	case m.in <- b:
		return nil
	case <-m.done:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (m *memConn) close() { m.once.Do(func() { close(m.done) }) }

// Read implements mcp.Conn.
func (m *memConn) Read(ctx context.Context) ([]byte, error) {
	select {
	case b := <-m.in:
		return b, nil
	case <-m.done:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write implements mcp.Conn.
func (m *memConn) Write(_ context.Context, msg []byte, related jsonrpc.ID) error {
	select {
	case <-m.done:
		return nil // the client is gone; what the server says is lost
	default:
	}
	m.client.receive(msg, related)
	return nil
}
