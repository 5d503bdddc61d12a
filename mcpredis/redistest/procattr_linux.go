package redistest

import "syscall"

// sysProcAttr makes the kernel kill redis-server when the test binary dies
// without running its cleanups (a test timeout's panic, a SIGKILL), so that
// no server outlives it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
