package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// IssueWrite is one issue row to upsert, with the delivery that carried it
// (empty for reconcile and backfill).
type IssueWrite struct {
	Issue    Issue
	Delivery string
}

// upsertIssueSQL keeps the newest version of an issue: a row older than the
// one stored (by Gitea's updated_at) is ignored, so a late webhook cannot
// undo what reconcile already brought in, and webhook and reconcile
// converge on the same row. Of the same second (Gitea's resolution, and
// every webhook of one change carries it), an API read wins over a
// delivery, which may show a step of the change rather than its end
// (migration 017); deliveries of the same second apply in order.
const upsertIssueSQL = `
INSERT INTO issues (project_id, number, gitea_id, is_pull, title, body, state, labels, milestone_id,
	assignees, author, ref, created_at, updated_at, closed_at, due_date, merged, closing_refs,
	last_activity_at, last_delivery, delivered)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $20 <> '')
` + issueUpsertConflictSQL

// issueUpsertConflictSQL decides between a stored issue and a newer copy,
// for the single-row and the batched upsert alike: the newer updated_at
// wins, and within the same second an API read beats a webhook
// (migration 017).
const issueUpsertConflictSQL = `
ON CONFLICT (project_id, number) DO UPDATE SET
	gitea_id = EXCLUDED.gitea_id, is_pull = EXCLUDED.is_pull, title = EXCLUDED.title,
	body = EXCLUDED.body, state = EXCLUDED.state, labels = EXCLUDED.labels,
	milestone_id = EXCLUDED.milestone_id, assignees = EXCLUDED.assignees, author = EXCLUDED.author,
	ref = EXCLUDED.ref, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at,
	closed_at = EXCLUDED.closed_at, due_date = EXCLUDED.due_date, merged = EXCLUDED.merged,
	closing_refs = EXCLUDED.closing_refs,
	last_activity_at = GREATEST(issues.last_activity_at, EXCLUDED.last_activity_at),
	last_delivery = CASE WHEN EXCLUDED.last_delivery = '' THEN issues.last_delivery ELSE EXCLUDED.last_delivery END,
	delivered = EXCLUDED.delivered
WHERE issues.updated_at < EXCLUDED.updated_at
	OR issues.updated_at = EXCLUDED.updated_at AND (issues.delivered OR NOT EXCLUDED.delivered)`

func queueIssueUpsert(b *pgx.Batch, projectID int64, w IssueWrite) {
	i := w.Issue
	labels := cleanTexts(i.Labels)
	assignees := cleanTexts(i.Assignees)
	refs := i.ClosingRefs
	if refs == nil {
		refs = []int64{}
	}
	activity := i.LastActivityAt
	if activity.IsZero() {
		activity = i.UpdatedAt
	}
	b.Queue(upsertIssueSQL, projectID, i.Number, i.GiteaID, i.IsPull, cleanText(i.Title), cleanText(i.Body),
		cleanText(i.State), labels, i.Milestone, assignees, cleanText(i.Author), cleanText(i.Ref), i.CreatedAt, i.UpdatedAt, i.ClosedAt, i.DueDate, i.Merged,
		refs, activity, cleanText(w.Delivery))
	queueVersion(b, projectID, i.Number, versionSource(w.Delivery), nil)
}

// UpsertIssues writes issue rows in one round trip, by ascending number
// (writes to one number in the order given), the lock order every mirror
// writer keeps.
func UpsertIssues(ctx context.Context, q DBTX, projectID int64, ws []IssueWrite) error {
	if len(ws) == 0 {
		return nil
	}
	ws = slices.Clone(ws)
	slices.SortStableFunc(ws, func(a, b IssueWrite) int { return cmp.Compare(a.Issue.Number, b.Issue.Number) })
	b := &pgx.Batch{}
	for _, w := range ws {
		queueIssueUpsert(b, projectID, w)
	}
	return runBatch(ctx, q, b, "upsert issues")
}

// TouchIssue records activity on an issue (a comment) without changing its
// fields.
func TouchIssue(ctx context.Context, q DBTX, projectID, number int64, at time.Time, delivery string) error {
	_, err := q.Exec(ctx, `UPDATE issues SET last_activity_at = GREATEST(last_activity_at, $3),
		last_delivery = CASE WHEN $4 = '' THEN last_delivery ELSE $4 END
		WHERE project_id = $1 AND number = $2`, projectID, number, at, delivery)
	if err != nil {
		return fmt.Errorf("touch issue %d: %w", number, err)
	}
	return nil
}

// DeleteIssue removes an issue deleted in Gitea, with its dependencies,
// comments, tracked time and timeline.
func DeleteIssue(ctx context.Context, q DBTX, projectID, number int64) error {
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM issues WHERE project_id = $1 AND number = $2`, projectID, number)
	b.Queue(`DELETE FROM dependencies WHERE project_id = $1 AND (issue = $2 OR (depends_on = $2 AND depends_on_repo = ''))`, projectID, number)
	b.Queue(`DELETE FROM comments WHERE project_id = $1 AND issue = $2`, projectID, number)
	b.Queue(`DELETE FROM tracked_times WHERE project_id = $1 AND issue = $2`, projectID, number)
	b.Queue(`DELETE FROM timeline_events WHERE project_id = $1 AND issue = $2`, projectID, number)
	b.Queue(`DELETE FROM issue_history WHERE project_id = $1 AND number = $2`, projectID, number)
	return runBatch(ctx, q, b, fmt.Sprintf("delete issue %d", number))
}

// ReplaceLabels makes the mirrored label set exactly labels: Gitea sends no
// webhook for label edits, so reconcile lists them whole.
func ReplaceLabels(ctx context.Context, q DBTX, projectID int64, labels []Label) error {
	labels = byID(labels, func(l Label) int64 { return l.ID })
	b := &pgx.Batch{}
	ids := make([]int64, len(labels))
	for i, l := range labels {
		ids[i] = l.ID
		b.Queue(`INSERT INTO labels (project_id, id, name, color, description, exclusive) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (project_id, id) DO UPDATE SET name = EXCLUDED.name, color = EXCLUDED.color,
			description = EXCLUDED.description, exclusive = EXCLUDED.exclusive`,
			projectID, l.ID, cleanText(l.Name), cleanText(l.Color), cleanText(l.Description), l.Exclusive)
	}
	b.Queue(`DELETE FROM labels WHERE project_id = $1 AND NOT (id = ANY($2))`, projectID, ids)
	return runBatch(ctx, q, b, "replace labels")
}

// UpsertLabels adds or updates labels without removing others; webhooks
// carry only the labels of one issue.
func UpsertLabels(ctx context.Context, q DBTX, projectID int64, labels []Label) error {
	if len(labels) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, l := range labels {
		b.Queue(`INSERT INTO labels (project_id, id, name, color, description, exclusive) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (project_id, id) DO UPDATE SET name = EXCLUDED.name, color = EXCLUDED.color,
			description = EXCLUDED.description, exclusive = EXCLUDED.exclusive`,
			projectID, l.ID, cleanText(l.Name), cleanText(l.Color), cleanText(l.Description), l.Exclusive)
	}
	return runBatch(ctx, q, b, "upsert labels")
}

const upsertMilestoneSQL = `INSERT INTO milestones (project_id, id, title, description, state, due_on, closed_at, updated_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
	ON CONFLICT (project_id, id) DO UPDATE SET title = EXCLUDED.title, description = EXCLUDED.description,
	state = EXCLUDED.state, due_on = EXCLUDED.due_on, closed_at = EXCLUDED.closed_at, updated_at = EXCLUDED.updated_at`

func queueMilestoneUpsert(b *pgx.Batch, projectID int64, m Milestone) {
	b.Queue(upsertMilestoneSQL, projectID, m.ID, cleanText(m.Title), cleanText(m.Description), cleanText(m.State),
		m.DueOn, m.ClosedAt, m.UpdatedAt)
}

// ReplaceMilestones makes the mirrored milestones exactly ms: Gitea sends no
// webhook for milestone edits, due dates included.
func ReplaceMilestones(ctx context.Context, q DBTX, projectID int64, ms []Milestone) error {
	ms = byID(ms, func(m Milestone) int64 { return m.ID })
	b := &pgx.Batch{}
	ids := make([]int64, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
		queueMilestoneUpsert(b, projectID, m)
	}
	b.Queue(`DELETE FROM milestones WHERE project_id = $1 AND NOT (id = ANY($2))`, projectID, ids)
	return runBatch(ctx, q, b, "replace milestones")
}

// UpsertMilestones adds or updates milestones seen in webhook payloads.
func UpsertMilestones(ctx context.Context, q DBTX, projectID int64, ms []Milestone) error {
	if len(ms) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, m := range ms {
		queueMilestoneUpsert(b, projectID, m)
	}
	return runBatch(ctx, q, b, "upsert milestones")
}

// ReplaceDependencies sets what one issue depends on.
func ReplaceDependencies(ctx context.Context, q DBTX, projectID, issue int64, deps []Dependency) error {
	b := &pgx.Batch{}
	queueReplaceDependencies(b, projectID, issue, deps)
	return runBatch(ctx, q, b, fmt.Sprintf("replace dependencies of issue %d", issue))
}

func queueReplaceDependencies(b *pgx.Batch, projectID, issue int64, deps []Dependency) {
	b.Queue(`DELETE FROM dependencies WHERE project_id = $1 AND issue = $2`, projectID, issue)
	for _, d := range deps {
		b.Queue(`INSERT INTO dependencies (project_id, issue, depends_on, depends_on_repo) VALUES ($1, $2, $3, $4)
			ON CONFLICT DO NOTHING`, projectID, issue, d.DependsOn, cleanText(d.DependsOnRepo))
	}
	queueVersion(b, projectID, issue, VersionSync, nil)
}

// AddDependency records one dependency; adding one twice is harmless.
func AddDependency(ctx context.Context, q DBTX, projectID int64, d Dependency) error {
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO dependencies (project_id, issue, depends_on, depends_on_repo) VALUES ($1, $2, $3, $4)
		ON CONFLICT DO NOTHING`, projectID, d.Issue, d.DependsOn, cleanText(d.DependsOnRepo))
	now := time.Now()
	queueVersion(b, projectID, d.Issue, VersionWrite, &now)
	return runBatch(ctx, q, b, fmt.Sprintf("add dependency %d -> %d", d.Issue, d.DependsOn))
}

// RemoveDependency forgets one dependency.
func RemoveDependency(ctx context.Context, q DBTX, projectID int64, d Dependency) error {
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM dependencies WHERE project_id = $1 AND issue = $2 AND depends_on = $3 AND depends_on_repo = $4`,
		projectID, d.Issue, d.DependsOn, cleanText(d.DependsOnRepo))
	now := time.Now()
	queueVersion(b, projectID, d.Issue, VersionWrite, &now)
	return runBatch(ctx, q, b, fmt.Sprintf("remove dependency %d -> %d", d.Issue, d.DependsOn))
}

// UpsertTrackedTimes records tracked time entries.
func UpsertTrackedTimes(ctx context.Context, q DBTX, projectID int64, ts []TrackedTime) error {
	if len(ts) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, t := range ts {
		b.Queue(`INSERT INTO tracked_times (project_id, id, issue, login, seconds, created_at) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (project_id, id) DO UPDATE SET issue = EXCLUDED.issue, login = EXCLUDED.login,
			seconds = EXCLUDED.seconds, created_at = EXCLUDED.created_at`,
			projectID, t.ID, t.Issue, cleanText(t.User), t.Seconds, t.Created)
	}
	return runBatch(ctx, q, b, "upsert tracked times")
}

// ReplaceTrackedTimes sets the tracked time of one issue; deleted entries
// leave no trace in a since-listing, so backfill replaces per issue.
func ReplaceTrackedTimes(ctx context.Context, q DBTX, projectID, issue int64, ts []TrackedTime) error {
	b := &pgx.Batch{}
	ids := make([]int64, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
	}
	b.Queue(`DELETE FROM tracked_times WHERE project_id = $1 AND issue = $2 AND NOT (id = ANY($3))`, projectID, issue, ids)
	if err := runBatch(ctx, q, b, fmt.Sprintf("replace tracked times of issue %d", issue)); err != nil {
		return err
	}
	return UpsertTrackedTimes(ctx, q, projectID, ts)
}

// UpsertComments records comments (created or edited).
func UpsertComments(ctx context.Context, q DBTX, projectID int64, cs []Comment) error {
	if len(cs) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, c := range cs {
		b.Queue(`INSERT INTO comments (project_id, id, issue, author, body, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (project_id, id) DO UPDATE SET body = EXCLUDED.body, updated_at = EXCLUDED.updated_at`,
			projectID, c.ID, c.Issue, cleanText(c.Author), cleanText(c.Body), c.CreatedAt, c.UpdatedAt)
	}
	return runBatch(ctx, q, b, "upsert comments")
}

// DeleteComment forgets a deleted comment.
func DeleteComment(ctx context.Context, q DBTX, projectID, id int64) error {
	if _, err := q.Exec(ctx, `DELETE FROM comments WHERE project_id = $1 AND id = $2`, projectID, id); err != nil {
		return fmt.Errorf("delete comment %d: %w", id, err)
	}
	return nil
}

// ReplaceTimeline sets the timeline of one issue.
func ReplaceTimeline(ctx context.Context, q DBTX, projectID, issue int64, evs []TimelineEvent) error {
	b := &pgx.Batch{}
	queueReplaceTimeline(b, projectID, issue, evs)
	return runBatch(ctx, q, b, fmt.Sprintf("replace timeline of issue %d", issue))
}

func queueReplaceTimeline(b *pgx.Batch, projectID, issue int64, evs []TimelineEvent) {
	b.Queue(`DELETE FROM timeline_events WHERE project_id = $1 AND issue = $2`, projectID, issue)
	for _, e := range evs {
		b.Queue(`INSERT INTO timeline_events (project_id, id, issue, kind, actor, created_at, label, assignee, removed, milestone_id, ref_issue)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (project_id, id) DO NOTHING`,
			projectID, e.ID, issue, cleanText(e.Kind), cleanText(e.Actor), e.CreatedAt, cleanText(e.Label), cleanText(e.Assignee), e.Removed, e.Milestone, e.RefIssue)
	}
}

func runBatch(ctx context.Context, q DBTX, b *pgx.Batch, what string) error {
	br := q.SendBatch(ctx, b)
	for i := 0; i < b.Len(); i++ {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if err := br.Close(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// byID is rows sorted by ascending id (stable), the order label and
// milestone rows are locked in by every writer.
func byID[T any](rows []T, id func(T) int64) []T {
	rows = slices.Clone(rows)
	slices.SortStableFunc(rows, func(a, b T) int { return cmp.Compare(id(a), id(b)) })
	return rows
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
