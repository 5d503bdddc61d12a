package soak

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// ErrNoPostgres is returned when no PostgreSQL answers at the URL given
// and none can be started here.
var ErrNoPostgres = errors.New("soak: no PostgreSQL")

// postgres returns the URL of a PostgreSQL server to create the run's
// database on: admin when it answers, else a throwaway server started in
// dir from the machine's initdb and postgres binaries (Debian's
// postgresql package), stopped by the returned func.
func postgres(ctx context.Context, admin, dir string) (string, func(), error) {
	probe := exec.CommandContext(ctx, "psql", admin, "-qAtc", "SELECT 1")
	probe.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=2")
	if err := probe.Run(); err == nil {
		return admin, func() {}, nil
	}
	bin, err := pgBinDir()
	if err != nil {
		return "", nil, fmt.Errorf("%w at %s, and %w", ErrNoPostgres, admin, err)
	}
	data := filepath.Join(dir, "pgdata")
	var cred *syscall.Credential
	if os.Getuid() == 0 {
		// PostgreSQL will not run as root: it runs as the user
		// postgres, which must own its folder.
		u, err := user.Lookup("postgres")
		if err != nil {
			return "", nil, fmt.Errorf("%w: running as root and no user postgres: %w", ErrNoPostgres, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.MkdirAll(data, 0o700); err != nil {
			return "", nil, err
		}
		for _, d := range []string{dir, data} {
			if err := os.Chown(d, uid, gid); err != nil {
				return "", nil, err
			}
		}
	}
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("%w: initdb: %w: %s", ErrNoPostgres, err, out)
	}
	addr, err := freeAddr()
	if err != nil {
		return "", nil, err
	}
	_, port, _ := net.SplitHostPort(addr)
	p := &process{name: "postgres", bin: filepath.Join(bin, "postgres"), logPath: filepath.Join(dir, "postgres.log"),
		args: []string{"-D", data, "-p", port, "-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=200"}}
	p.cred = cred
	if err := p.start(ctx); err != nil {
		return "", nil, err
	}
	url := "postgres://postgres@" + addr + "/postgres?sslmode=disable"
	deadline := time.Now().Add(30 * time.Second)
	for {
		probe := exec.CommandContext(ctx, "psql", url, "-qAtc", "SELECT 1")
		if probe.Run() == nil {
			return url, p.stop, nil
		}
		if time.Now().After(deadline) {
			p.kill()
			return "", nil, fmt.Errorf("%w: the throwaway server did not answer (see %s)", ErrNoPostgres, p.logPath)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// pgBinDir finds the folder of initdb and postgres.
func pgBinDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(m) == 0 {
		return "", errors.New("no initdb (.ci/postgres.sh installs Debian's postgresql)")
	}
	return filepath.Dir(m[len(m)-1]), nil
}
