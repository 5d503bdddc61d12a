package redistest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// clusterNodeTimeout is the cluster-node-timeout of a throwaway cluster:
// how long its nodes take to call a master that stopped answering failed
// and promote one of its replicas. Short, so that a test of a failover
// waits a few seconds, not the default fifteen.
const clusterNodeTimeout = 1000 * time.Millisecond

// Cluster is a Redis Cluster started by [StartCluster] for one test: its
// nodes are redis-server processes of their own ([Server]s), masters
// first.
type Cluster struct {
	t     testing.TB
	nodes []*Server
}

// StartCluster starts a Redis Cluster of the test's own: masters masters
// (at least 3, which Redis Cluster needs), each with replicas replicas,
// every node a redis-server on free ports of 127.0.0.1 (its client port
// and its cluster bus port) keeping nothing on disk but its cluster
// configuration, in a directory of t.TempDir(); redis-cli --cluster create
// joins them and spreads the slots over the masters. It returns once
// every node reports the cluster ok. The nodes are stopped when the test
// ends.
//
// Without redis-server and redis-cli binaries (Debian's redis-server
// package has both; .ci/redis.sh installs it) the test is skipped, or
// fails when the environment variable CI is set. Call it from the test's
// goroutine.
func StartCluster(t testing.TB, masters, replicas int) *Cluster {
	t.Helper()
	if masters < 3 {
		t.Fatalf("redistest: a Redis Cluster needs at least 3 masters, not %d", masters)
	}
	bin, err := findBinary()
	if err != nil {
		unavailable(t, err.Error())
	}
	cli, err := findCLI(bin)
	if err != nil {
		unavailable(t, err.Error())
	}
	c := &Cluster{t: t}
	for attempt := 1; ; attempt++ {
		err := c.create(bin, cli, masters*(1+replicas), replicas)
		if err == nil {
			break
		}
		for _, n := range c.nodes {
			n.Stop()
		}
		c.nodes = nil
		if attempt == 3 {
			t.Fatalf("redistest: %v", err)
		}
		t.Logf("redistest: making a cluster failed (%v); trying again", err)
	}
	return c
}

// create starts n nodes and makes them a cluster.
func (c *Cluster) create(bin, cli string, n, replicas int) error {
	for range n {
		node, err := startNode(c.t, bin)
		if node != nil {
			c.nodes = append(c.nodes, node)
		}
		if err != nil {
			return err
		}
	}
	args := []string{"--cluster", "create"}
	for _, n := range c.nodes {
		args = append(args, n.Addr())
	}
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	// redis-cli waits for the nodes to agree, which under load on a
	// shared machine can take long, or never end: bounded.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, args...)
	cmd.SysProcAttr = sysProcAttr()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("redis-cli --cluster create: %w\n%s", err, out)
	}
	if err := c.waitOK(20 * time.Second); err != nil {
		return fmt.Errorf("%w\nredis-cli said:\n%s", err, out)
	}
	return nil
}

// startNode starts one node of a cluster: a Server with cluster mode on
// and its bus on a second free port. A node that does not start is
// returned with the error, to be stopped with the rest.
func startNode(t testing.TB, bin string) (*Server, error) {
	t.Helper()
	s := &Server{t: t, bin: bin, dir: t.TempDir()}
	t.Cleanup(s.Stop)
	var err error
	for range bindAttempts {
		var bus int
		if s.port, err = pickPort(); err == nil {
			bus, err = pickPort()
		}
		if err != nil {
			return nil, fmt.Errorf("picking a free port: %w", err)
		}
		s.extra = []string{
			"--cluster-enabled", "yes",
			"--cluster-port", strconv.Itoa(bus),
			"--cluster-config-file", filepath.Join(s.dir, "nodes.conf"),
			"--cluster-node-timeout", strconv.Itoa(int(clusterNodeTimeout.Milliseconds())),
			// A replica's first sync starts at once: Redis's default
			// 5 s wait for more replicas races the replica's own 5 s
			// timeout, and a replica that never synced never takes
			// its master's place.
			"--repl-diskless-sync-delay", "0",
		}
		if err = s.launch(); !errors.Is(err, errAddrInUse) {
			break
		}
	}
	if err != nil {
		return s, fmt.Errorf("starting a cluster node: %w", err)
	}
	return s, nil
}

// URL returns the cluster's URL in go-redis's cluster form (every node,
// "redis://host1:port1?addr=host2:port2&…"), for redis.ParseClusterURL
// and mcpredis.NewClient.
func (c *Cluster) URL() string {
	q := url.Values{}
	for _, n := range c.nodes[1:] {
		q.Add("addr", n.Addr())
	}
	return "redis://" + c.nodes[0].Addr() + "?" + q.Encode()
}

// Nodes returns the cluster's nodes, the masters StartCluster made
// first. A node stopped and started again ([Server.Stop],
// [Server.Restart]) rejoins the cluster with its configuration.
func (c *Cluster) Nodes() []*Server { return c.nodes }

// Masters returns the nodes that are masters now, as the live nodes
// report (after a failover, replicas that took over).
func (c *Cluster) Masters() []*Server {
	var out []*Server
	for _, n := range c.nodes {
		if role, err := n.info("replication", "role"); err == nil && role == "master" {
			out = append(out, n)
		}
	}
	return out
}

// WaitOK returns once every live node reports the cluster ok and sees
// every slot served by a master that runs (after a master stopped: once
// its replica took over), and every live replica is in sync with its
// master, or fails the test after timeout.
func (c *Cluster) WaitOK(timeout time.Duration) {
	c.t.Helper()
	if err := c.waitOK(timeout); err != nil {
		c.t.Fatalf("redistest: %v", err)
	}
}

func (c *Cluster) waitOK(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var bad error
		for _, n := range c.nodes {
			if !n.running() {
				continue
			}
			state, err := n.command("CLUSTER", "INFO")
			if err == nil && !strings.Contains(state, "cluster_state:ok") {
				err = fmt.Errorf("node %s: cluster not ok", n.Addr())
			}
			if err == nil {
				err = c.servedByLive(n)
			}
			if err == nil {
				// A replica that has not synced with its master cannot
				// take its place.
				if role, _ := n.info("replication", "role"); role == "slave" {
					if link, _ := n.info("replication", "master_link_status"); link != "up" {
						err = fmt.Errorf("replica %s: link to its master %s", n.Addr(), link)
					}
				}
			}
			if err != nil {
				bad = err
				break
			}
		}
		if bad == nil {
			return nil
		}
		if time.Now().After(deadline) {
			var nodes string
			for _, n := range c.nodes {
				if n.running() {
					nodes, _ = n.command("CLUSTER", "NODES")
					break
				}
			}
			return fmt.Errorf("the cluster is not ok after %v: %w; CLUSTER NODES:\n%s", timeout, bad, nodes)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// servedByLive checks that node n sees every slot served by a master
// that runs and that it does not count as failing.
func (c *Cluster) servedByLive(n *Server) error {
	out, err := n.command("CLUSTER", "NODES")
	if err != nil {
		return err
	}
	running := map[string]bool{}
	for _, m := range c.nodes {
		if m.running() {
			running[m.Addr()] = true
		}
	}
	slots := 0
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || !strings.Contains(f[2], "master") {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				continue // a slot being moved
			}
			lo, hi, found := strings.Cut(r, "-")
			a, err1 := strconv.Atoi(lo)
			b := a
			var err2 error
			if found {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 != nil || err2 != nil {
				continue
			}
			if !running[addr] || strings.Contains(f[2], "fail") {
				return fmt.Errorf("node %s: slots %s served by %s (%s)", n.Addr(), r, addr, f[2])
			}
			slots += b - a + 1
		}
	}
	if slots != 16384 {
		return fmt.Errorf("node %s: %d of 16384 slots served", n.Addr(), slots)
	}
	return nil
}

// WaitSynced returns once every live replica has every write its master
// took (their replication offsets are equal), or fails the test after
// timeout. Redis replicates asynchronously: a write a master answered
// may be lost when it fails before its replica has it, so a test that
// crashes a master and counts on its writes waits for this first.
func (c *Cluster) WaitSynced(timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		behind := ""
		for _, n := range c.nodes {
			if !n.running() {
				continue
			}
			out, err := n.command("INFO", "replication")
			if err != nil {
				behind = err.Error()
				break
			}
			if !strings.Contains(out, "role:master") {
				continue
			}
			var offset string
			for line := range strings.SplitSeq(out, "\n") {
				line = strings.TrimSpace(line)
				if v, ok := strings.CutPrefix(line, "master_repl_offset:"); ok {
					offset = v
				}
			}
			for line := range strings.SplitSeq(out, "\n") {
				line = strings.TrimSpace(line)
				if !strings.HasPrefix(line, "slave") || !strings.Contains(line, "offset=") {
					continue
				}
				_, rest, _ := strings.Cut(line, "offset=")
				got, _, _ := strings.Cut(rest, ",")
				if got != offset {
					behind = fmt.Sprintf("a replica of %s is at offset %s of %s", n.Addr(), got, offset)
				}
			}
		}
		if behind == "" {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("redistest: replicas not in sync after %v: %s", timeout, behind)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// findCLI returns redis-cli: beside redis-server, else on PATH.
func findCLI(server string) (string, error) {
	p := filepath.Join(filepath.Dir(server), "redis-cli")
	if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
		return p, nil
	}
	if p, err := exec.LookPath("redis-cli"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("no redis-cli binary (not beside %s, nor on PATH)", server)
}

// running reports whether the server's process runs.
func (s *Server) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

// info returns one field of INFO section.
func (s *Server) info(section, field string) (string, error) {
	out, err := s.command("INFO", section)
	if err != nil {
		return "", err
	}
	for line := range strings.SplitSeq(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("INFO %s has no %s", section, field)
}

// command sends one command to the server and returns its answer, which
// must be a simple or bulk string. It speaks RESP by hand: no client, no
// goroutine.
func (s *Server) command(args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", s.Addr(), 200*time.Millisecond)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write(b.Bytes()); err != nil {
		return "", err
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	switch {
	case strings.HasPrefix(line, "+"):
		return line[1:], nil
	case strings.HasPrefix(line, "$"):
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", fmt.Errorf("%s answered %q", args[0], line)
		}
		body := make([]byte, n+2)
		if _, err := io.ReadFull(r, body); err != nil {
			return "", err
		}
		return string(body[:n]), nil
	}
	return "", fmt.Errorf("%s answered %q", args[0], line)
}
