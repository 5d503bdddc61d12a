package middleware

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAttrBag(t *testing.T) {
	t.Parallel()
	var b attrBag
	b.set(slog.String("a", "1"), slog.String("", "dropped"), slog.String("b", "2"))
	b.set(slog.String("a", "3"))
	snap := b.snapshot()
	assert.Equal(t, []slog.Attr{slog.String("a", "3"), slog.String("b", "2")}, snap, "last value wins, order of first set kept")

	snap[0] = slog.String("x", "y")
	assert.Equal(t, "a", b.snapshot()[0].Key, "a snapshot is a copy")

	final := b.close()
	b.set(slog.String("late", "1"))
	assert.Len(t, final, 2)
	assert.Len(t, b.snapshot(), 2, "nothing is added after close")
}

func TestMerge(t *testing.T) {
	t.Parallel()
	base := []slog.Attr{slog.String(MCPSessionKey, "from-header"), slog.String(MCPMethodKey, "tools/call")}
	over := []slog.Attr{slog.String(MCPSessionKey, "from-mcp"), slog.Int(MCPIDKey, 1)}
	got := merge(base, over)
	assert.Equal(t, []slog.Attr{
		slog.String(MCPSessionKey, "from-mcp"), slog.String(MCPMethodKey, "tools/call"), slog.Int(MCPIDKey, 1),
	}, got)
	assert.Equal(t, "from-header", base[0].Value.String(), "base is not modified")
}

func TestAttrKeys(t *testing.T) {
	t.Parallel()
	// The mcp package spells these as literals: changing one is a breaking change.
	assert.Equal(t, map[string]string{
		"method": "mcp.method", "id": "mcp.id", "tool": "mcp.tool", "prompt": "mcp.prompt",
		"resource": "mcp.resource", "name": "mcp.name", "session": "mcp.session",
		"revision": "mcp.revision", "error_code": "mcp.error_code", "relayed_to": "mcp.relayed_to",
	}, map[string]string{
		"method": MCPMethodKey, "id": MCPIDKey, "tool": MCPToolKey, "prompt": MCPPromptKey,
		"resource": MCPResourceKey, "name": MCPNameKey, "session": MCPSessionKey,
		"revision": MCPRevisionKey, "error_code": MCPErrorCodeKey, "relayed_to": MCPRelayedToKey,
	})
}
