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
	hub.Publish("news", sse.Event{Data: []byte("first")})
	hub.Publish("news", sse.Event{Data: []byte("second")})

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
		// the replay queued.
		for len(sub.C) > 0 {
			ev := <-sub.C
			_ = sw.Send(&ev)
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
