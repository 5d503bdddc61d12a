// Command gosse serves the SSE fan-out workload with
// github.com/tmaxmax/go-sse, the way its README does: an sse.Server (an
// http.Handler) at GET /events, and Server.Publish of an sse.Message with
// the payload appended as data.
//
// Mode "joe": the default provider, Joe, without a replayer (no ids, no
// replay). Mode "replay": Joe with a FiniteReplayer of 1024 events and
// automatic ids, what saguaro's Hub always does.
package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/tmaxmax/go-sse"

	"github.com/saguaro-go/saguaro/bench/internal/fanout"
	"github.com/saguaro-go/saguaro/bench/internal/serve"
)

var mode = "joe"

func build(o serve.Options) (serve.Built, error) {
	s := &sse.Server{}
	notes := "sse.Server with the default provider (Joe, no replayer)"
	switch o.Mode {
	case "joe":
	case "replay":
		r, err := sse.NewFiniteReplayer(1024, true)
		if err != nil {
			return serve.Built{}, err
		}
		s.Provider = &sse.Joe{Replayer: r}
		notes = "sse.Server with Joe and a FiniteReplayer(1024, autoIDs)"
	default:
		return serve.Built{}, fmt.Errorf("unknown mode %q", o.Mode)
	}
	events := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		s.ServeHTTP(w, r)
	})
	publish := func(data []byte) {
		m := &sse.Message{}
		m.AppendData(string(data))
		_ = s.Publish(m) // the default topic, which ServeHTTP subscribes clients to
	}
	return serve.Built{
		Routes: map[string]http.Handler{
			serve.EventsPath:  events,
			serve.PublishPath: fanout.Publisher(publish),
		},
		Notes: notes + "; Server.Publish of a Message with AppendData",
		Close: func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = s.Shutdown(ctx)
		},
	}, nil
}

func main() { serve.Main("go-sse", mode, build) }
