package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Mirror is everything mirrored for one project, in a stable order.
type Mirror struct {
	Issues       []Issue
	Labels       []Label
	Milestones   []Milestone
	Dependencies []Dependency
	TrackedTimes []TrackedTime
	Comments     []Comment
	Timeline     []TimelineEvent
	// LastDelivery names, per issue number, the webhook delivery that last
	// changed the issue's row ("" when an API sync did), so a lifecycle
	// transition can cite its cause.
	LastDelivery map[int64]string
}

// LoadMirror reads a project's whole mirror. Run it in a repeatable-read
// transaction when the parts must agree with each other.
func LoadMirror(ctx context.Context, q DBTX, projectID int64) (Mirror, error) {
	m := Mirror{LastDelivery: map[int64]string{}}
	var err error
	m.Issues, err = collect(ctx, q, `SELECT number, gitea_id, is_pull, title, body, state, labels, milestone_id, assignees,
		author, ref, created_at, updated_at, closed_at, due_date, merged, closing_refs, last_activity_at, last_delivery
		FROM issues WHERE project_id = $1 ORDER BY number`, projectID, func(r pgx.Rows) (Issue, error) {
		var i Issue
		var delivery string
		err := r.Scan(&i.Number, &i.GiteaID, &i.IsPull, &i.Title, &i.Body, &i.State, &i.Labels, &i.Milestone,
			&i.Assignees, &i.Author, &i.Ref, &i.CreatedAt, &i.UpdatedAt, &i.ClosedAt, &i.DueDate, &i.Merged,
			&i.ClosingRefs, &i.LastActivityAt, &delivery)
		if delivery != "" {
			m.LastDelivery[i.Number] = delivery
		}
		return i, err
	})
	if err != nil {
		return Mirror{}, fmt.Errorf("load issues: %w", err)
	}
	m.Labels, err = collect(ctx, q, `SELECT id, name, color, description, exclusive FROM labels WHERE project_id = $1 ORDER BY id`,
		projectID, func(r pgx.Rows) (Label, error) {
			var l Label
			err := r.Scan(&l.ID, &l.Name, &l.Color, &l.Description, &l.Exclusive)
			return l, err
		})
	if err != nil {
		return Mirror{}, fmt.Errorf("load labels: %w", err)
	}
	m.Milestones, err = collect(ctx, q, `SELECT id, title, description, state, due_on, closed_at, updated_at
		FROM milestones WHERE project_id = $1 ORDER BY id`, projectID, func(r pgx.Rows) (Milestone, error) {
		var x Milestone
		err := r.Scan(&x.ID, &x.Title, &x.Description, &x.State, &x.DueOn, &x.ClosedAt, &x.UpdatedAt)
		return x, err
	})
	if err != nil {
		return Mirror{}, fmt.Errorf("load milestones: %w", err)
	}
	m.Dependencies, err = collect(ctx, q, `SELECT issue, depends_on, depends_on_repo FROM dependencies
		WHERE project_id = $1 ORDER BY issue, depends_on_repo, depends_on`, projectID, func(r pgx.Rows) (Dependency, error) {
		var d Dependency
		err := r.Scan(&d.Issue, &d.DependsOn, &d.DependsOnRepo)
		return d, err
	})
	if err != nil {
		return Mirror{}, fmt.Errorf("load dependencies: %w", err)
	}
	m.TrackedTimes, err = collect(ctx, q, `SELECT id, issue, login, seconds, created_at FROM tracked_times
		WHERE project_id = $1 ORDER BY id`, projectID, func(r pgx.Rows) (TrackedTime, error) {
		var t TrackedTime
		err := r.Scan(&t.ID, &t.Issue, &t.User, &t.Seconds, &t.Created)
		return t, err
	})
	if err != nil {
		return Mirror{}, fmt.Errorf("load tracked times: %w", err)
	}
	m.Comments, err = collect(ctx, q, `SELECT id, issue, author, body, created_at, updated_at FROM comments
		WHERE project_id = $1 ORDER BY id`, projectID, func(r pgx.Rows) (Comment, error) {
		var c Comment
		err := r.Scan(&c.ID, &c.Issue, &c.Author, &c.Body, &c.CreatedAt, &c.UpdatedAt)
		return c, err
	})
	if err != nil {
		return Mirror{}, fmt.Errorf("load comments: %w", err)
	}
	m.Timeline, err = collect(ctx, q, `SELECT id, issue, kind, actor, created_at, label, assignee, removed, milestone_id, ref_issue
		FROM timeline_events WHERE project_id = $1 ORDER BY issue, created_at, id`, projectID, func(r pgx.Rows) (TimelineEvent, error) {
		var e TimelineEvent
		err := r.Scan(&e.ID, &e.Issue, &e.Kind, &e.Actor, &e.CreatedAt, &e.Label, &e.Assignee, &e.Removed, &e.Milestone, &e.RefIssue)
		return e, err
	})
	if err != nil {
		return Mirror{}, fmt.Errorf("load timeline: %w", err)
	}
	return m, nil
}

// GetIssue loads one mirrored issue.
func GetIssue(ctx context.Context, q DBTX, projectID, number int64) (Issue, error) {
	var i Issue
	err := q.QueryRow(ctx, `SELECT number, gitea_id, is_pull, title, body, state, labels, milestone_id, assignees,
		author, ref, created_at, updated_at, closed_at, due_date, merged, closing_refs, last_activity_at
		FROM issues WHERE project_id = $1 AND number = $2`, projectID, number).Scan(&i.Number, &i.GiteaID, &i.IsPull,
		&i.Title, &i.Body, &i.State, &i.Labels, &i.Milestone, &i.Assignees, &i.Author, &i.Ref, &i.CreatedAt,
		&i.UpdatedAt, &i.ClosedAt, &i.DueDate, &i.Merged, &i.ClosingRefs, &i.LastActivityAt)
	if noRows(err) {
		return Issue{}, fmt.Errorf("issue %d: %w", number, ErrNotFound)
	}
	if err != nil {
		return Issue{}, fmt.Errorf("issue %d: %w", number, err)
	}
	return i, nil
}

// collect is collectArgs for the common query by project alone.
func collect[T any](ctx context.Context, q DBTX, sql string, projectID int64, scan func(pgx.Rows) (T, error)) ([]T, error) {
	return collectArgs(ctx, q, sql, scan, projectID)
}

// SyncState is where a project's reconcile and backfill stand.
type SyncState struct {
	ProjectID      int64
	LastSyncedAt   *time.Time
	BackfillDoneAt *time.Time
	BackfillCursor int64
}

// GetSyncState reads a project's sync state; a project never synced has
// the zero state.
func GetSyncState(ctx context.Context, q DBTX, projectID int64) (SyncState, error) {
	s := SyncState{ProjectID: projectID}
	err := q.QueryRow(ctx, `SELECT last_synced_at, backfill_done_at, backfill_cursor FROM sync_state WHERE project_id = $1`,
		projectID).Scan(&s.LastSyncedAt, &s.BackfillDoneAt, &s.BackfillCursor)
	if noRows(err) {
		return s, nil
	}
	if err != nil {
		return SyncState{}, fmt.Errorf("sync state of project %d: %w", projectID, err)
	}
	return s, nil
}

// PutSyncState stores a project's sync state.
func PutSyncState(ctx context.Context, q DBTX, s SyncState) error {
	_, err := q.Exec(ctx, `INSERT INTO sync_state (project_id, last_synced_at, backfill_done_at, backfill_cursor, updated_at)
		VALUES ($1, $2, $3, $4, now())
		ON CONFLICT (project_id) DO UPDATE SET last_synced_at = EXCLUDED.last_synced_at,
		backfill_done_at = EXCLUDED.backfill_done_at, backfill_cursor = EXCLUDED.backfill_cursor, updated_at = now()`,
		s.ProjectID, s.LastSyncedAt, s.BackfillDoneAt, s.BackfillCursor)
	if err != nil {
		return fmt.Errorf("put sync state of project %d: %w", s.ProjectID, err)
	}
	return nil
}
