// Command soak runs the example app under a long mixed load, one process
// and three replicas on Redis behind the round-robin balancer, kills a
// replica and restarts Redis along the way, and writes a report (Markdown
// with a PNG chart of every process's heap, RSS, goroutines and open file
// descriptors) that says pass or fail per criterion; see package
// internal/soak. It exits 1 when a criterion fails.
//
//	make -C bench soak          the full run, about 10 minutes: SOAK.md and soak.png
//	make -C bench soak QUICK=1  the short form (under a minute): .bin/SOAK-quick.md
//
// It needs the example_app and roundrobin binaries in -bin (the Makefile
// builds them), redis-server, psql and a PostgreSQL server ($DATABASE_URL,
// default postgres://postgres@127.0.0.1:5432/postgres), on which it
// creates and drops a database of its own.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/saguaro-go/saguaro/bench/internal/machine"
	"github.com/saguaro-go/saguaro/bench/internal/soak"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if errors.Is(err, soak.ErrFailed) {
			os.Exit(1)
		}
		os.Exit(2)
	}
}

func run() error {
	bin := flag.String("bin", ".bin", "folder holding the example_app and roundrobin binaries")
	out := flag.String("out", "SOAK.md", "the report to write; the chart goes beside it, as soak.png (soak-quick.png with -short)")
	short := flag.Bool("short", false, "the short form: under a minute, the hostile clients, the replica kill and the back-to-baseline check")
	load := flag.Duration("load", 0, "how long the load runs (default 7m30s, 20s with -short)")
	command := flag.String("command", "soak", "the command to name in the report")
	flag.Parse()

	cfg := soak.Config{
		Bin: *bin, Load: 450 * time.Second, Sample: 2 * time.Second,
		SessionIdle: 45 * time.Second, ConnIdle: 15 * time.Second, BodyTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second,
		Legacy: 3, Modern: 2, Resumers: 2, Feeds: 25, SlowBodies: 3, NeverReaders: 4, Pause: 15 * time.Millisecond,
		Log: os.Stderr,
	}
	png := "soak.png"
	if *short {
		cfg.Light, cfg.Load, cfg.Sample = true, 20*time.Second, time.Second
		cfg.SessionIdle, cfg.ConnIdle, cfg.BodyTimeout, cfg.WriteTimeout = 3*time.Second, 3*time.Second, 3*time.Second, 2*time.Second
		cfg.Feeds, cfg.SlowBodies, cfg.NeverReaders, cfg.Pause = 5, 2, 2, 20*time.Millisecond
		png = "soak-quick.png"
	}
	if *load > 0 {
		cfg.Load = *load
	}
	var err error
	if cfg.Redis, err = exec.LookPath("redis-server"); err != nil {
		return fmt.Errorf("soak: redis-server: %w (.ci/redis.sh installs it)", err)
	}
	cfg.DatabaseURL = os.Getenv("DATABASE_URL")
	if cfg.DatabaseURL == "" {
		cfg.DatabaseURL = "postgres://postgres@127.0.0.1:5432/postgres"
	}
	if cfg.Dir, err = os.MkdirTemp("", "soak-"); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "soak: logs in %s\n", cfg.Dir)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := soak.Run(ctx, cfg)
	if err != nil {
		return err
	}
	pngPath := filepath.Join(filepath.Dir(*out), png)
	if err := res.Plot(pngPath); err != nil {
		return err
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	title := "Soak: the example app, one process and three replicas on Redis"
	if *short {
		title = "Soak, short form"
	}
	h := soak.Header{Title: title, Command: *command, PNG: png, Machine: []string{
		fmt.Sprintf("CPU: %s, %d cores (shared with other work: CPU figures are not the point here)", machine.CPUModel(), machine.CPUCount()),
		"Kernel: " + machine.Kernel(),
		"saguaro: " + machine.SaguaroCommit(),
	}}
	if err := res.WriteReport(f, h); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	for _, c := range res.Criteria() {
		verdict := "pass"
		if !c.Pass {
			verdict = "FAIL"
		}
		fmt.Fprintf(os.Stderr, "soak: %s: %s (%s)\n", verdict, c.Name, c.Figures)
	}
	fmt.Fprintf(os.Stderr, "soak: wrote %s and %s\n", *out, pngPath)
	if !res.Passed() {
		var failed []string
		for _, c := range res.Criteria() {
			if !c.Pass {
				failed = append(failed, c.Name)
			}
		}
		return fmt.Errorf("%w: %s (see %s; logs in %s)", soak.ErrFailed, strings.Join(failed, "; "), *out, cfg.Dir)
	}
	return os.RemoveAll(cfg.Dir)
}
