package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/configs"
	"github.com/saguaro-go/saguaro/bench/internal/fanout"
	"github.com/saguaro-go/saguaro/bench/internal/probe"
	"github.com/saguaro-go/saguaro/bench/internal/proc"
	"github.com/saguaro-go/saguaro/bench/internal/serve"
)

// fanServer is a small fan-out server: a channel per client. fault, when
// set, breaks the stream of the first client to subscribe at event 3:
// "skip" leaves it out, "dup" sends it twice, "cut" ends the stream.
type fanServer struct {
	fault string
	mu    sync.Mutex
	subs  []chan []byte
}

func (f *fanServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case serve.PublishPath:
		fanout.Publisher(func(data []byte) {
			frame := append(append([]byte("data: "), data...), "\n\n"...)
			f.mu.Lock()
			for _, c := range f.subs {
				c <- frame
			}
			f.mu.Unlock()
		}).ServeHTTP(w, r)
	case serve.EventsPath:
		c := make(chan []byte, 1024)
		f.mu.Lock()
		first := len(f.subs) == 0
		f.subs = append(f.subs, c)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		for {
			select {
			case frame := <-c:
				n := 1
				if first && strings.Contains(string(frame), `"seq":3,`) {
					switch f.fault {
					case "skip":
						n = 0
					case "dup":
						n = 2
					case "cut":
						return
					}
				}
				for range n {
					_, _ = w.Write(frame)
				}
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	default:
		http.NotFound(w, r)
	}
}

func fanTestServer(t *testing.T, h http.Handler) *server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	mux := http.NewServeMux()
	mux.Handle(probe.Path, probe.Handler())
	probeSrv := httptest.NewServer(mux)
	t.Cleanup(probeSrv.Close)
	return &server{
		cfg: configs.Config{Name: "fake-sse", Kind: configs.KindSSE},
		Proc: &proc.Proc{Ready: serve.Ready{MCPURL: srv.URL + "/mcp", ProbeURL: probeSrv.URL + probe.Path,
			EventsURL: srv.URL + serve.EventsPath, PublishURL: srv.URL + serve.PublishPath},
			HTTP: &http.Client{Timeout: 5 * time.Second}},
	}
}

func TestFanoutSlices(t *testing.T) {
	for _, tc := range []struct {
		fault string
		kind  string // the failure expected in the first slice, "" for none
	}{
		{"", ""},
		{"skip", "lost"},
		{"dup", "order"},
		{"cut", "transport"},
	} {
		t.Run("fault="+tc.fault, func(t *testing.T) {
			s := fanTestServer(t, &fanServer{fault: tc.fault})
			const clients = 20
			fs, err := dialFanSet(s, clients, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer fs.close()
			if err := fs.warmUp(5 * time.Second); err != nil {
				t.Fatal(err)
			}
			var a fanAgg
			for _, spec := range []fanSpec{{Events: 5, Rate: 200}, {Events: 5}} {
				r := runFanSlice(fs, spec, 2*time.Second)
				if f := fs.takeFailures(); f != nil {
					r.Fail.Merge(f)
				}
				a.add(r)
			}
			if tc.kind == "" {
				if n := a.Fail.Total(); n != 0 {
					t.Fatalf("%d failures: %v", n, a.Fail.First)
				}
				if a.Deliveries != 2*5*clients || a.Expected != a.Deliveries || a.Hist.Count() != a.Deliveries {
					t.Fatalf("deliveries %d, expected %d, latencies %d", a.Deliveries, a.Expected, a.Hist.Count())
				}
				if a.medianRate() <= 0 || a.Window <= 0 {
					t.Fatalf("no rate: %+v", a.SliceRate)
				}
				return
			}
			if a.Fail.Count[tc.kind] == 0 {
				t.Fatalf("want a %q failure, got %v", tc.kind, a.Fail.First)
			}
			if tc.fault == "skip" && a.Lost != 1 {
				t.Fatalf("lost %d, want 1", a.Lost)
			}
			if tc.fault == "dup" && a.Dups != 1 {
				t.Fatalf("dups %d, want 1", a.Dups)
			}
			if tc.fault == "cut" && (a.Lost != 3 || a.Dropped != 1 || a.Expected != 5*clients+5*(clients-1)) {
				// The cut client misses events 3..5; the second slice
				// counts only the clients still connected.
				t.Fatalf("lost %d, dropped %d, expected %d", a.Lost, a.Dropped, a.Expected)
			}
			if !strings.Contains(fanFailure(&a), "first:") {
				t.Fatalf("fanFailure: %q", fanFailure(&a))
			}
		})
	}
}

func TestFanCountsOfferTheSameDeliveriesPerSecond(t *testing.T) {
	o := &options{fanClients: []int{1000, 10000}, fanRounds: []int{5}, fanRate: 50, fanPacedEvents: 50, fanBurstEvents: 50}
	got := fanCounts(o)
	if len(got) != 2 {
		t.Fatalf("%d counts", len(got))
	}
	if got[0] != (fanCount{Clients: 1000, Rounds: 5, PacedEvents: 50, Rate: 50, BurstEvents: 50}) {
		t.Fatalf("first count changed: %+v", got[0])
	}
	want := fanCount{Clients: 10000, Rounds: 5, PacedEvents: 5, Rate: 5, BurstEvents: 50}
	if got[1] != want {
		t.Fatalf("10,000 clients: got %+v, want %+v (the last rounds entry repeats)", got[1], want)
	}
	if r := got[1].Rate * float64(got[1].Clients); r != 50_000 {
		t.Fatalf("offered %v deliveries/s at 10,000 clients", r)
	}
	o.fanClients = []int{100000}
	if fc := fanCounts(o)[0]; fc.PacedEvents != 50 || fc.Rate != 50 {
		t.Fatalf("a lone count is not scaled: %+v", fc)
	}
	o.fanClients, o.fanPacedEvents = []int{1000, 100000}, 50
	if fc := fanCounts(o)[1]; fc.PacedEvents != 5 {
		t.Fatalf("at least 5 paced events: %+v", fc)
	}
}

func TestFanGroupSizeFollowsTheConnectionLimit(t *testing.T) {
	o := &options{fanMaxConns: 2500}
	if k, err := fanGroupSize(o, 5, 1000); err != nil || k != 2 {
		t.Fatalf("2,500 connections, 1,000 each: got %d, %v; want 2 at once", k, err)
	}
	if k, err := fanGroupSize(o, 1, 1000); err != nil || k != 1 {
		t.Fatalf("one configuration: got %d, %v", k, err)
	}
	if _, err := fanGroupSize(o, 5, 3000); err == nil {
		t.Fatal("3,000 clients cannot fit in 2,500 connections")
	}
}

func TestFanMemPerClient(t *testing.T) {
	m := &fanMem{Clients: 100,
		Base: probe.Snapshot{RSS: 10 << 20, HeapLive: 1 << 20, StackBytes: 1 << 16, Goroutines: 10},
		Held: probe.Snapshot{RSS: 10<<20 + 2_000_000, HeapLive: 1<<20 + 1_500_000, StackBytes: 1<<16 + 600_000, Goroutines: 210}}
	if m.RSS() != 20_000 || m.Heap() != 15_000 || m.Stacks() != 6_000 || m.Goroutines() != 2 {
		t.Fatalf("per client: rss %v heap %v stacks %v goroutines %v", m.RSS(), m.Heap(), m.Stacks(), m.Goroutines())
	}
}
