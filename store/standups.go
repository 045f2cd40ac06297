package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Standups: the daily report of a project is one row of the standups table
// per local day, written once; deliveries record, per sink, whether that
// day's standup reached it. LatestStandup (ledger.go) serves the standup
// view from the same rows.

// DailyStandup is one project's standup for one local day.
type DailyStandup struct {
	ID              int64
	ProjectID       int64
	Day             time.Time // midnight UTC of the local date
	SnapshotVersion int64
	Content         json.RawMessage
	Text            string
	CreatedAt       time.Time
}

// InsertStandupOnce stores a standup unless the project already has one for
// that day, and returns the stored row and whether this call wrote it. A
// second run of the daily job therefore delivers what the first one stored.
func InsertStandupOnce(ctx context.Context, q DBTX, s DailyStandup) (DailyStandup, bool, error) {
	err := q.QueryRow(ctx, `INSERT INTO standups (project_id, day, snapshot_version, content, text)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (project_id, day) DO NOTHING
		RETURNING id, created_at`, s.ProjectID, s.Day, s.SnapshotVersion, s.Content, s.Text).Scan(&s.ID, &s.CreatedAt)
	if noRows(err) {
		stored, err := StandupOn(ctx, q, s.ProjectID, s.Day)
		return stored, false, err
	}
	if err != nil {
		return DailyStandup{}, false, fmt.Errorf("insert standup of project %d: %w", s.ProjectID, err)
	}
	return s, true, nil
}

// StandupOn returns a project's standup for one day, or ErrNotFound.
func StandupOn(ctx context.Context, q DBTX, projectID int64, day time.Time) (DailyStandup, error) {
	return scanStandup(q.QueryRow(ctx, `SELECT id, project_id, day, snapshot_version, content, text, created_at
		FROM standups WHERE project_id = $1 AND day = $2`, projectID, day), projectID)
}

// StandupBefore returns a project's latest standup before day, or
// ErrNotFound.
func StandupBefore(ctx context.Context, q DBTX, projectID int64, day time.Time) (DailyStandup, error) {
	return scanStandup(q.QueryRow(ctx, `SELECT id, project_id, day, snapshot_version, content, text, created_at
		FROM standups WHERE project_id = $1 AND day < $2 ORDER BY day DESC LIMIT 1`, projectID, day), projectID)
}

func scanStandup(row interface{ Scan(...any) error }, projectID int64) (DailyStandup, error) {
	var s DailyStandup
	err := row.Scan(&s.ID, &s.ProjectID, &s.Day, &s.SnapshotVersion, &s.Content, &s.Text, &s.CreatedAt)
	if noRows(err) {
		return DailyStandup{}, fmt.Errorf("standup of project %d: %w", projectID, ErrNotFound)
	}
	if err != nil {
		return DailyStandup{}, fmt.Errorf("standup of project %d: %w", projectID, err)
	}
	return s, nil
}

// Standup delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	// DeliveryFailed: the last attempt failed; River may still retry it.
	DeliveryFailed = "failed"
)

// StandupDelivery is where one day's standup stands with one sink.
type StandupDelivery struct {
	ProjectID   int64
	Day         time.Time
	Sink        string
	Status      string
	Attempts    int
	LastError   string
	DeliveredAt *time.Time
	// MessageKey is the idempotency key the delivery is sent under, fixed
	// when it was first recorded.
	MessageKey string
}

const deliveryColumns = `project_id, day, sink, status, attempts, last_error, delivered_at, message_key`

func scanDelivery(row interface{ Scan(...any) error }) (StandupDelivery, error) {
	var d StandupDelivery
	err := row.Scan(&d.ProjectID, &d.Day, &d.Sink, &d.Status, &d.Attempts, &d.LastError, &d.DeliveredAt, &d.MessageKey)
	return d, err
}

// EnsureStandupDelivery records that a day's standup is due at a sink,
// under key, and returns the row, new or as it already stood (with the key
// it was first recorded under).
func EnsureStandupDelivery(ctx context.Context, q DBTX, projectID int64, day time.Time, sink, key string) (StandupDelivery, error) {
	d, err := scanDelivery(q.QueryRow(ctx, `WITH ins AS (
			INSERT INTO standup_deliveries (project_id, day, sink, message_key) VALUES ($1, $2, $3, $4)
			ON CONFLICT (project_id, day, sink) DO NOTHING RETURNING `+deliveryColumns+`)
		SELECT `+deliveryColumns+` FROM ins
		UNION ALL
		SELECT `+deliveryColumns+` FROM standup_deliveries WHERE project_id = $1 AND day = $2 AND sink = $3
		LIMIT 1`, projectID, day, sink, key))
	if err != nil {
		return StandupDelivery{}, fmt.Errorf("ensure standup delivery %s of project %d: %w", sink, projectID, err)
	}
	return d, nil
}

// GetStandupDelivery loads one delivery row, or ErrNotFound.
func GetStandupDelivery(ctx context.Context, q DBTX, projectID int64, day time.Time, sink string) (StandupDelivery, error) {
	d, err := scanDelivery(q.QueryRow(ctx, `SELECT `+deliveryColumns+` FROM standup_deliveries
		WHERE project_id = $1 AND day = $2 AND sink = $3`, projectID, day, sink))
	if noRows(err) {
		return StandupDelivery{}, fmt.Errorf("standup delivery %s of project %d: %w", sink, projectID, ErrNotFound)
	}
	if err != nil {
		return StandupDelivery{}, fmt.Errorf("standup delivery %s of project %d: %w", sink, projectID, err)
	}
	return d, nil
}

// StandupDeliveries lists a day's deliveries of a project, by sink.
func StandupDeliveries(ctx context.Context, q DBTX, projectID int64, day time.Time) ([]StandupDelivery, error) {
	rows, err := q.Query(ctx, `SELECT `+deliveryColumns+` FROM standup_deliveries
		WHERE project_id = $1 AND day = $2 ORDER BY sink`, projectID, day)
	if err != nil {
		return nil, fmt.Errorf("standup deliveries of project %d: %w", projectID, err)
	}
	defer rows.Close()
	var out []StandupDelivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, fmt.Errorf("standup deliveries of project %d: %w", projectID, err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// MarkStandupDelivered records a successful delivery. It reports false when
// the row was already marked, so a caller can tell a duplicate run.
func MarkStandupDelivered(ctx context.Context, q DBTX, projectID int64, day time.Time, sink string) (bool, error) {
	tag, err := q.Exec(ctx, `UPDATE standup_deliveries SET status = 'delivered', attempts = attempts + 1,
		last_error = '', delivered_at = now(), updated_at = now()
		WHERE project_id = $1 AND day = $2 AND sink = $3 AND status <> 'delivered'`, projectID, day, sink)
	if err != nil {
		return false, fmt.Errorf("mark standup delivery %s of project %d: %w", sink, projectID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// RecordStandupFailure records a failed attempt and its error.
func RecordStandupFailure(ctx context.Context, q DBTX, projectID int64, day time.Time, sink, reason string) error {
	_, err := q.Exec(ctx, `UPDATE standup_deliveries SET status = 'failed', attempts = attempts + 1,
		last_error = $4, updated_at = now()
		WHERE project_id = $1 AND day = $2 AND sink = $3 AND status <> 'delivered'`, projectID, day, sink, reason)
	if err != nil {
		return fmt.Errorf("record standup failure %s of project %d: %w", sink, projectID, err)
	}
	return nil
}

// InstallationID is this installation's id, the same for every replica on
// the database. It is made on first use, and made anew when the database
// is not the one it was made in (a copy of another), so that a copy never
// sends its original's keys.
func InstallationID(ctx context.Context, q DBTX) (string, error) {
	var id string
	err := q.QueryRow(ctx, `INSERT INTO installation (id, database_oid)
		SELECT replace(gen_random_uuid()::text, '-', ''), d.oid FROM pg_database d WHERE d.datname = current_database()
		ON CONFLICT (singleton) DO UPDATE SET id = EXCLUDED.id, database_oid = EXCLUDED.database_oid, created_at = now()
			WHERE installation.database_oid <> EXCLUDED.database_oid
		RETURNING id`).Scan(&id)
	if noRows(err) {
		// Made before, in this database.
		err = q.QueryRow(ctx, `SELECT id FROM installation`).Scan(&id)
	}
	if err != nil {
		return "", fmt.Errorf("installation id: %w", err)
	}
	return id, nil
}

// StandupIssue is what a standup needs of one mirrored issue.
type StandupIssue struct {
	Number         int64
	Title          string
	State          string
	Milestone      *int64
	Assignees      []string
	LastActivityAt time.Time
}

// StandupIssues loads the open issues (not pull requests) of a project,
// and the closed ones listed in also, with only the columns a standup
// reads, so that it does not pull bodies, comments and timelines, nor the
// long tail of closed issues, of a large project.
func StandupIssues(ctx context.Context, q DBTX, projectID int64, also []int64) ([]StandupIssue, error) {
	rows, err := q.Query(ctx, `SELECT number, title, state, milestone_id, assignees, last_activity_at
		FROM issues WHERE project_id = $1 AND NOT is_pull AND (state = 'open' OR number = ANY($2))
		ORDER BY number`, projectID, also)
	if err != nil {
		return nil, fmt.Errorf("standup issues of project %d: %w", projectID, err)
	}
	defer rows.Close()
	var out []StandupIssue
	for rows.Next() {
		var i StandupIssue
		if err := rows.Scan(&i.Number, &i.Title, &i.State, &i.Milestone, &i.Assignees, &i.LastActivityAt); err != nil {
			return nil, fmt.Errorf("standup issues of project %d: %w", projectID, err)
		}
		out = append(out, i)
	}
	return out, rows.Err()
}

// TransitionsSince loads a project's transitions after since, in time
// order.
func TransitionsSince(ctx context.Context, q DBTX, projectID int64, since time.Time) ([]Transition, error) {
	out, err := collectArgs(ctx, q, `SELECT issue, from_state, to_state, at, cause FROM transitions
		WHERE project_id = $1 AND at > $2 ORDER BY at, id`, scanTransition, projectID, since)
	if err != nil {
		return nil, fmt.Errorf("transitions of project %d since %s: %w", projectID, since, err)
	}
	return out, nil
}

// The snapshot readers below pull from a stored snapshot only what a
// standup reads, converting JSON to rows inside Postgres: decoding a large
// project's whole snapshot (megabytes, most of it provenance) in Go takes
// several times longer. They read the field names the recompute job
// encodes (worker.SnapshotData and the scheduler types in it).

// SnapshotHead is a snapshot's version, time, calibration and milestone
// forecasts, as JSON.
type SnapshotHead struct {
	Version     int64
	ComputedAt  time.Time
	Calibration json.RawMessage
	Milestones  json.RawMessage
	// Capacity is the runway's per-person capacity ('[]' when the
	// snapshot predates it).
	Capacity json.RawMessage
	// Aging is the flow figures' SLE, window and work item ages,
	// {"sle", "windowDays", "age"} ('{}' when the snapshot predates them).
	Aging json.RawMessage
	// Rescue is the rescue options of the milestones at risk, nil while
	// they are still being computed (store.PutRescue).
	Rescue json.RawMessage
}

// LatestSnapshotVersion returns the version of a project's newest
// snapshot, or ErrNotFound.
func LatestSnapshotVersion(ctx context.Context, q DBTX, projectID int64) (int64, error) {
	var v *int64
	if err := q.QueryRow(ctx, `SELECT max(version) FROM snapshots WHERE project_id = $1`, projectID).Scan(&v); err != nil {
		return 0, fmt.Errorf("snapshot version of project %d: %w", projectID, err)
	}
	if v == nil {
		return 0, fmt.Errorf("snapshot of project %d: %w", projectID, ErrNotFound)
	}
	return *v, nil
}

// SnapshotHeadAt returns the head of one snapshot version, or ErrNotFound.
func SnapshotHeadAt(ctx context.Context, q DBTX, projectID, version int64) (SnapshotHead, error) {
	h := SnapshotHead{Version: version}
	// jsonb_to_record reads the large, compressed document once; three
	// operators on it would decompress it three times.
	err := q.QueryRow(ctx, `SELECT h."computedAt", h.calibration, coalesce(h.forecast->'milestones', '[]'),
			coalesce(h.runway->'capacity', '[]'),
			coalesce(jsonb_build_object('sle', h.flow->'sle', 'windowDays', h.flow->'windowDays', 'age', h.flow->'age'), '{}'),
			s.rescue
		FROM snapshots s, jsonb_to_record(s.data) AS h("computedAt" timestamptz, calibration jsonb, forecast jsonb, runway jsonb, flow jsonb)
		WHERE s.project_id = $1 AND s.version = $2`, projectID, version).
		Scan(&h.ComputedAt, &h.Calibration, &h.Milestones, &h.Capacity, &h.Aging, &h.Rescue)
	if noRows(err) {
		return SnapshotHead{}, fmt.Errorf("snapshot %d of project %d: %w", version, projectID, ErrNotFound)
	}
	if err != nil {
		return SnapshotHead{}, fmt.Errorf("snapshot %d of project %d: %w", version, projectID, err)
	}
	return h, nil
}

// SnapshotStatus is one issue's lifecycle status in a snapshot, without
// its provenance.
type SnapshotStatus struct {
	Number    int64
	State     string
	Discarded bool
	Estimate  string
	Blocked   bool
	BlockedBy []int64
	Stale     bool
}

// SnapshotStatuses reads the statuses of one snapshot version.
func SnapshotStatuses(ctx context.Context, q DBTX, projectID, version int64) ([]SnapshotStatus, error) {
	rows, err := q.Query(ctx, `SELECT x.number, x.state, coalesce(x.discarded, false), coalesce(x.estimate, ''),
		coalesce(x.blocked, false), coalesce(x."blockedBy", '{}'), coalesce(x.stale, false)
		FROM snapshots s, jsonb_to_recordset(coalesce(nullif(s.data->'statuses', 'null'), '[]'))
			AS x(number bigint, state text, discarded bool, estimate text, blocked bool, "blockedBy" bigint[], stale bool)
		WHERE s.project_id = $1 AND s.version = $2`, projectID, version)
	if err != nil {
		return nil, fmt.Errorf("statuses of snapshot %d of project %d: %w", version, projectID, err)
	}
	defer rows.Close()
	var out []SnapshotStatus
	for rows.Next() {
		var s SnapshotStatus
		if err := rows.Scan(&s.Number, &s.State, &s.Discarded, &s.Estimate, &s.Blocked, &s.BlockedBy, &s.Stale); err != nil {
			return nil, fmt.Errorf("statuses of snapshot %d of project %d: %w", version, projectID, err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// SnapshotIssueForecast is one open issue's median finish, the person the
// schedule gave it to most often, and how often it lay on its milestone's
// critical chain.
type SnapshotIssueForecast struct {
	Number       int64
	P50          time.Time
	Assignee     string
	CriticalFreq float64
}

// SnapshotIssueForecasts reads the issue forecasts of one snapshot version.
func SnapshotIssueForecasts(ctx context.Context, q DBTX, projectID, version int64) ([]SnapshotIssueForecast, error) {
	rows, err := q.Query(ctx, `SELECT x.number, x.p50, coalesce(x.assignee, ''), coalesce(x."criticalFreq", 0)
		FROM snapshots s, jsonb_to_recordset(coalesce(nullif(s.data->'forecast'->'issues', 'null'), '[]'))
			AS x(number bigint, p50 timestamptz, assignee text, "criticalFreq" double precision)
		WHERE s.project_id = $1 AND s.version = $2`, projectID, version)
	if err != nil {
		return nil, fmt.Errorf("issue forecasts of snapshot %d of project %d: %w", version, projectID, err)
	}
	defer rows.Close()
	var out []SnapshotIssueForecast
	for rows.Next() {
		var f SnapshotIssueForecast
		if err := rows.Scan(&f.Number, &f.P50, &f.Assignee, &f.CriticalFreq); err != nil {
			return nil, fmt.Errorf("issue forecasts of snapshot %d of project %d: %w", version, projectID, err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}
