package mcp

import (
	"github.com/saguaro-go/saguaro/mcp/internal/protocol"
	"github.com/saguaro-go/saguaro/mcp/internal/wire"
)

// testCall is the engine's Call of a decoded message, as a transport
// builds it.
func testCall(m *wire.Message, rev Revision) protocol.Call {
	return protocol.Call{Method: m.Method, ID: m.ID, Params: m.Params, Revision: protocol.Revision(rev), Tape: m.Tape}
}
