// Package api is CommiTea's HTTP surface: the Gitea webhook receiver, health
// and readiness, and (later) the tool endpoints. It stays thin: it decodes,
// authenticates and maps errors to statuses; the work happens in worker.
package api
