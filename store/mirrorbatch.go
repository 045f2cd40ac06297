package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// MirrorBatch queues mirror writes and sends them in one round trip. The
// webhook ingester writes a whole group commit through one batch, so a
// transaction of a hundred deliveries costs a handful of round trips rather
// than a hundred.
type MirrorBatch struct {
	projectID int64
	b         pgx.Batch
}

// NewMirrorBatch starts a batch of writes to one project's mirror.
func NewMirrorBatch(projectID int64) *MirrorBatch { return &MirrorBatch{projectID: projectID} }

// Len is the number of queued statements.
func (m *MirrorBatch) Len() int { return m.b.Len() }

// Issue queues an issue upsert (newest updated_at wins).
func (m *MirrorBatch) Issue(w IssueWrite) { queueIssueUpsert(&m.b, m.projectID, w) }

// DeleteIssue queues the removal of an issue and what hangs off it.
func (m *MirrorBatch) DeleteIssue(number int64) {
	m.b.Queue(`DELETE FROM issues WHERE project_id = $1 AND number = $2`, m.projectID, number)
	m.b.Queue(`DELETE FROM dependencies WHERE project_id = $1 AND (issue = $2 OR (depends_on = $2 AND depends_on_repo = ''))`, m.projectID, number)
	m.b.Queue(`DELETE FROM comments WHERE project_id = $1 AND issue = $2`, m.projectID, number)
	m.b.Queue(`DELETE FROM tracked_times WHERE project_id = $1 AND issue = $2`, m.projectID, number)
	m.b.Queue(`DELETE FROM timeline_events WHERE project_id = $1 AND issue = $2`, m.projectID, number)
	m.b.Queue(`DELETE FROM issue_history WHERE project_id = $1 AND number = $2`, m.projectID, number)
}

// Label queues a label upsert. Every delivery carries its issue's labels,
// so nearly every upsert repeats the stored row; an upsert that conflicts
// locks the row until commit even when it changes nothing, which would
// make every concurrent group commit queue on the few shared label rows.
// The row is therefore written only when it differs (a plain read first).
func (m *MirrorBatch) Label(l Label) {
	m.b.Queue(`INSERT INTO labels (project_id, id, name, color, description, exclusive)
		SELECT $1, $2, $3, $4, $5, $6
		WHERE NOT EXISTS (SELECT 1 FROM labels WHERE project_id = $1 AND id = $2 AND name = $3 AND color = $4
			AND description = $5 AND exclusive = $6)
		ON CONFLICT (project_id, id) DO UPDATE SET name = EXCLUDED.name, color = EXCLUDED.color,
		description = EXCLUDED.description, exclusive = EXCLUDED.exclusive`,
		m.projectID, l.ID, cleanText(l.Name), cleanText(l.Color), cleanText(l.Description), l.Exclusive)
}

// Milestone queues a milestone upsert from a delivery's copy of it,
// written only when it differs (see Label) and only over an older copy.
// Gitea sends no webhook for a milestone edit: the copy rides on an issue
// event and was rendered when that event happened, so a delivery that
// arrives after an edit written through (set_deadline_hard) or reconciled
// would otherwise put the milestone back as it was. A copy replaces the
// row only when its updated_at is later, or when either lacks one.
func (m *MirrorBatch) Milestone(x Milestone) {
	m.b.Queue(`INSERT INTO milestones (project_id, id, title, description, state, due_on, closed_at, updated_at)
		SELECT $1, $2, $3, $4, $5, $6::timestamptz, $7::timestamptz, $8::timestamptz
		WHERE NOT EXISTS (SELECT 1 FROM milestones WHERE project_id = $1 AND id = $2 AND (title = $3 AND description = $4
			AND state = $5 AND due_on IS NOT DISTINCT FROM $6 AND closed_at IS NOT DISTINCT FROM $7
			AND updated_at IS NOT DISTINCT FROM $8
			OR updated_at IS NOT NULL AND $8::timestamptz IS NOT NULL AND updated_at >= $8::timestamptz))
		ON CONFLICT (project_id, id) DO UPDATE SET title = EXCLUDED.title, description = EXCLUDED.description,
		state = EXCLUDED.state, due_on = EXCLUDED.due_on, closed_at = EXCLUDED.closed_at, updated_at = EXCLUDED.updated_at
		WHERE milestones.updated_at IS NULL OR EXCLUDED.updated_at IS NULL OR EXCLUDED.updated_at > milestones.updated_at`,
		m.projectID, x.ID, cleanText(x.Title), cleanText(x.Description), cleanText(x.State), x.DueOn, x.ClosedAt, x.UpdatedAt)
}

// Comment queues a comment upsert.
func (m *MirrorBatch) Comment(c Comment) {
	m.b.Queue(`INSERT INTO comments (project_id, id, issue, author, body, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (project_id, id) DO UPDATE SET body = EXCLUDED.body, updated_at = EXCLUDED.updated_at`,
		m.projectID, c.ID, c.Issue, cleanText(c.Author), cleanText(c.Body), c.CreatedAt, c.UpdatedAt)
}

// DeleteComment queues a comment's removal.
func (m *MirrorBatch) DeleteComment(id int64) {
	m.b.Queue(`DELETE FROM comments WHERE project_id = $1 AND id = $2`, m.projectID, id)
}

// Touch queues a sign of activity on an issue.
func (m *MirrorBatch) Touch(number int64, at time.Time, delivery string) {
	m.b.Queue(`UPDATE issues SET last_activity_at = GREATEST(last_activity_at, $3),
		last_delivery = CASE WHEN $4 = '' THEN last_delivery ELSE $4 END
		WHERE project_id = $1 AND number = $2`, m.projectID, number, at, cleanText(delivery))
}

// Run sends the queued writes.
func (m *MirrorBatch) Run(ctx context.Context, q DBTX) error {
	if m.b.Len() == 0 {
		return nil
	}
	return runBatch(ctx, q, &m.b, "write mirror batch")
}
