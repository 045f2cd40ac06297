package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/metrics"
)

// Role is a job description for a model: Small phrases reads and
// standups; Big decomposes braindumps and negotiates directives.
type Role string

// The roles.
const (
	Small Role = "small"
	Big   Role = "big"
)

// Budget is a daily limit; a zero field means no limit of that kind.
type Budget struct {
	Requests int
	Tokens   int
	CostUSD  float64
}

// Price converts tokens into dollars for the cost budget, in USD per
// million tokens. A zero Price makes a role free (local models).
type Price struct {
	InputPerMTok  float64
	OutputPerMTok float64
}

// Cost of one request's tokens.
func (p Price) Cost(promptTokens, completionTokens int) float64 {
	return (float64(promptTokens)*p.InputPerMTok + float64(completionTokens)*p.OutputPerMTok) / 1e6
}

// RoleConfig is one role's models and limits.
type RoleConfig struct {
	Primary Model
	// Fallback is tried once when Primary errors; nil means none.
	Fallback Model
	Budget   Budget
	// Price is the primary's, FallbackPrice the fallback's: each request is
	// priced at the rates of the model that served it (zero: free, a local
	// model).
	Price         Price
	FallbackPrice Price
}

// UsageLedger keeps daily usage where every replica sees it;
// store.ModelUsageLedger is the Postgres one.
type UsageLedger interface {
	AddModelUsage(ctx context.Context, u store.ModelUsage) error
	ModelUsageOn(ctx context.Context, day time.Time) ([]store.ModelUsage, error)
}

// RouterConfig configures a Router.
type RouterConfig struct {
	// Roles that are configured; a missing role answers
	// MODEL_UNAVAILABLE.
	Roles map[Role]RoleConfig
	// Budget is shared by all roles together, on top of each role's own.
	Budget Budget
	// Location decides when a budget day starts; nil means UTC.
	Location *time.Location
	// Now is the clock; nil means time.Now. Tests pass a fake one.
	Now func() time.Time
}

// Router sends each request to a role's model, fails over once to the
// role's fallback, enforces the daily budgets, records usage, and
// validates and repairs structured answers.
type Router struct {
	roles  map[Role]RoleConfig
	budget Budget
	loc    *time.Location
	now    func() time.Time
	ledger UsageLedger
	log    *slog.Logger

	// mu serialises budget checks with the reservations of requests in
	// flight, so that concurrent requests in one process cannot together
	// pass a limit that each alone respects.
	mu       sync.Mutex
	inflight map[Role]Usage
}

// NewRouter builds a router. ledger is required: without a record of
// usage there is no budget.
func NewRouter(cfg RouterConfig, ledger UsageLedger, log *slog.Logger) (*Router, error) {
	if ledger == nil {
		return nil, errors.New("model router: a usage ledger is required")
	}
	for role, rc := range cfg.Roles {
		if rc.Primary == nil {
			return nil, fmt.Errorf("model router: role %s has no model", role)
		}
	}
	r := &Router{roles: cfg.Roles, budget: cfg.Budget, loc: cfg.Location, now: cfg.Now, ledger: ledger, log: log, inflight: map[Role]Usage{}}
	if r.loc == nil {
		r.loc = time.UTC
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r, nil
}

// Has reports whether a role is configured.
func (r *Router) Has(role Role) bool {
	_, ok := r.roles[role]
	return ok
}

// For is a role as a Model, for consumers that need only Generate.
func (r *Router) For(role Role) Model { return roleModel{r, role} }

type roleModel struct {
	r    *Router
	role Role
}

func (m roleModel) Generate(ctx context.Context, req Request) (Response, error) {
	return m.r.Generate(ctx, m.role, req)
}

// defaultTool attributes usage of requests that do not say what they are
// for.
const defaultTool = "other"

// Generate answers req with the role's model. With a Schema the answer is
// validated, repaired once if needed, and returned in Response.JSON.
// Errors: *UnavailableError (role missing, or model and fallback failed),
// *BudgetExhaustedError, *InvalidOutputError, or the context's error.
func (r *Router) Generate(ctx context.Context, role Role, req Request) (Response, error) {
	rc, ok := r.roles[role]
	if !ok {
		return Response{}, &UnavailableError{Role: role}
	}
	if req.Tool == "" {
		req.Tool = defaultTool
	}
	resp, err := r.attempt(ctx, role, rc, req)
	if err != nil || req.Schema == nil {
		return resp, err
	}
	raw, firstErr := req.validate(resp.Text)
	if firstErr == nil {
		resp.JSON = raw
		return resp, nil
	}
	r.log.WarnContext(ctx, "model answer invalid; asking for a repair",
		slog.String("role", string(role)), slog.String("tool", req.Tool), slog.String("model", resp.Model), slog.Any("error", firstErr))

	repair := req
	repair.Messages = append(append([]Message(nil), req.Messages...),
		Message{Role: Assistant, Content: resp.Text},
		Message{Role: User, Content: repairPrompt(firstErr)},
	)
	second, err := r.attempt(ctx, role, rc, repair)
	if err != nil {
		return Response{}, err
	}
	second.Usage = resp.Usage.plus(second.Usage)
	second.FailedOver = second.FailedOver || resp.FailedOver
	raw, err = req.validate(second.Text)
	metrics.ModelRepair(string(role), err == nil)
	if err != nil {
		return Response{}, &InvalidOutputError{Role: role, Model: second.Model, First: firstErr, Err: err, Text: second.Text}
	}
	second.JSON = raw
	second.Repaired = true
	return second, nil
}

// validate parses an answer against the request's schema, then its Check.
func (req Request) validate(text string) (json.RawMessage, error) {
	raw, err := req.Schema.ParseAndValidate(text)
	if err == nil && req.Check != nil {
		err = req.Check(raw)
	}
	return raw, err
}

func repairPrompt(err error) string {
	return "Your previous answer cannot be used: " + err.Error() +
		"\nAnswer again with only the corrected JSON value, matching the schema exactly."
}

// attempt is one request with failover: the primary model, then once the
// fallback. Budgets are checked before each. A repair is a new attempt, so
// it starts at the primary again: the failover was for one request, not
// for the day.
func (r *Router) attempt(ctx context.Context, role Role, rc RoleConfig, req Request) (Response, error) {
	estimate := RequestTokens(req)
	resp, err := r.call(ctx, role, rc, rc.Primary, rc.Price, req, estimate)
	if err == nil {
		return resp, nil
	}
	failed := resp.Usage // what the failed request used, as the provider said
	if ctx.Err() != nil {
		return Response{}, fmt.Errorf("%s model: %w", role, ctx.Err())
	}
	var budgetErr *BudgetExhaustedError
	if errors.As(err, &budgetErr) {
		return Response{}, err
	}
	if rc.Fallback == nil {
		return Response{}, &UnavailableError{Role: role, Err: err}
	}
	r.log.WarnContext(ctx, "model failed; failing over",
		slog.String("role", string(role)), slog.String("tool", req.Tool),
		slog.String("model", modelName(rc.Primary)), slog.String("fallback", modelName(rc.Fallback)), slog.Any("error", err))
	metrics.ModelFailover(string(role))
	resp2, err2 := r.call(ctx, role, rc, rc.Fallback, rc.FallbackPrice, req, estimate)
	if err2 != nil {
		if errors.As(err2, &budgetErr) {
			return Response{}, err2
		}
		if ctx.Err() != nil {
			return Response{}, fmt.Errorf("%s model: %w", role, ctx.Err())
		}
		return Response{}, &UnavailableError{Role: role, Err: errors.Join(err, fmt.Errorf("fallback: %w", err2))}
	}
	resp2.FailedOver = true
	resp2.Usage = failed.plus(resp2.Usage)
	return resp2, nil
}

// call reserves budget for one request, sends it to one model and records
// it, failed or not, priced at that model's rates. A failed request's
// Response carries the usage the provider reported for it, if any.
func (r *Router) call(ctx context.Context, role Role, rc RoleConfig, m Model, price Price, req Request, estimate int) (Response, error) {
	name := modelName(m)
	release, err := r.reserve(ctx, role, rc, name, price, estimate)
	if err != nil {
		return Response{}, err
	}
	defer release()
	resp, err := m.Generate(ctx, req)
	row := store.ModelUsage{Day: r.day(), Role: string(role), Tool: req.Tool, Model: name, Requests: 1}
	if resp.Model == "" {
		resp.Model = name
	}
	if err != nil {
		row.Failures = 1
		// Only what the provider said: a failed request has no estimate.
		if resp.Usage.Estimated {
			resp.Usage = Usage{}
		}
	}
	resp.Usage.Requests = 1
	resp.Usage.CostUSD = price.Cost(resp.Usage.PromptTokens, resp.Usage.CompletionTokens)
	row.PromptTokens = int64(resp.Usage.PromptTokens)
	row.CompletionTokens = int64(resp.Usage.CompletionTokens)
	row.CostUSD = resp.Usage.CostUSD
	r.log.DebugContext(ctx, "model request", slog.String("role", string(role)), slog.String("tool", req.Tool),
		slog.String("model", row.Model), slog.Int64("prompt_tokens", row.PromptTokens),
		slog.Int64("completion_tokens", row.CompletionTokens), slog.Any("error", err))
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	metrics.ModelRequest(string(role), outcome, int(row.PromptTokens), int(row.CompletionTokens))
	// Record even when the caller gave up: the provider was asked.
	if lerr := r.ledger.AddModelUsage(context.WithoutCancel(ctx), row); lerr != nil {
		r.log.ErrorContext(ctx, "cannot record model usage", slog.String("role", string(role)), slog.Any("error", lerr))
	}
	return resp, err
}

func modelName(m Model) string {
	if n, ok := m.(interface{ Name() string }); ok {
		return n.Name()
	}
	return fmt.Sprintf("%T", m)
}

// day is today's date in the budget's time zone.
func (r *Router) day() time.Time {
	t := r.now().In(r.loc)
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, r.loc)
}

// reserve refuses a request when the role's budget, or the shared one, is
// used up (counting requests in flight), or when the request's estimated
// prompt (and its cost at the model's input price) would pass a limit;
// otherwise it counts the request as in flight until release is called,
// after its usage is recorded.
func (r *Router) reserve(ctx context.Context, role Role, rc RoleConfig, model string, price Price, estimate int) (release func(), err error) {
	if rc.Budget == (Budget{}) && r.budget == (Budget{}) {
		return func() {}, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	day := r.day()
	rows, err := r.ledger.ModelUsageOn(ctx, day)
	if err != nil {
		// Without the day's usage the budget cannot be honoured: stop.
		return nil, &UnavailableError{Role: role, Err: fmt.Errorf("read today's model usage: %w", err)}
	}
	var mine, all Usage
	for _, u := range rows {
		x := Usage{Requests: int(u.Requests), PromptTokens: int(u.PromptTokens), CompletionTokens: int(u.CompletionTokens), CostUSD: u.CostUSD}
		all = all.plus(x)
		if u.Role == string(role) {
			mine = mine.plus(x)
		}
	}
	for ro, u := range r.inflight {
		all = all.plus(u)
		if ro == role {
			mine = mine.plus(u)
		}
	}
	need := Usage{Requests: 1, PromptTokens: estimate, CostUSD: price.Cost(estimate, 0)}
	resets := day.AddDate(0, 0, 1)
	refuse := func(err *BudgetExhaustedError, scope Role) (func(), error) {
		err.Role, err.ResetsAt, err.Model = scope, resets, model
		label := string(scope)
		if scope == "" {
			label = "all"
		}
		metrics.BudgetRefusal(label, err.Limit)
		r.log.WarnContext(ctx, "model request refused by a daily budget", slog.String("role", string(role)), slog.String("budget", label),
			slog.String("limit", err.Limit), slog.Float64("needs", err.Need), slog.Float64("left", err.Left()))
		return nil, err
	}
	if err := overBudget(rc.Budget, mine, need); err != nil {
		return refuse(err, role)
	}
	if err := overBudget(r.budget, all, need); err != nil {
		return refuse(err, "")
	}
	r.inflight[role] = r.inflight[role].plus(need)
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		u := r.inflight[role]
		u.Requests -= need.Requests
		u.PromptTokens -= need.PromptTokens
		u.CostUSD -= need.CostUSD
		r.inflight[role] = u
	}, nil
}

// overBudget refuses a request needing need when used plus need passes a
// limit of b.
func overBudget(b Budget, used, need Usage) *BudgetExhaustedError {
	switch {
	case b.Requests > 0 && used.Requests+need.Requests > b.Requests:
		return &BudgetExhaustedError{Limit: "requests", Used: float64(used.Requests), Max: float64(b.Requests), Need: float64(need.Requests)}
	case b.Tokens > 0 && used.Tokens()+need.Tokens() > b.Tokens:
		return &BudgetExhaustedError{Limit: "tokens", Used: float64(used.Tokens()), Max: float64(b.Tokens), Need: float64(need.Tokens())}
	case b.CostUSD > 0 && (used.CostUSD >= b.CostUSD || used.CostUSD+need.CostUSD > b.CostUSD):
		return &BudgetExhaustedError{Limit: "cost_usd", Used: used.CostUSD, Max: b.CostUSD, Need: need.CostUSD}
	}
	return nil
}

// Fits reports, for a prompt of about tokens tokens on role, the first
// daily limit (the role's or the shared one) that could never let it
// through, even on a fresh day: a budget smaller than one prompt turns
// every request of that kind into BUDGET_EXHAUSTED. Nil when it fits.
func (r *Router) Fits(role Role, tokens int) *BudgetExhaustedError {
	rc, ok := r.roles[role]
	if !ok {
		return nil
	}
	need := Usage{Requests: 1, PromptTokens: tokens, CostUSD: rc.Price.Cost(tokens, 0)}
	if err := overBudget(rc.Budget, Usage{}, need); err != nil {
		err.Role = role
		return err
	}
	if err := overBudget(r.budget, Usage{}, need); err != nil {
		return err
	}
	return nil
}
