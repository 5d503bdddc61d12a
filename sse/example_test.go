package sse_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/saguaro-go/saguaro/sse"
)

func ExampleEvent_AppendTo() {
	frame, err := (&sse.Event{ID: "7", Event: "update", Data: []byte("line one\nline two")}).AppendTo(nil)
	fmt.Printf("%s%v\n", frame, err)
	// Output:
	// id: 7
	// event: update
	// data: line one
	// data: line two
	//
	// <nil>
}

// A plain handler streams a hub topic, resuming after the client's
// Last-Event-ID.
func ExampleHub() {
	hub := sse.NewHub(nil)
	defer hub.Close()
	_, _ = hub.Publish("news", sse.Event{Data: []byte("first")})
	_, _ = hub.Publish("news", sse.Event{Data: []byte("second")})

	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sub, err := hub.Subscribe("news", sse.LastEventID(r))
		if err != nil {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		defer sub.Close()
		sw, err := sse.NewWriter(w, nil)
		if err != nil {
			return
		}
		defer sw.Close()
		// A real handler would loop with sw.KeepAlive; this one sends what
		// the replay queued. Each entry's frame is encoded once, by the log.
		for len(sub.C) > 0 {
			_ = sw.WriteFrame((<-sub.C).Frame())
		}
	})

	req := httptest.NewRequest(http.MethodGet, "/news", nil)
	req.Header.Set("Last-Event-ID", "1")
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	fmt.Print(strings.TrimSpace(rec.Body.String()))
	// Output:
	// id: 2
	// data: second
}

// A Log numbers and encodes each event once; the entries it returns are
// shared by every stream that writes them.
func ExampleLog() {
	l := sse.NewLog(&sse.LogOptions{MaxEvents: 2})
	for _, msg := range []string{"one", "two", "three"} {
		if _, err := l.Append(sse.Event{Event: "note", Data: []byte(msg)}); err != nil {
			fmt.Println(err)
		}
	}
	missed, err := l.Since("2") // a client that saw event 2 reconnects
	for _, e := range missed {
		fmt.Printf("%s", e.Frame())
	}
	fmt.Println(err)
	_, err = l.Since("") // a new client: what the log still holds, 2 and 3
	fmt.Println(err)
	_, err = l.Since("0") // event 1 is gone: the client is told of the gap
	fmt.Println(err)
	// Output:
	// id: 3
	// event: note
	// data: three
	//
	// <nil>
	// <nil>
	// sse: events after this id are no longer in the log
}
