package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Snapshot is one computed state of a project: lifecycle, calibration and
// forecast, with the hash of the inputs it came from.
type Snapshot struct {
	ProjectID     int64
	Version       int64
	InputsHash    string
	ChangeCounter int64
	ComputedAt    time.Time
	Duration      time.Duration
	Data          json.RawMessage
	// Rescue is the rescue options of the snapshot's milestones at risk,
	// stored after the snapshot itself (PutRescue); nil while they are
	// still being computed.
	Rescue json.RawMessage
}

// snapshotsKept bounds the history; standups compare against the one from
// the previous day, so a few dozen is plenty.
const snapshotsKept = 100

// PutSnapshot stores a new snapshot version and prunes old ones.
func PutSnapshot(ctx context.Context, q DBTX, s Snapshot) (int64, error) {
	var v int64
	err := q.QueryRow(ctx, `
		INSERT INTO snapshots (project_id, version, inputs_hash, change_counter, duration_ms, data, rescue)
		SELECT $1, coalesce(max(version), 0) + 1, $2, $3, $4, $5, $6 FROM snapshots WHERE project_id = $1
		RETURNING version`, s.ProjectID, s.InputsHash, s.ChangeCounter, float64(s.Duration.Microseconds())/1000, s.Data, rescueArg(s.Rescue)).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("put snapshot of project %d: %w", s.ProjectID, err)
	}
	_, err = q.Exec(ctx, `DELETE FROM snapshots WHERE project_id = $1 AND version <= $2`, s.ProjectID, v-snapshotsKept)
	if err != nil {
		return 0, fmt.Errorf("prune snapshots of project %d: %w", s.ProjectID, err)
	}
	return v, nil
}

// LatestSnapshot returns a project's newest snapshot, or ErrNotFound.
func LatestSnapshot(ctx context.Context, q DBTX, projectID int64) (Snapshot, error) {
	s := Snapshot{ProjectID: projectID}
	var ms float64
	err := q.QueryRow(ctx, `SELECT version, inputs_hash, change_counter, computed_at, duration_ms, data, rescue
		FROM snapshots WHERE project_id = $1 ORDER BY version DESC LIMIT 1`, projectID).
		Scan(&s.Version, &s.InputsHash, &s.ChangeCounter, &s.ComputedAt, &ms, &s.Data, &s.Rescue)
	if noRows(err) {
		return Snapshot{}, fmt.Errorf("snapshot of project %d: %w", projectID, ErrNotFound)
	}
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot of project %d: %w", projectID, err)
	}
	s.Duration = time.Duration(ms * float64(time.Millisecond))
	return s, nil
}

// rescueArg is a snapshot's rescue as a query argument: SQL NULL while it
// is being computed.
func rescueArg(raw json.RawMessage) any {
	if raw == nil {
		return nil
	}
	return raw
}

// PutRescue stores the rescue options of snapshot version, once: it
// reports false when the snapshot is gone (pruned) or already has them.
// The options arrive whole, so a reader sees either none yet or all.
func PutRescue(ctx context.Context, q DBTX, projectID, version int64, rescue json.RawMessage) (bool, error) {
	if rescue == nil {
		rescue = json.RawMessage(`[]`)
	}
	tag, err := q.Exec(ctx, `UPDATE snapshots SET rescue = $3 WHERE project_id = $1 AND version = $2 AND rescue IS NULL`,
		projectID, version, rescue)
	if err != nil {
		return false, fmt.Errorf("store rescue of snapshot %d of project %d: %w", version, projectID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// SnapshotMark is the latest snapshot's version and whether its rescue
// options are stored yet: what a cache of snapshots compares.
type SnapshotMark struct {
	Version int64
	Rescued bool
}

// LatestSnapshotMark returns the mark of a project's newest snapshot, or
// ErrNotFound.
func LatestSnapshotMark(ctx context.Context, q DBTX, projectID int64) (SnapshotMark, error) {
	var m SnapshotMark
	err := q.QueryRow(ctx, `SELECT version, rescue IS NOT NULL FROM snapshots WHERE project_id = $1
		ORDER BY version DESC LIMIT 1`, projectID).Scan(&m.Version, &m.Rescued)
	if noRows(err) {
		return SnapshotMark{}, fmt.Errorf("snapshot of project %d: %w", projectID, ErrNotFound)
	}
	if err != nil {
		return SnapshotMark{}, fmt.Errorf("snapshot mark of project %d: %w", projectID, err)
	}
	return m, nil
}

// SnapshotRescue returns the rescue options of one snapshot version (nil
// while they are being computed), or ErrNotFound when the version is gone.
func SnapshotRescue(ctx context.Context, q DBTX, projectID, version int64) (json.RawMessage, error) {
	var raw json.RawMessage
	err := q.QueryRow(ctx, `SELECT rescue FROM snapshots WHERE project_id = $1 AND version = $2`, projectID, version).Scan(&raw)
	if noRows(err) {
		return nil, fmt.Errorf("snapshot %d of project %d: %w", version, projectID, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("rescue of snapshot %d of project %d: %w", version, projectID, err)
	}
	return raw, nil
}

// IssueState is an issue's current lifecycle state.
type IssueState struct {
	Number int64
	State  string
	Flags  json.RawMessage
	Since  time.Time
}

// Transition is one change of an issue's lifecycle state.
type Transition struct {
	Issue int64
	From  string
	To    string
	At    time.Time
	Cause string
}

// IssueStates loads every issue's current state for a project.
func IssueStates(ctx context.Context, q DBTX, projectID int64) (map[int64]IssueState, error) {
	rows, err := q.Query(ctx, `SELECT number, state, flags, since FROM issue_states WHERE project_id = $1`, projectID)
	if err != nil {
		return nil, fmt.Errorf("issue states of project %d: %w", projectID, err)
	}
	defer rows.Close()
	out := map[int64]IssueState{}
	for rows.Next() {
		var s IssueState
		if err := rows.Scan(&s.Number, &s.State, &s.Flags, &s.Since); err != nil {
			return nil, fmt.Errorf("issue states of project %d: %w", projectID, err)
		}
		out[s.Number] = s
	}
	return out, rows.Err()
}

// RecordTransitions stores new states and the transitions that led to them.
func RecordTransitions(ctx context.Context, q DBTX, projectID int64, states []IssueState, ts []Transition) error {
	if len(states) == 0 && len(ts) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, s := range states {
		flags := s.Flags
		if flags == nil {
			flags = json.RawMessage(`{}`)
		}
		b.Queue(`INSERT INTO issue_states (project_id, number, state, flags, since) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (project_id, number) DO UPDATE SET state = EXCLUDED.state, flags = EXCLUDED.flags, since = EXCLUDED.since`,
			projectID, s.Number, s.State, flags, s.Since)
	}
	for _, t := range ts {
		b.Queue(`INSERT INTO transitions (project_id, issue, from_state, to_state, at, cause) VALUES ($1, $2, $3, $4, $5, $6)`,
			projectID, t.Issue, t.From, t.To, t.At, t.Cause)
	}
	return runBatch(ctx, q, b, "record transitions")
}

// ReplaceTransitions rebuilds an issue's whole timeline of transitions, as a
// backfill does from Gitea's issue timeline.
func ReplaceTransitions(ctx context.Context, q DBTX, projectID, issue int64, ts []Transition) error {
	b := &pgx.Batch{}
	queueReplaceTransitions(b, projectID, issue, ts)
	return runBatch(ctx, q, b, fmt.Sprintf("replace transitions of issue %d", issue))
}

func queueReplaceTransitions(b *pgx.Batch, projectID, issue int64, ts []Transition) {
	b.Queue(`DELETE FROM transitions WHERE project_id = $1 AND issue = $2`, projectID, issue)
	for _, t := range ts {
		b.Queue(`INSERT INTO transitions (project_id, issue, from_state, to_state, at, cause) VALUES ($1, $2, $3, $4, $5, $6)`,
			projectID, issue, t.From, t.To, t.At, t.Cause)
	}
}

// Transitions loads a project's transitions in order.
func Transitions(ctx context.Context, q DBTX, projectID int64) ([]Transition, error) {
	out, err := collect(ctx, q, `SELECT issue, from_state, to_state, at, cause FROM transitions
		WHERE project_id = $1 ORDER BY issue, at, id`, projectID, scanTransition)
	if err != nil {
		return nil, fmt.Errorf("transitions of project %d: %w", projectID, err)
	}
	return out, nil
}

func scanTransition(r pgx.Rows) (Transition, error) {
	var t Transition
	err := r.Scan(&t.Issue, &t.From, &t.To, &t.At, &t.Cause)
	return t, err
}
