//go:build unix

package scheduler

import "syscall"

// processCPU is the CPU time this process has used, in nanoseconds: the
// benchmarks report it next to wall time because on a shared machine wall
// time also counts other processes' turns.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
