// Package metrics is CommiTea's one set of Prometheus metrics. Every metric
// is defined here, on a registry of its own, and the code that moves it
// calls one small function (DeliveryRefused, ToolCall, ModelRequest, ...),
// so the names, labels and buckets stay consistent and a scrape of /metrics
// shows the whole service. The functions are safe for concurrent use and
// cheap enough for the request path.
package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry holds every CommiTea metric plus the Go runtime and process
// collectors.
var Registry = prometheus.NewRegistry()

var (
	deliveriesReceived = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "commitea_deliveries_received_total",
		Help: "Webhook deliveries that reached the receiver, before any check.",
	})
	deliveriesRefused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "commitea_deliveries_refused_total",
		Help: "Webhook deliveries refused, by reason: too_large, unreadable, bad_signature, missing_headers, malformed, unavailable.",
	}, []string{"reason"})
	ingestSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "commitea_ingest_seconds",
		Help:    "Time from a webhook's arrival to its delivery, mirror change and job being committed.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
	})
	recomputeSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "commitea_recompute_seconds",
		Help:    "Time to recompute a project's snapshot (lifecycle, calibration, Monte Carlo), by project.",
		Buckets: []float64{.05, .1, .25, .5, 1, 2, 4, 8, 16, 32},
	}, []string{"project"})
	toolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "commitea_tool_calls_total",
		Help: "Tool calls by tool and outcome (ok or an error code).",
	}, []string{"tool", "outcome"})
	modelRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "commitea_model_requests_total",
		Help: "Language-model requests by role (small, big) and outcome (ok, error, fallback, budget).",
	}, []string{"role", "outcome"})
	modelTokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "commitea_model_tokens_total",
		Help: "Language-model tokens by role and kind (prompt, completion).",
	}, []string{"role", "kind"})
	standupDeliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "commitea_standup_deliveries_total",
		Help: "Standup deliveries by sink (webhook, slack, matrix, email, gitea) and outcome (ok, error, skipped).",
	}, []string{"sink", "outcome"})
	snapshotAge = prometheus.NewDesc("commitea_snapshot_age_seconds",
		"Seconds since the project's latest snapshot was computed.", []string{"project"}, nil)
)

func init() {
	Registry.MustRegister(deliveriesReceived, deliveriesRefused, ingestSeconds, recomputeSeconds,
		toolCalls, modelRequests, modelTokens, standupDeliveries, snapshotAges,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// DeliveryReceived counts a webhook delivery as it arrives.
func DeliveryReceived() { deliveriesReceived.Inc() }

// DeliveryRefused counts a refused delivery under its reason.
func DeliveryRefused(reason string) { deliveriesRefused.WithLabelValues(reason).Inc() }

// Ingested observes how long a delivery took to be committed.
func Ingested(d time.Duration) { ingestSeconds.Observe(d.Seconds()) }

// Recomputed observes one recompute of project ("owner/repo").
func Recomputed(project string, d time.Duration) {
	recomputeSeconds.WithLabelValues(project).Observe(d.Seconds())
}

// ToolCall counts one tool call; outcome is "ok" or the error code.
func ToolCall(tool, outcome string) { toolCalls.WithLabelValues(tool, outcome).Inc() }

// ModelRequest counts one model request of role with its outcome and the
// tokens it used.
func ModelRequest(role, outcome string, promptTokens, completionTokens int) {
	modelRequests.WithLabelValues(role, outcome).Inc()
	if promptTokens > 0 {
		modelTokens.WithLabelValues(role, "prompt").Add(float64(promptTokens))
	}
	if completionTokens > 0 {
		modelTokens.WithLabelValues(role, "completion").Add(float64(completionTokens))
	}
}

// StandupDelivery counts one standup delivery to sink with its outcome.
func StandupDelivery(sink, outcome string) { standupDeliveries.WithLabelValues(sink, outcome).Inc() }

// SnapshotTimes reports when each project's latest snapshot was computed,
// keyed by "owner/repo". It runs at scrape time, so the age is current on
// every replica, API-only ones included.
type SnapshotTimes func(ctx context.Context) (map[string]time.Time, error)

// SetSnapshotTimes installs the source of commitea_snapshot_age_seconds.
func SetSnapshotTimes(f SnapshotTimes) { snapshotAges.set(f) }

// Handler serves the registry in the Prometheus text format.
func Handler() http.Handler {
	return promhttp.HandlerFor(Registry, promhttp.HandlerOpts{Registry: Registry})
}
