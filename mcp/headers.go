package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// 2026-07-28 request headers mirror the body for intermediaries:
// MCP-Protocol-Version, Mcp-Method, Mcp-Name and, for tool arguments whose
// schema says "x-mcp-header": "{Name}", Mcp-Param-{Name}. The body is the
// truth; a server that reads it must reject a request whose headers are
// missing or disagree with it (400, HeaderMismatch -32020).

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

// paramHeader is one x-mcp-header annotation of a tool's input schema.
type paramHeader struct {
	name string   // as declared: Mcp-Param-{name}
	path []string // properties from the arguments object down
	typ  string   // "string", "integer" or "boolean"
}

// paramHeaderer is a handler that knows its tools' x-mcp-header
// annotations (the Server); other handlers get no Mcp-Param-* checks.
type paramHeaderer interface {
	paramHeaders(tool string) []paramHeader
}

func isTchar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// scanParamHeaders finds the x-mcp-header annotations of an input schema
// and checks them against the rules clients enforce (a client drops a
// tool that breaks them): the name is a non-empty token, unique without
// regard to case; only on string, integer or boolean properties (never
// number); only on properties reached from the root through "properties"
// alone (not items, combinators, conditionals or $ref).
func scanParamHeaders(schema json.RawMessage) ([]paramHeader, error) {
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, err
	}
	var out []paramHeader
	seen := map[string]bool{}
	var walk func(node any, path []string, reachable bool) error
	walk = func(node any, path []string, reachable bool) error {
		switch n := node.(type) {
		case []any:
			for _, c := range n {
				if err := walk(c, nil, false); err != nil {
					return err
				}
			}
		case map[string]any:
			if x, ok := n["x-mcp-header"]; ok {
				name, _ := x.(string)
				switch {
				case !reachable || len(path) == 0:
					return fmt.Errorf("x-mcp-header %v: only on a property reached through \"properties\" alone", x)
				case name == "":
					return fmt.Errorf("x-mcp-header on %q: the name must be a non-empty string", strings.Join(path, "."))
				}
				for i := 0; i < len(name); i++ {
					if !isTchar(name[i]) {
						return fmt.Errorf("x-mcp-header %q: not an HTTP token", name)
					}
				}
				if seen[strings.ToLower(name)] {
					return fmt.Errorf("x-mcp-header %q: used twice (names are case-insensitive)", name)
				}
				seen[strings.ToLower(name)] = true
				typ, _ := n["type"].(string)
				if typ != "string" && typ != "integer" && typ != "boolean" {
					return fmt.Errorf("x-mcp-header %q: only on string, integer or boolean properties", name)
				}
				out = append(out, paramHeader{name: name, path: append([]string(nil), path...), typ: typ})
			}
			for k, v := range n {
				if k == "properties" {
					if props, ok := v.(map[string]any); ok {
						for pk, pv := range props {
							if err := walk(pv, append(path[:len(path):len(path)], pk), reachable); err != nil {
								return err
							}
						}
						continue
					}
				}
				if err := walk(v, nil, false); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(root, nil, true); err != nil {
		return nil, err
	}
	return out, nil
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
				return errStop
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
func checkParamHeaders(h http.Header, specs []paramHeader, args []byte) *wire.Error {
	for _, ph := range specs {
		hname := "Mcp-Param-" + ph.name
		vals := h.Values(hname)
		body := argumentAt(args, ph.path)
		present := body != nil && !isNull(body)
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
		if !sameValue(v, body, ph.typ) {
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
