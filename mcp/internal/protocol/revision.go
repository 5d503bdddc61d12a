package protocol

// Revision is an MCP protocol revision. The zero Revision is "not stated",
// served as Rev20250326, which is what a server must assume when a client
// sends no MCP-Protocol-Version header.
type Revision uint8

// The revisions served. Rev20260728 is the stateless era: no initialize,
// per-request _meta.
const (
	Rev20250326 Revision = iota + 1
	Rev20250618
	Rev20251125
	Rev20260728
	// RevEnd is one past the newest revision.
	RevEnd
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
// version this package does not know.
func ParseRevision(s string) (Revision, bool) {
	for r := Rev20250326; r < RevEnd; r++ {
		if revisionNames[r] == s {
			return r, true
		}
	}
	return 0, false
}

// String returns the protocol version string, "" for the zero Revision.
func (r Revision) String() string {
	if r >= RevEnd {
		return ""
	}
	return revisionNames[r]
}

// Legacy reports whether the revision uses initialize and sessions.
func (r Revision) Legacy() bool { return r >= Rev20250326 && r <= Rev20251125 }

// OrDefault maps the zero Revision to Rev20250326.
func (r Revision) OrDefault() Revision {
	if r == 0 {
		return Rev20250326
	}
	return r
}

// Negotiate answers initialize's protocolVersion: the same revision when it
// is a legacy one, else LatestLegacy.
func Negotiate(requested string) Revision {
	if r, ok := ParseRevision(requested); ok && r.Legacy() {
		return r
	}
	return LatestLegacy
}

// LegacyRevisions lists the revisions served with sessions, newest first:
// what an unsupported MCP-Protocol-Version is told is supported.
func LegacyRevisions() []Revision { return []Revision{Rev20251125, Rev20250618, Rev20250326} }

// AllRevisions lists every revision served, newest first.
func AllRevisions() []Revision {
	return []Revision{Rev20260728, Rev20251125, Rev20250618, Rev20250326}
}

// Revisions is a set of revisions, one bit each.
type Revisions uint8

// RevisionSet returns the set of rs.
func RevisionSet(rs ...Revision) Revisions {
	var s Revisions
	for _, r := range rs {
		s |= 1 << r
	}
	return s
}

// Has reports whether r (the zero Revision read as Rev20250326) is in s.
func (s Revisions) Has(r Revision) bool { return s&(1<<r.OrDefault()) != 0 }
