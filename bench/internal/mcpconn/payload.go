package mcpconn

import (
	"fmt"
	"mime"
	"net/http"
	"strconv"

	"github.com/saguaro-go/saguaro/bench/internal/check"
	"github.com/saguaro-go/saguaro/bench/internal/payload"
)

// CallEcho sends tools/call echo whose text is head followed by e.Body,
// JSON-encoded by e.AppendJSON (encoding/json: right for any text, where
// Call's quoting is only right for plain ASCII), and checks the answer
// with check.LongCall (resultType "complete" too when modern; and
// application/json when the endpoint is JSONOnly). in and out are the
// bytes of the request and response bodies, also when the check fails.
func (c *Conn) CallEcho(id int64, e *payload.Echo, head []byte) (in, out int, err error) {
	b := append(c.body[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"tools/call","params":{"name":"echo",`...)
	if c.ep.Modern {
		b = append(b, modernMeta...)
		b = append(b, ',')
	}
	b = append(b, `"arguments":{"text":`...)
	b = e.AppendJSON(b, head)
	b = append(b, `}}}`...)
	c.body = b
	headers := ""
	if c.ep.Modern {
		headers = modernEchoHeaders
	}
	r, _, err := c.Send(http.MethodPost, headers, b)
	if err != nil {
		return len(b), 0, err
	}
	if err := check.LongCall(r, id, c.ep.Modern, string(head), e.Body); err != nil {
		return len(b), len(r.Body), err
	}
	return len(b), len(r.Body), c.jsonOnly(r)
}

// ReadResource sends resources/read of uri and checks the answer with
// check.ResourceRead: one text entry for uri, of media type mimeType,
// equal to text (resultType "complete" too when modern; application/json
// when the endpoint is JSONOnly). in and out are the bytes of the request
// and response bodies, also when the check fails.
func (c *Conn) ReadResource(id int64, uri, mimeType, text string) (in, out int, err error) {
	b := append(c.body[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"resources/read","params":{`...)
	if c.ep.Modern {
		b = append(b, modernMeta...)
		b = append(b, ',')
	}
	b = append(b, `"uri":`...)
	b = payload.AppendString(b, uri)
	b = append(b, `}}`...)
	c.body = b
	headers := ""
	if c.ep.Modern {
		// Mcp-Name mirrors params.uri; the URIs here are plain ASCII.
		headers = "Mcp-Method: resources/read\r\nMcp-Name: " + uri + "\r\n"
	}
	r, _, err := c.Send(http.MethodPost, headers, b)
	if err != nil {
		return len(b), 0, err
	}
	if err := check.ResourceRead(r, id, c.ep.Modern, uri, mimeType, text); err != nil {
		return len(b), len(r.Body), err
	}
	return len(b), len(r.Body), c.jsonOnly(r)
}

// jsonOnly is CheckJSONCall's media-type rule when the endpoint asks for
// it.
func (c *Conn) jsonOnly(r check.Response) error {
	if !c.ep.JSONOnly {
		return nil
	}
	if mt, _, _ := mime.ParseMediaType(r.ContentType); mt != "application/json" {
		return &check.Error{Kind: "media-type", Detail: fmt.Sprintf("Content-Type %q, want application/json", r.ContentType)}
	}
	return nil
}
