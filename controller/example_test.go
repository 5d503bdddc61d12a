package controller_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

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
