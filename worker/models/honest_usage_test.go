package models_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker/models"
	"github.com/commitea/commitea/worker/models/modeltest"
)

// A provider that runs a request and then fails it reports what it used:
// the tokens are recorded, and priced, for the failed request, in
// Postgres; the failover's answer adds them to its usage.
func TestFailedRequestRecordsTheTokensTheProviderReports(t *testing.T) {
	_, pool := storetest.NewDB(t)
	ledger := store.ModelUsageLedger{DB: pool}
	down := modeltest.NewOpenAI(t, modeltest.Reply{Status: http.StatusInternalServerError, Text: "ran out of memory", PromptTokens: 700, CompletionTokens: 50})
	up := modeltest.NewAnthropic(t, modeltest.Text("Fine.", 300, 20))
	small := openAIRole(t, down, "local")
	small.Price = models.Price{InputPerMTok: 1, OutputPerMTok: 2}
	small.Fallback = openClient(t, models.Endpoint{Provider: models.ProviderAnthropic, Model: "claude", BaseURL: up.BaseURL(), APIKey: "k"})
	small.FallbackPrice = models.Price{InputPerMTok: 3, OutputPerMTok: 15}
	r := newRouter(t, routerSetup{ledger: ledger, cfg: models.RouterConfig{Roles: map[models.Role]models.RoleConfig{models.Small: small}}})
	resp, err := r.Generate(context.Background(), models.Small, ask("standup"))
	if err != nil {
		t.Fatal(err)
	}
	if !resp.FailedOver || resp.Model != "anthropic:claude" || resp.Usage.Requests != 2 || resp.Usage.PromptTokens != 1000 || resp.Usage.CompletionTokens != 70 {
		t.Errorf("resp = %+v", resp)
	}
	// Each request at its own model's rates.
	wantCost := (700*1.0+50*2)/1e6 + (300*3.0+20*15)/1e6
	if !near(resp.Usage.CostUSD, wantCost) {
		t.Errorf("cost = %v, want %v", resp.Usage.CostUSD, wantCost)
	}
	rows, err := store.ModelUsageBetween(context.Background(), pool, monday9, monday9)
	if err != nil {
		t.Fatal(err)
	}
	byModel := map[string]store.ModelUsage{}
	for _, row := range rows {
		byModel[row.Model] = row
	}
	if f := byModel["openai:local"]; f.Failures != 1 || f.PromptTokens != 700 || f.CompletionTokens != 50 || !near(f.CostUSD, (700*1.0+50*2)/1e6) {
		t.Errorf("failed request row = %+v", f)
	}
	if a := byModel["anthropic:claude"]; a.Failures != 0 || a.PromptTokens != 300 || !near(a.CostUSD, (300*3.0+20*15)/1e6) {
		t.Errorf("fallback row = %+v", a)
	}

	// A failure that reports nothing records no invented tokens.
	silent := modeltest.NewOpenAI(t, modeltest.Status(http.StatusBadGateway, "down"))
	r = newRouter(t, routerSetup{ledger: ledger, cfg: models.RouterConfig{Roles: map[models.Role]models.RoleConfig{models.Big: openAIRole(t, silent, "gone")}}})
	if _, err := r.Generate(context.Background(), models.Big, ask("capture_work")); err == nil {
		t.Fatal("want an error")
	}
	rows, _ = store.ModelUsageBetween(context.Background(), pool, monday9, monday9)
	for _, row := range rows {
		if row.Model == "openai:gone" && (row.PromptTokens != 0 || row.Failures != 1) {
			t.Errorf("silent failure row = %+v", row)
		}
	}
}

// A budget smaller than one prompt says so: what the request needs, what
// is left, and that the day's limit itself is too small; Fits finds it at
// start-up.
func TestBudgetMessageSaysWhatTheRequestNeeds(t *testing.T) {
	srv := modeltest.NewOpenAI(t)
	role := openAIRole(t, srv, "gpt")
	role.Budget = models.Budget{Tokens: 500}
	r := newRouter(t, routerSetup{cfg: models.RouterConfig{Roles: map[models.Role]models.RoleConfig{models.Small: role}}})
	req := ask("standup")
	req.Messages[0].Content = strings.Repeat("A standup draft with many words in it. ", 100)
	need := models.RequestTokens(req)
	_, err := r.Generate(context.Background(), models.Small, req)
	var be *models.BudgetExhaustedError
	if !errors.As(err, &be) || be.Need != float64(need) || be.Left() != 500 {
		t.Fatalf("err = %#v", err)
	}
	for _, want := range []string{"has 500 of its 500 tokens left today", "this request needs about", "more than the whole day's limit"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q: %v", want, err)
		}
	}
	if len(srv.Requests()) != 0 {
		t.Errorf("the request was sent")
	}
	if fit := r.Fits(models.Small, need); fit == nil || fit.Limit != "tokens" {
		t.Errorf("Fits(%d) = %v, want the token limit", need, fit)
	}
	if fit := r.Fits(models.Small, 400); fit != nil {
		t.Errorf("Fits(400) = %v, want nil", fit)
	}
}

// The schema sent as response_format is the one the answer is validated
// against, bounds and all.
func TestResponseFormatIsTheValidationSchema(t *testing.T) {
	schema := models.Object(map[string]*models.Schema{
		"questions": {Type: "array", Items: &models.Schema{Type: "string", MinLength: models.Ptr(1), MaxLength: models.Ptr(300)},
			MinItems: models.Ptr(1), MaxItems: models.Ptr(5)},
		"priority": {Type: "integer", Minimum: models.Ptr(0.0), Maximum: models.Ptr(3.0)},
	})
	either := models.AnyOf(schema, models.Object(map[string]*models.Schema{"none": {Type: "boolean"}}))
	for _, s := range []*models.Schema{schema, either} {
		srv := modeltest.NewOpenAI(t, modeltest.Text(`{"questions":["Which?"],"priority":1}`, 10, 5))
		r := newRouter(t, routerSetup{cfg: models.RouterConfig{Roles: map[models.Role]models.RoleConfig{models.Big: openAIRole(t, srv, "qwen")}}})
		req := ask("capture_work")
		req.Schema = s
		if _, err := r.Generate(context.Background(), models.Big, req); err != nil {
			t.Fatal(err)
		}
		var rf struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Name   string          `json:"name"`
				Strict bool            `json:"strict"`
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		}
		if err := json.Unmarshal(srv.Requests()[0].ResponseFormat, &rf); err != nil {
			t.Fatal(err)
		}
		if rf.Type != "json_schema" || string(rf.JSONSchema.Schema) != s.String() {
			t.Errorf("response_format schema =\n%s\nwant\n%s", rf.JSONSchema.Schema, s.String())
		}
		// String lengths and anyOf are beyond OpenAI's strict mode.
		if rf.JSONSchema.Strict {
			t.Errorf("strict mode for a schema it cannot take: %s", s)
		}
	}
}
