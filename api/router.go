package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/metrics"
)

// Token scopes.
const (
	ScopeRead    = "read"
	ScopeWrite   = "write"
	ScopeApprove = "approve"
)

// DeliverySink takes a verified delivery and returns once it is durably
// stored (nil) or failed.
type DeliverySink interface {
	Submit(ctx context.Context, d worker.Incoming) error
}

// DeliveryDecoder turns a Gitea webhook body into a mirror change.
type DeliveryDecoder func(event string, body []byte) (gitea.Change, error)

// ReadinessChecker reports whether the service can do its work.
type ReadinessChecker func(ctx context.Context) error

// Config is what the router needs.
type Config struct {
	WebhookSecret string
	MaxBodyBytes  int64
	Sink          DeliverySink
	Decode        DeliveryDecoder
	Ready         ReadinessChecker
	Log           *slog.Logger
	// Tokens are the bearer tokens accepted by the authenticated routes.
	Tokens []Token
	// Dashboard, when set, is served at /dashboard/ to read-scope tokens.
	Dashboard http.Handler
	// RiverUI, when set, is served at /riverui/ to approve-scope tokens:
	// it can retry and cancel jobs.
	RiverUI http.Handler
}

// NewRouter builds the HTTP handler.
func NewRouter(cfg Config) http.Handler {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 10 << 20
	}
	r := chi.NewRouter()
	r.Use(middleware.Recoverer)
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	r.Get("/readyz", func(w http.ResponseWriter, req *http.Request) {
		ctx, cancel := context.WithTimeout(req.Context(), 2*time.Second)
		defer cancel()
		if cfg.Ready != nil {
			if err := cfg.Ready(ctx); err != nil {
				writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not ready", "reason": err.Error()})
				return
			}
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	r.Post("/webhooks/gitea", (&webhookHandler{cfg: cfg}).ServeHTTP)
	// Metrics carry no secrets and scrapers rarely hold tokens; keep the
	// port off the public internet instead.
	r.Method(http.MethodGet, "/metrics", metrics.Handler())
	auth := authenticator{tokens: cfg.Tokens}
	if cfg.Dashboard != nil {
		r.Get("/", func(w http.ResponseWriter, req *http.Request) {
			target := "/dashboard/"
			if q := req.URL.RawQuery; q != "" {
				target += "?" + q
			}
			http.Redirect(w, req, target, http.StatusFound)
		})
		r.With(auth.requireScope(ScopeRead, true)).Mount("/dashboard", http.StripPrefix("/dashboard", cfg.Dashboard))
	}
	if cfg.RiverUI != nil {
		r.With(auth.requireScope(ScopeApprove, true)).Mount("/riverui", cfg.RiverUI)
	}
	return r
}
