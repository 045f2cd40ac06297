// Package worker holds CommiTea's background work: the group-commit webhook
// ingester, the River job kinds (one file each: XxxArgs and XxxWorker), and
// the code they share. Each consumer declares the small interface it needs.
package worker
