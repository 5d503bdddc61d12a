package main

import "syscall"

// sysProcAttr makes the kernel kill a child (server, proxy, redis-server)
// when this process dies without stopping it, so that none outlives it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
