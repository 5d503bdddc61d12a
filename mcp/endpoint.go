package mcp

import (
	"context"
	"net/http"
)

// Endpoint is the MCP endpoint [Controller] returns: an http.Handler to
// mount on a router, plus Shutdown.
type Endpoint struct {
	http.Handler
	t       *transport
	unwatch func()
}

// Shutdown ends every session (SessionOptions.OnClose hears
// CloseShutdown): their calls are cancelled, their open streams end, and
// later requests for them get 404. Call it when the server shuts down,
// before http.Server.Shutdown, so that event streams do not keep the
// server waiting. The endpoint goes on serving: new sessions may start.
// ctx bounds the whole.
//
// With a Cluster, sessions are not ended for the client: each is released
// in the store, and the client's next request, on whichever replica,
// takes it over (with its record, saved state and GET stream log). The
// endpoint stops hearing the cluster's notices; Shutdown is then its last
// call.
func (e *Endpoint) Shutdown(ctx context.Context) error {
	if e.unwatch != nil {
		defer e.unwatch()
	}
	tab := e.t.sessions
	if tab == nil {
		return nil
	}
	for _, s := range tab.all() {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.endBecause(CloseShutdown)
	}
	return nil
}

// Sessions returns how many sessions are live (0 without sessions).
func (e *Endpoint) Sessions() int {
	if e.t.sessions == nil {
		return 0
	}
	return e.t.sessions.count()
}
