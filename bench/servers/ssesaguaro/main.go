// Command ssesaguaro serves the SSE fan-out workload with saguaro's sse
// package.
//
// Mode "loop" (what users get, as example_app/events.go does it): GET
// /events is a controller whose Handle subscribes the connection's mailbox
// to an sse.Hub topic with SubscribeMailbox (the mailbox's non-blocking
// Send of each *sse.Entry; the subscription ends with the mailbox, and the
// hub's end of it arrives as sse.Ended) and replies with controller.Loop
// and the event-stream headers, one map shared by every stream;
// the loop pushes each entry's frame, encoded once by the hub's log, and
// the controller flushes once per batch of queued messages (with its write
// deadline).
//
// Mode "writer": GET /events is a plain handler that subscribes with
// Hub.Subscribe (a channel of *sse.Entry) and copies it to an sse.Writer
// with KeepAlive, which also flushes once per batch.
//
// Both: POST /publish is a plain handler calling Hub.Publish, which gives
// the event its id in the topic's replay log and encodes it. Defaults
// everywhere (mailbox 64, overflow reject, hub queue 64, log 1024 events /
// 1 MiB, write timeout 10 s); no keep-alive ticks.
package main

import (
	"fmt"
	"net/http"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/sse"

	"github.com/saguaro-go/saguaro/bench/internal/fanout"
	"github.com/saguaro-go/saguaro/bench/internal/serve"
)

var mode = "loop"

func loopEvents(hub *sse.Hub) http.Handler {
	return controller.New(controller.Func(func(req *controller.Request) controller.Reply {
		if req.Method != http.MethodGet {
			return controller.MethodNotAllowed(http.MethodGet)
		}
		if _, err := hub.SubscribeMailbox(fanout.Topic, sse.LastEventID(req.Request), req.Mailbox()); err != nil {
			return controller.Buffered(http.StatusServiceUnavailable, nil, []byte("shutting down\n"))
		}
		return controller.Loop(http.StatusOK, streamHeader, struct{}{}, handleEvent)
	}), nil)
}

// streamHeader is every stream's response header, built once: the loop
// copies it into each response and never modifies it.
var streamHeader = sse.Headers(http.Header{})

func handleEvent(info any, push controller.Push, state struct{}) (struct{}, controller.Action) {
	switch m := info.(type) {
	case *sse.Entry:
		_ = push(m.Frame())
	case sse.Ended:
		return state, controller.Stop(nil)
	}
	return state, controller.Continue
}

func writerEvents(hub *sse.Hub) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		sub, err := hub.Subscribe(fanout.Topic, sse.LastEventID(r))
		if err != nil {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		defer sub.Close()
		sw, err := sse.NewWriter(w, nil)
		if err != nil {
			http.Error(w, "streaming unsupported", http.StatusInternalServerError)
			return
		}
		defer sw.Close()
		_ = sw.KeepAlive(r.Context(), 0, sub.C)
	})
}

func build(o serve.Options) (serve.Built, error) {
	hub := sse.NewHub(nil)
	var events http.Handler
	var notes string
	switch o.Mode {
	case "loop":
		events = loopEvents(hub)
		notes = "sse.Hub.SubscribeMailbox feeding a controller.Loop's mailbox (as example_app/events.go), push of each entry's frame, one flush per batch"
	case "writer":
		events = writerEvents(hub)
		notes = "sse.Hub.Subscribe (channel) copied to an sse.Writer with KeepAlive in a plain net/http handler, one flush per batch"
	default:
		return serve.Built{}, fmt.Errorf("unknown mode %q", o.Mode)
	}
	publish := func(data []byte) { _, _ = hub.Publish(fanout.Topic, sse.Event{Data: data}) }
	return serve.Built{
		Routes: map[string]http.Handler{
			serve.EventsPath:  events,
			serve.PublishPath: fanout.Publisher(publish),
		},
		Notes: notes + "; Hub.Publish (ids from the topic's replay log); library defaults",
		Close: hub.Close,
	}, nil
}

func main() { serve.Main("saguaro", mode, build) }
