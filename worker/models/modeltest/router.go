package modeltest

import (
	"net/http"
	"testing"
	"time"

	"github.com/commitea/commitea/worker/models"
)

// TestKey is the API key Client sends to Anthropic-shaped servers.
const TestKey = "modeltest-key"

// Client returns a models.Client talking to the server with the real
// client library: OpenAI-compatible servers as "openai:<model>",
// Anthropic-shaped ones as "anthropic:<model>" with TestKey.
func (s *Server) Client(t testing.TB, model string) *models.Client {
	t.Helper()
	ep := models.Endpoint{Provider: models.ProviderOpenAI, Model: model, BaseURL: s.BaseURL()}
	if s.anthropic {
		ep.Provider, ep.APIKey = models.ProviderAnthropic, TestKey
	}
	c, err := models.Open(ep, &http.Client{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("modeltest: open %s: %v", ep.Name(), err)
	}
	return c
}

// Router returns a router whose small and big roles are answered by the
// given servers (nil leaves the role out, so it answers
// MODEL_UNAVAILABLE), with no budgets, an in-memory Ledger and a Clock,
// both returned for assertions. For budgets, failover or Postgres, build
// models.RouterConfig yourself with Server.Client.
func Router(t testing.TB, small, big *Server) (*models.Router, *Ledger, *Clock) {
	t.Helper()
	cfg := models.RouterConfig{Roles: map[models.Role]models.RoleConfig{}}
	if small != nil {
		cfg.Roles[models.Small] = models.RoleConfig{Primary: small.Client(t, "small-model")}
	}
	if big != nil {
		cfg.Roles[models.Big] = models.RoleConfig{Primary: big.Client(t, "big-model")}
	}
	ledger := &Ledger{}
	clock := NewClock(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	cfg.Now = clock.Now
	r, err := models.NewRouter(cfg, ledger, nil)
	if err != nil {
		t.Fatalf("modeltest: router: %v", err)
	}
	return r, ledger, clock
}
