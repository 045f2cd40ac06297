package api

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/commitea/commitea/api/signin"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/metrics"
	"github.com/commitea/commitea/worker/tools"
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

// FreshnessReporter reports, per project, how far its snapshot is behind
// its mirror.
type FreshnessReporter func(ctx context.Context) ([]ProjectFreshness, error)

// Config is what the router needs.
type Config struct {
	WebhookSecret string
	MaxBodyBytes  int64
	// MaxBufferedBytes bounds the request bytes buffered at once across
	// all requests, unauthenticated webhook bodies above all (bodies.go);
	// 0 is DefaultMaxBufferedBytes.
	MaxBufferedBytes int64
	// WebhookReadTimeout and ToolReadTimeout are how long a body may take
	// to arrive on each route; 0 is the default.
	WebhookReadTimeout time.Duration
	ToolReadTimeout    time.Duration
	Sink               DeliverySink
	Decode             DeliveryDecoder
	Ready              ReadinessChecker
	// Freshness, when set, lists each project's lag in the /readyz body;
	// /readyz?fresh=1 answers 503 when a project is not ready or behind by
	// more than MaxLag.
	Freshness FreshnessReporter
	MaxLag    time.Duration
	Log       *slog.Logger
	// Tools, when set, are served at /v1/tools and over MCP at /mcp and
	// /mcp/readonly to callers holding one of Tokens.
	Tools  ToolRunner
	Tokens []Token
	// PMState, when set, serves GET /v1/pm-state.md (read scope).
	PMState PMStateRenderer
	Version string
	// Dashboard, when set, is served at /dashboard/ to read-scope tokens
	// and to people signed in with Gitea, each project to those who read
	// it in Gitea.
	Dashboard http.Handler
	// RiverUI, when set, is served at /riverui/ to approve-scope tokens
	// and to people with approve on every project: it can retry and
	// cancel jobs.
	RiverUI http.Handler
	// SignIn, when set, serves "Sign in with Gitea" (/auth/…) for the
	// dashboard and the River UI. Its sessions never reach /v1 or /mcp.
	SignIn *signin.Service
	// TokenLinks lets those pages take a token once as ?token= (then a
	// cookie); otherwise they take a token only as a bearer header.
	TokenLinks bool
	// Projects are the configured projects ("owner/repo"), which a
	// signed-in person may read or not.
	Projects []string
	// MetricsToken, when set, is the bearer token /metrics asks for;
	// otherwise /metrics is open.
	MetricsToken string
	// PublicURL is the origin people reach CommiTea at (server.public_url),
	// or empty. When it is https, the dashboard cookie is Secure and
	// responses carry Strict-Transport-Security, whatever the connection
	// from a TLS-terminating proxy looks like.
	PublicURL string
}

// secureOrigin reports whether people reach CommiTea over https.
func (c Config) secureOrigin() bool {
	return strings.HasPrefix(strings.ToLower(c.PublicURL), "https://")
}

// NewRouter builds the HTTP handler.
func NewRouter(cfg Config) http.Handler {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 10 << 20
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxBufferedBytes <= 0 {
		cfg.MaxBufferedBytes = DefaultMaxBufferedBytes
	}
	if cfg.WebhookReadTimeout <= 0 {
		cfg.WebhookReadTimeout = DefaultWebhookReadTimeout
	}
	if cfg.ToolReadTimeout <= 0 {
		cfg.ToolReadTimeout = DefaultToolReadTimeout
	}
	budget := newByteBudget(cfg.MaxBufferedBytes)
	r := chi.NewRouter()
	r.Use(middleware.Recoverer, securityHeaders(cfg.secureOrigin()))
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	r.Get("/readyz", readyz(cfg))
	r.Post("/webhooks/gitea", (&webhookHandler{cfg: cfg, budget: budget}).ServeHTTP)
	if cfg.Tools != nil {
		mountTools(r, cfg, budget)
	}
	// Metrics carry no secrets, but they name projects and show load; an
	// operator who cannot keep the port private sets a token that the
	// scraper sends (Prometheus: authorization.credentials).
	r.Method(http.MethodGet, "/metrics", requireMetricsToken(cfg.MetricsToken, metrics.Handler()))
	browser := &browserAuth{tokens: newAuthenticator(cfg.Tokens), signin: cfg.SignIn, tokenLinks: cfg.TokenLinks,
		secure: cfg.secureOrigin(), projects: cfg.Projects, log: cfg.Log}
	if cfg.SignIn != nil {
		r.Group(func(r chi.Router) {
			r.Use(contentPolicy(signinPolicy))
			cfg.SignIn.Mount(r)
		})
	}
	if cfg.Dashboard != nil {
		r.Get("/", func(w http.ResponseWriter, req *http.Request) {
			target := "/dashboard/"
			if q := req.URL.RawQuery; q != "" {
				target += "?" + q
			}
			http.Redirect(w, req, target, http.StatusFound)
		})
		r.With(contentPolicy(dashboardPolicy), browser.dashboard("/dashboard")).Mount("/dashboard", http.StripPrefix("/dashboard", cfg.Dashboard))
	}
	if cfg.RiverUI != nil {
		r.With(contentPolicy(riverUIPolicy), browser.riverUI).Mount("/riverui", cfg.RiverUI)
	}
	return &routerHandler{Handler: r, budget: budget}
}

// mountTools serves the tools on both transports. Every route needs a
// bearer token; the scope a call needs is checked per tool by the core
// (read for query_project, write for the others, approve for an approved
// batch), except /mcp/readonly, which serves query_project only and calls
// it with the read scope alone (readOnlyRunner).
func mountTools(r chi.Router, cfg Config, budget *byteBudget) {
	a := newAuthenticator(cfg.Tokens)
	bodies := toolBodies{limit: maxToolBodyBytes, timeout: cfg.ToolReadTimeout, budget: budget}
	r.With(a.requireToken(tools.ScopeRead)).Get("/v1/tools", listTools(cfg.Tools))
	r.With(a.requireToken(tools.ScopeRead)).Get("/v1/openapi.json", openAPI(cfg))
	r.With(a.requireToken("")).Post("/v1/tools/{name}", callTool(cfg.Tools, bodies))
	// POST /v1/ask is Reginald under a path of its own; it is the ask tool,
	// served only when the registry declares it.
	if _, ok := cfg.Tools.Lookup("ask"); ok {
		r.With(a.requireToken(tools.ScopeRead)).Post("/v1/ask", callNamed(cfg.Tools, bodies, func(*http.Request) string { return "ask" }))
	}
	if cfg.PMState != nil {
		r.With(a.requireToken(tools.ScopeRead)).Get("/v1/pm-state.md", pmState(cfg.PMState))
	}
	full := mcpHandler(cfg.Tools, cfg.Version, cfg.Log, func(tools.Tool) bool { return true })
	readOnly := mcpHandler(readOnlyRunner{cfg.Tools}, cfg.Version, cfg.Log, func(tools.Tool) bool { return true })
	r.With(a.requireToken(""), bodies.buffer).Handle("/mcp", full)
	r.With(a.requireToken(tools.ScopeRead), bodies.buffer).Handle("/mcp/readonly", readOnly)
}
