package store

import (
	"context"
	"fmt"
)

// JobUnfinished reports whether a River job of kind for the project (its
// args carry project_id, as every CommiTea job's do) is still to run or
// running: queued, scheduled, retrying or in flight. River keeps its jobs
// in this database; a job that must not overlap another (a backtest and
// the project's first import) asks here.
func JobUnfinished(ctx context.Context, q DBTX, kind string, projectID int64) (bool, error) {
	var busy bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM river_job WHERE kind = $1
		AND state IN ('available', 'pending', 'retryable', 'running', 'scheduled')
		AND (args->>'project_id')::bigint = $2)`, kind, projectID).Scan(&busy)
	if err != nil {
		return false, fmt.Errorf("unfinished %s job of project %d: %w", kind, projectID, err)
	}
	return busy, nil
}
