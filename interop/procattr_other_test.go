//go:build !linux

package interop

import "syscall"

// procAttr: only Linux has a parent-death signal; elsewhere TestMain's
// stop is the only guard.
func procAttr() *syscall.SysProcAttr { return nil }
