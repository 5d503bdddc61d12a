package mcp

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refuseEcho refuses tools/call of "echo" with 403, and records what it
// was asked.
type refuseEcho struct {
	mu    sync.Mutex
	asked []string
}

func (a *refuseEcho) authorize(r *http.Request, method, name string) http.Handler {
	a.mu.Lock()
	a.asked = append(a.asked, method+" "+name)
	a.mu.Unlock()
	if method == "tools/call" && name == "echo" {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="echo"`)
			http.Error(w, "no echo for you", http.StatusForbidden)
		})
	}
	return nil
}

func TestAuthorizeRefusesPerCall(t *testing.T) {
	t.Parallel()
	for _, sessions := range []bool{false, true} {
		a := &refuseEcho{}
		opts := &Options{Authorize: a.authorize}
		if sessions {
			opts.Sessions = &SessionOptions{}
		}
		ts := startServer(t, opts)
		sid := ""
		if sessions {
			sid = ts.open("2025-11-25", "{}")
		}
		resp := ts.post(sid, toolCall("1", "echo", `{"text":"hi"}`))
		assert.Equal(t, http.StatusForbidden, resp.StatusCode)
		assert.Equal(t, `Bearer error="insufficient_scope", scope="echo"`, resp.Header.Get("WWW-Authenticate"))
		resp.Body.Close()

		m := ts.call(sid, req("2", "resources/read", `{"uri":"test://nothing"}`))
		assert.NotNil(t, m.Error, "other calls go through to the engine")
		readEmpty(t, ts.post(sid, note("notifications/cancelled", `{"requestId":"9"}`)), http.StatusAccepted)

		a.mu.Lock()
		assert.Contains(t, a.asked, "tools/call echo")
		assert.Contains(t, a.asked, "resources/read test://nothing")
		for _, q := range a.asked {
			assert.NotContains(t, q, "notifications/", "notifications are not asked")
		}
		a.mu.Unlock()
	}
}

func TestAuthorizeRefusesAWholeBatch(t *testing.T) {
	t.Parallel()
	a := &refuseEcho{}
	ts := startServer(t, &Options{Authorize: a.authorize})
	resp := ts.post("", `[`+req("1", "ping", "")+`,`+toolCall("2", "echo", `{"text":"hi"}`)+`]`, "MCP-Protocol-Version", "2025-03-26")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp.Body.Close()
}

func TestSessionHooksAndShutdown(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var events []string
	opts := &Options{Sessions: &SessionOptions{
		OnOpen: func(r *http.Request, id string) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, "open "+id+" "+r.Method)
		},
		OnClose: func(id string, why CloseReason) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, "close "+id+" "+string(why))
		},
	}}
	ts := startServer(t, opts)
	a := ts.open("2025-11-25", "{}")
	b := ts.open("2025-11-25", "{}")
	readEmpty(t, ts.del(a), http.StatusNoContent)

	ep := ts.ep
	assert.Equal(t, 1, ep.Sessions())
	require.NoError(t, ep.Shutdown(context.Background()))
	assert.Equal(t, 0, ep.Sessions())
	resp := ts.post(b, req("3", "ping", ""))
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "a shut-down session is gone")
	resp.Body.Close()

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"open " + a + " POST", "open " + b + " POST", "close " + a + " deleted", "close " + b + " shutdown"}, events)
}
