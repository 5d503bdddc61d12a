// Command conformance serves the MCP conformance fixture: the tools,
// resources and prompts that the official conformance suite
// (@modelcontextprotocol/conformance) calls, unauthenticated, with
// sessions, at http://ADDR/mcp.
//
//	go run -C example_app ./conformance -addr 127.0.0.1:3001
//	npx @modelcontextprotocol/conformance server --url http://127.0.0.1:3001/mcp --suite all
//
// make test runs exactly that (see .ci/conformance.sh).
//
// The same fixture runs as a cluster, its sessions shared on Redis
// (package mcpredis), so that the suite can be run against replicas
// behind a load balancer with no stickiness:
//
//	conformance -addr 127.0.0.1:3001 -redis redis://127.0.0.1:6379 -replicas 3
//
// starts three replicas (this binary again, each with -redis on a port
// of its own) and serves a round-robin reverse proxy over them on -addr
// (see replicas.go). One replica alone is `-redis URL` without
// -replicas; replicas started by hand share a -prefix and each gives
// the URL the others reach it at (-advertise).
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/redis/go-redis/v9"

	"github.com/saguaro-go/saguaro/mcp"
	"github.com/saguaro-go/saguaro/mcpredis"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:3001", "address to listen on")
	redisURL := flag.String("redis", "", "share sessions on this Redis (redis://host:port/db, or host:port) with the other replicas (mcpredis)")
	prefix := flag.String("prefix", "", "with -redis: the key prefix the replicas share (default conformance:<random>:, deleted again at exit)")
	advertise := flag.String("advertise", "", "with -redis: this replica's MCP endpoint as the other replicas reach it (default http://<listen addr>/mcp)")
	replicas := flag.Int("replicas", 1, "N>1 (needs -redis): start N replicas of this binary on free loopback ports and serve a round-robin proxy over them on -addr")
	proxyLog := flag.Bool("proxy-log", false, "with -replicas: log every proxied request (replica, JSON-RPC method, status)")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	fail := func(msg string, err error) {
		logger.Error(msg, slog.Any("error", err))
		os.Exit(1)
	}
	if flag.NArg() > 0 {
		fail("usage", fmt.Errorf("unexpected arguments %q", flag.Args()))
	}
	if *replicas > 1 && *redisURL == "" {
		fail("usage", errors.New("-replicas needs -redis: the replicas share their sessions there"))
	}
	if *redisURL == "" && (*prefix != "" || *advertise != "") {
		fail("usage", errors.New("-prefix and -advertise need -redis"))
	}
	// An own prefix is ours to clean up at exit: nobody else can share it.
	ownPrefix := *prefix == ""
	if ownPrefix {
		*prefix = randomPrefix()
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *replicas > 1 {
		err := runReplicas(ctx, logger, &launch{
			n: *replicas, addr: *addr, redisURL: *redisURL, prefix: *prefix, cleanPrefix: ownPrefix,
			accessLog: *proxyLog,
		})
		if err != nil {
			fail("replicas", err)
		}
		return
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fail("listen", err)
	}

	var cl *clustered
	if *redisURL != "" {
		url := *advertise
		if url == "" {
			url = "http://" + dialable(ln.Addr()) + "/mcp"
		}
		cl, err = joinCluster(ctx, logger, *redisURL, *prefix, url)
		if err != nil {
			_ = ln.Close()
			fail("cluster", err)
		}
		defer cl.close(ownPrefix)
	}
	fmt.Printf("conformance fixture at http://%s/mcp\n", ln.Addr())
	if err := serve(ctx, ln, logger, cl); err != nil {
		fail("serve", err)
	}
}

// randomPrefix is a key prefix no other run uses, so that parallel runs
// on one Redis do not share sessions or keys.
func randomPrefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "conformance:" + hex.EncodeToString(b[:]) + ":"
}

// dialable is the listener's address as another process on this machine
// dials it: an unspecified host (":3001", "[::]:3001") becomes 127.0.0.1.
func dialable(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// redisClientURL accepts "host:port" as well as a redis:// URL.
func redisClientURL(s string) string {
	if !strings.Contains(s, "://") {
		return "redis://" + s
	}
	return s
}

// clustered is this replica's membership of the cluster: the Redis
// client, the mcpredis.Cluster, and the keys every replica shares.
type clustered struct {
	rdb    redis.UniversalClient
	cl     *mcpredis.Cluster
	prefix string
	key    []byte
}

// joinCluster connects to Redis, joins the replicas sharing prefix as
// the replica reached at url, and fetches the shared key that seals
// pagination cursors and requestState: a cursor or requestState sealed
// by one replica must open on every other.
func joinCluster(ctx context.Context, logger *slog.Logger, redisURL, prefix, url string) (*clustered, error) {
	rdb, err := mcpredis.NewClient(redisClientURL(redisURL))
	if err != nil {
		return nil, err
	}
	jctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cl, err := mcpredis.New(jctx, rdb, &mcpredis.Options{URL: url, Prefix: prefix, Logger: logger})
	if err != nil {
		_ = rdb.Close()
		return nil, err
	}
	c := &clustered{rdb: rdb, cl: cl, prefix: prefix}
	if c.key, err = cl.SharedKey(jctx, "seal", 32); err != nil {
		c.close(false)
		return nil, err
	}
	return c, nil
}

// close leaves the cluster (the others take this replica's sessions over
// at once) and, when clean, deletes every key under the prefix.
func (c *clustered) close(clean bool) {
	if err := c.cl.Close(); err != nil {
		slog.Warn("leaving the cluster", slog.Any("error", err))
	}
	if clean {
		deletePrefix(c.rdb, c.prefix)
	}
	_ = c.rdb.Close()
}

// deletePrefix deletes the keys under prefix (SCAN, then DEL): what a run
// with its own prefix leaves on a shared Redis, such as the shared keys,
// which never expire.
func deletePrefix(rdb redis.UniversalClient, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// A Redis Cluster holds the keys on its masters: each is scanned, and
	// each key deleted on its own (a DEL of keys in several slots fails).
	scan := func(ctx context.Context, node redis.UniversalClient) error {
		iter := node.Scan(ctx, 0, prefix+"*", 500).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil || len(keys) == 0 {
			return err
		}
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range keys {
				p.Del(ctx, k)
			}
			return nil
		})
		return err
	}
	var err error
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error { return scan(ctx, node) })
	} else {
		err = scan(ctx, rdb)
	}
	if err != nil {
		slog.Warn("cleaning up Redis", slog.String("prefix", prefix), slog.Any("error", err))
	}
}

// handler is the fixture's router: the MCP endpoint at /mcp. With cl,
// the endpoint shares its sessions with the other replicas, the server's
// cursors and the requestState are sealed with the shared key, and the
// list-changed hooks' state is shared too (dynamic).
func handler(logger *slog.Logger, cl *clustered) (http.Handler, *mcp.Endpoint) {
	opts := &mcp.Options{
		Sessions: &mcp.SessionOptions{IdleTimeout: 5 * time.Minute},
		Logger:   logger,
		// The suites and the interop tests play many clients from one
		// address, without identities: the per-caller bounds are off.
		Limits: &mcp.Limits{Calls: -1, Streams: -1, Sessions: -1},
	}
	srvOpts := &mcp.ServerOptions{Tasks: &mcp.TaskOptions{PollInterval: 200 * time.Millisecond}}
	dyn := &dynamic{logger: logger}
	if cl != nil {
		srvOpts.Keys = [][]byte{cl.key}
		opts.Cluster = cl.cl
		dyn.shared, dyn.key = cl.rdb, cl.prefix+"fixture:dynamic"
	}
	opts.Handler = newFixture(logger, srvOpts, dyn)
	ep := mcp.Controller(opts)
	r := chi.NewRouter()
	if cl != nil {
		r.With(dyn.middleware).Mount("/mcp", ep)
	} else {
		r.Mount("/mcp", ep)
	}
	return r, ep
}

func serve(ctx context.Context, ln net.Listener, logger *slog.Logger, cl *clustered) error {
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	h, ep := handler(logger, cl)
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return streams },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if cl != nil {
		// Release the sessions in the store before the streams end, so
		// that the client's next request, on another replica, takes them
		// over at once.
		if err := ep.Shutdown(sctx); err != nil {
			logger.Warn("releasing the sessions", slog.Any("error", err))
		}
	}
	endStreams()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
