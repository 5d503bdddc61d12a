// Package mcpconn is the load generators' MCP client: one keep-alive
// HTTP/1.1 connection per goroutine, requests written as raw bytes from a
// reused buffer, responses parsed with http.ReadResponse, and every answer
// of initialize and tools/call judged by internal/check. cmd/loadgen and
// cmd/clusterbench both drive their servers with it, so the client costs
// little and the same in every configuration.
package mcpconn

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/check"
	"github.com/saguaro-go/saguaro/bench/internal/configs"
)

// ProtocolVersion is the revision every session speaks (initialize
// first), except to the 2026-07-28 configurations (configs.ProtocolModern).
const ProtocolVersion = "2025-11-25"

// modernMeta is the _meta every 2026-07-28 request carries: the revision
// and the client capabilities, in place of initialize.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + configs.ProtocolModern +
	`","io.modelcontextprotocol/clientCapabilities":{}}`

// modernCallHeaders are the 2026-07-28 headers of a tools/call of a tool
// (besides MCP-Protocol-Version): Mcp-Method and Mcp-Name mirror the body.
func modernCallHeaders(tool string) string {
	return "Mcp-Method: tools/call\r\nMcp-Name: " + tool + "\r\n"
}

var (
	modernEchoHeaders     = modernCallHeaders("echo")
	modernProgressHeaders = modernCallHeaders("progress")
)

// DefaultClientName is clientInfo.name in initialize unless
// Endpoint.ClientName says otherwise.
const DefaultClientName = "saguaro-bench"

// Endpoint is where one configuration is reached (a server, or a proxy in
// front of replicas), and how to speak to it.
type Endpoint struct {
	Addr  string // host:port, loopback
	Path  string
	Extra []byte // extra header lines of every request, each ending in \r\n
	// Modern: speak 2026-07-28 (no session; the revision in every
	// request's header and _meta, with Mcp-Method and Mcp-Name).
	Modern bool
	// ClientName is clientInfo.name in initialize; "" is
	// DefaultClientName.
	ClientName string
	// JSONOnly makes Call also require an application/json answer
	// (CheckJSONCall): the echo tool emits nothing before its result, so
	// an event stream would mean the JSON path was not the one measured.
	JSONOnly bool
}

// NewEndpoint parses an MCP URL, refusing any host that is not a loopback
// address; headers are sent with every request, in key order.
func NewEndpoint(mcpURL string, headers map[string]string) (*Endpoint, error) {
	u, err := url.Parse(mcpURL)
	if err != nil {
		return nil, err
	}
	host, _, err := net.SplitHostPort(u.Host)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("refusing non-loopback target %s", u.Host)
	}
	ep := &Endpoint{Addr: u.Host, Path: u.EscapedPath()}
	keys := make([]string, 0, len(headers))
	for k := range headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ep.Extra = append(ep.Extra, k+": "+headers[k]+"\r\n"...)
	}
	return ep, nil
}

// Conn is one keep-alive HTTP/1.1 connection speaking MCP in raw bytes.
// A Conn belongs to one goroutine.
type Conn struct {
	ep      *Endpoint
	nc      net.Conn
	br      *bufio.Reader
	timeout time.Duration
	session string // Mcp-Session-Id, once initialized on a stateful server
	wbuf    []byte
	body    []byte
	rbuf    bytes.Buffer
	closed  bool // the server asked to close; redial before the next request
}

// Dial connects to ep; timeout bounds the dial and every request.
func Dial(ep *Endpoint, timeout time.Duration) (*Conn, error) {
	c := &Conn{ep: ep, timeout: timeout}
	if err := c.redial(); err != nil {
		return nil, err
	}
	return c, nil
}

// Close closes the connection (not the session).
func (c *Conn) Close() error {
	if c.nc == nil {
		return nil
	}
	err := c.nc.Close()
	c.nc = nil
	return err
}

// Session is the connection's Mcp-Session-Id, "" when none.
func (c *Conn) Session() string { return c.session }

// SetSession makes later requests carry this Mcp-Session-Id (a session
// opened on another connection), or none with "" (the session is then
// abandoned, not deleted).
func (c *Conn) SetSession(id string) { c.session = id }

func (c *Conn) redial() error {
	_ = c.Close()
	nc, err := net.DialTimeout("tcp", c.ep.Addr, c.timeout)
	if err != nil {
		return err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	c.nc = nc
	if c.br == nil {
		c.br = bufio.NewReaderSize(nc, 16<<10)
	} else {
		c.br.Reset(nc)
	}
	c.closed = false
	return nil
}

// Do sends one request and reads the whole response. The returned body is
// valid until the next call. An error is a transport error: the
// connection's state is unknown.
func (c *Conn) Do(method string, body []byte) (check.Response, http.Header, error) {
	return c.Send(method, "", body)
}

// Send is Do with extra header lines for this request (each ending in
// \r\n).
func (c *Conn) Send(method, headers string, body []byte) (check.Response, http.Header, error) {
	if c.nc == nil || c.closed {
		if err := c.redial(); err != nil {
			return check.Response{}, nil, err
		}
	}
	w := c.wbuf[:0]
	w = append(w, method...)
	w = append(w, ' ')
	w = append(w, c.ep.Path...)
	w = append(w, " HTTP/1.1\r\nHost: "...)
	w = append(w, c.ep.Addr...)
	w = append(w, "\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: "...)
	if c.ep.Modern {
		w = append(w, configs.ProtocolModern...)
	} else {
		w = append(w, ProtocolVersion...)
	}
	w = append(w, "\r\n"...)
	w = append(w, headers...)
	if c.session != "" {
		w = append(w, "Mcp-Session-Id: "...)
		w = append(w, c.session...)
		w = append(w, "\r\n"...)
	}
	w = append(w, c.ep.Extra...)
	if body != nil {
		w = append(w, "Content-Type: application/json\r\nContent-Length: "...)
		w = strconv.AppendInt(w, int64(len(body)), 10)
		w = append(w, "\r\n\r\n"...)
		w = append(w, body...)
	} else {
		w = append(w, "Content-Length: 0\r\n\r\n"...)
	}
	c.wbuf = w
	if err := c.nc.SetDeadline(time.Now().Add(c.timeout)); err != nil {
		return check.Response{}, nil, err
	}
	if _, err := c.nc.Write(w); err != nil {
		c.closed = true
		return check.Response{}, nil, err
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		c.closed = true
		return check.Response{}, nil, err
	}
	c.rbuf.Reset()
	_, err = io.Copy(&c.rbuf, io.LimitReader(resp.Body, 8<<20))
	resp.Body.Close()
	if err != nil {
		c.closed = true
		return check.Response{}, nil, err
	}
	if resp.Close {
		c.closed = true
	}
	return check.Response{
		Status:      resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type"),
		Body:        c.rbuf.Bytes(),
	}, resp.Header, nil
}

var initializedBody = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

// Initialize opens a new session on this connection (forgetting any
// previous one without closing it) and sends notifications/initialized;
// both answers are checked (check.Initialize with stateful, then
// check.Accepted).
func (c *Conn) Initialize(id int64, stateful bool) error {
	c.session = ""
	name := c.ep.ClientName
	if name == "" {
		name = DefaultClientName
	}
	b := append(c.body[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"initialize","params":{"protocolVersion":"`+ProtocolVersion+`","capabilities":{},"clientInfo":{"name":`...)
	b = strconv.AppendQuote(b, name)
	b = append(b, `,"version":"0"}}}`...)
	c.body = b
	r, h, err := c.Do(http.MethodPost, b)
	if err != nil {
		return err
	}
	sid := h.Get("Mcp-Session-Id")
	if err := check.Initialize(r, id, sid, stateful, ProtocolVersion); err != nil {
		return err
	}
	c.session = sid
	r, _, err = c.Do(http.MethodPost, initializedBody)
	if err != nil {
		return err
	}
	return check.Accepted(r)
}

// Call sends tools/call echo with the given id and text and checks the
// answer: check.Call (check.CallComplete when modern), and
// CheckJSONCall's media type too when the endpoint is JSONOnly.
func (c *Conn) Call(id int64, text string) error {
	b := append(c.body[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"tools/call","params":{"name":"echo",`...)
	if c.ep.Modern {
		b = append(b, modernMeta...)
		b = append(b, ',')
	}
	b = append(b, `"arguments":{"text":`...)
	b = strconv.AppendQuote(b, text) // text is ASCII without escapes, so this is valid JSON
	b = append(b, `}}}`...)
	c.body = b
	if c.ep.Modern {
		r, _, err := c.Send(http.MethodPost, modernEchoHeaders, b)
		if err != nil {
			return err
		}
		return check.CallComplete(r, id, text)
	}
	r, _, err := c.Do(http.MethodPost, b)
	if err != nil {
		return err
	}
	if c.ep.JSONOnly {
		return CheckJSONCall(r, id, text)
	}
	return check.Call(r, id, text)
}

// CheckJSONCall is check.Call (HTTP 200, a JSON-RPC result for id, one
// text block equal to text) and, since the echo tool emits nothing before
// its result, the answer must be application/json: an event stream here
// would mean the JSON path was not the one measured (and SSE through a
// proxy is a case of its own).
func CheckJSONCall(r check.Response, id int64, text string) error {
	if err := check.Call(r, id, text); err != nil {
		return err
	}
	if mt, _, _ := mime.ParseMediaType(r.ContentType); mt != "application/json" {
		return &check.Error{Kind: "media-type", Detail: fmt.Sprintf("Content-Type %q, want application/json", r.ContentType)}
	}
	return nil
}

// CallProgress sends tools/call progress with a progressToken and checks
// the streamed answer: every progress notification for the token, none for
// another, then the echo.
func (c *Conn) CallProgress(id int64, text, token string, steps int) error {
	b := append(c.body[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":`...)
	b = strconv.AppendQuote(b, token)
	if c.ep.Modern {
		b = append(b, `,"io.modelcontextprotocol/protocolVersion":"`+configs.ProtocolModern+
			`","io.modelcontextprotocol/clientCapabilities":{}`...)
	}
	b = append(b, `},"arguments":{"text":`...)
	b = strconv.AppendQuote(b, text)
	b = append(b, `}}}`...)
	c.body = b
	if c.ep.Modern {
		r, _, err := c.Send(http.MethodPost, modernProgressHeaders, b)
		if err != nil {
			return err
		}
		return check.ProgressComplete(r, id, text, token, steps)
	}
	r, _, err := c.Do(http.MethodPost, b)
	if err != nil {
		return err
	}
	return check.Progress(r, id, text, token, steps)
}

// EndSession sends DELETE for the current session, if any. Its answer is
// not judged: it is cleanup between slices.
func (c *Conn) EndSession() {
	if c.session == "" || c.nc == nil {
		return
	}
	_, _, _ = c.Do(http.MethodDelete, nil)
	c.session = ""
}

// EchoText makes the text of one call into buf: distinct per worker and
// request, so that an answer routed to the wrong request (or session)
// fails the check.
func EchoText(buf []byte, worker int, seq int64) []byte {
	buf = append(buf[:0], "hello from w"...)
	buf = strconv.AppendInt(buf, int64(worker), 10)
	buf = append(buf, " #"...)
	buf = strconv.AppendInt(buf, seq, 10)
	return buf
}
