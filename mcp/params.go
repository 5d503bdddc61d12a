package mcp

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// Params are read member by member with wire.EachMember: names match
// case-sensitively (encoding/json would accept "NAME" for "name"), types
// are checked before any handler runs, and the hot methods decode without
// reflection. Unknown members are ignored, as MCP allows extensions.

// parseMeta reads _meta: an object whose progressToken, when present, is a
// string or a number.
func parseMeta(val []byte) (RequestMeta, *wire.Error) {
	raw, progress, err := protocol.ReadMeta(val)
	return RequestMeta{ProgressToken: ProgressToken{raw: progress}, Raw: raw}, err
}

// commonParams collects _meta; methods call it for keys they do not know.
func metaParam(key, val []byte, meta *RequestMeta) *wire.Error {
	if wire.KeyIs(key, "_meta") {
		m, err := parseMeta(val)
		*meta = m
		return err
	}
	return nil
}

func parsePlain(params json.RawMessage) (RequestMeta, *wire.Error) {
	var meta RequestMeta
	err := protocol.EachParam(params, func(key, val []byte) *wire.Error { return metaParam(key, val, &meta) })
	return meta, err
}

func parseList(params json.RawMessage) (cursor string, meta RequestMeta, err *wire.Error) {
	err = protocol.EachParam(params, func(key, val []byte) *wire.Error {
		if wire.KeyIs(key, "cursor") {
			if protocol.IsNull(val) {
				return nil
			}
			var e *wire.Error
			cursor, e = protocol.ParamString(val, "cursor")
			return e
		}
		return metaParam(key, val, &meta)
	})
	return
}

func parseToolCall(t *wire.Tape, params json.RawMessage) (name string, args json.RawMessage, meta RequestMeta, err *wire.Error) {
	p := protocol.ReadToolCall(t, params)
	return toolCallOf(&p)
}

// toolCallOf is what a read of tools/call params found.
func toolCallOf(p *protocol.ToolCall) (string, json.RawMessage, RequestMeta, *wire.Error) {
	return p.Name, p.Args, RequestMeta{ProgressToken: ProgressToken{raw: p.Progress}, Raw: p.Meta}, p.Check()
}

func parseURI(params json.RawMessage) (uri string, meta RequestMeta, err *wire.Error) {
	has := false
	err = protocol.EachParam(params, func(key, val []byte) *wire.Error {
		if wire.KeyIs(key, "uri") {
			var e *wire.Error
			uri, e = protocol.ParamString(val, "uri")
			has = true
			return e
		}
		return metaParam(key, val, &meta)
	})
	if err == nil && !has {
		err = protocol.Missing("uri")
	}
	return
}

func stringMap(val []byte, field string) (map[string]string, *wire.Error) {
	m := map[string]string{}
	if protocol.IsNull(val) {
		return m, nil
	}
	if err := protocol.ParamObject(val, field); err != nil {
		return nil, err
	}
	var perr *wire.Error
	_ = wire.EachMember(val, func(k, v []byte) error {
		s, ok := wire.Unquote(v)
		if !ok {
			perr = protocol.InvalidParams("%q values must be strings", field)
			return protocol.ErrStop
		}
		m[wire.Key(k)] = s
		return nil
	})
	return m, perr
}

func parsePromptGet(params json.RawMessage) (name string, args map[string]string, meta RequestMeta, err *wire.Error) {
	hasName := false
	err = protocol.EachParam(params, func(key, val []byte) *wire.Error {
		switch {
		case wire.KeyIs(key, "name"):
			var e *wire.Error
			name, e = protocol.ParamString(val, "name")
			hasName = true
			return e
		case wire.KeyIs(key, "arguments"):
			var e *wire.Error
			args, e = stringMap(val, "arguments")
			return e
		}
		return metaParam(key, val, &meta)
	})
	if err == nil && !hasName {
		err = protocol.Missing("name")
	}
	if args == nil {
		args = map[string]string{}
	}
	return
}

func parseComplete(params json.RawMessage) (ref CompletionRef, argName, argValue string, ctxArgs map[string]string, meta RequestMeta, err *wire.Error) {
	hasRef, hasArg := false, false
	err = protocol.EachParam(params, func(key, val []byte) *wire.Error {
		switch {
		case wire.KeyIs(key, "ref"):
			hasRef = true
			if e := protocol.ParamObject(val, "ref"); e != nil {
				return e
			}
			var perr *wire.Error
			_ = wire.EachMember(val, func(k, v []byte) error {
				switch {
				case wire.KeyIs(k, "type"):
					ref.Type, perr = protocol.ParamString(v, "ref.type")
				case wire.KeyIs(k, "name"):
					ref.Name, perr = protocol.ParamString(v, "ref.name")
				case wire.KeyIs(k, "uri"):
					ref.URI, perr = protocol.ParamString(v, "ref.uri")
				}
				if perr != nil {
					return protocol.ErrStop
				}
				return nil
			})
			if perr != nil {
				return perr
			}
			switch ref.Type {
			case "ref/prompt":
				if ref.Name == "" {
					return protocol.Missing("ref.name")
				}
			case "ref/resource":
				if ref.URI == "" {
					return protocol.Missing("ref.uri")
				}
			default:
				return protocol.InvalidParams(`"ref.type" must be "ref/prompt" or "ref/resource"`)
			}
			return nil
		case wire.KeyIs(key, "argument"):
			hasArg = true
			if e := protocol.ParamObject(val, "argument"); e != nil {
				return e
			}
			gotName, gotValue := false, false
			var perr *wire.Error
			_ = wire.EachMember(val, func(k, v []byte) error {
				switch {
				case wire.KeyIs(k, "name"):
					argName, perr = protocol.ParamString(v, "argument.name")
					gotName = true
				case wire.KeyIs(k, "value"):
					argValue, perr = protocol.ParamString(v, "argument.value")
					gotValue = true
				}
				if perr != nil {
					return protocol.ErrStop
				}
				return nil
			})
			if perr != nil {
				return perr
			}
			if !gotName {
				return protocol.Missing("argument.name")
			}
			if !gotValue {
				return protocol.Missing("argument.value")
			}
			return nil
		case wire.KeyIs(key, "context"):
			if protocol.IsNull(val) {
				return nil
			}
			if e := protocol.ParamObject(val, "context"); e != nil {
				return e
			}
			var perr *wire.Error
			_ = wire.EachMember(val, func(k, v []byte) error {
				if wire.KeyIs(k, "arguments") {
					ctxArgs, perr = stringMap(v, "context.arguments")
					if perr != nil {
						return protocol.ErrStop
					}
				}
				return nil
			})
			return perr
		}
		return metaParam(key, val, &meta)
	})
	if err == nil && !hasRef {
		err = protocol.Missing("ref")
	}
	if err == nil && !hasArg {
		err = protocol.Missing("argument")
	}
	if ctxArgs == nil {
		ctxArgs = map[string]string{}
	}
	return
}

func parseSetLevel(params json.RawMessage) (level LogLevel, meta RequestMeta, err *wire.Error) {
	has := false
	err = protocol.EachParam(params, func(key, val []byte) *wire.Error {
		if wire.KeyIs(key, "level") {
			has = true
			s, e := protocol.ParamString(val, "level")
			if e != nil {
				return e
			}
			l, perr := ParseLogLevel(s)
			if perr != nil {
				return protocol.InvalidParams("unknown log level %q", s)
			}
			level = l
			return nil
		}
		return metaParam(key, val, &meta)
	})
	if err == nil && !has {
		err = protocol.Missing("level")
	}
	return
}

func parseInitialize(params json.RawMessage) (p InitializeParams, meta RequestMeta, err *wire.Error) {
	var hasVersion, hasCaps, hasInfo bool
	err = protocol.EachParam(params, func(key, val []byte) *wire.Error {
		switch {
		case wire.KeyIs(key, "protocolVersion"):
			var e *wire.Error
			p.ProtocolVersion, e = protocol.ParamString(val, "protocolVersion")
			hasVersion = true
			return e
		case wire.KeyIs(key, "capabilities"):
			hasCaps = true
			if e := protocol.ParamObject(val, "capabilities"); e != nil {
				return e
			}
			if uerr := json.Unmarshal(val, &p.Capabilities); uerr != nil {
				return protocol.InvalidParams("capabilities: %s", typeErrorText(uerr))
			}
			return nil
		case wire.KeyIs(key, "clientInfo"):
			hasInfo = true
			if e := protocol.ParamObject(val, "clientInfo"); e != nil {
				return e
			}
			var gotName, gotVersion bool
			var perr *wire.Error
			_ = wire.EachMember(val, func(k, v []byte) error {
				switch {
				case wire.KeyIs(k, "name"):
					p.ClientInfo.Name, perr = protocol.ParamString(v, "clientInfo.name")
					gotName = true
				case wire.KeyIs(k, "version"):
					p.ClientInfo.Version, perr = protocol.ParamString(v, "clientInfo.version")
					gotVersion = true
				case wire.KeyIs(k, "title"):
					p.ClientInfo.Title, perr = protocol.ParamString(v, "clientInfo.title")
				}
				if perr != nil {
					return protocol.ErrStop
				}
				return nil
			})
			if perr != nil {
				return perr
			}
			if !gotName {
				return protocol.Missing("clientInfo.name")
			}
			if !gotVersion {
				return protocol.Missing("clientInfo.version")
			}
			return nil
		}
		return metaParam(key, val, &meta)
	})
	switch {
	case err != nil:
	case !hasVersion:
		err = protocol.Missing("protocolVersion")
	case !hasCaps:
		err = protocol.Missing("capabilities")
	case !hasInfo:
		err = protocol.Missing("clientInfo")
	}
	return
}

func parseCancelled(params json.RawMessage) (id wire.ID, reason string, ok bool) {
	perr := protocol.EachParam(params, func(key, val []byte) *wire.Error {
		switch {
		case wire.KeyIs(key, "requestId"):
			v, good := wire.ParseID(val)
			if !good {
				return protocol.InvalidParams("\"requestId\" must be a string or an integer")
			}
			id = v
		case wire.KeyIs(key, "reason"):
			reason, _ = wire.Unquote(val)
		}
		return nil
	})
	return id, reason, perr == nil && !id.IsZero()
}

// typeErrorText describes a decoding error without echoing Go type names.
func typeErrorText(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%q has the wrong type (%s)", te.Field, te.Value)
	}
	return "malformed"
}
