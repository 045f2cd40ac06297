package store

import (
	"context"
	"fmt"
	"time"
)

// Freshness is how far a project's latest snapshot is behind its mirror.
type Freshness struct {
	ProjectID int64
	Project   string // "owner/repo"
	// Backfilled is whether the project's first backfill completed; before
	// it the mirror is partial and tools answer NOT_READY.
	Backfilled bool
	// SnapshotVersion is 0 while the project has no snapshot.
	SnapshotVersion int64
	SnapshotAt      time.Time
	// ChangesBehind is how many mirror changes the snapshot lacks (all of
	// them while there is none).
	ChangesBehind int64
	// Behind is how long the mirror has held a change the snapshot lacks:
	// zero when it covers the latest change; since the project was created
	// while there is no snapshot.
	Behind time.Duration
}

// CoversLatest reports whether the snapshot includes the mirror's latest
// change.
func (f Freshness) CoversLatest() bool { return f.SnapshotVersion > 0 && f.ChangesBehind == 0 }

// Ready reports whether tools serve the project: backfilled, with a
// snapshot.
func (f Freshness) Ready() bool { return f.Backfilled && f.SnapshotVersion > 0 }

// SnapshotAge is how long ago the snapshot was computed (zero without one).
func (f Freshness) SnapshotAge(now time.Time) time.Duration {
	if f.SnapshotVersion == 0 {
		return 0
	}
	return max(now.Sub(f.SnapshotAt), 0)
}

const freshnessSQL = `
SELECT p.id, p.owner || '/' || p.name, s.backfill_done_at IS NOT NULL,
       coalesce(l.version, 0), coalesce(l.computed_at, 'epoch'), p.change_counter - coalesce(l.change_counter, 0),
       CASE
           WHEN l.version IS NULL THEN extract(epoch FROM now() - coalesce(p.behind_since, p.created_at))
           WHEN p.change_counter <= l.change_counter THEN 0
           -- Changes after the snapshot read its inputs (computed_at less its
           -- duration) are the ones it lacks; behind_since predates them when
           -- the snapshot was committed after the first of them.
           ELSE extract(epoch FROM now() - greatest(coalesce(p.behind_since, now()),
                l.computed_at - l.duration_ms * interval '1 millisecond'))
       END
FROM projects p
LEFT JOIN sync_state s ON s.project_id = p.id
LEFT JOIN LATERAL (
    SELECT version, computed_at, change_counter, duration_ms FROM snapshots
    WHERE project_id = p.id ORDER BY version DESC LIMIT 1) l ON true`

// ProjectFreshness reports every project's freshness, by name.
func ProjectFreshness(ctx context.Context, q DBTX) ([]Freshness, error) {
	rows, err := q.Query(ctx, freshnessSQL+` ORDER BY p.owner, p.name`)
	if err != nil {
		return nil, fmt.Errorf("project freshness: %w", err)
	}
	defer rows.Close()
	var out []Freshness
	for rows.Next() {
		f, err := scanFreshness(rows)
		if err != nil {
			return nil, fmt.Errorf("project freshness: %w", err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// OneProjectFreshness reports one project's freshness.
func OneProjectFreshness(ctx context.Context, q DBTX, projectID int64) (Freshness, error) {
	f, err := scanFreshness(q.QueryRow(ctx, freshnessSQL+` WHERE p.id = $1`, projectID))
	if noRows(err) {
		return Freshness{}, fmt.Errorf("freshness of project %d: %w", projectID, ErrNotFound)
	}
	if err != nil {
		return Freshness{}, fmt.Errorf("freshness of project %d: %w", projectID, err)
	}
	return f, nil
}

func scanFreshness(r interface{ Scan(...any) error }) (Freshness, error) {
	var f Freshness
	var secs float64
	if err := r.Scan(&f.ProjectID, &f.Project, &f.Backfilled, &f.SnapshotVersion, &f.SnapshotAt, &f.ChangesBehind, &secs); err != nil {
		return Freshness{}, err
	}
	f.Behind = time.Duration(max(secs, 0) * float64(time.Second))
	return f, nil
}
