package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
)

func TestModelUsageAddsUpPerDayRoleToolModel(t *testing.T) {
	_, pool := storetest.NewDB(t)
	ctx := context.Background()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	// 00:30 in Berlin is still the previous day in UTC: the local date
	// is what counts.
	day := time.Date(2026, 12, 1, 0, 30, 0, 0, berlin)
	adds := []store.ModelUsage{
		{Day: day, Role: "big", Tool: "capture_work", Model: "openai:x", Requests: 1, PromptTokens: 100, CompletionTokens: 10, CostUSD: 0.5},
		{Day: day, Role: "big", Tool: "capture_work", Model: "openai:x", Requests: 1, Failures: 1},
		{Day: day, Role: "big", Tool: "capture_work", Model: "openai:x", Requests: 1, PromptTokens: 50, CompletionTokens: 5, CostUSD: 0.25},
		{Day: day, Role: "small", Tool: "standup", Model: "ollama:y", Requests: 1, PromptTokens: 7},
		{Day: day.AddDate(0, 0, 1), Role: "small", Tool: "standup", Model: "ollama:y", Requests: 1},
	}
	for _, u := range adds {
		if err := store.AddModelUsage(ctx, pool, u); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := store.ModelUsageLedger{DB: pool}.ModelUsageOn(ctx, day)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("rows = %+v", rows)
	}
	big := rows[0]
	if got := big.Day.Format(time.DateOnly); got != "2026-12-01" {
		t.Errorf("day = %s", got)
	}
	if big.Requests != 3 || big.Failures != 1 || big.PromptTokens != 150 || big.CompletionTokens != 15 || big.CostUSD != 0.75 {
		t.Errorf("big = %+v", big)
	}
	all, err := store.ModelUsageBetween(ctx, pool, day, day.AddDate(0, 0, 1))
	if err != nil || len(all) != 3 {
		t.Errorf("between: %d rows, %v", len(all), err)
	}
}
