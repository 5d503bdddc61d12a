package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/check"
)

// ProtocolVersion is the revision every session speaks: the legacy
// (session) protocol, initialize first.
const ProtocolVersion = "2025-11-25"

// endpoint is where one configuration is reached: a server, or the
// proxy in front of replicas.
type endpoint struct {
	addr string // host:port, loopback
	path string
}

func newEndpoint(mcpURL string) (*endpoint, error) {
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
	return &endpoint{addr: u.Host, path: u.EscapedPath()}, nil
}

// conn is one keep-alive HTTP/1.1 connection speaking MCP in raw bytes
// (requests written from a reused buffer, responses parsed by
// http.ReadResponse), as cmd/loadgen's, so that the load generator costs
// little and the same in every configuration. A conn belongs to one
// goroutine.
type conn struct {
	ep      *endpoint
	nc      net.Conn
	br      *bufio.Reader
	timeout time.Duration
	session string // Mcp-Session-Id once initialized
	wbuf    []byte
	body    []byte
	rbuf    bytes.Buffer
	closed  bool // the server asked to close; redial before the next request
}

func dial(ep *endpoint, timeout time.Duration) (*conn, error) {
	c := &conn{ep: ep, timeout: timeout}
	if err := c.redial(); err != nil {
		return nil, err
	}
	return c, nil
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
	if c.br == nil {
		c.br = bufio.NewReaderSize(nc, 16<<10)
	} else {
		c.br.Reset(nc)
	}
	c.closed = false
	return nil
}

// do sends one request and reads the whole response; the body is valid
// until the next call. An error is a transport error: the connection's
// state is unknown.
func (c *conn) do(method string, body []byte) (check.Response, http.Header, error) {
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
	w = append(w, "\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: "+ProtocolVersion+"\r\n"...)
	if c.session != "" {
		w = append(w, "Mcp-Session-Id: "...)
		w = append(w, c.session...)
		w = append(w, "\r\n"...)
	}
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
	`","capabilities":{},"clientInfo":{"name":"saguaro-clusterbench","version":"0"}}}`

var initializedBody = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

// initialize opens a new session on this connection (forgetting any
// previous one) and sends notifications/initialized; both answers are
// checked.
func (c *conn) initialize(id int64) error {
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
	if err := check.Initialize(r, id, sid, true, ProtocolVersion); err != nil {
		return err
	}
	c.session = sid
	r, _, err = c.do(http.MethodPost, initializedBody)
	if err != nil {
		return err
	}
	return check.Accepted(r)
}

// call sends tools/call echo with the given id and text and judges the
// answer (judgeCall).
func (c *conn) call(id int64, text string) error {
	b := append(c.body[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"tools/call","params":{"name":"echo","arguments":{"text":`...)
	b = strconv.AppendQuote(b, text) // ASCII without escapes: valid JSON
	b = append(b, `}}}`...)
	c.body = b
	r, _, err := c.do(http.MethodPost, b)
	if err != nil {
		return err
	}
	return judgeCall(r, id, text)
}

// judgeCall is check.Call (HTTP 200, a JSON-RPC result for id, one text
// block equal to text) and, since the echo tool emits nothing before its
// result, the answer must be application/json: an event stream here would
// mean the JSON path was not the one measured (and SSE through a proxy is
// a case of its own).
func judgeCall(r check.Response, id int64, text string) error {
	if err := check.Call(r, id, text); err != nil {
		return err
	}
	if mt, _, _ := mime.ParseMediaType(r.ContentType); mt != "application/json" {
		return &check.Error{Kind: "media-type", Detail: fmt.Sprintf("Content-Type %q, want application/json", r.ContentType)}
	}
	return nil
}

// endSession sends DELETE for the session, if any; its answer is not
// judged (cleanup between slices).
func (c *conn) endSession() {
	if c.session == "" || c.nc == nil {
		return
	}
	_, _, _ = c.do(http.MethodDelete, nil)
	c.session = ""
}

// echoText makes the text of one call: distinct per connection and
// request, so that an answer routed to the wrong request (or session)
// fails the check.
func echoText(buf []byte, worker int, seq int64) []byte {
	buf = append(buf[:0], "hello from w"...)
	buf = strconv.AppendInt(buf, int64(worker), 10)
	buf = append(buf, " #"...)
	buf = strconv.AppendInt(buf, seq, 10)
	return buf
}
