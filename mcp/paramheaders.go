package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
)

// paramHeaderer is a handler that knows its tools' x-mcp-header
// annotations and who may see each tool (the Server); other handlers get no
// Mcp-Param-* checks.
type paramHeaderer interface {
	paramHeaders(ctx context.Context, tool string, req func() *Request) []protocol.ParamHeader
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
func scanParamHeaders(schema json.RawMessage) ([]protocol.ParamHeader, error) {
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, err
	}
	var out []protocol.ParamHeader
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
				out = append(out, protocol.ParamHeader{Name: name, Path: append([]string(nil), path...), Type: typ})
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
