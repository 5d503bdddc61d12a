//go:build !linux

package redistest

import "syscall"

// sysProcAttr is nil where there is no parent-death signal: there a test
// binary killed without running its cleanups leaves its redis-server behind.
func sysProcAttr() *syscall.SysProcAttr { return nil }
