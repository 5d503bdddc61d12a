package mcp

// Revision is an MCP protocol revision. The zero Revision is "not stated":
// Dispatch treats it as Rev20250326, which is what the spec says a server
// must assume when a client sends no MCP-Protocol-Version header.
type Revision uint8

// The revisions this package knows. Rev20260728 is the stateless era:
// no initialize, per-request _meta, served on the same endpoint.
const (
	Rev20250326 Revision = iota + 1 // "03": batches, completions, audio
	Rev20250618                     // "06": elicitation, structured output, titles
	Rev20251125                     // "11": URL elicitation, icons, tasks, name rules
	Rev20260728                     // "26": stateless, per-request _meta
	revEnd
)

// LatestLegacy is the newest revision that uses initialize; it is offered
// to a client that asks for a revision this server does not speak.
const LatestLegacy = Rev20251125

var revisionNames = [...]string{
	Rev20250326: "2025-03-26",
	Rev20250618: "2025-06-18",
	Rev20251125: "2025-11-25",
	Rev20260728: "2026-07-28",
}

// ParseRevision maps a protocol version string to a Revision; false for a
// version this package does not know (2024-11-05 included).
func ParseRevision(s string) (Revision, bool) {
	for r := Rev20250326; r < revEnd; r++ {
		if revisionNames[r] == s {
			return r, true
		}
	}
	return 0, false
}

// String returns the protocol version string ("2025-06-18"), or "" for the
// zero Revision.
func (r Revision) String() string {
	if r >= revEnd {
		return ""
	}
	return revisionNames[r]
}

// Legacy reports whether the revision uses the initialize handshake and
// sessions (03, 06, 11).
func (r Revision) Legacy() bool { return r >= Rev20250326 && r <= Rev20251125 }

// orDefault maps the zero Revision to Rev20250326.
func (r Revision) orDefault() Revision {
	if r == 0 {
		return Rev20250326
	}
	return r
}

// revSet is a set of revisions, one bit each.
type revSet uint8

func revs(rs ...Revision) revSet {
	var s revSet
	for _, r := range rs {
		s |= 1 << r
	}
	return s
}

func (s revSet) has(r Revision) bool { return s&(1<<r) != 0 }

var (
	revsLegacy = revs(Rev20250326, Rev20250618, Rev20251125)
	revsAll    = revs(Rev20250326, Rev20250618, Rev20251125, Rev20260728)
	revsOnly11 = revs(Rev20251125)
	revsOnly26 = revs(Rev20260728)
)

// Negotiate answers a client's initialize protocolVersion: the same
// revision when it is a legacy one this server speaks, else LatestLegacy.
func Negotiate(requested string) Revision {
	if r, ok := ParseRevision(requested); ok && r.Legacy() {
		return r
	}
	return LatestLegacy
}
