//go:build unix

package bench

import "syscall"

// cpuTime returns the CPU time the process has used so far (user and system, every thread, so
// the garbage collector's work counts), in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
