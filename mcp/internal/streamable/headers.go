package streamable

import (
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/internal/jsonstr"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// The request headers of both eras: Accept, Content-Type and
// MCP-Protocol-Version. 2026-07-28 request headers also mirror the body for
// intermediaries: MCP-Protocol-Version, Mcp-Method, Mcp-Name and, for tool
// arguments whose schema says "x-mcp-header": "{Name}", Mcp-Param-{Name}.
// The body is the truth; a server that reads it must reject a request
// whose headers are missing or disagree with it (400, HeaderMismatch
// -32020).

const base64Prefix, base64Suffix = "=?base64?", "?="

// decodeHeaderValue reads one header value: optional whitespace around it
// is not part of it (RFC 9110 §5.5); "=?base64?…?=" carries UTF-8 in
// standard, padded base64; anything else is taken literally and must be
// visible ASCII or inner spaces. It reports false for an invalid value.
func decodeHeaderValue(v string) (string, bool) {
	v = strings.Trim(v, " \t")
	if len(v) >= len(base64Prefix)+len(base64Suffix) && strings.HasPrefix(v, base64Prefix) && strings.HasSuffix(v, base64Suffix) {
		b, err := base64.StdEncoding.Strict().DecodeString(v[len(base64Prefix) : len(v)-len(base64Suffix)])
		if err != nil || !utf8.Valid(b) {
			return "", false
		}
		return string(b), true
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return "", false
		}
	}
	return v, true
}

// oneHeader returns the single value of a header; ok is false when it is
// absent or repeated.
func oneHeader(h http.Header, name string) (string, bool) {
	v := h.Values(name)
	if len(v) != 1 {
		return "", false
	}
	return v[0], true
}

func headerMismatch(format string, args ...any) *wire.Error {
	return wire.Errorf(wire.HeaderMismatch, "Header mismatch: "+format, args...)
}

// argumentAt finds the raw value at path in an arguments object; nil when
// absent.
func argumentAt(args []byte, path []string) []byte {
	cur := args
	for _, p := range path {
		if len(cur) == 0 || cur[0] != '{' {
			return nil
		}
		var next []byte
		_ = wire.EachMember(cur, func(k, v []byte) error {
			if wire.KeyIs(k, p) {
				next = v
				return protocol.ErrStop
			}
			return nil
		})
		if next == nil {
			return nil
		}
		cur = next
	}
	return cur
}

// checkParamHeaders compares the Mcp-Param-* headers of a tools/call with
// its arguments.
func checkParamHeaders(h http.Header, specs []protocol.ParamHeader, args []byte) *wire.Error {
	for _, ph := range specs {
		hname := "Mcp-Param-" + ph.Name
		vals := h.Values(hname)
		body := argumentAt(args, ph.Path)
		present := body != nil && !protocol.IsNull(body)
		switch {
		case len(vals) > 1:
			return headerMismatch("%s is repeated", hname)
		case !present && len(vals) == 1:
			return headerMismatch("%s is set but the argument is absent", hname)
		case !present:
			continue
		case len(vals) == 0:
			return headerMismatch("%s is required: the argument is in the body", hname)
		}
		v, ok := decodeHeaderValue(vals[0])
		if !ok {
			return headerMismatch("%s has an invalid value", hname)
		}
		if !sameValue(v, body, ph.Type) {
			return headerMismatch("%s does not match the argument", hname)
		}
	}
	return nil
}

// sameValue compares a decoded header value with a JSON value: strings
// exactly, integers numerically, booleans as true/false.
func sameValue(header string, body []byte, typ string) bool {
	switch {
	case body[0] == '"':
		s, ok := wire.Unquote(body)
		return ok && s == header
	case typ == "integer" || body[0] == '-' || body[0] >= '0' && body[0] <= '9':
		if !isDecimal(header) {
			return false
		}
		a, ok1 := new(big.Rat).SetString(header)
		b, ok2 := new(big.Rat).SetString(string(body))
		return ok1 && ok2 && a.Cmp(b) == 0
	}
	return header == string(body)
}

// isDecimal reports whether s is an optionally signed decimal number.
func isDecimal(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	dot := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
		case c == '.' && !dot && i > 0 && i < len(s)-1:
			dot = true
		default:
			return false
		}
	}
	return true
}

// accepts reports whether an Accept header admits JSON and event streams.
func accepts(header []string) (json, stream bool) {
	for _, h := range header {
		for more := true; more; {
			var part string
			part, h, more = strings.Cut(h, ",")
			mt := strings.TrimSpace(part)
			if i := strings.IndexByte(mt, ';'); i >= 0 {
				mt = strings.TrimSpace(mt[:i])
			}
			switch strings.ToLower(mt) {
			case "*/*":
				json, stream = true, true
			case "application/json", "application/*":
				json = true
			case "text/event-stream", "text/*":
				stream = true
			}
		}
	}
	return json, stream
}

// checkHeaders applies the POST header rules and reads the revision the
// client states (zero when it states none).
func checkHeaders(r *http.Request) (protocol.Revision, controller.Reply) {
	json, stream := accepts(r.Header.Values("Accept"))
	if !json || !stream {
		return 0, errorReply(http.StatusNotAcceptable, wire.NewError(wire.InvalidRequest,
			"Not Acceptable: Accept must list application/json and text/event-stream"))
	}
	if !isJSONContent(r.Header.Get("Content-Type")) {
		return 0, errorReply(http.StatusUnsupportedMediaType, wire.NewError(wire.InvalidRequest,
			"Unsupported Media Type: Content-Type must be application/json"))
	}
	return protocolHeader(r)
}

// protocolHeader reads MCP-Protocol-Version: absent is zero (2025-03-26);
// a version this server does not speak is 400.
func protocolHeader(r *http.Request) (protocol.Revision, controller.Reply) {
	v := r.Header.Values("Mcp-Protocol-Version")
	if len(v) == 0 {
		return 0, nil
	}
	if len(v) == 1 {
		if rev, ok := protocol.ParseRevision(v[0]); ok && rev.Legacy() {
			return rev, nil
		}
	}
	requested := strings.Join(v, ",")
	e := wire.NewError(wire.UnsupportedProtocolVersion, "Unsupported protocol version: "+strconv.Quote(requested))
	e.Data = json.RawMessage(unsupportedData(requested))
	return 0, errorReply(http.StatusBadRequest, e)
}

// unsupportedData is the data of an UnsupportedProtocolVersion error:
// {supported, requested}.
func unsupportedData(requested string) []byte {
	b := []byte(`{"supported":[`)
	for i, rev := range protocol.LegacyRevisions() {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.AppendString(b, rev.String())
	}
	b = append(b, `],"requested":`...)
	b = jsonstr.AppendString(b, requested)
	return append(b, '}')
}

// isJSONContent reports whether a Content-Type is application/json.
func isJSONContent(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/json")
}
