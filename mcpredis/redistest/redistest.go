// Package redistest gives tests a Redis to talk to, so that `make test`
// needs no Redis started by hand. It lives in the mcpredis module, beside
// the go-redis it uses, so that the core module needs no Redis client; it
// is not internal because the interop and bench modules' tests use it too,
// and an app's own tests of its replicas may.
//
// Two ways to get one:
//
//   - [URL] returns the machine's shared Redis ($REDIS_URL, else
//     redis://127.0.0.1:6379) when it answers PING, and otherwise starts a
//     throwaway redis-server for the test. Tests on the shared Redis run
//     beside other tests and other packages' test binaries, so every key a
//     test writes must start with [Prefix]; [DeleteOnCleanup] removes them
//     when the test ends. Such tests must not FLUSHDB, FLUSHALL, CONFIG SET
//     or otherwise touch what is not theirs.
//   - [Start] always starts a test's own redis-server, for tests that need
//     the whole server: restart it ([Server.Restart]), stop it
//     ([Server.Stop]), or flush it.
//   - [StartCluster] starts a Redis Cluster of the test's own, with
//     replicas if asked, whose masters a test may stop to see a failover.
//
// With the environment variable REDISTEST_CLUSTER set (non-empty), [URL]
// gives each test a Redis Cluster of its own (three masters) instead of
// the shared Redis: the same tests then prove that the code works on a
// cluster.
//
// A throwaway server keeps nothing on disk, listens on 127.0.0.1 only, and
// is stopped when the test ends (t.Cleanup); its process also dies with the
// test binary on Linux, even when the binary is killed.
//
// When no Redis can be had (the shared one does not answer and there is no
// redis-server binary; .ci/redis.sh installs one), a test is skipped, except
// in CI (the environment variable CI is non-empty), where it fails: CI must
// never pass by skipping.
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// DefaultURL is the shared Redis that [URL] tries when $REDIS_URL is unset.
const DefaultURL = "redis://127.0.0.1:6379"

// probeTimeout bounds how long [URL] waits for the shared Redis to answer.
const probeTimeout = 300 * time.Millisecond

// probes caches, per URL, whether the shared Redis answered, so a package
// whose shared Redis is down pays the probe once, not once per test.
var probes = struct {
	sync.Mutex
	err map[string]error
}{err: map[string]error{}}

// URL returns the URL of a Redis the test can use: $REDIS_URL (default
// [DefaultURL]) when it answers PING within 300ms, else the URL of a
// redis-server started for this test alone (see [Start]), which is stopped
// when the test ends; with REDISTEST_CLUSTER set, the URL of a Redis
// Cluster of the test's own in go-redis's cluster form
// ("redis://host:port?addr=…", see [StartCluster]).
//
// The shared Redis is shared with every other test: keys must start with
// [Prefix]. When neither a shared Redis nor a redis-server binary is there,
// the test is skipped, or fails when the environment variable CI is set.
// Call it from the test's goroutine.
func URL(t testing.TB) string {
	t.Helper()
	if os.Getenv("REDISTEST_CLUSTER") != "" {
		return StartCluster(t, 3, 0).URL()
	}
	u := os.Getenv("REDIS_URL")
	if u == "" {
		u = DefaultURL
	}
	err := probeCached(u)
	if err == nil {
		return u
	}
	bin, binErr := findBinary()
	if binErr != nil {
		unavailable(t, fmt.Sprintf("no Redis for this test: %s did not answer PING (%v), and %v", u, err, binErr))
	}
	t.Logf("redistest: %s did not answer PING (%v); starting a throwaway redis-server", u, err)
	return start(t, bin).URL()
}

func probeCached(u string) error {
	probes.Lock()
	defer probes.Unlock()
	if err, ok := probes.err[u]; ok {
		return err
	}
	err := probe(u)
	probes.err[u] = err
	return err
}

// probe PINGs the Redis at u through go-redis, so that a URL with a
// password, a database or TLS (rediss://) is checked as the tests will use
// it. A plain dial first: go-redis retries and logs a refused dial, where a
// refusal is all there is to know.
func probe(u string) error {
	opts, err := redis.ParseURL(u)
	if err != nil {
		return err
	}
	conn, err := net.DialTimeout(opts.Network, opts.Addr, probeTimeout)
	if err != nil {
		return err
	}
	conn.Close()
	opts.DialTimeout = probeTimeout
	opts.DialerRetries = 1
	opts.ReadTimeout = probeTimeout
	opts.WriteTimeout = probeTimeout
	opts.MaxRetries = -1
	opts.PoolSize = 1
	opts.DisableIdentity = true
	opts.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	c := redis.NewClient(opts)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	return c.Ping(ctx).Err()
}

// Prefix returns a key prefix of the form "test:<16 hex digits>:", new at
// each call. Tests on a shared Redis ([URL]) must start every key with it,
// so that they never see nor clobber another test's keys; it contains no
// glob character, so prefix+"*" matches exactly its keys.
func Prefix(t testing.TB) string {
	t.Helper()
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("redistest: random prefix: %v", err)
	}
	return "test:" + hex.EncodeToString(b[:]) + ":"
}

// DeleteOnCleanup deletes, when the test ends, every key under prefix on the
// Redis at url (SCAN MATCH prefix*, then DEL; on each master of a cluster
// URL), so that tests leave the shared Redis as they found it. A failure to
// delete is reported as a test error. Register it after [URL] so that it
// runs before a throwaway server is stopped (cleanups run last registered
// first).
func DeleteOnCleanup(t testing.TB, url, prefix string) {
	t.Helper()
	if prefix == "" {
		t.Fatalf("redistest: DeleteOnCleanup with an empty prefix would delete every key")
	}
	var open func() redis.UniversalClient
	if strings.Contains(url, "addr=") {
		opts, err := redis.ParseClusterURL(url)
		if err != nil {
			t.Fatalf("redistest: DeleteOnCleanup: %v", err)
		}
		opts.DisableIdentity = true
		opts.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
		open = func() redis.UniversalClient { return redis.NewClusterClient(opts) }
	} else {
		opts, err := redis.ParseURL(url)
		if err != nil {
			t.Fatalf("redistest: DeleteOnCleanup: %v", err)
		}
		opts.DisableIdentity = true
		opts.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
		open = func() redis.UniversalClient { return redis.NewClient(opts) }
	}
	t.Cleanup(func() {
		c := open()
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var err error
		if cc, ok := c.(*redis.ClusterClient); ok {
			err = cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
				return deletePrefix(ctx, node, prefix)
			})
		} else {
			err = deletePrefix(ctx, c, prefix)
		}
		if err != nil {
			t.Errorf("redistest: deleting keys under %q: %v", prefix, err)
		}
	})
}

// deletePrefix deletes the keys under prefix that c's server holds, a
// thousand at a time, each on its own (a DEL of keys in several slots of
// a cluster fails).
func deletePrefix(ctx context.Context, c redis.UniversalClient, prefix string) error {
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	del := func() error {
		_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range keys {
				p.Del(ctx, k)
			}
			return nil
		})
		keys = keys[:0]
		return err
	}
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
		if len(keys) == 1000 {
			if err := del(); err != nil {
				return err
			}
		}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	if len(keys) > 0 {
		return del()
	}
	return nil
}

// inCI reports whether the tests run in CI, where a missing Redis fails the
// test instead of skipping it.
func inCI() bool { return os.Getenv("CI") != "" }

// unavailable ends the test because no Redis can be had: skipped on a
// developer's machine, failed in CI.
func unavailable(t testing.TB, reason string) {
	t.Helper()
	if inCI() {
		t.Fatalf("redistest: %s (CI is set, so this fails instead of skipping; .ci/redis.sh installs redis-server)", reason)
	}
	t.Skipf("redistest: %s (skipped; run .ci/redis.sh or set REDIS_URL)", reason)
}
