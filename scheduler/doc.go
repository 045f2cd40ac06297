// Package scheduler is CommiTea's pure domain core: lifecycle inference,
// effort calibration, the Monte Carlo schedule, focus and runway, what-if
// and backtest. It takes plain structs and a seed and returns plain structs;
// it imports only the standard library and gonum, so it runs and benchmarks
// without a database.
package scheduler
