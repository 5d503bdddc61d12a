package protocol

import (
	"encoding/json"
	"errors"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// Params are read member by member with wire.EachMember: names match
// case-sensitively (encoding/json would accept "NAME" for "name"), types
// are checked before any handler runs, and the hot methods decode without
// reflection. Unknown members are ignored, as MCP allows extensions.

// The _meta keys of the 2026-07-28 revision.
const (
	MetaServerInfo     = "io.modelcontextprotocol/serverInfo"
	MetaProtocol       = "io.modelcontextprotocol/protocolVersion"
	MetaClientCaps     = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo     = "io.modelcontextprotocol/clientInfo"
	MetaLogLevel       = "io.modelcontextprotocol/logLevel"
	MetaSubscriptionID = "io.modelcontextprotocol/subscriptionId"
)

// InvalidParams returns an InvalidParams error with a formatted message.
func InvalidParams(format string, args ...any) *wire.Error {
	return wire.Errorf(wire.InvalidParams, "Invalid params: "+format, args...)
}

// Missing is the InvalidParams error of a required member that is absent.
func Missing(field string) *wire.Error { return InvalidParams("missing %q", field) }

var (
	errParamsNotObject = InvalidParams("params must be an object")
	// ErrStop ends a wire.EachMember walk early.
	ErrStop = errors.New("stop")
)

// EachParam walks a params object; nil params are an empty object.
func EachParam(params json.RawMessage, fn func(key, val []byte) *wire.Error) *wire.Error {
	return EachParamOn(nil, params, fn)
}

// EachParamOn is EachParam jumping over the long values the tape knows.
func EachParamOn(t *wire.Tape, params json.RawMessage, fn func(key, val []byte) *wire.Error) *wire.Error {
	if params == nil {
		return nil
	}
	if params[0] != '{' {
		return errParamsNotObject
	}
	var perr *wire.Error
	_ = t.EachMember(params, func(key, val []byte) error {
		if perr = fn(key, val); perr != nil {
			return ErrStop
		}
		return nil
	})
	return perr
}

// IsNull reports whether a raw value is null.
func IsNull(val []byte) bool { return len(val) == 4 && string(val) == "null" }

// ParamString reads a string member.
func ParamString(val []byte, field string) (string, *wire.Error) {
	s, ok := wire.Unquote(val)
	if !ok {
		return "", InvalidParams("%q must be a string", field)
	}
	return s, nil
}

// ParamObject checks that a member is an object.
func ParamObject(val []byte, field string) *wire.Error {
	if val[0] != '{' {
		return InvalidParams("%q must be an object", field)
	}
	return nil
}

// ReadMeta checks _meta: null (read as absent) or an object whose
// progressToken, when present, is a string or a number. It returns the
// object and the token's raw JSON ("" for none).
func ReadMeta(val []byte) (meta json.RawMessage, progress string, err *wire.Error) {
	if IsNull(val) {
		return nil, "", nil
	}
	if val[0] != '{' {
		return nil, "", InvalidParams(`"_meta" must be an object`)
	}
	_ = wire.EachMember(val, func(key, v []byte) error {
		if wire.KeyIs(key, "progressToken") {
			switch c := v[0]; {
			case c == '"' || c == '-' || (c >= '0' && c <= '9'):
				progress = string(v)
			default:
				err = InvalidParams(`"progressToken" must be a string or a number`)
				return ErrStop
			}
		}
		return nil
	})
	return val, progress, err
}

// ToolCall reads tools/call params member by member, in the engine's own
// pass or in a transport's (Call.Tool), which saves the engine another.
type ToolCall struct {
	Name     string
	Args     json.RawMessage // nil when absent or null
	Meta     json.RawMessage // nil when absent or null
	Progress string          // the progressToken's raw JSON, "" for none
	Err      *wire.Error     // the first error met
	HasName  bool
}

// Visit reads one member; after an error the caller stops.
func (p *ToolCall) Visit(key, val []byte) *wire.Error {
	switch {
	case wire.KeyIs(key, "name"):
		var e *wire.Error
		p.Name, e = ParamString(val, "name")
		p.HasName = true
		return e
	case wire.KeyIs(key, "arguments"):
		if IsNull(val) {
			return nil
		}
		p.Args = val
		return ParamObject(val, "arguments")
	case wire.KeyIs(key, "_meta"):
		var e *wire.Error
		p.Meta, p.Progress, e = ReadMeta(val)
		return e
	}
	return nil
}

// Check returns the first error, or Missing("name") when the name never
// came.
func (p *ToolCall) Check() *wire.Error {
	if p.Err == nil && !p.HasName {
		return Missing("name")
	}
	return p.Err
}

// ReadToolCall reads tools/call params.
func ReadToolCall(t *wire.Tape, params json.RawMessage) ToolCall {
	var p ToolCall
	p.Err = EachParamOn(t, params, p.Visit)
	return p
}

// Log attribute keys of a call, as package mcp exports them.
const (
	AttrMethod    = "mcp.method"
	AttrID        = "mcp.id"
	AttrTool      = "mcp.tool"
	AttrPrompt    = "mcp.prompt"
	AttrResource  = "mcp.resource"
	AttrSession   = "mcp.session"
	AttrRevision  = "mcp.revision"
	AttrErrorCode = "mcp.error_code"
	AttrRelayedTo = "mcp.relayed_to"
)
