package protocol

import (
	"encoding/json"
	"strconv"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// Modern is what ReadModern reads of a 2026-07-28 request's params.
type Modern struct {
	// Version is _meta protocolVersion (HasVersion: present).
	Version    string
	HasVersion bool
	// Caps and LogLevel are _meta clientCapabilities and logLevel as
	// sent, nil when absent.
	Caps     json.RawMessage
	LogLevel json.RawMessage
	// Progress: _meta carries a progressToken.
	Progress bool
	// Name is the member the Mcp-Name header mirrors (NameField), when
	// present (HasName).
	Name    string
	HasName bool
	// Args is a tools/call's arguments, nil when absent.
	Args json.RawMessage
	// Input: params may carry inputResponses or requestState.
	Input bool
	// Tool is a tools/call's params, read in the same pass (IsTool).
	Tool   ToolCall
	IsTool bool
}

// NameField is the params member the Mcp-Name header mirrors for a method,
// "" for none.
func NameField(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		return "taskId"
	}
	return ""
}

const rev20260728Quoted = `"2026-07-28"`

// unquoteVersion is wire.Unquote for _meta protocolVersion, without
// allocating for the revision clients send.
func unquoteVersion(v []byte) (string, bool) {
	if string(v) == rev20260728Quoted {
		return rev20260728Quoted[1 : len(rev20260728Quoted)-1], true
	}
	return wire.Unquote(v)
}

// ReadModern reads a 2026-07-28 request's params in one pass: its _meta,
// and for the methods NameField names, that member, the arguments and
// whether input answers may be there. It checks only the types of what
// it reads; what is required is the caller's to check, in its own order.
func ReadModern(t *wire.Tape, method string, params json.RawMessage) (Modern, *wire.Error) {
	var m Modern
	field := NameField(method)
	m.Input = field == "" // only seen for the methods with a name field
	m.IsTool = method == "tools/call"
	perr := EachParamOn(t, params, func(key, val []byte) *wire.Error {
		if m.IsTool && m.Tool.Err == nil {
			m.Tool.Err = m.Tool.Visit(key, val)
		}
		switch {
		case wire.KeyIs(key, "_meta"):
		case field == "":
			return nil
		case wire.KeyIs(key, field):
			if m.IsTool && m.Tool.Err == nil {
				m.Name, m.HasName = m.Tool.Name, true // just read by Visit
			} else {
				m.Name, m.HasName = wire.Unquote(val)
			}
			return nil
		case wire.KeyIs(key, "arguments"):
			m.Args = val
			return nil
		case wire.KeyIs(key, "inputResponses"), wire.KeyIs(key, "requestState"):
			m.Input = true
			return nil
		default:
			return nil
		}
		if val[0] != '{' {
			return InvalidParams(`"_meta" must be an object`)
		}
		var merr *wire.Error
		_ = wire.EachMember(val, func(k, v []byte) error {
			switch {
			case wire.KeyIs(k, MetaProtocol):
				s, ok := unquoteVersion(v)
				if !ok {
					merr = InvalidParams(`_meta %q must be a string`, MetaProtocol)
					return ErrStop
				}
				m.Version, m.HasVersion = s, true
			case wire.KeyIs(k, MetaClientCaps):
				m.Caps = v
			case wire.KeyIs(k, MetaLogLevel):
				m.LogLevel = v
			case wire.KeyIs(k, "progressToken"):
				m.Progress = true
			}
			return nil
		})
		return merr
	})
	return m, perr
}

// MissingMeta is the error of a 2026-07-28 request whose _meta lacks
// protocolVersion or clientCapabilities (nil when it has both).
func (m *Modern) MissingMeta() *wire.Error {
	if m.HasVersion && m.Caps != nil {
		return nil
	}
	field := MetaProtocol
	if m.HasVersion {
		field = MetaClientCaps
	}
	return &wire.Error{Code: wire.InvalidParams,
		Message: "Invalid params: _meta must carry " + field, Data: map[string]string{"field": field}}
}

// Context reads the client's capabilities (decoded by eng) and the log
// level of a request whose _meta passed MissingMeta: LogOff when it asked
// for no log messages.
func (m *Modern) Context(eng Engine) (client any, level LogLevel, err *wire.Error) {
	if client = eng.Client(m.Caps); client == nil {
		return nil, 0, InvalidParams("_meta %q must be a ClientCapabilities object", MetaClientCaps)
	}
	level = LogOff
	if m.LogLevel != nil && !IsNull(m.LogLevel) {
		s, _ := wire.Unquote(m.LogLevel)
		l, ok := ParseLogLevel(s)
		if !ok {
			return nil, 0, InvalidParams("_meta %q is not a log level", MetaLogLevel)
		}
		level = l
	}
	return client, level, nil
}

// UnsupportedVersion is -32022 for a requested version this server does
// not serve, with data {supported, requested}.
func UnsupportedVersion(requested string) *wire.Error {
	supported := make([]string, 0, 4)
	for _, rev := range AllRevisions() {
		supported = append(supported, rev.String())
	}
	return &wire.Error{Code: wire.UnsupportedProtocolVersion,
		Message: "Unsupported protocol version: " + strconv.Quote(requested),
		Data:    map[string]any{"supported": supported, "requested": requested}}
}

// HasModernMeta reports whether params._meta names a protocol version,
// the mark of a 2026-07-28 request.
func HasModernMeta(params json.RawMessage) bool {
	found := false
	_ = EachParam(params, func(key, val []byte) *wire.Error {
		if wire.KeyIs(key, "_meta") && len(val) > 0 && val[0] == '{' {
			_ = wire.EachMember(val, func(k, _ []byte) error {
				if wire.KeyIs(k, MetaProtocol) {
					found = true
				}
				return nil
			})
		}
		return nil
	})
	return found
}
