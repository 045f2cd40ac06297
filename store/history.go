package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// IssueVersion is how one issue stood from ValidFrom until the next
// version: what the project's own backtest needs to see the project as it
// was at a past date.
type IssueVersion struct {
	Number    int64
	ValidFrom time.Time
	State     string // "open" or "closed"
	ClosedAt  *time.Time
	Labels    []string
	Milestone *int64
	Assignees []string
	DependsOn []int64 // same-repository dependencies, sorted
	Source    string
}

// Sources of issue versions besides "delivery:ID".
const (
	VersionTimeline = "timeline" // derived from the Gitea timeline at backfill
	VersionSync     = "sync"     // a reconcile's or backfill's listing
	VersionWrite    = "write"    // CommiTea's own dependency write
)

// recordVersionSQL appends the issue's current row (with its dependencies)
// as a version when it differs from the latest one recorded. A version
// starts at $4, or at the issue's updated_at (Gitea's time of the change)
// when $4 is null, never before the latest version: one recorded at the
// same instant is overwritten, since the later write saw more.
const recordVersionSQL = `
INSERT INTO issue_history (project_id, number, valid_from, state, closed_at, labels, milestone_id, assignees, depends_on, source)
SELECT i.project_id, i.number, GREATEST(COALESCE($4::timestamptz, i.updated_at), COALESCE(l.valid_from, '-infinity')),
	i.state, i.closed_at, i.labels, i.milestone_id, i.assignees, d.deps, $3
FROM issues i
CROSS JOIN LATERAL (SELECT COALESCE(array_agg(depends_on ORDER BY depends_on), '{}') AS deps FROM dependencies
	WHERE project_id = i.project_id AND issue = i.number AND depends_on_repo = '') d
LEFT JOIN LATERAL (SELECT * FROM issue_history h WHERE h.project_id = i.project_id AND h.number = i.number
	ORDER BY h.valid_from DESC LIMIT 1) l ON true
WHERE i.project_id = $1 AND i.number = $2
	AND (l.number IS NULL OR l.state <> i.state OR l.closed_at IS DISTINCT FROM i.closed_at
		OR NOT (l.labels @> i.labels AND l.labels <@ i.labels) OR l.milestone_id IS DISTINCT FROM i.milestone_id
		OR NOT (l.assignees @> i.assignees AND l.assignees <@ i.assignees) OR l.depends_on <> d.deps)
ON CONFLICT (project_id, number, valid_from) DO UPDATE SET state = EXCLUDED.state, closed_at = EXCLUDED.closed_at,
	labels = EXCLUDED.labels, milestone_id = EXCLUDED.milestone_id, assignees = EXCLUDED.assignees,
	depends_on = EXCLUDED.depends_on, source = EXCLUDED.source`

// queueVersion queues recording the issue's current row as a version; at
// nil means the issue's updated_at.
func queueVersion(b *pgx.Batch, projectID, number int64, source string, at *time.Time) {
	b.Queue(recordVersionSQL, projectID, number, cleanText(source), at)
}

// versionSource names the source of a version written with delivery.
func versionSource(delivery string) string {
	if delivery == "" {
		return VersionSync
	}
	return "delivery:" + delivery
}

// ReplaceIssueHistory makes an issue's recorded history exactly versions
// (backfill derives them from the timeline), then appends the current row
// when it differs from the last of them.
func ReplaceIssueHistory(ctx context.Context, q DBTX, projectID, number int64, versions []IssueVersion) error {
	b := &pgx.Batch{}
	queueReplaceIssueHistory(b, projectID, number, versions)
	return runBatch(ctx, q, b, fmt.Sprintf("replace history of issue %d", number))
}

func queueReplaceIssueHistory(b *pgx.Batch, projectID, number int64, versions []IssueVersion) {
	b.Queue(`DELETE FROM issue_history WHERE project_id = $1 AND number = $2`, projectID, number)
	for _, v := range versions {
		deps := v.DependsOn
		if deps == nil {
			deps = []int64{}
		}
		b.Queue(`INSERT INTO issue_history (project_id, number, valid_from, state, closed_at, labels, milestone_id, assignees, depends_on, source)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
			ON CONFLICT (project_id, number, valid_from) DO UPDATE SET state = EXCLUDED.state, closed_at = EXCLUDED.closed_at,
			labels = EXCLUDED.labels, milestone_id = EXCLUDED.milestone_id, assignees = EXCLUDED.assignees,
			depends_on = EXCLUDED.depends_on, source = EXCLUDED.source`,
			projectID, number, v.ValidFrom, cleanText(v.State), v.ClosedAt, cleanTexts(v.Labels), v.Milestone, cleanTexts(v.Assignees), deps, cleanText(v.Source))
	}
	queueVersion(b, projectID, number, VersionSync, nil)
}

// IssueHistory loads a project's issue versions by issue, then time.
func IssueHistory(ctx context.Context, q DBTX, projectID int64) ([]IssueVersion, error) {
	out, err := collect(ctx, q, `SELECT number, valid_from, state, closed_at, labels, milestone_id, assignees, depends_on, source
		FROM issue_history WHERE project_id = $1 ORDER BY number, valid_from`, projectID, func(r pgx.Rows) (IssueVersion, error) {
		var v IssueVersion
		err := r.Scan(&v.Number, &v.ValidFrom, &v.State, &v.ClosedAt, &v.Labels, &v.Milestone, &v.Assignees, &v.DependsOn, &v.Source)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("issue history of project %d: %w", projectID, err)
	}
	return out, nil
}
