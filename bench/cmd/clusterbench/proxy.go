package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/probe"
	"github.com/saguaro-go/saguaro/bench/internal/serve"
)

// proxyNotes says how the proxy is set up, for the results page.
const proxyNotes = "net/http/httputil.ReverseProxy, round robin per request, no stickiness, Host kept (pr.Out.Host = pr.In.Host); " +
	"keep-alive on both sides; upstream http.Transport with MaxIdleConnsPerHost 64 (the default 2 would reconnect under 16 connections)"

// newProxy is the load balancer of configuration (c): each request goes
// to the next upstream in turn, whatever its session.
func newProxy(upstreams []*url.URL, errLog *log.Logger) http.Handler {
	var next atomic.Uint64
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(upstreams[(next.Add(1)-1)%uint64(len(upstreams))])
			// The replicas check Host (DNS rebinding) and see the
			// client's, as behind a real load balancer.
			pr.Out.Host = pr.In.Host
		},
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        256,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
		ErrorLog: errLog,
	}
}

// serveProxy is this command run as the proxy process (-serve-proxy): a
// loopback listener for the proxy, another for the probe (the proxy's own
// CPU), the ready line of internal/serve, and exit on stdin EOF or a
// signal.
func serveProxy(upstreamList string) {
	log.SetFlags(0)
	log.SetPrefix("proxy: ")
	var ups []*url.URL
	for _, s := range strings.Split(upstreamList, ",") {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil || u.Host == "" {
			log.Fatalf("bad upstream %q", s)
		}
		host, _, _ := net.SplitHostPort(u.Host)
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			log.Fatalf("upstream %q: only loopback", s)
		}
		u.Path, u.RawPath = "", "" // the request's own path is kept
		ups = append(ups, u)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	adminLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	errLog := log.New(os.Stderr, "proxy http: ", 0)
	srv := &http.Server{Handler: newProxy(ups, errLog), ReadHeaderTimeout: 10 * time.Second, ErrorLog: errLog}
	mux := http.NewServeMux()
	mux.Handle(probe.Path, probe.Handler())
	adm := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	go func() { errc <- adm.Serve(adminLn) }()
	serve.PrintReady(serve.Ready{
		Name:       "proxy",
		Mode:       fmt.Sprintf("%d upstreams", len(ups)),
		PID:        os.Getpid(),
		MCPURL:     "http://" + ln.Addr().String() + serve.MCPPath,
		ProbeURL:   "http://" + adminLn.Addr().String() + probe.Path,
		Notes:      proxyNotes,
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		GoVersion:  runtime.Version(),
	})
	serve.AwaitExit(30*time.Minute, errc)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = adm.Shutdown(ctx)
	_ = srv.Shutdown(ctx)
}
