package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/saguaro-go/saguaro/bench/internal/configs"
	"github.com/saguaro-go/saguaro/bench/internal/mcpconn"
	"github.com/saguaro-go/saguaro/bench/internal/proc"
)

// server is one running server process of a configuration.
type server struct {
	*proc.Proc
	cfg configs.Config
	ep  *mcpconn.Endpoint
}

// startServer runs the configuration's binary with the given extra flags and
// waits for its ready line.
func startServer(o *options, phase string, cfg configs.Config, args ...string) (*server, error) {
	bin := filepath.Join(o.binDir, cfg.Name)
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s not built (run make -C bench build): %w", bin, err)
	}
	args = append([]string{"-addr", "127.0.0.1:0", "-admin", "127.0.0.1:0"}, args...)
	cmd := exec.Command(bin, args...)
	if o.pin {
		cmd = exec.Command("taskset", append([]string{"-c", "0", bin}, args...)...)
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	}
	p, err := proc.Start(cfg.Name, filepath.Join(o.logDir, cfg.Name+"."+phase+".log"), cmd)
	if err != nil {
		return nil, err
	}
	ep, err := mcpconn.NewEndpoint(p.Ready.MCPURL, p.Ready.Headers)
	if err != nil {
		p.Stop()
		return nil, err
	}
	ep.Modern = cfg.IsModern()
	return &server{Proc: p, cfg: cfg, ep: ep}, nil
}

// stopAll stops every server, whatever happened.
func stopAll(ss []*server) {
	for _, s := range ss {
		if s != nil {
			s.Stop()
		}
	}
}

func isPending(c configs.Config) bool { return strings.TrimSpace(c.Pending) != "" }
