package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisSrv is the Redis the replicas share: the machine's ($REDIS_URL, or
// 127.0.0.1:6379) when it answers, else a throwaway redis-server this
// command starts and stops (nothing on disk, loopback only).
type redisSrv struct {
	URL       string
	Throwaway bool
	Version   string
	rdb       *redis.Client
	cmd       *exec.Cmd
	exited    chan struct{}
}

// openRedis returns the Redis at url when it answers PING, else starts a
// throwaway redis-server (logging why) with its files in dir.
func openRedis(url, dir string, logf func(string, ...any)) (*redisSrv, error) {
	err := ping(url)
	if err == nil {
		return connectRedis(&redisSrv{URL: url})
	}
	logf("%s does not answer PING (%v); starting a throwaway redis-server", url, err)
	return startRedis(dir)
}

// startRedis starts a throwaway redis-server (nothing on disk, loopback
// only) with its files in dir.
func startRedis(dir string) (*redisSrv, error) {
	var bin string
	var err error
	bin, err = exec.LookPath("redis-server")
	if err != nil {
		for _, p := range []string{"/usr/sbin/redis-server", "/usr/bin/redis-server"} {
			if _, e := os.Stat(p); e == nil {
				bin, err = p, nil
				break
			}
		}
	}
	if err != nil {
		return nil, errors.New("no redis-server binary (.ci/redis.sh installs one)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for range 5 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s := &redisSrv{URL: "redis://127.0.0.1:" + strconv.Itoa(port), Throwaway: true, exited: make(chan struct{})}
		lf, err := os.Create(filepath.Join(dir, "redis-server.log"))
		if err != nil {
			return nil, err
		}
		s.cmd = exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
		s.cmd.Stdout, s.cmd.Stderr = lf, lf
		s.cmd.SysProcAttr = sysProcAttr()
		if err := s.cmd.Start(); err != nil {
			lf.Close()
			return nil, err
		}
		go func() { _ = s.cmd.Wait(); lf.Close(); close(s.exited) }()
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			select {
			case <-s.exited:
				deadline = time.Time{} // exited: port taken? try another
				continue
			default:
			}
			if ping(s.URL) == nil {
				return connectRedis(s)
			}
			time.Sleep(50 * time.Millisecond)
		}
		s.Close()
	}
	return nil, fmt.Errorf("could not start redis-server (see %s)", filepath.Join(dir, "redis-server.log"))
}

// ping dials first (go-redis retries and logs a refused dial, where a
// refusal is all there is to know), then PINGs through go-redis.
func ping(url string) error {
	o, err := redis.ParseURL(url)
	if err != nil {
		return err
	}
	nc, err := net.DialTimeout(o.Network, o.Addr, 300*time.Millisecond)
	if err != nil {
		return err
	}
	nc.Close()
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond, 300*time.Millisecond
	o.MaxRetries, o.PoolSize = -1, 1
	c := redis.NewClient(o)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	return c.Ping(ctx).Err()
}

func connectRedis(s *redisSrv) (*redisSrv, error) {
	o, err := redis.ParseURL(s.URL)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.rdb = redis.NewClient(o)
	info, err := s.info("server")
	if err != nil {
		s.Close()
		return nil, err
	}
	s.Version = info["redis_version"]
	return s, nil
}

func (s *redisSrv) info(section string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	txt, err := s.rdb.Info(ctx, section).Result()
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(txt))
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":"); ok {
			m[k] = v
		}
	}
	return m, nil
}

// cpuNS is the Redis server's user+system CPU time (INFO cpu), in
// nanoseconds: all its clients', not only this benchmark's.
func (s *redisSrv) cpuNS() (int64, error) {
	m, err := s.info("cpu")
	if err != nil {
		return 0, err
	}
	var ns int64
	for _, k := range []string{"used_cpu_user", "used_cpu_sys"} {
		v, err := strconv.ParseFloat(m[k], 64)
		if err != nil {
			return 0, fmt.Errorf("INFO cpu %s=%q: %w", k, m[k], err)
		}
		ns += int64(v * 1e9)
	}
	return ns, nil
}

// cleanup deletes every key under prefix (the run's own: the prefix is
// new at every run, so nothing else matches it) and returns their names.
func (s *redisSrv) cleanup(prefix string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var keys []string
	iter := s.rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return keys, err
	}
	for i := 0; i < len(keys); i += 500 {
		if err := s.rdb.Unlink(ctx, keys[i:min(i+500, len(keys))]...).Err(); err != nil {
			return keys, err
		}
	}
	return keys, nil
}

// Close closes the client and stops a throwaway server.
func (s *redisSrv) Close() {
	if s.rdb != nil {
		_ = s.rdb.Close()
	}
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	}
}
