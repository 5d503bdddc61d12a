package mcp

import (
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// testCall is the engine's Call of a decoded message, as a transport
// builds it.
func testCall(m *wire.Message, rev Revision) protocol.Call {
	return protocol.Call{Method: m.Method, ID: m.ID, Params: m.Params, Revision: protocol.Revision(rev)}
}

// appendTo writes a reply as a transport does.
func (e *engine) appendTo(id wire.ID, r *protocol.Reply) []byte { return e.AppendReply(nil, id, r) }
