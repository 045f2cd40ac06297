//go:build !race

package scheduler

// raceDetector is set when the tests run under -race, where the real-data
// cross-validation runs a thinned replay (see TestRealDataCV).
const raceDetector = false
