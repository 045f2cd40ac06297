package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// This file holds the reads the dashboard and /metrics make: small and
// indexed, so a page renders from the snapshot in milliseconds.

// IssueCard is what a board card shows of an issue.
type IssueCard struct {
	Number    int64
	Title     string
	Labels    []string
	Assignees []string
	Milestone *int64
	State     string
	ClosedAt  *time.Time
}

// IssueCards loads the open issues of a project and those closed since
// closedSince, without bodies.
func IssueCards(ctx context.Context, q DBTX, projectID int64, closedSince time.Time) ([]IssueCard, error) {
	rows, err := q.Query(ctx, `SELECT number, title, labels, assignees, milestone_id, state, closed_at FROM issues
		WHERE project_id = $1 AND NOT is_pull AND (state = 'open' OR closed_at >= $2) ORDER BY number`, projectID, closedSince)
	if err != nil {
		return nil, fmt.Errorf("issue cards of project %d: %w", projectID, err)
	}
	defer rows.Close()
	var out []IssueCard
	for rows.Next() {
		var c IssueCard
		if err := rows.Scan(&c.Number, &c.Title, &c.Labels, &c.Assignees, &c.Milestone, &c.State, &c.ClosedAt); err != nil {
			return nil, fmt.Errorf("issue cards of project %d: %w", projectID, err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Record is one row of a table this package reads without owning its
// shape (the directive ledger, the standups): column name to value.
type Record map[string]any

// LatestRecords returns up to limit rows of table for a project, newest
// first by orderBy, as column maps. exists is false when the table is not
// there (an older schema); the dashboard then says "none yet". table and
// orderBy must be constants of the caller, never user input.
func LatestRecords(ctx context.Context, q DBTX, table, orderBy string, projectID int64, limit int) (recs []Record, exists bool, err error) {
	if err := q.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, table).Scan(&exists); err != nil {
		return nil, false, fmt.Errorf("look up table %s: %w", table, err)
	}
	if !exists {
		return nil, false, nil
	}
	rows, err := q.Query(ctx, fmt.Sprintf(`SELECT to_jsonb(t) FROM %s t WHERE project_id = $1 ORDER BY %s LIMIT $2`, table, orderBy), projectID, limit)
	if err != nil {
		return nil, true, fmt.Errorf("read %s of project %d: %w", table, projectID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return nil, true, fmt.Errorf("read %s of project %d: %w", table, projectID, err)
		}
		var r Record
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, true, fmt.Errorf("decode %s row: %w", table, err)
		}
		recs = append(recs, r)
	}
	return recs, true, rows.Err()
}
