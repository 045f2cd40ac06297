//go:build !unix

package worker

// processCPU is not measured off unix.
func processCPU() int64 { return 0 }
