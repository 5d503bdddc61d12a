package main

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/example_app/database/dbtest"
)

// cutter forwards TCP connections to a server until it is cut: then it
// closes every connection and refuses new ones (the server is gone), or,
// frozen, accepts them and forwards nothing (the server hangs).
type cutter struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	cut    bool
	frozen bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

func newCutter(t *testing.T, target string) *cutter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	c := &cutter{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	c.wg.Go(c.serve)
	t.Cleanup(func() {
		ln.Close()
		c.set(true, false)
		c.wg.Wait()
	})
	return c
}

func (c *cutter) serve() {
	for {
		in, err := c.ln.Accept()
		if err != nil {
			return
		}
		c.mu.Lock()
		cut, frozen := c.cut, c.frozen
		if !cut || frozen {
			c.conns[in] = struct{}{}
		}
		c.mu.Unlock()
		switch {
		case frozen:
			continue // held open, never answered, until set closes it
		case cut:
			in.Close()
			continue
		}
		out, err := net.Dial("tcp", c.target)
		if err != nil {
			in.Close()
			continue
		}
		c.mu.Lock()
		c.conns[out] = struct{}{}
		c.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			_, _ = io.Copy(dst, src)
			dst.Close()
			src.Close()
		}
		c.wg.Go(func() { pipe(out, in) })
		c.wg.Go(func() { pipe(in, out) })
	}
}

// set cuts (or freezes) or restores the forwarding; a change closes every
// connection held so far.
func (c *cutter) set(cut, frozen bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut, c.frozen = cut, frozen
	for conn := range c.conns {
		conn.Close()
	}
	clear(c.conns)
}

// TestReadyzFollowsPostgres: the app's readiness follows its database
// too: the first /readyz after PostgreSQL went away (its connections
// closed and refused) or hangs (a connection that answers nothing) is
// 503 within the probe's second, /healthz stays 200, and /readyz is 200
// again once the database is back.
func TestReadyzFollowsPostgres(t *testing.T) {
	dbURL := dbtest.URL(t)
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	cut := newCutter(t, u.Host)
	u.Host = cut.ln.Addr().String()
	a := start(t, nil, "-db", u.String())
	require.Equal(t, http.StatusOK, status(a.url, "/readyz"))

	unready := func(what string) {
		t.Helper()
		asked := time.Now()
		code := status(a.url, "/readyz")
		took := time.Since(asked)
		t.Logf("/readyz %d in %v, asked as PostgreSQL %s", code, took.Round(time.Millisecond), what)
		assert.Equal(t, http.StatusServiceUnavailable, code, "PostgreSQL %s", what)
		assert.Less(t, took, time.Second+300*time.Millisecond, "PostgreSQL %s", what)
		assert.Equal(t, http.StatusOK, status(a.url, "/healthz"))
	}
	ready := func() {
		t.Helper()
		require.Eventually(t, func() bool { return status(a.url, "/readyz") == http.StatusOK },
			10*time.Second, 20*time.Millisecond, "/readyz does not come back")
	}

	cut.set(true, false)
	unready("is gone")
	cut.set(false, false)
	ready()
	cut.set(true, true)
	unready("hangs")
	cut.set(false, false)
	ready()
}
