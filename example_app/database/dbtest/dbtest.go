// Package dbtest gives tests a PostgreSQL database of their own, so that
// `make test` needs no PostgreSQL set up by hand.
//
// [URL] creates a fresh database for the calling test on the machine's
// PostgreSQL ($DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test)
// when it answers, and otherwise on a throwaway server that the test
// binary starts once (initdb and postgres from Debian's postgresql
// package, which .ci/postgres.sh installs where it is missing). The
// database is dropped when the test ends; the throwaway server stops when
// [Main] returns, and dies with the test binary on Linux even when the
// binary is killed.
//
// When no PostgreSQL can be had, a test is skipped, except in CI (the
// environment variable CI is non-empty), where it fails.
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultURL is the shared PostgreSQL that URL tries when $DATABASE_URL
// is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

var server struct {
	once sync.Once
	url  string // an admin URL of the server in use
	err  error
	proc *exec.Cmd
	dir  string
}

// Main runs the package's tests and then stops the throwaway server, if
// one was started. Use it as TestMain's body: os.Exit(dbtest.Main(m)).
func Main(m interface{ Run() int }) int {
	code := m.Run()
	stop()
	return code
}

// URL returns the URL of a new, empty database for this test on a
// PostgreSQL server, dropped when the test ends. Call it from the test's
// goroutine.
func URL(t testing.TB) string {
	t.Helper()
	server.once.Do(func() { server.url, server.err = find() })
	if server.err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("dbtest: no PostgreSQL: %v", server.err)
		}
		t.Skipf("dbtest: no PostgreSQL: %v", server.err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "saguaro_test_" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, server.url)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("dbtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, server.url)
		if err != nil {
			t.Errorf("dbtest: drop database %s: %v", name, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("dbtest: drop database %s: %v", name, err)
		}
	})
	u, _ := url.Parse(server.url)
	u.Path = "/" + name
	return u.String()
}

// find returns the shared server's URL when it answers, else starts a
// throwaway one.
func find() (string, error) {
	shared := os.Getenv("DATABASE_URL")
	if shared == "" {
		shared = DefaultURL
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, shared)
	if err == nil {
		c.Close(context.Background())
		return shared, nil
	}
	u, startErr := start()
	if startErr != nil {
		return "", fmt.Errorf("%s does not answer (%v), and no throwaway server: %w", shared, err, startErr)
	}
	return u, nil
}

// binDir finds Debian's PostgreSQL binaries.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(m) == 0 {
		return "", fmt.Errorf("no initdb (install Debian's postgresql: .ci/postgres.sh)")
	}
	return filepath.Dir(m[len(m)-1]), nil
}

// start runs initdb and postgres in a temporary folder on a free port.
// PostgreSQL refuses to run as root: as root it runs as the user
// "postgres" that Debian's package creates.
func start() (string, error) {
	bin, err := binDir()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "dbtest-pg-")
	if err != nil {
		return "", err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		pu, err := user.Lookup("postgres")
		if err != nil {
			return "", fmt.Errorf("running as root and no user postgres: %w", err)
		}
		uid, _ := strconv.Atoi(pu.Uid)
		gid, _ := strconv.Atoi(pu.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return "", err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return "", fmt.Errorf("initdb: %v: %s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return "", err
	}
	pg := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-k", dir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=200")
	pg.SysProcAttr = procAttr(cred)
	log, _ := os.Create(filepath.Join(dir, "postgres.log"))
	pg.Stdout, pg.Stderr = log, log
	if err := pg.Start(); err != nil {
		return "", fmt.Errorf("postgres: %w", err)
	}
	server.proc, server.dir = pg, dir
	u := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		c, err := pgx.Connect(ctx, u)
		cancel()
		if err == nil {
			c.Close(context.Background())
			return u, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	return "", fmt.Errorf("postgres did not answer on port %d within 30 s", port)
}

func stop() {
	if server.proc != nil {
		_ = server.proc.Process.Signal(syscall.SIGINT) // fast shutdown
		done := make(chan struct{})
		go func() { _ = server.proc.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = server.proc.Process.Kill()
			<-done
		}
		server.proc = nil
	}
	if server.dir != "" {
		_ = os.RemoveAll(server.dir)
		server.dir = ""
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
