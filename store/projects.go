package store

import (
	"context"
	"fmt"
	"strings"
)

// EnsureProject returns the project owner/name, creating it on first use.
func EnsureProject(ctx context.Context, q DBTX, owner, name string) (Project, error) {
	p := Project{Owner: owner, Name: name}
	err := q.QueryRow(ctx, `
		INSERT INTO projects (owner, name) VALUES ($1, $2)
		ON CONFLICT (owner, name) DO UPDATE SET owner = EXCLUDED.owner
		RETURNING id`, owner, name).Scan(&p.ID)
	if err != nil {
		return Project{}, fmt.Errorf("ensure project %s/%s: %w", owner, name, err)
	}
	return p, nil
}

// ProjectByName finds a project by its "owner/repo" name, ignoring case as
// Gitea does.
func ProjectByName(ctx context.Context, q DBTX, fullName string) (Project, error) {
	owner, name, ok := strings.Cut(fullName, "/")
	if !ok {
		return Project{}, fmt.Errorf("project %q: want owner/repo", fullName)
	}
	var p Project
	err := q.QueryRow(ctx, `SELECT id, owner, name FROM projects WHERE lower(owner) = lower($1) AND lower(name) = lower($2)`,
		owner, name).Scan(&p.ID, &p.Owner, &p.Name)
	if noRows(err) {
		return Project{}, fmt.Errorf("project %s: %w", fullName, ErrNotFound)
	}
	if err != nil {
		return Project{}, fmt.Errorf("project %s: %w", fullName, err)
	}
	return p, nil
}

// ProjectByID loads one project.
func ProjectByID(ctx context.Context, q DBTX, id int64) (Project, error) {
	p := Project{ID: id}
	err := q.QueryRow(ctx, `SELECT owner, name FROM projects WHERE id = $1`, id).Scan(&p.Owner, &p.Name)
	if noRows(err) {
		return Project{}, fmt.Errorf("project %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Project{}, fmt.Errorf("project %d: %w", id, err)
	}
	return p, nil
}

// BumpChangeCounters moves the change counter of each project by one. The
// recompute job compares the counter before and after it runs. The first
// change the latest snapshot lacks starts the project's lag (behind_since);
// the recompute never writes the row, so it queues behind no delivery.
func BumpChangeCounters(ctx context.Context, q DBTX, projectIDs []int64) error {
	if len(projectIDs) == 0 {
		return nil
	}
	_, err := q.Exec(ctx, `
UPDATE projects p SET change_counter = p.change_counter + 1,
    behind_since = CASE
        WHEN p.change_counter <= coalesce((SELECT s.change_counter FROM snapshots s
                                           WHERE s.project_id = p.id ORDER BY s.version DESC LIMIT 1), -1)
            THEN now()
        ELSE coalesce(p.behind_since, now())
    END
WHERE p.id = ANY($1)`, projectIDs)
	if err != nil {
		return fmt.Errorf("bump change counters: %w", err)
	}
	return nil
}

// ChangeCounter reads a project's change counter.
func ChangeCounter(ctx context.Context, q DBTX, projectID int64) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, `SELECT change_counter FROM projects WHERE id = $1`, projectID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("change counter of project %d: %w", projectID, err)
	}
	return n, nil
}

// ProjectsBehind lists the projects whose mirror moved past their latest
// snapshot (or that have none yet), with their current change counter.
func ProjectsBehind(ctx context.Context, q DBTX) (map[int64]int64, error) {
	rows, err := q.Query(ctx, `
SELECT p.id, p.change_counter
FROM projects p
WHERE p.change_counter > coalesce(
    (SELECT s.change_counter FROM snapshots s WHERE s.project_id = p.id ORDER BY s.version DESC LIMIT 1), -1)`)
	if err != nil {
		return nil, fmt.Errorf("projects behind their snapshot: %w", err)
	}
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var id, counter int64
		if err := rows.Scan(&id, &counter); err != nil {
			return nil, fmt.Errorf("projects behind their snapshot: %w", err)
		}
		out[id] = counter
	}
	return out, rows.Err()
}
