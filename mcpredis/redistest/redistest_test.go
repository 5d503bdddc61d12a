package redistest

import (
	"context"
	"errors"
	"net"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// go-redis clients run goroutines; every test closes its clients, and
// every server's waiting goroutine ends with its process.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func client(t *testing.T, url string) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	opts.DisableIdentity = true
	opts.DialerRetries = 1 // a stopped server: fail fast
	c := redis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestStartSetGetRestart(t *testing.T) {
	s := Start(t)
	if want := "redis://" + s.Addr(); s.URL() != want {
		t.Fatalf("URL() = %q, want %q", s.URL(), want)
	}
	c := client(t, s.URL())
	if err := c.Set(ctx(t), "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	if got, err := c.Get(ctx(t), "k").Result(); err != nil || got != "v" {
		t.Fatalf("GET = %q, %v; want \"v\"", got, err)
	}

	addr := s.Addr()
	s.Restart()
	if s.Addr() != addr {
		t.Fatalf("Addr() after Restart = %s, want %s", s.Addr(), addr)
	}
	// The client's pooled connection died with the old server; go-redis
	// retries on a new one.
	if err := c.Ping(ctx(t)).Err(); err != nil {
		t.Fatalf("PING after Restart: %v", err)
	}
	if got, err := c.Get(ctx(t), "k").Result(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET after Restart = %q, %v; want redis.Nil (a restarted Redis keeps nothing)", got, err)
	}
	if err := c.Set(ctx(t), "k", "w", 0).Err(); err != nil {
		t.Fatalf("SET after Restart: %v", err)
	}
}

func TestStopRefusesConnections(t *testing.T) {
	s := Start(t)
	c := client(t, s.URL())
	if err := c.Ping(ctx(t)).Err(); err != nil {
		t.Fatalf("PING: %v", err)
	}
	s.Stop()
	if _, err := net.DialTimeout("tcp", s.Addr(), time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial after Stop: %v, want connection refused", err)
	}
	if err := c.Ping(ctx(t)).Err(); err == nil {
		t.Fatal("PING after Stop succeeded")
	}
	s.Stop() // a second Stop does nothing

	// Restart brings a stopped server back.
	s.Restart()
	if err := c.Ping(ctx(t)).Err(); err != nil {
		t.Fatalf("PING after Stop and Restart: %v", err)
	}
}

// The cleanup leaves no process and no listener behind.
func TestCleanupStopsServer(t *testing.T) {
	var pid int
	var addr string
	t.Run("test", func(t *testing.T) {
		s := Start(t)
		pid, addr = s.cmd.Process.Pid, s.Addr()
	})
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("redis-server pid %d after the test's cleanup: kill(0) = %v, want ESRCH", pid, err)
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial %s after the test's cleanup: %v, want connection refused", addr, err)
	}
}

// Servers started at once get ports of their own.
func TestStartParallel(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	for i := range 4 {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			s := Start(t)
			mu.Lock()
			if seen[s.Addr()] {
				t.Errorf("two servers on %s", s.Addr())
			}
			seen[s.Addr()] = true
			mu.Unlock()
			c := client(t, s.URL())
			if err := c.Ping(ctx(t)).Err(); err != nil {
				t.Fatalf("PING: %v", err)
			}
		})
	}
}

// A port taken between picking and binding costs a retry, not the test.
func TestStartRetriesTakenPort(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port

	orig := pickPort
	t.Cleanup(func() { pickPort = orig })
	picks := 0
	pickPort = func() (int, error) {
		picks++
		if picks == 1 {
			return takenPort, nil
		}
		return orig()
	}

	s := Start(t)
	if picks < 2 {
		t.Fatalf("picked %d port(s), want a second after the taken one", picks)
	}
	if s.port == takenPort {
		t.Fatalf("server claims the taken port %d", takenPort)
	}
	if err := client(t, s.URL()).Ping(ctx(t)).Err(); err != nil {
		t.Fatalf("PING: %v", err)
	}
}

func TestURLAnswers(t *testing.T) {
	u := URL(t)
	if err := client(t, u).Ping(ctx(t)).Err(); err != nil {
		t.Fatalf("PING %s: %v", u, err)
	}
}

// A REDIS_URL that does not answer gives way to a throwaway server.
func TestURLFallsBackToThrowawayServer(t *testing.T) {
	port, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	dead := "redis://127.0.0.1:" + strconv.Itoa(port)
	t.Setenv("REDIS_URL", dead)
	u := URL(t)
	if u == dead {
		t.Fatalf("URL() = the dead %s", dead)
	}
	if err := client(t, u).Ping(ctx(t)).Err(); err != nil {
		t.Fatalf("PING %s: %v", u, err)
	}
}

func TestPrefix(t *testing.T) {
	re := regexp.MustCompile(`^test:[0-9a-f]{16}:$`)
	a, b := Prefix(t), Prefix(t)
	if !re.MatchString(a) || !re.MatchString(b) {
		t.Fatalf("Prefix() = %q, %q; want test:<16 hex>:", a, b)
	}
	if a == b {
		t.Fatalf("two Prefix() calls gave the same %q", a)
	}
}

// DeleteOnCleanup removes the test's keys and only those.
func TestDeleteOnCleanup(t *testing.T) {
	s := Start(t)
	c := client(t, s.URL())
	const n = 2500 // more than one DEL batch
	var prefix string
	t.Run("test", func(t *testing.T) {
		prefix = Prefix(t)
		DeleteOnCleanup(t, s.URL(), prefix)
		p := c.Pipeline()
		for i := range n {
			p.Set(ctx(t), prefix+strconv.Itoa(i), "v", 0)
		}
		p.Set(ctx(t), "other:1", "v", 0)
		p.Set(ctx(t), Prefix(t)+"1", "v", 0)
		if _, err := p.Exec(ctx(t)); err != nil {
			t.Fatal(err)
		}
	})
	keys, err := c.Keys(ctx(t), prefix+"*").Result()
	if err != nil || len(keys) != 0 {
		t.Fatalf("keys under %s after cleanup: %d, %v; want none", prefix, len(keys), err)
	}
	if size, err := c.DBSize(ctx(t)).Result(); err != nil || size != 2 {
		t.Fatalf("DBSIZE after cleanup = %d, %v; want the 2 keys outside the prefix", size, err)
	}
}

// fakeTB records a skip or a failure and ends the goroutine, as the real
// ones do, so the CI rule can be checked without failing this test.
type fakeTB struct {
	testing.TB
	mu      sync.Mutex
	skipped bool
	failed  bool
	msg     string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.failed, f.msg = true, format
	f.mu.Unlock()
	runtime.Goexit()
}

func (f *fakeTB) Skipf(format string, args ...any) {
	f.mu.Lock()
	f.skipped, f.msg = true, format
	f.mu.Unlock()
	runtime.Goexit()
}

func runFake(t *testing.T, fn func(testing.TB)) *fakeTB {
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f
}

// Without a redis-server binary and a shared Redis: skipped on a
// developer's machine, failed in CI.
func TestNoRedisSkipsOrFailsInCI(t *testing.T) {
	orig := binaryCandidates
	t.Cleanup(func() { binaryCandidates = orig })
	binaryCandidates = []string{t.TempDir() + "/redis-server"}
	t.Setenv("PATH", t.TempDir())
	port, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("REDIS_URL", "redis://127.0.0.1:"+strconv.Itoa(port))

	for _, tc := range []struct {
		name string
		fn   func(testing.TB)
	}{
		{"Start", func(tb testing.TB) { Start(tb) }},
		{"URL", func(tb testing.TB) { URL(tb) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CI", "")
			if f := runFake(t, tc.fn); !f.skipped || f.failed {
				t.Errorf("without CI: skipped=%v failed=%v, want a skip", f.skipped, f.failed)
			}
			t.Setenv("CI", "true")
			if f := runFake(t, tc.fn); f.skipped || !f.failed {
				t.Errorf("with CI=true: skipped=%v failed=%v, want a failure", f.skipped, f.failed)
			}
		})
	}
}

func TestStartCluster(t *testing.T) {
	start := time.Now()
	c := StartCluster(t, 3, 1)
	t.Logf("a cluster of 3 masters with a replica each in %v", time.Since(start))
	if n := len(c.Masters()); n != 3 {
		t.Fatalf("%d masters, want 3", n)
	}
	opts, err := redis.ParseClusterURL(c.URL())
	if err != nil {
		t.Fatal(err)
	}
	if len(opts.Addrs) != 6 {
		t.Fatalf("the URL names %d nodes, want 6", len(opts.Addrs))
	}
	cc := redis.NewClusterClient(opts)
	defer cc.Close()
	// Keys in many slots: the cluster serves them all.
	for i := range 50 {
		k := "k" + strconv.Itoa(i)
		if err := cc.Set(ctx(t), k, i, 0).Err(); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
	}
	// A master crashes: its replica, which has its writes, takes its
	// slots over.
	c.WaitSynced(5 * time.Second)
	c.Masters()[0].Kill()
	c.WaitOK(15 * time.Second)
	if n := len(c.Masters()); n != 3 {
		t.Fatalf("%d masters after the failover, want 3", n)
	}
	// The client learns the new layout (at once when asked to).
	cc.ReloadState(ctx(t))
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; i < 50; {
		k := "k" + strconv.Itoa(i)
		got, err := cc.Get(ctx(t), k).Int()
		if err == nil && got == i {
			i++
			continue
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s after the failover = %d, %v", k, got, err)
		}
		cc.ReloadState(ctx(t))
		time.Sleep(50 * time.Millisecond)
	}
}

func TestURLGivesAClusterWhenAsked(t *testing.T) {
	t.Setenv("REDISTEST_CLUSTER", "1")
	u := URL(t)
	opts, err := redis.ParseClusterURL(u)
	if err != nil {
		t.Fatalf("URL() = %q: %v", u, err)
	}
	if len(opts.Addrs) != 3 {
		t.Fatalf("URL() names %d nodes, want 3", len(opts.Addrs))
	}
	cc := redis.NewClusterClient(opts)
	defer cc.Close()
	prefix := Prefix(t)
	DeleteOnCleanup(t, u, prefix)
	for i := range 20 {
		if err := cc.Set(ctx(t), prefix+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if info, err := cc.ClusterInfo(ctx(t)).Result(); err != nil || !strings.Contains(info, "cluster_state:ok") {
		t.Fatalf("CLUSTER INFO: %q, %v", info, err)
	}
}

// A paused server keeps its port but answers nothing; resumed, it
// answers again; a server still paused at the test's end is stopped.
func TestPauseResume(t *testing.T) {
	s := Start(t)
	c := client(t, s.URL())
	if err := c.Ping(ctx(t)).Err(); err != nil {
		t.Fatalf("PING: %v", err)
	}
	s.Pause()
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	c2 := redis.NewClient(&redis.Options{Addr: s.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1, DisableIdentity: true})
	defer c2.Close()
	if err := c2.Ping(short).Err(); err == nil {
		t.Fatal("a paused server answered PING")
	}
	s.Resume()
	if err := c.Ping(ctx(t)).Err(); err != nil {
		t.Fatalf("PING after Resume: %v", err)
	}
	s.Pause() // Stop, at the test's end, thaws it first
}
