// Package worker holds CommiTea's background work: the group-commit webhook
// ingester, the River job kinds (one file each: XxxArgs and XxxWorker), and
// the code they share. Each consumer declares the small interface it needs.
//
// The recompute and the write tools' what-if share one path from a mirror
// state to a forecast (plan.go: Forecaster.forecast, on a Plan); the
// what-if makes its changes to a copy of the mirror (whatif.go) so that
// what it quotes is what the first snapshot after the change shows. The
// rules, and how the hour boundary is crossed, are in the scheduler's
// package doc under "One planning rule".
package worker
