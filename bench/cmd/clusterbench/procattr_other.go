//go:build !linux

package main

import "syscall"

// sysProcAttr is nil where there is no parent-death signal; the children
// still exit when their stdin reaches EOF.
func sysProcAttr() *syscall.SysProcAttr { return nil }
