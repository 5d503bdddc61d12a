package controller_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/sse"
)

// hubFeed is the controller a fan-out stream is written with: the
// connection's mailbox subscribed to a hub topic, and a loop that pushes
// each event and ends when the hub ends the subscription.
func hubFeed(hub *sse.Hub) controller.Controller {
	return controller.Func(func(req *controller.Request) controller.Reply {
		if _, err := hub.SubscribeMailbox("t", sse.LastEventID(req.Request), req.Mailbox()); err != nil {
			return controller.Status(http.StatusServiceUnavailable)
		}
		return controller.Loop(http.StatusOK, streamHeader, struct{}{}, handleHubEvent)
	})
}

// streamHeader is every stream's response header, shared.
var streamHeader = sse.Headers(http.Header{})

func handleHubEvent(info any, push controller.Push, st struct{}) (struct{}, controller.Action) {
	switch m := info.(type) {
	case *sse.Entry:
		_ = push(m.Frame())
	case sse.Ended:
		return st, controller.Stop(sse.AppendRetry(nil, time.Second))
	}
	return st, controller.Continue
}

// writerFeed is the same stream written by a plain handler with a channel
// subscription and an sse.Writer: the reference the loop is measured
// against.
func writerFeed(hub *sse.Hub) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sub, err := hub.Subscribe("t", sse.LastEventID(r))
		if err != nil {
			http.Error(w, "closed", http.StatusServiceUnavailable)
			return
		}
		defer sub.Close()
		sw, err := sse.NewWriter(w, nil)
		if err != nil {
			return
		}
		defer sw.Close()
		_ = sw.KeepAlive(r.Context(), 0, sub.C)
	})
}

// counter is a benchmark client: it reads the stream's body into a fixed
// buffer and counts the blank lines that end events, allocating nothing
// per event.
type counter struct {
	n    atomic.Int64
	body io.ReadCloser
}

// fanBench is one fan-out benchmark: n clients on one server, and a wait
// for all of them to reach a count.
type fanBench struct {
	clients []*counter
	target  atomic.Int64
	left    atomic.Int64
	reached chan struct{}
	wg      sync.WaitGroup
}

func (fb *fanBench) read(c *counter) {
	defer fb.wg.Done()
	buf := make([]byte, 32<<10)
	var prev byte
	for {
		k, err := c.body.Read(buf)
		for _, b := range buf[:k] {
			if b == '\n' && prev == '\n' {
				if got := c.n.Add(1); got == fb.target.Load() {
					if fb.left.Add(-1) == 0 {
						fb.reached <- struct{}{}
					}
				}
			}
			prev = b
		}
		if err != nil {
			return
		}
	}
}

// waitFor waits until every client has counted want events.
func (fb *fanBench) waitFor(tb testing.TB, want int64) {
	tb.Helper()
	select {
	case <-fb.reached:
	case <-time.After(60 * time.Second):
		short := 0
		for _, c := range fb.clients {
			if c.n.Load() < want {
				short++
			}
		}
		tb.Fatalf("%d of %d clients short of event %d", short, len(fb.clients), want)
	}
}

// expect arms the wait for want events; call it before publishing them.
func (fb *fanBench) expect(want int64) {
	fb.left.Store(int64(len(fb.clients)))
	fb.target.Store(want)
}

func dialFan(tb testing.TB, url string, n int) *fanBench {
	tb.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: n, DisableCompression: true}
	tb.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	fb := &fanBench{reached: make(chan struct{}, 1)}
	for i := 0; i < n; i++ {
		res, err := client.Get(url)
		if err != nil {
			tb.Fatal(err)
		}
		if res.StatusCode != http.StatusOK {
			tb.Fatalf("status %d", res.StatusCode)
		}
		c := &counter{body: res.Body}
		fb.clients = append(fb.clients, c)
	}
	fb.wg.Add(n)
	for _, c := range fb.clients {
		go fb.read(c)
	}
	tb.Cleanup(func() {
		for _, c := range fb.clients {
			c.body.Close()
		}
		fb.wg.Wait()
	})
	return fb
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFanout publishes events to a hub topic followed by clients on
// real loopback connections and waits until every client has read them.
// One op is one event published; the per-delivery metrics divide by the
// clients. cpu-ns/delivery is the whole process's CPU (server and the
// reading clients), so it compares configurations, not libraries.
// burst=1 publishes one event and waits for every client (no queue ever
// holds two events); burst=50 publishes fifty back to back.
func BenchmarkFanout(b *testing.B) {
	for _, mode := range []string{"loop", "writer"} {
		for _, clients := range []int{100, 1000} {
			for _, burst := range []int{1, 50} {
				b.Run(fmt.Sprintf("%s/clients=%d/burst=%d", mode, clients, burst), func(b *testing.B) {
					benchFanout(b, mode, clients, burst)
				})
			}
		}
	}
}

func benchFanout(b *testing.B, mode string, clients, burst int) {
	hub := sse.NewHub(nil)
	b.Cleanup(hub.Close)
	var h http.Handler
	switch mode {
	case "loop":
		h = controller.New(hubFeed(hub), nil)
	case "writer":
		h = writerFeed(hub)
	}
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close) // after the clients close: cleanups run last first
	fb := dialFan(b, srv.URL, clients)
	for hub.Subscribers("t") < clients {
		time.Sleep(time.Millisecond)
	}
	payload := make([]byte, 0, 64)
	publish := func(seq int) {
		payload = append(payload[:0], `{"seq":`...)
		payload = strconv.AppendInt(payload, int64(seq), 10)
		payload = append(payload, `,"ts":1767225600000000000}`...)
		if _, err := hub.Publish("t", sse.Event{Data: bytes.Clone(payload)}); err != nil {
			b.Fatal(err)
		}
	}
	// One round unmeasured, so connections and buffers are warm.
	sent := int64(0)
	round := func(k int) {
		fb.expect(sent + int64(k))
		for i := 0; i < k; i++ {
			sent++
			publish(int(sent))
		}
		fb.waitFor(b, sent)
	}
	round(burst)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	b.ResetTimer()
	cpu0 := cpuTime()
	for done := 0; done < b.N; done += burst {
		round(min(burst, b.N-done))
	}
	cpu := cpuTime() - cpu0
	b.StopTimer()
	runtime.ReadMemStats(&m1)
	deliveries := float64(b.N) * float64(clients)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/deliveries, "ns/delivery")
	b.ReportMetric(float64(cpu.Nanoseconds())/deliveries, "cpu-ns/delivery")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/deliveries, "allocs/delivery")
	b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/deliveries, "B/delivery")
}
