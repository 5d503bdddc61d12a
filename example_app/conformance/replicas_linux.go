package main

import "syscall"

// childSysProcAttr makes the kernel kill a replica when the launcher dies
// without stopping it (SIGKILL, a crash): no replica outlives it.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
