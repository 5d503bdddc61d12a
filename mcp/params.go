package mcp

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// Params are read member by member with wire.EachMember: names match
// case-sensitively (encoding/json would accept "NAME" for "name"), types
// are checked before any handler runs, and the hot methods decode without
// reflection. Unknown members are ignored, as MCP allows extensions.

func invalidParams(format string, args ...any) *wire.Error {
	return wire.Errorf(wire.InvalidParams, "Invalid params: "+format, args...)
}

var (
	errParamsNotObject = invalidParams("params must be an object")
	errStop            = errors.New("stop")
)

// eachParam walks a params object; nil params are an empty object.
func eachParam(params json.RawMessage, fn func(key, val []byte) *wire.Error) *wire.Error {
	if params == nil {
		return nil
	}
	if params[0] != '{' {
		return errParamsNotObject
	}
	var perr *wire.Error
	_ = wire.EachMember(params, func(key, val []byte) error {
		if perr = fn(key, val); perr != nil {
			return errStop
		}
		return nil
	})
	return perr
}

func isNull(val []byte) bool { return len(val) == 4 && string(val) == "null" }

func paramString(val []byte, field string) (string, *wire.Error) {
	s, ok := wire.Unquote(val)
	if !ok {
		return "", invalidParams("%q must be a string", field)
	}
	return s, nil
}

func paramObject(val []byte, field string) *wire.Error {
	if val[0] != '{' {
		return invalidParams("%q must be an object", field)
	}
	return nil
}

func missing(field string) *wire.Error { return invalidParams("missing %q", field) }

// parseMeta reads _meta: an object whose progressToken, when present, is a
// string or a number.
func parseMeta(val []byte) (RequestMeta, *wire.Error) {
	if isNull(val) {
		return RequestMeta{}, nil
	}
	if val[0] != '{' {
		return RequestMeta{}, invalidParams(`"_meta" must be an object`)
	}
	m := RequestMeta{Raw: val}
	var perr *wire.Error
	_ = wire.EachMember(val, func(key, v []byte) error {
		if wire.KeyIs(key, "progressToken") {
			switch c := v[0]; {
			case c == '"' || c == '-' || (c >= '0' && c <= '9'):
				m.ProgressToken = ProgressToken{raw: string(v)}
			default:
				perr = invalidParams(`"progressToken" must be a string or a number`)
				return errStop
			}
		}
		return nil
	})
	return m, perr
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
	err := eachParam(params, func(key, val []byte) *wire.Error { return metaParam(key, val, &meta) })
	return meta, err
}

func parseList(params json.RawMessage) (cursor string, meta RequestMeta, err *wire.Error) {
	err = eachParam(params, func(key, val []byte) *wire.Error {
		if wire.KeyIs(key, "cursor") {
			if isNull(val) {
				return nil
			}
			var e *wire.Error
			cursor, e = paramString(val, "cursor")
			return e
		}
		return metaParam(key, val, &meta)
	})
	return
}

func parseToolCall(params json.RawMessage) (name string, args json.RawMessage, meta RequestMeta, err *wire.Error) {
	var p toolCallParams
	p.err = eachParam(params, p.visit)
	return p.result()
}

// toolCallParams reads tools/call params member by member: parseToolCall,
// or a transport's own pass over the params (Call.tool) that saves the
// engine another one.
type toolCallParams struct {
	name    string
	args    json.RawMessage
	meta    RequestMeta
	err     *wire.Error
	hasName bool
}

// visit reads one member; after an error the caller stops.
func (p *toolCallParams) visit(key, val []byte) *wire.Error {
	switch {
	case wire.KeyIs(key, "name"):
		var e *wire.Error
		p.name, e = paramString(val, "name")
		p.hasName = true
		return e
	case wire.KeyIs(key, "arguments"):
		if isNull(val) {
			return nil
		}
		p.args = val
		return paramObject(val, "arguments")
	}
	return metaParam(key, val, &p.meta)
}

// result is what parseToolCall returns once every member is read or the
// first error is in p.err.
func (p *toolCallParams) result() (string, json.RawMessage, RequestMeta, *wire.Error) {
	err := p.err
	if err == nil && !p.hasName {
		err = missing("name")
	}
	return p.name, p.args, p.meta, err
}

func parseURI(params json.RawMessage) (uri string, meta RequestMeta, err *wire.Error) {
	has := false
	err = eachParam(params, func(key, val []byte) *wire.Error {
		if wire.KeyIs(key, "uri") {
			var e *wire.Error
			uri, e = paramString(val, "uri")
			has = true
			return e
		}
		return metaParam(key, val, &meta)
	})
	if err == nil && !has {
		err = missing("uri")
	}
	return
}

func stringMap(val []byte, field string) (map[string]string, *wire.Error) {
	m := map[string]string{}
	if isNull(val) {
		return m, nil
	}
	if err := paramObject(val, field); err != nil {
		return nil, err
	}
	var perr *wire.Error
	_ = wire.EachMember(val, func(k, v []byte) error {
		s, ok := wire.Unquote(v)
		if !ok {
			perr = invalidParams("%q values must be strings", field)
			return errStop
		}
		m[wire.Key(k)] = s
		return nil
	})
	return m, perr
}

func parsePromptGet(params json.RawMessage) (name string, args map[string]string, meta RequestMeta, err *wire.Error) {
	hasName := false
	err = eachParam(params, func(key, val []byte) *wire.Error {
		switch {
		case wire.KeyIs(key, "name"):
			var e *wire.Error
			name, e = paramString(val, "name")
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
		err = missing("name")
	}
	if args == nil {
		args = map[string]string{}
	}
	return
}

func parseComplete(params json.RawMessage) (ref CompletionRef, argName, argValue string, ctxArgs map[string]string, meta RequestMeta, err *wire.Error) {
	hasRef, hasArg := false, false
	err = eachParam(params, func(key, val []byte) *wire.Error {
		switch {
		case wire.KeyIs(key, "ref"):
			hasRef = true
			if e := paramObject(val, "ref"); e != nil {
				return e
			}
			var perr *wire.Error
			_ = wire.EachMember(val, func(k, v []byte) error {
				switch {
				case wire.KeyIs(k, "type"):
					ref.Type, perr = paramString(v, "ref.type")
				case wire.KeyIs(k, "name"):
					ref.Name, perr = paramString(v, "ref.name")
				case wire.KeyIs(k, "uri"):
					ref.URI, perr = paramString(v, "ref.uri")
				}
				if perr != nil {
					return errStop
				}
				return nil
			})
			if perr != nil {
				return perr
			}
			switch ref.Type {
			case "ref/prompt":
				if ref.Name == "" {
					return missing("ref.name")
				}
			case "ref/resource":
				if ref.URI == "" {
					return missing("ref.uri")
				}
			default:
				return invalidParams(`"ref.type" must be "ref/prompt" or "ref/resource"`)
			}
			return nil
		case wire.KeyIs(key, "argument"):
			hasArg = true
			if e := paramObject(val, "argument"); e != nil {
				return e
			}
			gotName, gotValue := false, false
			var perr *wire.Error
			_ = wire.EachMember(val, func(k, v []byte) error {
				switch {
				case wire.KeyIs(k, "name"):
					argName, perr = paramString(v, "argument.name")
					gotName = true
				case wire.KeyIs(k, "value"):
					argValue, perr = paramString(v, "argument.value")
					gotValue = true
				}
				if perr != nil {
					return errStop
				}
				return nil
			})
			if perr != nil {
				return perr
			}
			if !gotName {
				return missing("argument.name")
			}
			if !gotValue {
				return missing("argument.value")
			}
			return nil
		case wire.KeyIs(key, "context"):
			if isNull(val) {
				return nil
			}
			if e := paramObject(val, "context"); e != nil {
				return e
			}
			var perr *wire.Error
			_ = wire.EachMember(val, func(k, v []byte) error {
				if wire.KeyIs(k, "arguments") {
					ctxArgs, perr = stringMap(v, "context.arguments")
					if perr != nil {
						return errStop
					}
				}
				return nil
			})
			return perr
		}
		return metaParam(key, val, &meta)
	})
	if err == nil && !hasRef {
		err = missing("ref")
	}
	if err == nil && !hasArg {
		err = missing("argument")
	}
	if ctxArgs == nil {
		ctxArgs = map[string]string{}
	}
	return
}

func parseSetLevel(params json.RawMessage) (level LogLevel, meta RequestMeta, err *wire.Error) {
	has := false
	err = eachParam(params, func(key, val []byte) *wire.Error {
		if wire.KeyIs(key, "level") {
			has = true
			s, e := paramString(val, "level")
			if e != nil {
				return e
			}
			l, perr := ParseLogLevel(s)
			if perr != nil {
				return invalidParams("unknown log level %q", s)
			}
			level = l
			return nil
		}
		return metaParam(key, val, &meta)
	})
	if err == nil && !has {
		err = missing("level")
	}
	return
}

func parseInitialize(params json.RawMessage) (p InitializeParams, meta RequestMeta, err *wire.Error) {
	var hasVersion, hasCaps, hasInfo bool
	err = eachParam(params, func(key, val []byte) *wire.Error {
		switch {
		case wire.KeyIs(key, "protocolVersion"):
			var e *wire.Error
			p.ProtocolVersion, e = paramString(val, "protocolVersion")
			hasVersion = true
			return e
		case wire.KeyIs(key, "capabilities"):
			hasCaps = true
			if e := paramObject(val, "capabilities"); e != nil {
				return e
			}
			if uerr := json.Unmarshal(val, &p.Capabilities); uerr != nil {
				return invalidParams("capabilities: %s", typeErrorText(uerr))
			}
			return nil
		case wire.KeyIs(key, "clientInfo"):
			hasInfo = true
			if e := paramObject(val, "clientInfo"); e != nil {
				return e
			}
			var gotName, gotVersion bool
			var perr *wire.Error
			_ = wire.EachMember(val, func(k, v []byte) error {
				switch {
				case wire.KeyIs(k, "name"):
					p.ClientInfo.Name, perr = paramString(v, "clientInfo.name")
					gotName = true
				case wire.KeyIs(k, "version"):
					p.ClientInfo.Version, perr = paramString(v, "clientInfo.version")
					gotVersion = true
				case wire.KeyIs(k, "title"):
					p.ClientInfo.Title, perr = paramString(v, "clientInfo.title")
				}
				if perr != nil {
					return errStop
				}
				return nil
			})
			if perr != nil {
				return perr
			}
			if !gotName {
				return missing("clientInfo.name")
			}
			if !gotVersion {
				return missing("clientInfo.version")
			}
			return nil
		}
		return metaParam(key, val, &meta)
	})
	switch {
	case err != nil:
	case !hasVersion:
		err = missing("protocolVersion")
	case !hasCaps:
		err = missing("capabilities")
	case !hasInfo:
		err = missing("clientInfo")
	}
	return
}

func parseCancelled(params json.RawMessage) (id wire.ID, reason string, ok bool) {
	perr := eachParam(params, func(key, val []byte) *wire.Error {
		switch {
		case wire.KeyIs(key, "requestId"):
			v, good := wire.ParseID(val)
			if !good {
				return errParamsNotObject
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
