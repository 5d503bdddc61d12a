// Command roundrobin is a load balancer for trying replicas locally: a
// reverse proxy that sends each request to the next backend in turn,
// keeping the client's Host header, streaming event streams as they
// come. A backend that refuses connections is skipped.
//
//	go run -C example_app ./roundrobin -addr 127.0.0.1:8080 \
//		http://127.0.0.1:8081 http://127.0.0.1:8082 http://127.0.0.1:8083
//
// With no flag it has no stickiness: two requests in three of a session
// land on a replica that relays them to the session's owner. With -sticky
// a request that carries Mcp-Session-Id goes to the backend that answered
// that session's initialize (the balancer reads the id from the answer),
// or, for a session it did not see start, to the backend the id's hash
// names (rendezvous hashing: every balancer picks the same one, and a
// session moves only when its backend goes). Relays are then rare: they
// happen for sessions another balancer started, and the hash stops them
// once the backend it names has taken the session over. Hashing alone
// would not do: the replica that answers an initialize chooses the id, and
// the balancer chose that replica before the id existed.
//
// It is a demonstration, not a production balancer (no health checks, no
// TLS). See the README's "Replicas on Redis".
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	sticky := flag.Bool("sticky", false, "send each session's requests to the backend that answered its initialize (or that the hash of its Mcp-Session-Id names)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: roundrobin [-addr host:port] [-sticky] http://backend1 http://backend2 ...")
		os.Exit(2)
	}
	var backends []*url.URL
	for _, a := range flag.Args() {
		u, err := url.Parse(a)
		if err != nil || u.Host == "" {
			log.Fatalf("roundrobin: %q is not a URL", a)
		}
		backends = append(backends, u)
	}
	mode := "no stickiness"
	if *sticky {
		mode = "sticky by Mcp-Session-Id"
	}
	fmt.Printf("roundrobin on http://%s over %d backends, %s\n", *addr, len(backends), mode)
	srv := &http.Server{Addr: *addr, Handler: balancer(backends, *sticky), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

// attempt is one try of a request on one backend.
type attempt struct {
	backend int
	failed  error
}

type attemptKey struct{}

// balancer proxies each request to a backend that accepts a connection:
// the next in turn or, with sticky, the session's (see the package doc).
func balancer(backends []*url.URL, sticky bool) http.Handler {
	var next atomic.Uint64
	var seen *sessions
	if sticky {
		seen = newSessions(backends, 100_000)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(backends[pr.In.Context().Value(attemptKey{}).(*attempt).backend])
			pr.Out.Host = pr.In.Host
		},
		Transport: &http.Transport{MaxIdleConnsPerHost: 64},
		// No FlushInterval: ReverseProxy flushes event streams (and
		// answers of unknown length) as they come, and sends a JSON
		// answer in one piece.
		ModifyResponse: func(resp *http.Response) error {
			if seen != nil {
				seen.learn(resp, resp.Request.Context().Value(attemptKey{}).(*attempt).backend)
			}
			return nil
		},
		ErrorHandler: func(_ http.ResponseWriter, r *http.Request, err error) {
			r.Context().Value(attemptKey{}).(*attempt).failed = err
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Full duplex: Go's HTTP/1 server otherwise closes the request
		// body once the response starts, racing the proxy's transport,
		// which then cuts a streamed answer (golang.org/issue/40747).
		_ = http.NewResponseController(w).EnableFullDuplex()
		// The body is kept so that a request refused by a dead backend
		// can go to the next one.
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 8<<20))
		if err != nil {
			http.Error(w, "request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		var order []int // nil: the next in turn, at every try
		if sid := r.Header.Get("Mcp-Session-Id"); seen != nil && sid != "" {
			order = seen.order(sid)
		}
		for i := range backends {
			b := int(next.Add(1) % uint64(len(backends)))
			if order != nil {
				b = order[i]
			}
			at := &attempt{backend: b}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), attemptKey{}, at)))
			if at.failed == nil || r.Context().Err() != nil {
				return
			}
			if !errors.Is(at.failed, syscall.ECONNREFUSED) {
				http.Error(w, "backend: "+at.failed.Error(), http.StatusBadGateway)
				return
			}
		}
		http.Error(w, "no backend answers", http.StatusBadGateway)
	})
}

// sessions remembers which backend answered each session, learnt from
// the answers: the one that gave a session its id, and the one that
// answered its last request (after a backend died, the one that took the
// session over). It is bounded: when full it forgets an eighth.
type sessions struct {
	backends []*url.URL
	max      int
	mu       sync.Mutex
	m        map[string]int
}

func newSessions(backends []*url.URL, max int) *sessions {
	return &sessions{backends: backends, max: max, m: map[string]int{}}
}

// learn notes, from an answer of backend b, where its session runs, or
// that it ended.
func (s *sessions) learn(resp *http.Response, b int) {
	sid := resp.Header.Get("Mcp-Session-Id") // set on an initialize answer
	if sid == "" {
		sid = resp.Request.Header.Get("Mcp-Session-Id")
	}
	if sid == "" {
		return
	}
	gone := resp.StatusCode == http.StatusNotFound ||
		(resp.Request.Method == http.MethodDelete && resp.StatusCode < 300)
	s.mu.Lock()
	defer s.mu.Unlock()
	if gone {
		delete(s.m, sid)
		return
	}
	if resp.StatusCode >= 300 {
		return
	}
	if _, ok := s.m[sid]; !ok && len(s.m) >= s.max {
		n := s.max / 8
		for k := range s.m {
			if n--; n < 0 {
				break
			}
			delete(s.m, k)
		}
	}
	s.m[sid] = b
}

// order is the backends to try for session sid: the one that answered
// it last, then every backend by rendezvous hashing of the id with the
// backend's URL (FNV-1a: every balancer process ranks them alike,
// whatever order it lists them in).
func (s *sessions) order(sid string) []int {
	type ranked struct {
		b     int
		score uint64
	}
	rs := make([]ranked, len(s.backends))
	for b, u := range s.backends {
		h := fnv.New64a()
		_, _ = io.WriteString(h, u.String())
		_, _ = h.Write([]byte{0})
		_, _ = io.WriteString(h, sid)
		rs[b] = ranked{b, h.Sum64()}
	}
	slices.SortFunc(rs, func(x, y ranked) int {
		switch {
		case x.score > y.score:
			return -1
		case x.score < y.score:
			return 1
		}
		return 0
	})
	order := make([]int, 0, len(rs))
	s.mu.Lock()
	known, ok := s.m[sid]
	s.mu.Unlock()
	if ok {
		order = append(order, known)
	}
	for _, r := range rs {
		if !ok || r.b != known {
			order = append(order, r.b)
		}
	}
	return order
}
