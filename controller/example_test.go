package controller_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/sse"
)

// A buffered reply with route state, mounted on chi.
func ExampleNew() {
	r := chi.NewRouter()
	r.Method(http.MethodGet, "/greet/{name}", controller.New(controller.Func(func(req *controller.Request) controller.Reply {
		greeting := controller.StateOf[string](req)
		return controller.JSON(http.StatusOK, map[string]string{
			"message": greeting + ", " + chi.URLParam(req.Request, "name"),
		})
	}), &controller.Options{State: "hello"}))

	srv := httptest.NewServer(r)
	defer srv.Close()
	res, err := http.Get(srv.URL + "/greet/ana")
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	fmt.Print(string(body))
	// Output: {"message":"hello, ana"}
}

// A loop: the controller hands its mailbox to a producer (here a goroutine
// counting to three) and returns a Loop reply; each message becomes one
// Server-Sent Event, and the producer's last message stops the loop.
func ExampleLoop() {
	type done struct{}
	events := controller.Func(func(req *controller.Request) controller.Reply {
		mb := req.Mailbox()
		go func() {
			for i := 1; i <= 3; i++ {
				_ = mb.Send(i)
			}
			_ = mb.Send(done{})
		}()
		header := http.Header{}
		sse.Headers(header)
		return controller.Loop(http.StatusOK, header, 0, func(info any, push controller.Push, sum int) (int, controller.Action) {
			switch v := info.(type) {
			case int:
				frame, _ := (&sse.Event{Event: "count", Data: fmt.Appendf(nil, "%d", v)}).AppendTo(nil)
				_ = push(frame)
				return sum + v, controller.Continue
			case done:
				final, _ := (&sse.Event{Event: "sum", Data: fmt.Appendf(nil, "%d", sum)}).AppendTo(nil)
				return sum, controller.Stop(final)
			}
			return sum, controller.Continue // a Disconnect ends the loop anyway
		})
	})

	srv := httptest.NewServer(controller.New(events, nil))
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer res.Body.Close()
	rd := sse.NewReader(res.Body)
	for {
		ev, err := rd.Next()
		if err != nil {
			break
		}
		fmt.Println(ev.Event, string(ev.Data))
	}
	// Output:
	// count 1
	// count 2
	// count 3
	// sum 6
}

// A live feed: each connection's mailbox is subscribed to a topic of an
// sse.Hub, and its loop pushes every entry's frame, encoded once by the
// hub for all subscribers. Queued entries are flushed together. A client
// that falls behind by more than its mailbox is dropped by the hub, which
// tells the loop with sse.Ended after what was queued; the loop ends the
// stream, and the client comes back with Last-Event-ID, which the hub
// replays from its log. The subscription ends with the mailbox.
func ExampleLoop_hub() {
	hub := sse.NewHub(nil)
	header := sse.Headers(http.Header{}) // one map for every stream: the loop copies it, never modifies it
	feed := controller.Func(func(req *controller.Request) controller.Reply {
		if _, err := hub.SubscribeMailbox("news", sse.LastEventID(req.Request), req.Mailbox()); err != nil {
			return controller.Status(http.StatusServiceUnavailable)
		}
		return controller.Loop(http.StatusOK, header, struct{}{}, func(info any, push controller.Push, st struct{}) (struct{}, controller.Action) {
			switch m := info.(type) {
			case *sse.Entry:
				_ = push(m.Frame())
			case sse.Ended: // the hub closed, or this client fell behind
				return st, controller.Stop(sse.AppendRetry(nil, time.Second))
			}
			return st, controller.Continue
		})
	})
	srv := httptest.NewServer(controller.New(feed, nil))
	defer srv.Close()

	_, _ = hub.Publish("news", sse.Event{Data: []byte("first")})
	_, _ = hub.Publish("news", sse.Event{Data: []byte("second")})
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Last-Event-ID", "1") // this client has seen "first"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer res.Body.Close()
	_, _ = hub.Publish("news", sse.Event{Data: []byte("third")})
	rd := sse.NewReader(res.Body)
	for i := 0; i < 2; i++ {
		ev, _ := rd.Next()
		fmt.Println(ev.ID, string(ev.Data))
	}
	hub.Close() // ends every subscription: the loops stop
	_, err = rd.Next()
	fmt.Println(err, rd.Retry())
	// Output:
	// 2 second
	// 3 third
	// EOF 1s
}
