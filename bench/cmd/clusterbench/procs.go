package main

import (
	"net"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/saguaro-go/saguaro/bench/internal/mcpconn"
	"github.com/saguaro-go/saguaro/bench/internal/proc"
)

// child is one process this command started that speaks the ready-line
// protocol of internal/serve: a server binary, or this command as a proxy.
type child struct {
	*proc.Proc
	role string
}

// startProc runs bin with args, its stderr and the rest of its stdout to
// logDir/name.log, and waits for its ready line.
func startProc(logDir, name, role, bin string, args ...string) (*child, error) {
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = sysProcAttr()
	p, err := proc.Start(name, filepath.Join(logDir, name+".log"), cmd)
	if err != nil {
		return nil, err
	}
	return &child{Proc: p, role: role}, nil
}

// startReplica starts a replica of a cluster: it must know its own
// address before it listens (its relay URL), so it is given a port that
// was free a moment ago, and another if that one was taken meanwhile.
func startReplica(logDir, name, bin string, args ...string) (*child, error) {
	var err error
	for range 5 {
		var port int
		if port, err = freePort(); err != nil {
			return nil, err
		}
		a := append([]string{"-mode", "redis", "-addr", "127.0.0.1:" + strconv.Itoa(port), "-admin", "127.0.0.1:0"}, args...)
		var p *child
		if p, err = startProc(logDir, name, "replica", bin, a...); err == nil {
			return p, nil
		}
		if _, early := err.(*proc.EarlyExitError); !early {
			return nil, err
		}
	}
	return nil, err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// newEndpoint is where the load generator reaches a configuration: its
// sessions introduce themselves as saguaro-clusterbench, and every echo
// answer must be application/json (mcpconn.CheckJSONCall).
func newEndpoint(mcpURL string) (*mcpconn.Endpoint, error) {
	ep, err := mcpconn.NewEndpoint(mcpURL, nil)
	if err != nil {
		return nil, err
	}
	ep.ClientName = "saguaro-clusterbench"
	ep.JSONOnly = true
	return ep, nil
}
