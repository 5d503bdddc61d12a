package mcp

import "github.com/saguaro-go/saguaro/mcp/internal/protocol"

// Revision is an MCP protocol revision. The zero Revision is "not stated",
// served as Rev20250326: what the specification says a server must assume
// when a client sends no MCP-Protocol-Version header.
type Revision uint8

// The revisions served, all on one endpoint. The first three are the
// legacy era (initialize and sessions); Rev20260728 is stateless, with
// per-request _meta.
const (
	Rev20250326 = Revision(protocol.Rev20250326) // batches, completions, audio
	Rev20250618 = Revision(protocol.Rev20250618) // elicitation, structured output, titles
	Rev20251125 = Revision(protocol.Rev20251125) // URL elicitation, icons, tool name rules
	Rev20260728 = Revision(protocol.Rev20260728) // stateless, per-request _meta, input_required
	revEnd      = Revision(protocol.RevEnd)
)

// ParseRevision maps a protocol version string ("2025-06-18") to a
// Revision; false for a version this package does not serve.
func ParseRevision(s string) (Revision, bool) {
	r, ok := protocol.ParseRevision(s)
	return Revision(r), ok
}

// String returns the protocol version string ("2025-06-18"), or "" for the
// zero Revision.
func (r Revision) String() string { return protocol.Revision(r).String() }

// Legacy reports whether the revision uses the initialize handshake and
// sessions (every revision before 2026-07-28).
func (r Revision) Legacy() bool { return protocol.Revision(r).Legacy() }

// orDefault maps the zero Revision to Rev20250326.
func (r Revision) orDefault() Revision { return Revision(protocol.Revision(r).OrDefault()) }

// negotiate answers a client's initialize protocolVersion: the same
// revision when it is one with sessions that this server speaks, else
// 2025-11-25.
func negotiate(requested string) Revision { return Revision(protocol.Negotiate(requested)) }
