package streamable

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/mcp/cluster"
)

func TestOwnersRememberAndForget(t *testing.T) {
	o := newOwners(1024)
	assert.Nil(t, o.get("s1"))
	e := o.put("s1", "r1", "http://10.0.0.1:8080/mcp", "alice")
	got := o.get("s1")
	require.Same(t, e, got)
	assert.Equal(t, "r1", got.peer.id)
	assert.Equal(t, "alice", got.identity)
	assert.Equal(t, "10.0.0.1:8080", got.peer.host)
	assert.Equal(t, "/mcp", got.peer.path)

	// A drop of an entry that was replaced meanwhile keeps the new one.
	e2 := o.put("s1", "r2", "http://10.0.0.2:8080/mcp", "alice")
	o.drop("s1", e)
	assert.Same(t, e2, o.get("s1"))
	o.drop("s1", e2)
	assert.Nil(t, o.get("s1"))
	assert.Zero(t, o.n.Load())
}

func TestOwnersOfAReplicaThatIsGone(t *testing.T) {
	o := newOwners(1024)
	a := o.put("s1", "r1", "http://a/mcp", "")
	o.put("s2", "r1", "http://a/mcp", "")
	other := o.put("s3", "r2", "http://b/mcp", "")
	require.Same(t, a.peer, o.get("s2").peer, "one value per replica")
	require.Same(t, a.peer, o.known("r1"))

	o.lost(a.peer)
	assert.Nil(t, o.get("s1"), "every session of a replica that is gone is looked up again")
	assert.Nil(t, o.get("s2"))
	assert.Nil(t, o.known("r1"))
	assert.Same(t, other, o.get("s3"))

	// The store names it again: a fresh value, alive.
	again := o.put("s1", "r1", "http://a/mcp", "")
	assert.NotSame(t, a.peer, again.peer)
	assert.False(t, again.peer.gone.Load())
	assert.Same(t, again.peer, o.known("r1"))
}

func TestOwnersAreBounded(t *testing.T) {
	o := newOwners(64)
	for i := range 1000 {
		o.put("s"+strconv.Itoa(i), "r1", "http://a/mcp", "")
		require.LessOrEqual(t, o.n.Load(), int64(64))
	}
	n := 0
	o.entries.Range(func(_, _ any) bool { n++; return true })
	assert.EqualValues(t, o.n.Load(), n, "the count is the map's size")
	assert.NotNil(t, o.get("s999"), "the newest entry stays")
}

func TestPeerURLs(t *testing.T) {
	for u, bad := range map[string]bool{
		"http://10.0.0.7:8080/mcp": false,
		"https://r1.internal/mcp":  false,
		"":                         true,
		"10.0.0.7:8080":            true,
		"ftp://x/mcp":              true,
		"http:///mcp":              true,
	} {
		assert.Equal(t, bad, newPeer("r", u).bad, u)
	}
}

// TestOwnersForgetAMovedSession: the cluster's word that a session moved
// drops what the replica remembers of its owner.
func TestOwnersForgetAMovedSession(t *testing.T) {
	tr := newTestTransport(t)
	tr.owners.put("s1", "r1", "http://a/mcp", "")
	tr.owners.put("s2", "r1", "http://a/mcp", "")
	tr.notice(cluster.Notice{Kind: cluster.NoticeMoved, Session: "s1"})
	assert.Nil(t, tr.owners.get("s1"))
	assert.NotNil(t, tr.owners.get("s2"))
}
