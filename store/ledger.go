package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// LatestStandup returns a project's newest standup, or ErrNotFound; the
// standup view serves it.
func LatestStandup(ctx context.Context, q DBTX, projectID int64) (DailyStandup, error) {
	return scanStandup(q.QueryRow(ctx, `SELECT id, project_id, day, snapshot_version, content, text, created_at
		FROM standups WHERE project_id = $1 ORDER BY day DESC, id DESC LIMIT 1`, projectID), projectID)
}

// Directive statuses.
const (
	DirectivePending = "pending"
	DirectiveApplied = "applied"
)

// Directive is one entry of a project's directive ledger: a PM's intent in
// their own words, with the structured effect and its consequence.
type Directive struct {
	ID        int64
	ProjectID int64
	Kind      string
	Quote     string
	Target    json.RawMessage
	Params    json.RawMessage // nil when the directive has none yet
	// NegotiatedBy names the model ("provider:model") that turned the quote
	// into Params; "" when the caller gave them.
	NegotiatedBy string
	Rationale    string
	Caller       string
	Consequence  json.RawMessage
	Summary      string
	Status       string
	CreatedAt    time.Time
	AppliedAt    *time.Time
	// Predicted is what was quoted when the directive was applied
	// ([{milestone, title, before, after}]), Realized the band the first
	// snapshot covering its writes showed ([{milestone, title, band}]);
	// nil until each is recorded (migration 012).
	Predicted  json.RawMessage
	Realized   json.RawMessage
	RealizedAt *time.Time
}

// AppendDirective adds a directive to the ledger and returns its id.
func AppendDirective(ctx context.Context, q DBTX, d Directive) (int64, error) {
	target, cons := d.Target, d.Consequence
	if target == nil {
		target = json.RawMessage(`{}`)
	}
	if cons == nil {
		cons = json.RawMessage(`[]`)
	}
	status := d.Status
	if status == "" {
		status = DirectivePending
	}
	// A zero CreatedAt is the database's now(); the tools pass their own
	// clock, so a ledger entry and its applied_at read on one clock.
	var created *time.Time
	if !d.CreatedAt.IsZero() {
		created = &d.CreatedAt
	}
	var id int64
	err := q.QueryRow(ctx, `INSERT INTO directives (project_id, kind, quote, target, params, rationale, caller, consequence, summary, status, applied_at, negotiated_by, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, coalesce($13, now())) RETURNING id`,
		d.ProjectID, d.Kind, d.Quote, target, nullJSON(d.Params), d.Rationale, d.Caller, cons, d.Summary, status, d.AppliedAt, d.NegotiatedBy, created).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("append directive to project %d: %w", d.ProjectID, err)
	}
	return id, nil
}

// MarkDirectiveApplied settles a pending directive; applying one already
// applied changes nothing.
func MarkDirectiveApplied(ctx context.Context, q DBTX, projectID, id int64, at time.Time) error {
	tag, err := q.Exec(ctx, `UPDATE directives SET status = 'applied', applied_at = coalesce(applied_at, $3)
		WHERE project_id = $1 AND id = $2`, projectID, id, at)
	if err != nil {
		return fmt.Errorf("mark directive %d applied: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("directive %d: %w", id, ErrNotFound)
	}
	return nil
}

// Directives returns a project's pending directives (oldest first) and its
// most recent ledger entries of any status (newest first), at most limit of
// each, with the number of pending ones.
func Directives(ctx context.Context, q DBTX, projectID int64, limit int) (pending, recent []Directive, pendingTotal int, err error) {
	const cols = `id, project_id, kind, quote, target, params, rationale, caller, consequence, summary, status, created_at, applied_at, negotiated_by,
		predicted, realized, realized_at`
	scan := func(r pgx.Rows) (Directive, error) {
		var d Directive
		err := r.Scan(&d.ID, &d.ProjectID, &d.Kind, &d.Quote, &d.Target, &d.Params, &d.Rationale, &d.Caller,
			&d.Consequence, &d.Summary, &d.Status, &d.CreatedAt, &d.AppliedAt, &d.NegotiatedBy, &d.Predicted, &d.Realized, &d.RealizedAt)
		return d, err
	}
	pending, err = collectArgs(ctx, q, `SELECT `+cols+` FROM directives WHERE project_id = $1 AND status = 'pending'
		ORDER BY id LIMIT $2`, scan, projectID, limit)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("pending directives of project %d: %w", projectID, err)
	}
	recent, err = collectArgs(ctx, q, `SELECT `+cols+` FROM directives WHERE project_id = $1
		ORDER BY created_at DESC, id DESC LIMIT $2`, scan, projectID, limit)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("recent directives of project %d: %w", projectID, err)
	}
	err = q.QueryRow(ctx, `SELECT count(*) FROM directives WHERE project_id = $1 AND status = 'pending'`, projectID).Scan(&pendingTotal)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("count pending directives of project %d: %w", projectID, err)
	}
	return pending, recent, pendingTotal, nil
}

func nullJSON(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

func collectArgs[T any](ctx context.Context, q DBTX, sql string, scan func(pgx.Rows) (T, error), args ...any) ([]T, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
