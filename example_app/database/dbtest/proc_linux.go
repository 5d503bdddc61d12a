package dbtest

import "syscall"

// procAttr makes the server die with the test binary, even when the binary
// is killed.
func procAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
