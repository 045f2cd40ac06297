package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// What the one planning rule keeps (scheduler/doc.go): each snapshot's
// plan inside its data, the plan a write tool's quote was made on, and the
// draw keys of issues filed from proposals.

// PlanHead is what a what-if or a recompute reads of the latest snapshot
// besides the mirror: which mirror state it covers and the plan it used.
type PlanHead struct {
	Version       int64
	ChangeCounter int64
	InputsHash    string
	Plan          json.RawMessage // the snapshot's "plan"; null in older ones
	// Rescued is whether its rescue options are stored yet (they come
	// after the snapshot).
	Rescued bool
}

// LatestPlanHead returns the head of a project's newest snapshot, or
// ErrNotFound.
func LatestPlanHead(ctx context.Context, q DBTX, projectID int64) (PlanHead, error) {
	var h PlanHead
	err := q.QueryRow(ctx, `SELECT version, change_counter, inputs_hash, coalesce(data->'plan', 'null'), rescue IS NOT NULL
		FROM snapshots WHERE project_id = $1 ORDER BY version DESC LIMIT 1`, projectID).
		Scan(&h.Version, &h.ChangeCounter, &h.InputsHash, &h.Plan, &h.Rescued)
	if noRows(err) {
		return PlanHead{}, fmt.Errorf("snapshot of project %d: %w", projectID, ErrNotFound)
	}
	if err != nil {
		return PlanHead{}, fmt.Errorf("snapshot plan of project %d: %w", projectID, err)
	}
	return h, nil
}

// SnapshotPart returns one top-level field of a snapshot's data ("plan",
// "forecast"), or ErrNotFound when the version is gone.
func SnapshotPart(ctx context.Context, q DBTX, projectID, version int64, field string) (json.RawMessage, error) {
	var raw json.RawMessage
	err := q.QueryRow(ctx, `SELECT coalesce(data->$3, 'null') FROM snapshots WHERE project_id = $1 AND version = $2`,
		projectID, version, field).Scan(&raw)
	if noRows(err) {
		return nil, fmt.Errorf("snapshot %d of project %d: %w", version, projectID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("%s of snapshot %d of project %d: %w", field, version, projectID, err)
	}
	return raw, nil
}

// PlanHold says that the changes up to ChangeCounter were quoted on the
// plan of snapshot SnapshotVersion.
type PlanHold struct {
	SnapshotVersion int64
	ChangeCounter   int64
}

// HoldPlan records that the write in this transaction was quoted on the
// plan of snapshot version; call it after the change counter moved.
func HoldPlan(ctx context.Context, q DBTX, projectID, version int64) error {
	_, err := q.Exec(ctx, `INSERT INTO plan_holds (project_id, snapshot_version, change_counter)
		SELECT id, $2, change_counter FROM projects WHERE id = $1
		ON CONFLICT (project_id) DO UPDATE SET snapshot_version = EXCLUDED.snapshot_version, change_counter = EXCLUDED.change_counter`,
		projectID, version)
	if err != nil {
		return fmt.Errorf("hold the plan of project %d: %w", projectID, err)
	}
	return nil
}

// GetPlanHold returns a project's plan hold, if there is one.
func GetPlanHold(ctx context.Context, q DBTX, projectID int64) (PlanHold, bool, error) {
	var h PlanHold
	err := q.QueryRow(ctx, `SELECT snapshot_version, change_counter FROM plan_holds WHERE project_id = $1`, projectID).
		Scan(&h.SnapshotVersion, &h.ChangeCounter)
	if noRows(err) {
		return PlanHold{}, false, nil
	}
	if err != nil {
		return PlanHold{}, false, fmt.Errorf("plan hold of project %d: %w", projectID, err)
	}
	return h, true, nil
}

// ReleasePlanHold drops the hold once a snapshot covers counter; a hold a
// later write renewed stays.
func ReleasePlanHold(ctx context.Context, q DBTX, projectID, counter int64) error {
	if _, err := q.Exec(ctx, `DELETE FROM plan_holds WHERE project_id = $1 AND change_counter <= $2`, projectID, counter); err != nil {
		return fmt.Errorf("release the plan hold of project %d: %w", projectID, err)
	}
	return nil
}

// PutDrawKey records the draw key of an issue filed from a proposal.
func PutDrawKey(ctx context.Context, q DBTX, projectID, number, key int64) error {
	_, err := q.Exec(ctx, `INSERT INTO draw_keys (project_id, number, draw_key) VALUES ($1, $2, $3)
		ON CONFLICT (project_id, number) DO UPDATE SET draw_key = EXCLUDED.draw_key`, projectID, number, key)
	if err != nil {
		return fmt.Errorf("record the draw key of #%d: %w", number, err)
	}
	return nil
}

// DrawKeys returns a project's recorded draw keys by issue number.
func DrawKeys(ctx context.Context, q DBTX, projectID int64) (map[int64]int64, error) {
	rows, err := q.Query(ctx, `SELECT number, draw_key FROM draw_keys WHERE project_id = $1`, projectID)
	if err != nil {
		return nil, fmt.Errorf("draw keys of project %d: %w", projectID, err)
	}
	defer rows.Close()
	out := map[int64]int64{}
	for rows.Next() {
		var n, k int64
		if err := rows.Scan(&n, &k); err != nil {
			return nil, fmt.Errorf("draw keys of project %d: %w", projectID, err)
		}
		out[n] = k
	}
	return out, rows.Err()
}
