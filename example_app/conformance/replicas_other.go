//go:build !linux

package main

import "syscall"

// childSysProcAttr is nil where there is no parent-death signal: there a
// launcher killed without stopping its replicas leaves them behind.
func childSysProcAttr() *syscall.SysProcAttr { return nil }
