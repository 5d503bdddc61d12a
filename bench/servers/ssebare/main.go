// Command ssebare is the ceiling of the SSE fan-out workload: a plain
// net/http handler per client with a hand-written broadcast. Each client
// has a buffered channel of 64 frames; a publish frames the event once and
// offers the same bytes to every channel without blocking, and a client
// whose channel is full is dropped (its stream ends), the policy
// saguaro's Hub has. Each handler writes and flushes one frame at a time.
// No write deadline, no replay log, no keep-alive.
package main

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/saguaro-go/saguaro/bench/internal/fanout"
	"github.com/saguaro-go/saguaro/bench/internal/serve"
)

var mode = "channels"

// queueSize is each client's queue, as saguaro's default mailbox and hub
// queue.
const queueSize = 64

type client struct {
	ch      chan []byte
	dropped chan struct{}
}

type hub struct {
	mu      sync.Mutex
	clients map[*client]struct{}
	last    int64
}

func (h *hub) publish(data []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last++
	frame := make([]byte, 0, len(data)+32)
	frame = append(frame, "id: "...)
	frame = strconv.AppendInt(frame, h.last, 10)
	frame = append(frame, "\ndata: "...)
	frame = append(frame, data...)
	frame = append(frame, "\n\n"...)
	for c := range h.clients {
		select {
		case c.ch <- frame:
		default:
			delete(h.clients, c)
			close(c.dropped)
		}
	}
}

func (h *hub) events(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	f, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	c := &client{ch: make(chan []byte, queueSize), dropped: make(chan struct{})}
	h.mu.Lock()
	h.clients[c] = struct{}{}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.clients, c)
		h.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f.Flush()
	for {
		select {
		case frame := <-c.ch:
			if _, err := w.Write(frame); err != nil {
				return
			}
			f.Flush()
		case <-c.dropped:
			return
		case <-r.Context().Done():
			return
		}
	}
}

func main() {
	serve.Main("sse-bare", mode, func(serve.Options) (serve.Built, error) {
		h := &hub{clients: map[*client]struct{}{}}
		return serve.Built{
			Routes: map[string]http.Handler{
				serve.EventsPath:  http.HandlerFunc(h.events),
				serve.PublishPath: fanout.Publisher(h.publish),
			},
			Notes: "net/http handler per client; broadcast frames once and offers the bytes to a 64-frame channel per client (full: dropped); write + Flush per frame; no deadline, no replay log",
		}, nil
	})
}
