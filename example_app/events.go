package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/saguaro-go/saguaro/auth"
	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/example_app/board"
	"github.com/saguaro-go/saguaro/middleware"
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
//
// The feed is public on purpose: it is what the signed-out dashboard
// shows, a team's board on a wall. So it carries only that: each task's
// id, title, tags and state, never its notes (the API and MCP, which need
// tasks:read, have them), and MCP activity with a short hash of the
// session id, never the id itself (which, with a token, would let its
// reader act in the session). Streams are bounded per client address and
// in all (a.feeds, 429 beyond), and Host and Origin are checked as /mcp
// checks them (the route's middleware, in Handler).
func (a *app) eventRoutes() http.Handler {
	r := chi.NewRouter()
	feed := controller.New(controller.Func(a.feed), &controller.Options{Logger: a.logger, WriteTimeout: a.cfg.WriteTimeout})
	r.With(a.feeds.middleware).Method(http.MethodGet, "/", feed)
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
	a.boardSig.fire()
	if c.Kind == board.Resync {
		if snap, err := a.snapshot(context.Background()); err == nil {
			a.hub.Publish(feedTopic, sse.Event{Event: "snapshot", Data: snap})
		}
	} else {
		a.publish("task", publicChange{Kind: c.Kind, Task: publicOf(c.Task)})
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

// publicTask is what the public feed shows of a task: what the
// signed-out dashboard shows, without the notes.
type publicTask struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Tags      []string  `json:"tags,omitempty"`
	Done      bool      `json:"done"`
	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

func publicOf(t board.Task) publicTask {
	return publicTask{ID: t.ID, Title: t.Title, Tags: t.Tags, Done: t.Done, Version: t.Version, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
}

// publicChange is a board.Change as the feed's "task" event carries it.
type publicChange struct {
	Kind board.ChangeKind `json:"kind"`
	Task publicTask       `json:"task"`
}

// snapshot is the board as the feed's "snapshot" event carries it.
func (a *app) snapshot(ctx context.Context) ([]byte, error) {
	tasks, err := a.store.List(ctx, nil)
	if err != nil {
		return nil, err
	}
	out := make([]publicTask, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, publicOf(t))
	}
	return json.Marshal(struct {
		Tasks []publicTask `json:"tasks"`
	}{out})
}

// activity puts MCP activity (a tool call, a session opening or closing)
// on the feed. A session is named by sessionTag, never by its id.
func (a *app) activity(v map[string]any) {
	if id, ok := v["session"].(string); ok {
		v["session"] = sessionTag(id)
	}
	a.publish("mcp", v)
}

// sessionTag names an MCP session on the public feed: the first 8 hex
// digits of its id's SHA-256, enough to tell the sessions on the board
// apart, useless for joining one.
func sessionTag(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:4])
}

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

// Default bounds on open /events streams.
const (
	defaultFeedPerClient = 32   // a few dashboards per person, behind one address
	defaultFeedTotal     = 1024 // each stream holds a goroutine, a connection and a mailbox
)

// feedLimit counts the open /events streams per client address and in
// all. It bounds how many streams exist at once, which a rate limiter
// (requests per window) does not: one client could otherwise open
// streams until the server runs out of connections.
type feedLimit struct {
	mu       sync.Mutex
	per      map[string]int
	total    int
	maxPer   int
	maxTotal int
}

func newFeedLimit(perClient, total int) *feedLimit {
	if perClient <= 0 {
		perClient = defaultFeedPerClient
	}
	if total <= 0 {
		total = defaultFeedTotal
	}
	return &feedLimit{per: map[string]int{}, maxPer: perClient, maxTotal: total}
}

// middleware holds a place for the stream while it is served, and
// answers 429 with Retry-After when the client or the server has none
// left. A client is its address (middleware.KeyByClientIP: an IPv6
// client by its /64).
func (l *feedLimit) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := middleware.KeyByClientIP(r)
		if err != nil || !l.acquire(key) {
			w.Header().Set("Retry-After", strconv.Itoa(5))
			http.Error(w, "too many open streams", http.StatusTooManyRequests)
			return
		}
		defer l.release(key)
		next.ServeHTTP(w, r)
	})
}

func (l *feedLimit) acquire(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total >= l.maxTotal || l.per[key] >= l.maxPer {
		return false
	}
	l.total++
	l.per[key]++
	return true
}

func (l *feedLimit) release(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.per[key]--; l.per[key] <= 0 {
		delete(l.per, key)
	}
}
