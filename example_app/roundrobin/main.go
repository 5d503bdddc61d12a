// Command roundrobin is a load balancer for trying replicas locally: a
// reverse proxy that sends each request to the next backend in turn, with
// no stickiness, keeping the client's Host header, streaming event streams
// as they come. A backend that refuses connections is skipped.
//
//	go run -C example_app ./roundrobin -addr 127.0.0.1:8080 \
//		http://127.0.0.1:8081 http://127.0.0.1:8082 http://127.0.0.1:8083
//
// It is a demonstration, not a production balancer (no health checks, no
// TLS). See the README's "Replicas on Redis".
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: roundrobin [-addr host:port] http://backend1 http://backend2 ...")
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
	fmt.Printf("roundrobin on http://%s over %d backends\n", *addr, len(backends))
	srv := &http.Server{Addr: *addr, Handler: balancer(backends), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

// balancer proxies each request to the next backend that accepts a
// connection.
func balancer(backends []*url.URL) http.Handler {
	var next atomic.Uint64
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
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
		for range backends {
			target := backends[next.Add(1)%uint64(len(backends))]
			var failed error
			proxy := &httputil.ReverseProxy{
				Rewrite: func(pr *httputil.ProxyRequest) {
					pr.SetURL(target)
					pr.Out.Host = pr.In.Host
				},
				Transport:     tr,
				FlushInterval: -1,
				ErrorHandler:  func(_ http.ResponseWriter, _ *http.Request, err error) { failed = err },
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			proxy.ServeHTTP(w, r)
			if failed == nil || r.Context().Err() != nil {
				return
			}
			if !errors.Is(failed, syscall.ECONNREFUSED) {
				http.Error(w, "backend: "+failed.Error(), http.StatusBadGateway)
				return
			}
		}
		http.Error(w, "no backend answers", http.StatusBadGateway)
	})
}
