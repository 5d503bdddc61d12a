//go:build unix

package mcp

import (
	"os"
	"os/signal"
	"syscall"
)

// keepBrokenPipe makes a write to a closed standard output fail with
// EPIPE instead of killing the process with SIGPIPE (the runtime's
// default for descriptors 1 and 2), until the function it returns is
// called: over stdio a client that closes our output has left, and the
// server ends its session as it does at the end of input.
func keepBrokenPipe() func() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGPIPE)
	return func() { signal.Stop(ch) }
}
