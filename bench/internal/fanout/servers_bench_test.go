package fanout_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	gosse "github.com/tmaxmax/go-sse"

	"github.com/saguaro-go/saguaro/controller"
	"github.com/saguaro-go/saguaro/sse"

	"github.com/saguaro-go/saguaro/bench/internal/fanout"
)

// BenchmarkServers compares the fan-out servers of the bench in one
// process, so that machine noise hits them alike: saguaro's hub feeding
// controller loops (servers/ssesaguaro's "loop" mode), the hub feeding
// sse.Writer ("writer"), and go-sse's Server with Joe (servers/gosse's
// "joe"). Clients read real loopback connections into a fixed buffer and
// count events; one op is one event published, and the per-delivery
// metrics divide by the clients. cpu-ns/delivery is the whole process
// (server and clients, the same clients for every server), so only the
// differences between servers mean something. burst=1 publishes one
// event and waits for every client before the next, like the paced
// slices; burst=50 publishes fifty back to back.
func BenchmarkServers(b *testing.B) {
	for _, server := range []string{"saguaro-loop", "saguaro-writer", "gosse"} {
		for _, burst := range []int{1, 50} {
			b.Run(fmt.Sprintf("%s/clients=1000/burst=%d", server, burst), func(b *testing.B) {
				benchServer(b, server, 1000, burst)
			})
		}
	}
}

var streamHeader = sse.Headers(http.Header{}) // shared by every stream: never modified

func saguaroLoop(hub *sse.Hub) http.Handler {
	return controller.New(controller.Func(func(req *controller.Request) controller.Reply {
		if _, err := hub.SubscribeMailbox(fanout.Topic, sse.LastEventID(req.Request), req.Mailbox()); err != nil {
			return controller.Status(http.StatusServiceUnavailable)
		}
		return controller.Loop(http.StatusOK, streamHeader, struct{}{}, func(info any, push controller.Push, st struct{}) (struct{}, controller.Action) {
			switch m := info.(type) {
			case *sse.Entry:
				_ = push(m.Frame())
			case sse.Ended:
				return st, controller.Stop(nil)
			}
			return st, controller.Continue
		})
	}), nil)
}

func saguaroWriter(hub *sse.Hub) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sub, err := hub.Subscribe(fanout.Topic, sse.LastEventID(r))
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

// counting is the clients: each reads its stream into a fixed buffer and
// picks the sequence numbers out of the payloads without allocating.
type counting struct {
	bodies  []io.ReadCloser
	target  atomic.Int64
	left    atomic.Int64
	reached chan struct{}
	wg      sync.WaitGroup
}

var seqKey = []byte(`"seq":`)

func (c *counting) read(body io.ReadCloser) {
	defer c.wg.Done()
	buf := make([]byte, 16<<10)
	matched, seq, inNum := 0, int64(0), false
	got := int64(-1) // the last target this client reported
	for {
		k, err := body.Read(buf)
		for _, b := range buf[:k] {
			switch {
			case inNum && b >= '0' && b <= '9':
				seq = seq*10 + int64(b-'0')
			case inNum:
				inNum = false
				if t := c.target.Load(); seq == t && got < t {
					got = t
					if c.left.Add(-1) == 0 {
						c.reached <- struct{}{}
					}
				}
			case b == seqKey[matched]:
				matched++
				if matched == len(seqKey) {
					matched, seq, inNum = 0, 0, true
				}
			default:
				matched = 0
				if b == seqKey[0] {
					matched = 1
				}
			}
		}
		if err != nil {
			return
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchServer(b *testing.B, server string, clients, burst int) {
	var h http.Handler
	var publish func(data []byte)
	switch server {
	case "saguaro-loop", "saguaro-writer":
		hub := sse.NewHub(nil)
		b.Cleanup(hub.Close)
		if server == "saguaro-loop" {
			h = saguaroLoop(hub)
		} else {
			h = saguaroWriter(hub)
		}
		publish = func(data []byte) { _, _ = hub.Publish(fanout.Topic, sse.Event{Data: data}) }
	case "gosse":
		s := &gosse.Server{}
		b.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = s.Shutdown(ctx)
		})
		h = s
		publish = func(data []byte) {
			m := &gosse.Message{}
			m.AppendData(string(data))
			_ = s.Publish(m)
		}
	}
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close) // runs after the clients close: cleanups run last first
	tr := &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}
	b.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	c := &counting{reached: make(chan struct{}, 1)}
	// go-sse answers with its head only with the first event, so connect
	// concurrently and publish until every client has one.
	var mu sync.Mutex
	var connected sync.WaitGroup
	connected.Add(clients)
	c.left.Store(int64(clients))
	c.target.Store(0) // the warm-up events
	c.wg.Add(clients)
	for i := 0; i < clients; i++ {
		go func() {
			defer connected.Done()
			res, err := client.Get(srv.URL)
			if err != nil {
				c.wg.Done()
				return
			}
			mu.Lock()
			c.bodies = append(c.bodies, res.Body)
			mu.Unlock()
			go c.read(res.Body)
		}()
	}
	b.Cleanup(func() {
		mu.Lock()
		for _, body := range c.bodies {
			body.Close()
		}
		mu.Unlock()
		c.wg.Wait()
	})
	payload := func(seq int64) []byte { return fanout.AppendPayload(nil, seq, time.Now().UnixNano()) }
	// Warm-up events (seq 0) until every client has one.
	for deadline := time.Now().Add(60 * time.Second); ; {
		publish(payload(0))
		select {
		case <-c.reached:
		case <-time.After(20 * time.Millisecond):
			if time.Now().After(deadline) {
				b.Fatal("the clients never all subscribed")
			}
			continue
		}
		break
	}
	connected.Wait()
	time.Sleep(50 * time.Millisecond) // the last warm-up events land
	seq := int64(0)
	round := func(k int) {
		c.left.Store(int64(clients))
		c.target.Store(seq + int64(k))
		for i := 0; i < k; i++ {
			seq++
			publish(payload(seq))
		}
		select {
		case <-c.reached:
		case <-time.After(60 * time.Second):
			b.Fatalf("not every client got event %d", seq)
		}
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
