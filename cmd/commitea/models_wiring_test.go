package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/commitea/commitea/cmd/commitea/config"
	"github.com/commitea/commitea/cmd/commitea/config/configtest"
	"github.com/commitea/commitea/worker/models"
	"github.com/commitea/commitea/worker/models/modeltest"
	"github.com/commitea/commitea/worker/standup"
)

// The standups phrase with the small role of the router serve shares with
// the tools, and use the template when that role is not configured.
func TestStandupsPhraseWithTheSharedRouter(t *testing.T) {
	cfg, err := config.Load("", configtest.Getenv(map[string]string{}))
	if err != nil {
		t.Fatal(err)
	}
	m := &Main{Getenv: configtest.Getenv(map[string]string{})}
	small := modeltest.NewOpenAI(t)
	withSmall, _, _ := modeltest.Router(t, small, nil)
	bigOnly, _, _ := modeltest.Router(t, nil, modeltest.NewOpenAI(t))
	s, err := m.newStandups(cfg, nil, withSmall)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Phraser.(standup.ModelPhraser); !ok {
		t.Fatalf("with a small model the phraser is %T, want standup.ModelPhraser", s.Phraser)
	}
	for name, r := range map[string]*models.Router{"big only": bigOnly, "no router": nil} {
		s, err := m.newStandups(cfg, nil, r)
		if err != nil {
			t.Fatal(err)
		}
		if s.Phraser != nil {
			t.Fatalf("%s: phraser = %T, want none (the template)", name, s.Phraser)
		}
	}
}

// A budget that cannot fit one prompt of a role is said at start-up, as
// is a fallback priced as free beside a priced primary.
func TestModelRouterWarnsOfBudgetsThatFitNoPrompt(t *testing.T) {
	env := map[string]string{
		"COMMITEA_SMALL_MODEL": "openai:gemma", "COMMITEA_SMALL_BASE_URL": "http://127.0.0.1:1/v1", "COMMITEA_SMALL_DAILY_TOKENS": "50",
		"COMMITEA_BIG_MODEL": "openai:qwen", "COMMITEA_BIG_BASE_URL": "http://127.0.0.1:1/v1", "COMMITEA_BIG_FALLBACK": "openai:other",
		"COMMITEA_BIG_FALLBACK_BASE_URL": "http://127.0.0.1:1/v1", "COMMITEA_BIG_INPUT_USD_PER_MTOK": "2",
	}
	cfg, err := config.Load("", configtest.Getenv(env))
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	m := &Main{Getenv: configtest.Getenv(env), logger: slog.New(slog.NewTextHandler(&logs, nil))}
	if _, err := m.modelRouterWith(cfg, &modeltest.Ledger{}); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	for _, want := range []string{"cannot fit one prompt", "role=small", "budget=models.small.daily_tokens", "limit=50",
		"the fallback has no price", "fallback=openai:other"} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "role=big budget") {
		t.Errorf("the big role's budget fits, yet:\n%s", out)
	}
}
