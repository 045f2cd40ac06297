package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/cmd/commitea/config"
	"github.com/commitea/commitea/cmd/commitea/config/configtest"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker/models"
	"github.com/commitea/commitea/worker/models/modeltest"
)

// The configuration builds a router whose roles reach their servers, fail
// over as configured, and record usage that `commitea usage` then shows.
func TestModelRouterFromConfigAndUsageCommand(t *testing.T) {
	dbURL, pool := storetest.NewDB(t)
	local := modeltest.NewOpenAI(t, modeltest.Status(http.StatusInternalServerError, "out of memory"))
	remote := modeltest.NewAnthropic(t, modeltest.Text("All on track.", 300, 12))
	big := modeltest.NewOpenAI(t, modeltest.Text(`{"ok":true}`, 500, 40))

	env := map[string]string{
		"DATABASE_URL":                     dbURL,
		"COMMITEA_SMALL_MODEL":             "openai:gemma-3-4b-it",
		"COMMITEA_SMALL_BASE_URL":          local.BaseURL(),
		"COMMITEA_SMALL_FALLBACK":          "anthropic:claude-haiku",
		"COMMITEA_SMALL_FALLBACK_BASE_URL": remote.BaseURL(),
		"COMMITEA_SMALL_FALLBACK_API_KEY":  "sk-ant-fallback-0123",
		"COMMITEA_BIG_MODEL":               "openai:qwen3-32b",
		"COMMITEA_BIG_BASE_URL":            big.BaseURL(),
		"COMMITEA_BIG_DAILY_REQUESTS":      "1",
		"COMMITEA_BIG_INPUT_USD_PER_MTOK":  "2",
		"COMMITEA_BIG_OUTPUT_USD_PER_MTOK": "10",
		// Must not be sent to a server that only speaks OpenAI's protocol.
		"OPENAI_API_KEY": "sk-real-openai-key",
	}
	cfg, err := config.Load("", configtest.Getenv(env))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.ValidateFor("usage"); err != nil {
		t.Fatal(err)
	}
	m := &Main{Getenv: configtest.Getenv(env)}
	router, err := m.modelRouter(cfg, pool)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	resp, err := router.Generate(ctx, models.Small, models.Request{Tool: "standup", Messages: []models.Message{{Role: models.User, Content: "Summarise."}}})
	if err != nil || !resp.FailedOver || resp.Text != "All on track." {
		t.Fatalf("small: %+v, %v", resp, err)
	}
	if got := remote.Requests()[0].Key; got != "sk-ant-fallback-0123" {
		t.Errorf("fallback key = %q", got)
	}
	if got := local.Requests()[0].Key; got == "sk-real-openai-key" {
		t.Error("OPENAI_API_KEY was sent to a local server")
	}
	schema := models.Object(map[string]*models.Schema{"ok": {Type: "boolean"}})
	if _, err := router.Generate(ctx, models.Big, models.Request{Tool: "capture_work", Schema: schema, Messages: []models.Message{{Role: models.User, Content: "x"}}}); err != nil {
		t.Fatalf("big: %v", err)
	}
	if _, err := router.Generate(ctx, models.Big, models.Request{Tool: "capture_work", Messages: []models.Message{{Role: models.User, Content: "x"}}}); models.ErrorCode(err) != models.CodeBudgetExhausted {
		t.Fatalf("big over budget: %v", err)
	}

	out, _, err := run(t, env, "usage", "--days", "2")
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{
		"ROLE TOOL MODEL REQUESTS FAILED PROMPT TOKENS COMPLETION TOKENS COST USD",
		"small standup openai:gemma-3-4b-it 1 1 0 0 0.0000",
		"small standup anthropic:claude-haiku 1 0 300 12 0.0000",
		"big capture_work openai:qwen3-32b 1 0 500 40 0.0014",
		"small openai:gemma-3-4b-it 2 of no limit 312 of no limit",
		"big openai:qwen3-32b 1 of 1 540 of no limit 0.0014 of no limit",
		"all 3 of 2000 852 of 5000000",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("usage output lacks %q:\n%s", want, out)
		}
	}
}

func TestUsageCommandEmptyAndFlags(t *testing.T) {
	dbURL, pool := storetest.NewDB(t)
	env := map[string]string{"DATABASE_URL": dbURL}
	out, _, err := run(t, env, "usage")
	if err != nil || !strings.Contains(out, "No model requests in these days.") || !strings.Contains(strings.Join(strings.Fields(out), " "), "small (none) 0 of no limit") {
		t.Errorf("empty usage: %v\n%s", err, out)
	}
	// A row from before the window is not shown.
	old := store.ModelUsage{Day: time.Now().AddDate(0, 0, -30), Role: "big", Tool: "capture_work", Model: "openai:x", Requests: 4}
	if err := store.AddModelUsage(context.Background(), pool, old); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := run(t, env, "usage", "--days", "7"); strings.Contains(out, "openai:x") {
		t.Errorf("old row shown:\n%s", out)
	}
	if _, _, err := run(t, env, "usage", "--days", "0"); err == nil || exitCode(err) != 2 {
		t.Errorf("--days 0: %v", err)
	}
	if _, _, err := run(t, map[string]string{}, "usage"); err == nil || !strings.Contains(err.Error(), "DATABASE_URL (database.url): required for usage") {
		t.Errorf("no database: %v", err)
	}
}
