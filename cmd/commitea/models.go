package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/commitea/commitea/cmd/commitea/config"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/models"
	"github.com/commitea/commitea/worker/standup"
	"github.com/commitea/commitea/worker/tools"
)

// modelRouter builds the language-model router from the configuration,
// recording usage in the database. Roles without a model are left out, so
// the features needing them answer MODEL_UNAVAILABLE.
func (m *Main) modelRouter(cfg config.Config, pool *store.Pool) (*models.Router, error) {
	return m.modelRouterWith(cfg, store.ModelUsageLedger{DB: pool})
}

// modelRouterWith builds the router over a ledger, and warns of budgets
// that can never pass a request and of fallbacks priced as free beside a
// priced primary.
func (m *Main) modelRouterWith(cfg config.Config, ledger models.UsageLedger) (*models.Router, error) {
	rc, err := modelRouterConfig(cfg, m.Getenv)
	if err != nil {
		return nil, err
	}
	r, err := models.NewRouter(rc, ledger, m.logger)
	if err != nil {
		return nil, err
	}
	floors := map[models.Role]struct {
		what   string
		tokens int
	}{
		models.Small: {"a standup's phrasing", standup.PromptFloor()},
		models.Big:   {"a capture_work request", tools.CapturePromptFloor()},
	}
	for role, f := range floors {
		if err := r.Fits(role, f.tokens); err != nil {
			scope := "models." + string(role) + ".daily_" + err.Limit
			if err.Role == "" {
				scope = "models.daily_" + err.Limit
			}
			m.logger.Warn("a daily model budget cannot fit one prompt: every such request will be refused",
				slog.String("role", string(role)), slog.String("budget", scope), slog.String("prompt", f.what),
				slog.Float64("needs", err.Need), slog.Float64("limit", err.Max))
		}
	}
	for role, c := range map[models.Role]config.ModelRoleConfig{models.Small: cfg.Models.Small, models.Big: cfg.Models.Big} {
		priced := c.InputUSDPerMTok > 0 || c.OutputUSDPerMTok > 0
		if c.Fallback != "" && priced && c.FallbackInputUSDPerMTok == 0 && c.FallbackOutputUSDPerMTok == 0 {
			m.logger.Warn("the fallback has no price: its requests count as free toward the cost budgets",
				slog.String("role", string(role)), slog.String("fallback", c.Fallback),
				slog.String("set", "models."+string(role)+".fallback_input_usd_per_mtok and fallback_output_usd_per_mtok"))
		}
	}
	return r, nil
}

// modelRouterConfig turns the configuration into the router's. Budget days
// follow the default calendar's time zone, the team's day.
func modelRouterConfig(cfg config.Config, getenv func(string) string) (models.RouterConfig, error) {
	loc, err := time.LoadLocation(cfg.Calendar.TimeZone)
	if err != nil {
		return models.RouterConfig{}, fmt.Errorf("models: calendar time zone: %w", err)
	}
	httpClient := &http.Client{Timeout: cfg.Models.Timeout}
	out := models.RouterConfig{
		Roles:    map[models.Role]models.RoleConfig{},
		Budget:   models.Budget{Requests: cfg.Models.DailyRequests, Tokens: cfg.Models.DailyTokens, CostUSD: cfg.Models.DailyCostUSD},
		Location: loc,
	}
	for _, r := range []struct {
		role models.Role
		cfg  config.ModelRoleConfig
	}{{models.Small, cfg.Models.Small}, {models.Big, cfg.Models.Big}} {
		if r.cfg.Model == "" {
			continue
		}
		primary, err := openModel(r.cfg.Model, r.cfg.BaseURL, r.cfg.APIKey, getenv, httpClient)
		if err != nil {
			return models.RouterConfig{}, fmt.Errorf("models.%s: %w", r.role, err)
		}
		rc := models.RoleConfig{
			Primary:       primary,
			Budget:        models.Budget{Requests: r.cfg.DailyRequests, Tokens: r.cfg.DailyTokens, CostUSD: r.cfg.DailyCostUSD},
			Price:         models.Price{InputPerMTok: r.cfg.InputUSDPerMTok, OutputPerMTok: r.cfg.OutputUSDPerMTok},
			FallbackPrice: models.Price{InputPerMTok: r.cfg.FallbackInputUSDPerMTok, OutputPerMTok: r.cfg.FallbackOutputUSDPerMTok},
		}
		if r.cfg.Fallback != "" {
			fallback, err := openModel(r.cfg.Fallback, r.cfg.FallbackBaseURL, r.cfg.FallbackAPIKey, getenv, httpClient)
			if err != nil {
				return models.RouterConfig{}, fmt.Errorf("models.%s.fallback: %w", r.role, err)
			}
			rc.Fallback = fallback
		}
		out.Roles[r.role] = rc
	}
	return out, nil
}

// openModel resolves one "provider:model" with its endpoint and key; an
// unset key is read from the provider's variable, for the provider's own
// API only.
func openModel(name, baseURL string, key config.Secret, getenv func(string) string, httpClient *http.Client) (*models.Client, error) {
	ep, err := models.ParseEndpoint(name)
	if err != nil {
		return nil, err
	}
	ep.BaseURL = baseURL
	ep.APIKey = key.Reveal()
	if env := ep.KeyEnv(); ep.APIKey == "" && env != "" {
		ep.APIKey = getenv(env)
	}
	return models.Open(ep, httpClient)
}
