package interop

import "syscall"

// procAttr makes the kernel kill the fixture if the test binary dies
// first (a panic, a timeout, SIGKILL), so no fixture outlives a run.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
