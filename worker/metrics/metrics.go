// Package metrics is CommiTea's one set of Prometheus metrics. Every metric
// is defined here, on a registry of its own, and the code that moves it
// calls one small function (DeliveryRefused, ToolCall, ModelRequest, ...),
// so the names, labels and buckets stay consistent and a scrape of /metrics
// shows the whole service. The functions are safe for concurrent use and
// cheap enough for the request path.
package metrics

import (
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
		Help: "Language-model requests sent, by role (small, big) and outcome (ok, error); failovers, repairs and budget refusals have counters of their own.",
	}, []string{"role", "outcome"})
	modelTokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "commitea_model_tokens_total",
		Help: "Language-model tokens by role and kind (prompt, completion).",
	}, []string{"role", "kind"})
	modelFailovers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "commitea_model_failovers_total",
		Help: "Requests a role's primary model failed and its fallback was asked, by role.",
	}, []string{"role"})
	modelRepairs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "commitea_model_repairs_total",
		Help: "Repair requests after an invalid structured answer, by role and outcome (ok: the second answer was valid; invalid: MODEL_INVALID_OUTPUT).",
	}, []string{"role", "outcome"})
	modelBudgetRefusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "commitea_model_budget_refusals_total",
		Help: "Model requests refused by a daily budget, by role and limit (requests, tokens, cost_usd).",
	}, []string{"role", "limit"})
	proseOutcomes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "commitea_prose_total",
		Help: "Model prose by use (standup, ask) and outcome: kept; rejected by the check, with the reason " +
			"(ungrounded, wrong_subject, status, unknown_issue, incomplete, empty); template when no prose came, " +
			"with the reason (no_model, model_error, budget).",
	}, []string{"use", "outcome", "reason"})
	standupDeliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "commitea_standup_deliveries_total",
		Help: "Standup deliveries by sink (webhook, slack, matrix, email, gitea) and outcome (ok, error, skipped).",
	}, []string{"sink", "outcome"})
)

func init() {
	Registry.MustRegister(deliveriesReceived, deliveriesRefused, ingestSeconds, recomputeSeconds,
		toolCalls, modelRequests, modelTokens, modelFailovers, modelRepairs, modelBudgetRefusals, proseOutcomes,
		standupDeliveries, snapshotFreshness,
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

// ModelFailover counts a request of role that went to its fallback.
func ModelFailover(role string) { modelFailovers.WithLabelValues(role).Inc() }

// ModelRepair counts a repair request of role; ok is whether it gave a
// valid answer.
func ModelRepair(role string, ok bool) {
	outcome := "ok"
	if !ok {
		outcome = "invalid"
	}
	modelRepairs.WithLabelValues(role, outcome).Inc()
}

// BudgetRefusal counts a request of role that a daily limit refused; role
// is "all" for the budget shared by every role.
func BudgetRefusal(role, limit string) { modelBudgetRefusals.WithLabelValues(role, limit).Inc() }

// Prose outcomes.
const (
	ProseKept     = "kept"
	ProseRejected = "rejected"
	ProseTemplate = "template"
)

// Prose counts one piece of model prose of use ("standup", "ask") with its
// outcome and, unless kept, the reason.
func Prose(use, outcome, reason string) { proseOutcomes.WithLabelValues(use, outcome, reason).Inc() }

// StandupDelivery counts one standup delivery to sink with its outcome.
func StandupDelivery(sink, outcome string) { standupDeliveries.WithLabelValues(sink, outcome).Inc() }

// Handler serves the registry in the Prometheus text format.
func Handler() http.Handler {
	return promhttp.HandlerFor(Registry, promhttp.HandlerOpts{Registry: Registry})
}
