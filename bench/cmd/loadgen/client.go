package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/check"
	"github.com/saguaro-go/saguaro/bench/internal/configs"
)

// ProtocolVersion is the revision every workload speaks, except to the
// 2026-07-28 configurations (configs.ProtocolModern).
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

// endpoint is where one server configuration listens.
type endpoint struct {
	addr  string // host:port, loopback
	path  string
	extra []byte // extra header lines, each ending in \r\n
	// modern: speak 2026-07-28 (no session; the revision in every
	// request's header and _meta, with Mcp-Method and Mcp-Name).
	modern bool
}

func newEndpoint(mcpURL string, headers map[string]string) (*endpoint, error) {
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
	ep := &endpoint{addr: u.Host, path: u.EscapedPath()}
	keys := make([]string, 0, len(headers))
	for k := range headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ep.extra = append(ep.extra, k+": "+headers[k]+"\r\n"...)
	}
	return ep, nil
}

// conn is one keep-alive HTTP/1.1 connection speaking MCP over raw bytes:
// requests are written from a reused buffer, responses parsed with
// http.ReadResponse (which handles Content-Length and chunked bodies alike).
// A conn belongs to one goroutine.
type conn struct {
	ep      *endpoint
	nc      net.Conn
	br      *bufio.Reader
	timeout time.Duration
	session string // Mcp-Session-Id, once initialized on a stateful server
	wbuf    []byte
	body    []byte
	rbuf    bytes.Buffer
	closed  bool // the server asked to close; redial before the next request
}

func dial(ep *endpoint, timeout time.Duration) (*conn, error) {
	nc, err := net.DialTimeout("tcp", ep.addr, timeout)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	return &conn{ep: ep, nc: nc, br: bufio.NewReaderSize(nc, 16<<10), timeout: timeout}, nil
}

func (c *conn) Close() error {
	if c.nc == nil {
		return nil
	}
	err := c.nc.Close()
	c.nc = nil
	return err
}

func (c *conn) redial() error {
	_ = c.Close()
	nc, err := net.DialTimeout("tcp", c.ep.addr, c.timeout)
	if err != nil {
		return err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	c.nc = nc
	c.br.Reset(nc)
	c.closed = false
	return nil
}

// do sends one request and reads the whole response. The returned body is
// valid until the next call.
func (c *conn) do(method string, body []byte) (check.Response, http.Header, error) {
	return c.send(method, "", body)
}

// send is do with extra header lines for this request (each ending in
// \r\n).
func (c *conn) send(method, headers string, body []byte) (check.Response, http.Header, error) {
	if c.nc == nil || c.closed {
		if err := c.redial(); err != nil {
			return check.Response{}, nil, err
		}
	}
	w := c.wbuf[:0]
	w = append(w, method...)
	w = append(w, ' ')
	w = append(w, c.ep.path...)
	w = append(w, " HTTP/1.1\r\nHost: "...)
	w = append(w, c.ep.addr...)
	w = append(w, "\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: "...)
	if c.ep.modern {
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
	w = append(w, c.ep.extra...)
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

const initBody = `,"method":"initialize","params":{"protocolVersion":"` + ProtocolVersion +
	`","capabilities":{},"clientInfo":{"name":"saguaro-bench","version":"0"}}}`

var initializedBody = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

// initialize opens a new session on this connection (forgetting any
// previous one without closing it) and sends notifications/initialized.
func (c *conn) initialize(id int64, stateful bool) error {
	c.session = ""
	b := append(c.body[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, initBody...)
	c.body = b
	r, h, err := c.do(http.MethodPost, b)
	if err != nil {
		return err
	}
	sid := h.Get("Mcp-Session-Id")
	if err := check.Initialize(r, id, sid, stateful, ProtocolVersion); err != nil {
		return err
	}
	c.session = sid
	r, _, err = c.do(http.MethodPost, initializedBody)
	if err != nil {
		return err
	}
	return check.Accepted(r)
}

// call sends tools/call echo with the given id and text and checks the
// answer.
func (c *conn) call(id int64, text string) error {
	b := append(c.body[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"tools/call","params":{"name":"echo",`...)
	if c.ep.modern {
		b = append(b, modernMeta...)
		b = append(b, ',')
	}
	b = append(b, `"arguments":{"text":`...)
	b = strconv.AppendQuote(b, text) // text is ASCII without escapes, so this is valid JSON
	b = append(b, `}}}`...)
	c.body = b
	if c.ep.modern {
		r, _, err := c.send(http.MethodPost, modernEchoHeaders, b)
		if err != nil {
			return err
		}
		return check.CallComplete(r, id, text)
	}
	r, _, err := c.do(http.MethodPost, b)
	if err != nil {
		return err
	}
	return check.Call(r, id, text)
}

// callProgress sends tools/call progress with a progressToken and checks
// the streamed answer: every progress notification for the token, none for
// another, then the echo.
func (c *conn) callProgress(id int64, text, token string, steps int) error {
	b := append(c.body[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":`...)
	b = strconv.AppendQuote(b, token)
	if c.ep.modern {
		b = append(b, `,"io.modelcontextprotocol/protocolVersion":"`+configs.ProtocolModern+
			`","io.modelcontextprotocol/clientCapabilities":{}`...)
	}
	b = append(b, `},"arguments":{"text":`...)
	b = strconv.AppendQuote(b, text)
	b = append(b, `}}}`...)
	c.body = b
	if c.ep.modern {
		r, _, err := c.send(http.MethodPost, modernProgressHeaders, b)
		if err != nil {
			return err
		}
		return check.ProgressComplete(r, id, text, token, steps)
	}
	r, _, err := c.do(http.MethodPost, b)
	if err != nil {
		return err
	}
	return check.Progress(r, id, text, token, steps)
}

// endSession sends DELETE for the current session, if any. Its answer is
// not judged: it is cleanup between slices.
func (c *conn) endSession() {
	if c.session == "" || c.nc == nil {
		return
	}
	_, _, _ = c.do(http.MethodDelete, nil)
	c.session = ""
}

// echoText makes the text of one call: distinct per connection and
// request, so a response routed to the wrong request fails the check.
func echoText(buf []byte, worker int, seq int64) []byte {
	buf = append(buf[:0], "hello from w"...)
	buf = strconv.AppendInt(buf, int64(worker), 10)
	buf = append(buf, " #"...)
	buf = strconv.AppendInt(buf, seq, 10)
	return buf
}
