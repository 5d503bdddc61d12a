package mcp

// What a relaying replica logs: the MCP method and the replica it relayed
// to on each line, and, when the owner dies under a relayed stream, a
// warning that names the owner and the session instead of a panic.

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/httplog/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/saguaro-go/saguaro/mcp/cluster"
	"github.com/saguaro-go/saguaro/middleware"
)

func TestRelayLogs(t *testing.T) {
	store := cluster.NewMemory()
	type replica struct {
		srv *httptest.Server
		ep  *Endpoint
		log *syncBuffer // the endpoint's own logger
		req *syncBuffer // the request log lines
	}
	start := func() *replica {
		rp := &replica{log: &syncBuffer{}, req: &syncBuffer{}}
		rp.srv = httptest.NewUnstartedServer(nil)
		rp.ep = Controller(&Options{
			Handler: newFixture(t).srv,
			Cluster: store.Join("http://" + rp.srv.Listener.Addr().String()),
			Logger:  slog.New(slog.NewTextHandler(rp.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
			Attrs:   httplog.SetAttrs,
		})
		lines := slog.New(slog.NewTextHandler(rp.req, nil))
		rp.srv.Config.Handler = middleware.Logging(lines, nil)(rp.ep)
		rp.srv.Start()
		return rp
	}
	a, b := start(), start()
	t.Cleanup(func() {
		for _, rp := range []*replica{a, b} {
			_ = rp.ep.Shutdown(context.Background())
			rp.srv.CloseClientConnections()
			rp.srv.Close()
		}
	})
	ta := &tserver{t: t, ep: a.ep, srv: a.srv, url: a.srv.URL, hc: a.srv.Client(), log: a.log}
	tb := &tserver{t: t, ep: b.ep, srv: b.srv, url: b.srv.URL, hc: b.srv.Client(), log: b.log}
	sid := ta.open("2025-11-25", "{}") // a owns it: replica m1

	// A call relayed through b: b's line has the method and relayed_to.
	assert.Equal(t, "x", tb.call(sid, toolCall("1", "echo", `{"text":"x"}`)).text(t))
	eventually(t, func() bool { return strings.Contains(b.req.String(), "mcp.method=tools/call") }, "no method on b's line:\n%s", b.req.String())
	assert.Contains(t, b.req.String(), "mcp.relayed_to=m1")
	assert.Contains(t, b.req.String(), "mcp.session="+sid)

	// The GET stream relayed through b; then a dies.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := openStream(t, tb.get(ctx, sid))
	s.priming()
	a.srv.CloseClientConnections()
	a.srv.Close()
	_, err := s.r.Next()
	require.Error(t, err, "the relayed stream ends with its owner")
	s.close()

	eventually(t, func() bool {
		return strings.Contains(b.log.String(), "relayed answer was cut")
	}, "b did not log the cut relay:\n%s", b.log.String())
	line := lineWith(b.log.String(), "relayed answer was cut")
	assert.Contains(t, line, "level=WARN")
	assert.Contains(t, line, "replica=m1")
	assert.Contains(t, line, "mcp.session="+sid)
	// httplog's line for the cut stream: net/http's abort, which httplog
	// logs as the panic it is, at the level of the stream's 200.
	eventually(t, func() bool {
		return strings.Contains(b.req.String(), "abort Handler")
	}, "b's request line for the stream is missing:\n%s", b.req.String())
	line = lineWith(b.req.String(), "abort Handler")
	assert.Contains(t, line, "level=INFO")
	assert.Contains(t, line, "http.stream=end")
	assert.Contains(t, line, "mcp.relayed_to=m1")
	assert.NotContains(t, b.req.String(), "level=ERROR")
	assert.NotContains(t, b.log.String(), "level=ERROR")
	assert.NotContains(t, b.log.String(), "panic")
}

// lineWith returns the first line of logs that contains s.
func lineWith(logs, s string) string {
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}
