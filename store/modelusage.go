package store

import (
	"context"
	"fmt"
	"time"
)

// ModelUsage is language-model usage of one day, role, tool and model: a
// row of model_usage, or an increment to add to one.
type ModelUsage struct {
	// Day is a calendar day; only its date counts.
	Day              time.Time
	Role             string
	Tool             string
	Model            string
	Requests         int64
	Failures         int64
	PromptTokens     int64
	CompletionTokens int64
	CostUSD          float64
}

// AddModelUsage adds u's counts to its day's row, creating the row.
func AddModelUsage(ctx context.Context, q DBTX, u ModelUsage) error {
	_, err := q.Exec(ctx, `
		INSERT INTO model_usage (day, role, tool, model, requests, failures, prompt_tokens, completion_tokens, cost_usd)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (day, role, tool, model) DO UPDATE SET
			requests = model_usage.requests + EXCLUDED.requests,
			failures = model_usage.failures + EXCLUDED.failures,
			prompt_tokens = model_usage.prompt_tokens + EXCLUDED.prompt_tokens,
			completion_tokens = model_usage.completion_tokens + EXCLUDED.completion_tokens,
			cost_usd = model_usage.cost_usd + EXCLUDED.cost_usd,
			updated_at = now()`,
		dateOnly(u.Day), u.Role, u.Tool, u.Model, u.Requests, u.Failures, u.PromptTokens, u.CompletionTokens, u.CostUSD)
	if err != nil {
		return fmt.Errorf("add model usage: %w", err)
	}
	return nil
}

// ModelUsageBetween lists the rows of days from..to inclusive, ordered by
// day, role, tool and model.
func ModelUsageBetween(ctx context.Context, q DBTX, from, to time.Time) ([]ModelUsage, error) {
	rows, err := q.Query(ctx, `
		SELECT day, role, tool, model, requests, failures, prompt_tokens, completion_tokens, cost_usd
		FROM model_usage WHERE day BETWEEN $1 AND $2
		ORDER BY day, role, tool, model`, dateOnly(from), dateOnly(to))
	if err != nil {
		return nil, fmt.Errorf("list model usage: %w", err)
	}
	defer rows.Close()
	var out []ModelUsage
	for rows.Next() {
		var u ModelUsage
		if err := rows.Scan(&u.Day, &u.Role, &u.Tool, &u.Model, &u.Requests, &u.Failures, &u.PromptTokens, &u.CompletionTokens, &u.CostUSD); err != nil {
			return nil, fmt.Errorf("scan model usage: %w", err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list model usage: %w", err)
	}
	return out, nil
}

// dateOnly keeps the calendar date of t in its own location, so a day
// computed in a local zone is stored as that local date.
func dateOnly(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// ModelUsageLedger is the model router's view of model_usage over a pool
// or transaction.
type ModelUsageLedger struct {
	DB DBTX
}

// AddModelUsage adds one increment.
func (l ModelUsageLedger) AddModelUsage(ctx context.Context, u ModelUsage) error {
	return AddModelUsage(ctx, l.DB, u)
}

// ModelUsageOn lists one day's rows.
func (l ModelUsageLedger) ModelUsageOn(ctx context.Context, day time.Time) ([]ModelUsage, error) {
	return ModelUsageBetween(ctx, l.DB, day, day)
}
