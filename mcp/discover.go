package mcp

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/saguaro-go/saguaro/internal/jsonstr"
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// The 2026-07-28 result envelope: every result carries resultType and the
// server's identity in _meta, and cacheable results carry caching hints.
// The engine adds them to whatever the method produced, so handlers and
// the pre-encoded list pages stay the same in both eras.

const (
	metaServerInfo     = "io.modelcontextprotocol/serverInfo"
	metaProtocol       = "io.modelcontextprotocol/protocolVersion"
	metaClientCaps     = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo     = "io.modelcontextprotocol/clientInfo"
	metaLogLevel       = "io.modelcontextprotocol/logLevel"
	metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"
)

// The resultType values.
const (
	resultComplete      = "complete"
	resultInputRequired = "input_required"
	resultTask          = "task"
)

// modernRevisions lists what server/discover and UnsupportedProtocolVersion
// name as supported: every revision this endpoint serves, newest first.
func modernRevisions() []string {
	return []string{Rev20260728.String(), Rev20251125.String(), Rev20250618.String(), Rev20250326.String()}
}

// identity returns the server's serverInfo and instructions, asked once of
// the handler's Initialize with a synthetic 2026-07-28 request (a Handler
// has no other way to name itself) and kept.
func (e *engine) identity() (info json.RawMessage, instructions string) {
	e.infoOnce.Do(func() {
		req := &InitializeRequest{}
		req.Method, req.Revision, req.out = "initialize", Rev20260728, protocol.Discard{}
		req.Params.ProtocolVersion = Rev20260728.String()
		var res *InitializeResult
		func() {
			defer func() {
				if p := recover(); p != nil {
					e.log.Error("mcp: Initialize panicked while naming the server", slog.Any("panic", p))
				}
			}()
			res, _, _ = e.h.Initialize(context.Background(), req, nil)
		}()
		impl := defaultImplementation()
		if res != nil && res.ServerInfo.Name != "" {
			impl = res.ServerInfo
			e.instructions = res.Instructions
		}
		e.serverInfo, _ = wire.Marshal(&impl)
	})
	return e.serverInfo, e.instructions
}

// envelope adds the 2026-07-28 members to an encoded result object:
// resultType (replacing one already there), caching hints for cacheable
// methods (unless present), and serverInfo merged into _meta.
func (e *engine) envelope(method string, result []byte, resultType string) []byte {
	info, _ := e.identity()
	return e.appendEnvelope(make([]byte, 0, len(result)+len(info)+96), method, result, resultType)
}

// appendEnvelope is envelope appending to out.
func (e *engine) appendEnvelope(out []byte, method string, result []byte, resultType string) []byte {
	out = append(out, `{"resultType":`...)
	out = jsonstr.AppendString(out, resultType)
	var meta []byte
	hasTTL := false
	_ = wire.EachMember(result, func(k, v []byte) error {
		switch {
		case wire.KeyIs(k, "resultType"):
			return nil
		case wire.KeyIs(k, "_meta"):
			if len(v) > 0 && v[0] == '{' {
				meta = v
			}
			return nil
		case wire.KeyIs(k, "ttlMs"), wire.KeyIs(k, "cacheScope"):
			hasTTL = true
		}
		out = append(out, ',')
		out = append(out, k...)
		out = append(out, ':')
		out = append(out, v...)
		return nil
	})
	return e.appendEnvelopeEnd(out, method, resultType, meta, hasTTL)
}

// appendEnvelopeEnd appends what an envelope adds after the result's own
// members: the caching hints unless the result has them (hasTTL), and
// _meta with serverInfo and the result's own meta members.
func (e *engine) appendEnvelopeEnd(out []byte, method, resultType string, meta []byte, hasTTL bool) []byte {
	info, _ := e.identity()
	if cacheable[method] && resultType == resultComplete && !hasTTL {
		out = append(out, ',')
		out = e.appendCacheHint(out, method)
	}
	out = append(out, `,"_meta":{"`+metaServerInfo+`":`...)
	out = append(out, info...)
	if meta != nil {
		_ = wire.EachMember(meta, func(k, v []byte) error {
			if wire.KeyIs(k, metaServerInfo) {
				return nil
			}
			out = append(out, ',')
			out = append(out, k...)
			out = append(out, ':')
			out = append(out, v...)
			return nil
		})
	}
	return append(out, "}}"...)
}

// discover answers server/discover (2026-07-28): the revisions served,
// the capabilities and the instructions. The envelope adds resultType,
// serverInfo and the caching hints.
func (e *engine) discover(_ context.Context, call *protocol.Call, rev Revision, state any) protocol.Reply {
	if _, err := parsePlain(call.Params); err != nil {
		return protocol.Reply{State: state, Err: err}
	}
	_, instructions := e.identity()
	var enc encoder
	enc.open()
	enc.key("supportedVersions")
	enc.value(modernRevisions())
	enc.key("capabilities")
	enc.value(e.Capabilities(rev))
	enc.optStr("instructions", instructions)
	enc.close()
	if enc.err != nil {
		return protocol.Reply{State: state, Err: errUnencoded}
	}
	return protocol.Reply{State: state, Result: enc.b}
}
