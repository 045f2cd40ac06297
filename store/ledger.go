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
	// Predicted is what was quoted for every milestone when the directive
	// was applied ([{milestone, title, before, after}]); nil before.
	Predicted json.RawMessage
	// AppliedCounter is the change counter the directive's last write
	// reached; the first snapshot covering it realizes the directive.
	AppliedCounter *int64
	// Realized is every milestone's band in that snapshot
	// ([{milestone, title, band}]), RealizedVersion its version; nil until
	// it is in.
	Realized        json.RawMessage
	RealizedVersion *int64
	RealizedAt      *time.Time
}

// directiveCols are the columns scanDirective reads, in its order.
const directiveCols = `id, project_id, kind, quote, target, params, rationale, caller, consequence, summary, status,
	created_at, applied_at, negotiated_by, predicted, applied_counter, realized, realized_version, realized_at`

func scanDirective(r pgx.Row) (Directive, error) {
	var d Directive
	err := r.Scan(&d.ID, &d.ProjectID, &d.Kind, &d.Quote, &d.Target, &d.Params, &d.Rationale, &d.Caller,
		&d.Consequence, &d.Summary, &d.Status, &d.CreatedAt, &d.AppliedAt, &d.NegotiatedBy,
		&d.Predicted, &d.AppliedCounter, &d.Realized, &d.RealizedVersion, &d.RealizedAt)
	return d, err
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
	err := q.QueryRow(ctx, `INSERT INTO directives (project_id, kind, quote, target, params, rationale, caller, consequence, summary, status, applied_at, negotiated_by, created_at, predicted, applied_counter)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, coalesce($13, now()), $14, $15) RETURNING id`,
		d.ProjectID, d.Kind, d.Quote, target, nullJSON(d.Params), d.Rationale, d.Caller, cons, d.Summary, status, d.AppliedAt, d.NegotiatedBy, created,
		nullJSON(d.Predicted), d.AppliedCounter).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("append directive to project %d: %w", d.ProjectID, err)
	}
	return id, nil
}

// MarkDirectiveApplied settles a pending directive with what its
// apply_changes batch quoted for every milestone (predicted) and the change
// counter its last write reached; the first snapshot covering that counter
// realizes it (RealizeDirectives). Applying one already applied keeps its
// first applied_at and takes the newest quote, which the next snapshot is
// checked against.
func MarkDirectiveApplied(ctx context.Context, q DBTX, projectID, id int64, at time.Time, predicted json.RawMessage, counter int64) error {
	tag, err := q.Exec(ctx, `UPDATE directives SET status = 'applied', applied_at = coalesce(applied_at, $3),
		predicted = coalesce($4, predicted), applied_counter = $5, realized = NULL, realized_version = NULL, realized_at = NULL
		WHERE project_id = $1 AND id = $2`, projectID, id, at, nullJSON(predicted), counter)
	if err != nil {
		return fmt.Errorf("mark directive %d applied: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("directive %d: %w", id, ErrNotFound)
	}
	return nil
}

// RealizeDirectives records, on every applied directive of the project
// whose last write the snapshot of version covers (applied_counter up to
// counter) and that has no realized figures yet, the bands that snapshot
// shows (realized). It returns the ids realized.
func RealizeDirectives(ctx context.Context, q DBTX, projectID, counter, version int64, realized json.RawMessage, at time.Time) ([]int64, error) {
	rows, err := q.Query(ctx, `UPDATE directives SET realized = $4, realized_version = $3, realized_at = $5
		WHERE project_id = $1 AND applied_counter IS NOT NULL AND applied_counter <= $2 AND realized IS NULL
		RETURNING id`, projectID, counter, version, realized, at)
	if err != nil {
		return nil, fmt.Errorf("realize directives of project %d: %w", projectID, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("realize directives of project %d: %w", projectID, err)
	}
	return ids, nil
}

// GetDirective reads one ledger entry of a project, or ErrNotFound.
func GetDirective(ctx context.Context, q DBTX, projectID, id int64) (Directive, error) {
	d, err := scanDirective(q.QueryRow(ctx, `SELECT `+directiveCols+` FROM directives WHERE project_id = $1 AND id = $2`, projectID, id))
	if noRows(err) {
		return Directive{}, fmt.Errorf("directive %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Directive{}, fmt.Errorf("directive %d: %w", id, err)
	}
	return d, nil
}

// Ledger returns every directive of a project, oldest first, for
// pm-state.md.
func Ledger(ctx context.Context, q DBTX, projectID int64) ([]Directive, error) {
	out, err := collectArgs(ctx, q, `SELECT `+directiveCols+` FROM directives WHERE project_id = $1 ORDER BY id`,
		func(r pgx.Rows) (Directive, error) { return scanDirective(r) }, projectID)
	if err != nil {
		return nil, fmt.Errorf("ledger of project %d: %w", projectID, err)
	}
	return out, nil
}

// Directives returns a project's pending directives (oldest first) and its
// most recent ledger entries of any status (newest first), at most limit of
// each, with the number of pending ones.
func Directives(ctx context.Context, q DBTX, projectID int64, limit int) (pending, recent []Directive, pendingTotal int, err error) {
	const cols = directiveCols
	scan := func(r pgx.Rows) (Directive, error) { return scanDirective(r) }
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
