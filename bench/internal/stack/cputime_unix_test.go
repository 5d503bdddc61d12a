//go:build unix

package stack

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used so far, in user and
// kernel mode, all threads (the garbage collector's included).
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
