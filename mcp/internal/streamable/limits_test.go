package streamable

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClientAddr(t *testing.T) {
	for remote, want := range map[string]string{
		"192.0.2.7:4711":          "192.0.2.7",
		"[2001:db8:1:2::7]:443":   "2001:db8:1:2::/64",
		"[2001:db8:1:2:ff::1]:80": "2001:db8:1:2::/64", // the same /64
		"[2001:db8:1:3::7]:443":   "2001:db8:1:3::/64",
		"[::ffff:192.0.2.7]:1":    "::ffff:192.0.2.7",
		"@":                       "@", // a unix socket's peer: as it is
	} {
		assert.Equal(t, want, clientAddr(remote), remote)
	}
}

func TestCallersCount(t *testing.T) {
	var cs callers
	alice, addr := caller{key: "alice"}, caller{addr: true, key: "alice"}
	assert.True(t, cs.acquire(alice, holdCall, 2))
	assert.True(t, cs.acquire(alice, holdCall, 2))
	assert.False(t, cs.acquire(alice, holdCall, 2), "at the bound")
	assert.True(t, cs.acquire(alice, holdStream, 1), "each kind has its own bound")
	assert.True(t, cs.acquire(addr, holdCall, 2), "an address never shares an identity's count")
	assert.Equal(t, [holdKinds]int{2, 1, 0}, cs.held(alice))
	assert.True(t, cs.acquire(alice, holdCall, 0), "0 is no bound")
	for range 3 {
		cs.release(alice, holdCall)
	}
	cs.release(alice, holdStream)
	cs.release(addr, holdCall)
	assert.Empty(t, cs.m, "a caller holding nothing is forgotten")
}
