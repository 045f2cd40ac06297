package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Backtest is the latest backtest of a project's history.
type Backtest struct {
	ProjectID  int64
	DoneHash   string
	ComputedAt time.Time
	Duration   time.Duration
	Result     json.RawMessage
}

// PutBacktest replaces a project's backtest.
func PutBacktest(ctx context.Context, q DBTX, b Backtest) error {
	_, err := q.Exec(ctx, `INSERT INTO backtests (project_id, done_hash, duration_ms, result) VALUES ($1, $2, $3, $4)
		ON CONFLICT (project_id) DO UPDATE SET done_hash = EXCLUDED.done_hash, computed_at = now(),
			duration_ms = EXCLUDED.duration_ms, result = EXCLUDED.result`,
		b.ProjectID, b.DoneHash, float64(b.Duration)/float64(time.Millisecond), b.Result)
	if err != nil {
		return fmt.Errorf("store backtest of project %d: %w", b.ProjectID, err)
	}
	return nil
}

// LatestBacktest reads a project's backtest; ErrNotFound when none ran yet.
func LatestBacktest(ctx context.Context, q DBTX, projectID int64) (Backtest, error) {
	b := Backtest{ProjectID: projectID}
	var ms float64
	err := q.QueryRow(ctx, `SELECT done_hash, computed_at, duration_ms, result FROM backtests WHERE project_id = $1`, projectID).
		Scan(&b.DoneHash, &b.ComputedAt, &ms, &b.Result)
	if errors.Is(err, pgx.ErrNoRows) {
		return Backtest{}, fmt.Errorf("backtest of project %d: %w", projectID, ErrNotFound)
	}
	if err != nil {
		return Backtest{}, fmt.Errorf("backtest of project %d: %w", projectID, err)
	}
	b.Duration = time.Duration(ms * float64(time.Millisecond))
	return b, nil
}
