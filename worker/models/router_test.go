package models_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker/models"
	"github.com/commitea/commitea/worker/models/modeltest"
)

// issueSchema is a small stand-in for capture_work's proposal.
var issueSchema = models.Object(map[string]*models.Schema{
	"title":    {Type: "string", MinLength: models.Ptr(3)},
	"estimate": models.Enum("est/xs", "est/s", "est/m", "est/l", "est/xl"),
	"deps":     models.ArrayOf(models.Integer("issue number")),
}, "deps")

var monday9 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

type routerSetup struct {
	cfg    models.RouterConfig
	ledger models.UsageLedger
	clock  *modeltest.Clock
}

func newRouter(t *testing.T, s routerSetup) *models.Router {
	t.Helper()
	if s.ledger == nil {
		s.ledger = &modeltest.Ledger{}
	}
	if s.clock == nil {
		s.clock = modeltest.NewClock(monday9)
	}
	s.cfg.Now = s.clock.Now
	r, err := models.NewRouter(s.cfg, s.ledger, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func openAIRole(t *testing.T, srv *modeltest.Server, model string) models.RoleConfig {
	return models.RoleConfig{Primary: openClient(t, models.Endpoint{Provider: models.ProviderOpenAI, Model: model, BaseURL: srv.BaseURL()})}
}

func ask(tool string) models.Request {
	return models.Request{Tool: tool, Messages: []models.Message{{Role: models.User, Content: "File the login bug."}}}
}

func askJSON() models.Request {
	req := ask("capture_work")
	req.Schema = issueSchema
	req.SchemaName = "issue"
	return req
}

func TestStructuredAnswerValidatedWithSchemaSent(t *testing.T) {
	srv := modeltest.NewOpenAI(t, modeltest.Text("```json\n{\"title\":\"Fix login\",\"estimate\":\"est/s\"}\n```", 100, 20))
	r := newRouter(t, routerSetup{cfg: models.RouterConfig{Roles: map[models.Role]models.RoleConfig{models.Big: openAIRole(t, srv, "qwen")}}})
	resp, err := r.Generate(context.Background(), models.Big, askJSON())
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.JSON) != `{"estimate":"est/s","title":"Fix login"}` || resp.Repaired {
		t.Errorf("JSON = %s, repaired %v", resp.JSON, resp.Repaired)
	}
	req := srv.Requests()[0]
	rf := string(req.ResponseFormat)
	// "deps" is optional, so OpenAI's strict mode cannot take the schema.
	if !strings.Contains(rf, `"type":"json_schema"`) || !strings.Contains(rf, `"name":"issue"`) || !strings.Contains(rf, `"est/xl"`) || !strings.Contains(rf, `"strict":false`) {
		t.Errorf("response_format = %s", rf)
	}
	if !strings.Contains(req.System, "JSON Schema") {
		t.Errorf("schema not in the prompt: %q", req.System)
	}
}

func TestMalformedJSONIsRepairedOnce(t *testing.T) {
	srv := modeltest.NewOpenAI(t,
		modeltest.Text(`{"title": "Fix login", "estimate": "est/s"`, 100, 20),
		modeltest.Text(`{"title": "Fix login", "estimate": "est/s"}`, 140, 20),
	)
	r := newRouter(t, routerSetup{cfg: models.RouterConfig{Roles: map[models.Role]models.RoleConfig{models.Big: openAIRole(t, srv, "qwen")}}})
	resp, err := r.Generate(context.Background(), models.Big, askJSON())
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Repaired || resp.Usage.Requests != 2 || resp.Usage.PromptTokens != 240 {
		t.Errorf("resp = %+v", resp)
	}
	repair := srv.Requests()[1]
	if !strings.Contains(repair.LastUser(), "not valid JSON") {
		t.Errorf("repair prompt = %q", repair.LastUser())
	}
	if n := len(repair.Messages); n != 3 || repair.Messages[1].Role != "assistant" {
		t.Errorf("repair conversation = %+v", repair.Messages)
	}
}

func TestSchemaViolationThenRepair(t *testing.T) {
	srv := modeltest.NewAnthropic(t,
		modeltest.JSON(map[string]any{"title": "Fix login", "estimate": "medium", "owner": "ann"}, 100, 20),
		modeltest.JSON(map[string]any{"title": "Fix login", "estimate": "est/m"}, 150, 20),
	)
	c := openClient(t, models.Endpoint{Provider: models.ProviderAnthropic, Model: "claude", BaseURL: srv.BaseURL(), APIKey: "k"})
	r := newRouter(t, routerSetup{cfg: models.RouterConfig{Roles: map[models.Role]models.RoleConfig{models.Big: {Primary: c}}}})
	resp, err := r.Generate(context.Background(), models.Big, askJSON())
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.JSON) != `{"estimate":"est/m","title":"Fix login"}` || !resp.Repaired {
		t.Errorf("resp = %+v", resp)
	}
	prompt := srv.Requests()[1].LastUser()
	for _, want := range []string{`$.estimate: must be one of "est/xs"`, `$: unknown key "owner"`} {
		if !strings.Contains(prompt, want) {
			t.Errorf("repair prompt lacks %q:\n%s", want, prompt)
		}
	}
}

func TestInvalidTwiceFailsClearly(t *testing.T) {
	srv := modeltest.NewOpenAI(t,
		modeltest.Text(`{"title": "x"}`, 10, 5),
		modeltest.Text(`sorry, I cannot`, 10, 5),
	)
	r := newRouter(t, routerSetup{cfg: models.RouterConfig{Roles: map[models.Role]models.RoleConfig{models.Big: openAIRole(t, srv, "qwen")}}})
	_, err := r.Generate(context.Background(), models.Big, askJSON())
	var inv *models.InvalidOutputError
	if !errors.As(err, &inv) || models.ErrorCode(err) != models.CodeInvalidOutput {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(inv.First.Error(), `missing required key "estimate"`) || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("first %v, last %v", inv.First, err)
	}
	if len(srv.Requests()) != 2 {
		t.Errorf("%d requests, want 2 (no second repair)", len(srv.Requests()))
	}
}

func TestServerErrorFailsOverOnce(t *testing.T) {
	primary := modeltest.NewOpenAI(t, modeltest.Status(http.StatusInternalServerError, "model crashed"))
	fallback := modeltest.NewAnthropic(t, modeltest.Text("Fine.", 30, 2))
	ledger := &modeltest.Ledger{}
	role := openAIRole(t, primary, "gemma-3-4b-it")
	role.Fallback = openClient(t, models.Endpoint{Provider: models.ProviderAnthropic, Model: "claude-haiku", BaseURL: fallback.BaseURL(), APIKey: "k"})
	r := newRouter(t, routerSetup{ledger: ledger, cfg: models.RouterConfig{Roles: map[models.Role]models.RoleConfig{models.Small: role}}})
	resp, err := r.Generate(context.Background(), models.Small, ask("standup"))
	if err != nil {
		t.Fatal(err)
	}
	if !resp.FailedOver || resp.Model != "anthropic:claude-haiku" || resp.Text != "Fine." || resp.Usage.Requests != 2 {
		t.Errorf("resp = %+v", resp)
	}
	rows := ledger.Rows()
	if len(rows) != 2 || rows[0].Model != "openai:gemma-3-4b-it" || rows[0].Failures != 1 || rows[1].Model != "anthropic:claude-haiku" || rows[1].Failures != 0 || rows[1].Tool != "standup" {
		t.Errorf("ledger = %+v", rows)
	}

	// Both failing: one try each, then MODEL_UNAVAILABLE naming both.
	primary.Push(modeltest.Status(http.StatusInternalServerError, "still down"))
	fallback.Push(modeltest.Status(http.StatusServiceUnavailable, "overloaded"))
	_, err = r.Generate(context.Background(), models.Small, ask("standup"))
	if models.ErrorCode(err) != models.CodeModelUnavailable || !strings.Contains(err.Error(), "500") || !strings.Contains(err.Error(), "503") {
		t.Errorf("err = %v", err)
	}
	if len(primary.Requests()) != 2 || len(fallback.Requests()) != 2 {
		t.Errorf("requests: primary %d, fallback %d", len(primary.Requests()), len(fallback.Requests()))
	}
}

func TestNoFallbackAndMissingRole(t *testing.T) {
	srv := modeltest.NewOpenAI(t, modeltest.Reply{Status: http.StatusOK, Body: `{"choices": [`})
	r := newRouter(t, routerSetup{cfg: models.RouterConfig{Roles: map[models.Role]models.RoleConfig{models.Small: openAIRole(t, srv, "m")}}})
	_, err := r.Generate(context.Background(), models.Small, ask("standup"))
	if models.ErrorCode(err) != models.CodeModelUnavailable {
		t.Errorf("broken body: err = %v", err)
	}
	_, err = r.For(models.Big).Generate(context.Background(), ask("capture_work"))
	var un *models.UnavailableError
	if !errors.As(err, &un) || un.Err != nil || un.Role != models.Big || r.Has(models.Big) {
		t.Errorf("missing role: err = %v", err)
	}
}

func TestCancelledRequestDoesNotFailOver(t *testing.T) {
	fb := &modeltest.Fake{Fn: func(context.Context, models.Request) (models.Response, error) {
		t.Error("fallback called after cancellation")
		return models.Response{}, nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	primary := &modeltest.Fake{Fn: func(context.Context, models.Request) (models.Response, error) {
		cancel()
		return models.Response{}, context.Canceled
	}}
	r := newRouter(t, routerSetup{cfg: models.RouterConfig{Roles: map[models.Role]models.RoleConfig{models.Small: {Primary: primary, Fallback: fb}}}})
	if _, err := r.Generate(ctx, models.Small, ask("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

func TestBudgetRunsOutMidDay(t *testing.T) {
	srv := modeltest.NewOpenAI(t)
	srv.Handle(func(modeltest.Request) modeltest.Reply { return modeltest.Text("ok", 100, 10) })
	clock := modeltest.NewClock(monday9)
	role := openAIRole(t, srv, "gemma")
	role.Budget = models.Budget{Requests: 3}
	r := newRouter(t, routerSetup{clock: clock, cfg: models.RouterConfig{Roles: map[models.Role]models.RoleConfig{models.Small: role}}})
	for i := range 3 {
		clock.Advance(time.Hour)
		if _, err := r.Generate(context.Background(), models.Small, ask("standup")); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	clock.Advance(time.Hour) // 13:00, same day
	_, err := r.Generate(context.Background(), models.Small, ask("standup"))
	var be *models.BudgetExhaustedError
	if !errors.As(err, &be) || models.ErrorCode(err) != models.CodeBudgetExhausted {
		t.Fatalf("err = %v", err)
	}
	if be.Role != models.Small || be.Limit != "requests" || be.Used != 3 || be.Max != 3 || !be.ResetsAt.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("budget error = %+v", be)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests reached the server, want 3", n)
	}
	clock.Advance(11 * time.Hour) // next day
	if _, err := r.Generate(context.Background(), models.Small, ask("standup")); err != nil {
		t.Errorf("next day: %v", err)
	}
}

func TestTokenAndCostBudgetsAndFailoverRespectThem(t *testing.T) {
	primary := modeltest.NewOpenAI(t)
	primary.Handle(func(modeltest.Request) modeltest.Reply { return modeltest.Text("ok", 400, 100) })
	role := openAIRole(t, primary, "gpt")
	role.Budget = models.Budget{Tokens: 1000}
	r := newRouter(t, routerSetup{cfg: models.RouterConfig{Roles: map[models.Role]models.RoleConfig{models.Big: role}}})
	for i := range 2 {
		if _, err := r.Generate(context.Background(), models.Big, ask("capture_work")); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	// 1000 tokens used: the next prompt would pass the limit.
	_, err := r.Generate(context.Background(), models.Big, ask("capture_work"))
	var be *models.BudgetExhaustedError
	if !errors.As(err, &be) || be.Limit != "tokens" || be.Used != 1000 {
		t.Errorf("err = %v", err)
	}

	// Cost, shared across roles: the small role's spend stops the big one,
	// and a failover does not get around it.
	down := modeltest.NewOpenAI(t)
	down.Handle(func(modeltest.Request) modeltest.Reply { return modeltest.Status(http.StatusBadGateway, "down") })
	backup := modeltest.NewOpenAI(t)
	backup.Handle(func(modeltest.Request) modeltest.Reply { return modeltest.Text("ok", 1000, 1000) })
	price := models.Price{InputPerMTok: 2, OutputPerMTok: 8} // 0.01 USD per answer
	small := openAIRole(t, down, "a")
	small.Fallback = openClient(t, models.Endpoint{Provider: models.ProviderOpenAI, Model: "b", BaseURL: backup.BaseURL()})
	small.FallbackPrice = price
	big := openAIRole(t, backup, "c")
	big.Price = price
	r = newRouter(t, routerSetup{cfg: models.RouterConfig{
		Roles:  map[models.Role]models.RoleConfig{models.Small: small, models.Big: big},
		Budget: models.Budget{CostUSD: 0.02},
	}})
	resp, err := r.Generate(context.Background(), models.Small, ask("standup"))
	if err != nil || !resp.FailedOver || resp.Usage.CostUSD < 0.0099 {
		t.Fatalf("first: %+v, %v", resp, err)
	}
	if _, err := r.Generate(context.Background(), models.Big, ask("capture_work")); err != nil {
		t.Fatalf("second: %v", err)
	}
	_, err = r.Generate(context.Background(), models.Small, ask("standup"))
	if !errors.As(err, &be) || be.Role != "" || be.Limit != "cost_usd" || !strings.Contains(err.Error(), "all model roles") {
		t.Errorf("err = %v", err)
	}
	if len(down.Requests()) != 1 {
		t.Errorf("exhausted budget still reached the primary: %d requests", len(down.Requests()))
	}
}

func TestUsageRowsInPostgres(t *testing.T) {
	_, pool := storetest.NewDB(t)
	ledger := store.ModelUsageLedger{DB: pool}
	srv := modeltest.NewOpenAI(t)
	srv.Handle(func(modeltest.Request) modeltest.Reply {
		return modeltest.Text(`{"title":"Fix login","estimate":"est/s"}`, 200, 30)
	})
	down := modeltest.NewOpenAI(t, modeltest.Status(http.StatusInternalServerError, "boom"))
	clock := modeltest.NewClock(monday9)
	small := openAIRole(t, down, "local")
	small.Fallback = openClient(t, models.Endpoint{Provider: models.ProviderOpenAI, Model: "remote", BaseURL: srv.BaseURL()})
	big := openAIRole(t, srv, "remote")
	big.Budget = models.Budget{Requests: 2}
	big.Price = models.Price{InputPerMTok: 1, OutputPerMTok: 4}
	r := newRouter(t, routerSetup{ledger: ledger, clock: clock, cfg: models.RouterConfig{Roles: map[models.Role]models.RoleConfig{models.Small: small, models.Big: big}}})
	ctx := context.Background()
	if _, err := r.Generate(ctx, models.Small, ask("standup")); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := r.Generate(ctx, models.Big, askJSON()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Generate(ctx, models.Big, askJSON()); models.ErrorCode(err) != models.CodeBudgetExhausted {
		t.Errorf("third big call: %v", err)
	}
	rows, err := store.ModelUsageBetween(ctx, pool, monday9, monday9)
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	want := []store.ModelUsage{
		{Day: day, Role: "big", Tool: "capture_work", Model: "openai:remote", Requests: 2, PromptTokens: 400, CompletionTokens: 60, CostUSD: 2 * (200*1 + 30*4) / 1e6},
		{Day: day, Role: "small", Tool: "standup", Model: "openai:local", Requests: 1, Failures: 1},
		{Day: day, Role: "small", Tool: "standup", Model: "openai:remote", Requests: 1, PromptTokens: 200, CompletionTokens: 30},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows = %+v", rows)
	}
	for i := range want {
		got := rows[i]
		if !got.Day.Equal(want[i].Day) || got.Role != want[i].Role || got.Tool != want[i].Tool || got.Model != want[i].Model ||
			got.Requests != want[i].Requests || got.Failures != want[i].Failures || got.PromptTokens != want[i].PromptTokens ||
			got.CompletionTokens != want[i].CompletionTokens || !near(got.CostUSD, want[i].CostUSD) {
			t.Errorf("row %d = %+v, want %+v", i, got, want[i])
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

// Concurrent requests reserve their place in the budget: with three
// requests allowed, eight at once get three answers and five refusals.
func TestConcurrentRequestsCannotOvershootBudget(t *testing.T) {
	var mu sync.Mutex
	entered := 0
	release := make(chan struct{})
	primary := &modeltest.Fake{Fn: func(ctx context.Context, req models.Request) (models.Response, error) {
		mu.Lock()
		entered++
		n := entered
		mu.Unlock()
		if n > 3 {
			t.Errorf("request %d reached the model past a budget of 3", n)
			return models.Response{Text: "late"}, nil
		}
		<-release
		return models.Response{Text: "ok", Usage: models.Usage{PromptTokens: 10, CompletionTokens: 1}}, nil
	}}
	r := newRouter(t, routerSetup{cfg: models.RouterConfig{
		Roles: map[models.Role]models.RoleConfig{models.Small: {Primary: primary, Budget: models.Budget{Requests: 3}}},
	}})
	results := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := r.Generate(context.Background(), models.Small, ask("standup"))
			results <- err
		}()
	}
	refused := 0
	for range 5 {
		if err := <-results; models.ErrorCode(err) == models.CodeBudgetExhausted {
			refused++
		}
	}
	close(release)
	for range 3 {
		if err := <-results; err != nil {
			t.Errorf("admitted request: %v", err)
		}
	}
	if refused != 5 {
		t.Errorf("%d refused, want 5", refused)
	}
}

func TestTimeoutFailsOver(t *testing.T) {
	slow := modeltest.NewOpenAI(t, modeltest.Reply{Hang: true})
	quick := modeltest.NewOpenAI(t, modeltest.Text("ok", 5, 1))
	primary, err := models.Open(models.Endpoint{Provider: models.ProviderOpenAI, Model: "slow", BaseURL: slow.BaseURL()}, &http.Client{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r := newRouter(t, routerSetup{cfg: models.RouterConfig{Roles: map[models.Role]models.RoleConfig{
		models.Small: {Primary: primary, Fallback: quick.Client(t, "quick")},
	}}})
	resp, err := r.Generate(context.Background(), models.Small, ask("standup"))
	if err != nil || !resp.FailedOver || resp.Model != "openai:quick" {
		t.Errorf("resp = %+v, err = %v", resp, err)
	}
}

func TestModeltestRouterHelper(t *testing.T) {
	big := modeltest.NewAnthropic(t, modeltest.JSON(map[string]any{"title": "Fix login", "estimate": "est/s"}, 10, 5))
	r, ledger, _ := modeltest.Router(t, nil, big)
	resp, err := r.Generate(context.Background(), models.Big, askJSON())
	if err != nil || string(resp.JSON) != `{"estimate":"est/s","title":"Fix login"}` {
		t.Fatalf("resp = %+v, err = %v", resp, err)
	}
	if rows := ledger.Rows(); len(rows) != 1 || rows[0].Model != "anthropic:big-model" || rows[0].Tool != "capture_work" {
		t.Errorf("ledger = %+v", rows)
	}
	if _, err := r.Generate(context.Background(), models.Small, ask("standup")); models.ErrorCode(err) != models.CodeModelUnavailable {
		t.Errorf("absent small role: %v", err)
	}
}
