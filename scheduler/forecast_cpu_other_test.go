//go:build !unix

package scheduler

// processCPU is unavailable here; the benchmarks then report 0 CPU time.
func processCPU() int64 { return 0 }
