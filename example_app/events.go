package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/saguaro-go/saguaro/auth"
	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/example_app/board"
	"github.com/saguaro-go/saguaro/sse"
)

// feedTopic is the hub topic every /events stream listens to.
const feedTopic = "feed"

// tickInterval is how often each stream receives a server tick.
const tickInterval = 5 * time.Second

// tick is the timer message a feed loop receives every tickInterval.
type tick struct{}

// eventRoutes serves the live feed:
//
//	GET  /events            Server-Sent Events: a "snapshot" of the board
//	                        and the chart's last "tools" figures first,
//	                        then "task" changes, "mcp" activity, "tools",
//	                        "broadcast" messages and a "tick" every 5 s;
//	                        resumes after Last-Event-ID. No token needed.
//	POST /events/broadcast  the request body is sent to every open stream
//	                        (token with tasks:write).
func (a *app) eventRoutes() http.Handler {
	r := chi.NewRouter()
	r.Method(http.MethodGet, "/", controller.New(controller.Func(a.feed), &controller.Options{Logger: a.logger, WriteTimeout: a.cfg.WriteTimeout}))
	r.With(a.verifier.Handler, auth.RequireScopes(scopeWrite)).Post("/broadcast", a.broadcast)
	return r
}

// publish sends one event of the given type to every feed.
func (a *app) publish(typ string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	_, _ = a.hub.Publish(feedTopic, sse.Event{Event: typ, Data: data})
}

// boardChanged hears every change of the board, made by this replica or
// another: it goes on this replica's feed, and MCP sessions are told. On a
// cluster only the replica that made the change tells them (the cluster
// carries it to every session, wherever it runs); alone, a replica tells
// its own sessions of every change.
func (a *app) boardChanged(c board.Change) {
	if c.Kind == board.Resync {
		if snap, err := a.snapshot(context.Background()); err == nil {
			a.hub.Publish(feedTopic, sse.Event{Event: "snapshot", Data: snap})
		}
	} else {
		a.publish("task", c)
	}
	if a.mcp == nil || (a.cluster != nil && c.Origin != a.store.ID()) {
		return
	}
	switch c.Kind {
	case board.Created, board.Deleted, board.Resync:
		a.mcp.listChanged()
	}
	if c.Kind != board.Resync {
		a.mcp.ResourceUpdated(taskURI(c.Task.ID))
	}
}

// snapshot is the board as the feed's "snapshot" event carries it.
func (a *app) snapshot(ctx context.Context) ([]byte, error) {
	tasks, err := a.store.List(ctx, nil)
	if err != nil {
		return nil, err
	}
	return json.Marshal(taskList{Tasks: orEmpty(tasks)})
}

// activity puts MCP activity (a tool call, a session opening or closing)
// on the feed.
func (a *app) activity(v map[string]any) { a.publish("mcp", v) }

// feed is the controller of one /events stream. It subscribes the
// connection's mailbox to the hub, asks for a tick every few seconds, and
// turns the connection into a loop that pushes each hub entry's frame
// (encoded once by the hub, shared by every stream) and frames its own
// messages. A new client (no Last-Event-ID) first gets a snapshot of the
// board.
//
// A client that falls behind by more than its mailbox (64 messages) is
// dropped by the hub: the loop writes what was queued, then ends the
// stream asking the client to come back in a second, and the client
// resumes from its Last-Event-ID with nothing lost.
func (a *app) feed(req *controller.Request) controller.Reply {
	mb := req.Mailbox()
	lastID := sse.LastEventID(req.Request)
	if lastID == "" {
		snap, err := a.snapshot(req.Request.Context())
		if err != nil {
			return controller.Buffered(http.StatusServiceUnavailable, nil, []byte("database unavailable\n"))
		}
		_ = mb.Send(sse.Event{Event: "snapshot", Data: snap})
	}
	// The subscription ends with the mailbox; the hub's end of it (it
	// closed, or the client fell too far behind) arrives as sse.Ended.
	if err := a.subscribeFeed(lastID, mb); err != nil {
		return controller.Buffered(http.StatusServiceUnavailable, nil, []byte("shutting down\n"))
	}
	mb.Every(tickInterval, tick{})
	return controller.Loop(http.StatusOK, feedHeader, 0, handleFeed)
}

// feedHeader is every feed's response header, built once: the loop copies
// it into each response and never modifies it.
var feedHeader = sse.Headers(http.Header{})

// handleFeed pushes one frame per message; its state counts the ticks.
func handleFeed(info any, push controller.Push, ticks int) (int, controller.Action) {
	switch m := info.(type) {
	case *sse.Entry:
		_ = push(m.Frame())
	case sse.Event:
		if frame, err := m.AppendTo(nil); err == nil {
			_ = push(frame)
		}
	case tick:
		ticks++
		ev := sse.Event{Event: "tick", Data: fmt.Appendf(nil, `{"n":%d,"time":%q}`, ticks, time.Now().UTC().Format(time.RFC3339))}
		frame, _ := ev.AppendTo(nil)
		_ = push(frame)
	case sse.Ended:
		// Ask the client to come back soon; it resumes from its last id.
		return ticks, controller.Stop(sse.AppendRetry(nil, time.Second))
	}
	return ticks, controller.Continue
}

// maxBroadcast bounds a broadcast message.
const maxBroadcast = 64 << 10

// broadcast publishes the request body to every open stream.
func (a *app) broadcast(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBroadcast))
	if err != nil {
		http.Error(w, "message too large", http.StatusRequestEntityTooLarge)
		return
	}
	ent, err := a.hub.Publish(feedTopic, sse.Event{Event: "broadcast", Data: body})
	if err != nil {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	fmt.Fprintf(w, "{\"id\":%q,\"listeners\":%d}\n", ent.ID(), a.hub.Subscribers(feedTopic))
}
