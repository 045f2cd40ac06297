package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// The write path's tables (migration 006): apply_changes' idempotency keys
// with their progress, the audit of write calls, and the capacity calendar.

// Idempotency is one apply_changes key: the batch it was first used with,
// the ops applied so far, the issues created, and the final answer once the
// batch completed.
type Idempotency struct {
	Key       string
	OpsHash   string
	Caller    string
	Status    string          // "partial" or "done"
	Done      []int           // indexes of the ops applied
	Created   map[int]int64   // op index -> created issue number
	Answer    json.RawMessage // set when Status is "done"
	CreatedAt time.Time
}

// IdempotencyTTL is how long a key replays its first answer.
const IdempotencyTTL = 24 * time.Hour

// ClaimIdempotency returns the key's row, creating it for opsHash when the
// key is new or its previous use expired (older than IdempotencyTTL, which
// it deletes). Run it under LockIdempotency so two calls with one key do
// not interleave.
func ClaimIdempotency(ctx context.Context, q DBTX, projectID int64, key, opsHash, caller string, now time.Time) (Idempotency, error) {
	// Expired keys of the project go now, this one included, so the table
	// holds one day of batches.
	_, err := q.Exec(ctx, `DELETE FROM tool_idempotency WHERE project_id = $1 AND created_at < $2`,
		projectID, now.Add(-IdempotencyTTL))
	if err != nil {
		return Idempotency{}, fmt.Errorf("expire idempotency key: %w", err)
	}
	_, err = q.Exec(ctx, `INSERT INTO tool_idempotency (project_id, key, ops_hash, caller, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT DO NOTHING`, projectID, key, opsHash, caller, now)
	if err != nil {
		return Idempotency{}, fmt.Errorf("claim idempotency key: %w", err)
	}
	return readIdempotency(ctx, q, projectID, key)
}

func readIdempotency(ctx context.Context, q DBTX, projectID int64, key string) (Idempotency, error) {
	var (
		r       = Idempotency{Key: key}
		done    json.RawMessage
		created json.RawMessage
	)
	err := q.QueryRow(ctx, `SELECT ops_hash, caller, status, done, created, answer, created_at FROM tool_idempotency
		WHERE project_id = $1 AND key = $2`, projectID, key).
		Scan(&r.OpsHash, &r.Caller, &r.Status, &done, &created, &r.Answer, &r.CreatedAt)
	if err != nil {
		return Idempotency{}, fmt.Errorf("read idempotency key: %w", err)
	}
	if err := json.Unmarshal(done, &r.Done); err != nil {
		return Idempotency{}, fmt.Errorf("decode idempotency progress: %w", err)
	}
	var byText map[string]int64
	if err := json.Unmarshal(created, &byText); err != nil {
		return Idempotency{}, fmt.Errorf("decode idempotency created issues: %w", err)
	}
	r.Created = map[int]int64{}
	for k, n := range byText {
		if i, err := strconv.Atoi(k); err == nil {
			r.Created[i] = n
		}
	}
	return r, nil
}

// PeekIdempotency reads the key's row when it was used within
// IdempotencyTTL; found is false otherwise. It creates nothing.
func PeekIdempotency(ctx context.Context, q DBTX, projectID int64, key string, now time.Time) (r Idempotency, found bool, err error) {
	var n int
	err = q.QueryRow(ctx, `SELECT count(*) FROM tool_idempotency WHERE project_id = $1 AND key = $2 AND created_at >= $3`,
		projectID, key, now.Add(-IdempotencyTTL)).Scan(&n)
	if err != nil {
		return Idempotency{}, false, fmt.Errorf("peek idempotency key: %w", err)
	}
	if n == 0 {
		return Idempotency{}, false, nil
	}
	r, err = readIdempotency(ctx, q, projectID, key)
	return r, err == nil, err
}

// LockIdempotency takes a session advisory lock on the key on a connection
// of its own, so concurrent calls with the same key run one after the
// other; unlock releases it. The writes of the batch go through other
// connections and commit as they happen.
func LockIdempotency(ctx context.Context, pool *Pool, projectID int64, key string) (unlock func(), err error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("lock idempotency key: %w", err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtextextended($1, $2))`, key, projectID); err != nil {
		conn.Release()
		return nil, fmt.Errorf("lock idempotency key: %w", err)
	}
	return func() {
		_, err := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtextextended($1, $2))`, key, projectID)
		if err != nil {
			// A connection still holding the lock must not go back to the pool.
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
		conn.Release()
	}, nil
}

// RecordOpDone notes that op index was applied (and, for create_issue, the
// issue it created: 0 when none).
func RecordOpDone(ctx context.Context, q DBTX, projectID int64, key string, index int, created int64) error {
	_, err := q.Exec(ctx, `UPDATE tool_idempotency SET
		done = CASE WHEN done @> to_jsonb($3::int) THEN done ELSE done || to_jsonb($3::int) END,
		created = CASE WHEN $4::bigint = 0 THEN created ELSE created || jsonb_build_object($5::text, $4::bigint) END,
		updated_at = now()
		WHERE project_id = $1 AND key = $2`, projectID, key, index, created, strconv.Itoa(index))
	if err != nil {
		return fmt.Errorf("record op %d done: %w", index, err)
	}
	return nil
}

// RecordCreated notes the issue a create_issue op filed before its
// dependencies are added, so a retry does not file it twice.
func RecordCreated(ctx context.Context, q DBTX, projectID int64, key string, index int, number int64) error {
	_, err := q.Exec(ctx, `UPDATE tool_idempotency SET created = created || jsonb_build_object($3::text, $4::bigint),
		updated_at = now() WHERE project_id = $1 AND key = $2`, projectID, key, strconv.Itoa(index), number)
	if err != nil {
		return fmt.Errorf("record created issue of op %d: %w", index, err)
	}
	return nil
}

// FinishIdempotency stores the final answer the key replays.
func FinishIdempotency(ctx context.Context, q DBTX, projectID int64, key string, answer json.RawMessage) error {
	_, err := q.Exec(ctx, `UPDATE tool_idempotency SET status = 'done', answer = $3, updated_at = now()
		WHERE project_id = $1 AND key = $2`, projectID, key, answer)
	if err != nil {
		return fmt.Errorf("finish idempotency key: %w", err)
	}
	return nil
}

// AuditEntry is one write tool call.
type AuditEntry struct {
	ID        int64
	Tool      string
	Caller    string
	Input     json.RawMessage
	Outcome   string
	Result    json.RawMessage
	CreatedAt time.Time
}

// AppendAudit records a write tool call.
func AppendAudit(ctx context.Context, q DBTX, projectID int64, e AuditEntry) error {
	result := e.Result
	if len(result) == 0 {
		result = json.RawMessage(`{}`)
	}
	_, err := q.Exec(ctx, `INSERT INTO tool_audit (project_id, tool, caller, input, outcome, result) VALUES ($1, $2, $3, $4, $5, $6)`,
		projectID, e.Tool, e.Caller, e.Input, e.Outcome, result)
	if err != nil {
		return fmt.Errorf("audit %s call: %w", e.Tool, err)
	}
	return nil
}

// AuditLog returns a project's latest audit entries, newest first.
func AuditLog(ctx context.Context, q DBTX, projectID int64, limit int) ([]AuditEntry, error) {
	rows, err := q.Query(ctx, `SELECT id, tool, caller, input, outcome, result, created_at FROM tool_audit
		WHERE project_id = $1 ORDER BY id DESC LIMIT $2`, projectID, limit)
	if err != nil {
		return nil, fmt.Errorf("audit log of project %d: %w", projectID, err)
	}
	defer rows.Close()
	var out []AuditEntry
	for rows.Next() {
		var e AuditEntry
		if err := rows.Scan(&e.ID, &e.Tool, &e.Caller, &e.Input, &e.Outcome, &e.Result, &e.CreatedAt); err != nil {
			return nil, fmt.Errorf("audit log of project %d: %w", projectID, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// DateSpan is an inclusive range of local dates, "YYYY-MM-DD".
type DateSpan struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Capacity is one person's entry in CommiTea's capacity calendar.
type Capacity struct {
	Login       string
	HoursPerDay *float64 // nil: the configured calendar's
	TimeOff     []DateSpan
	DirectiveID *int64
	UpdatedAt   time.Time
}

// CapacityCalendar returns a project's capacity calendar, by login.
func CapacityCalendar(ctx context.Context, q DBTX, projectID int64) ([]Capacity, error) {
	rows, err := q.Query(ctx, `SELECT login, hours_per_day, time_off, directive_id, updated_at FROM capacity
		WHERE project_id = $1 ORDER BY login COLLATE "C"`, projectID)
	if err != nil {
		return nil, fmt.Errorf("capacity calendar of project %d: %w", projectID, err)
	}
	defer rows.Close()
	var out []Capacity
	for rows.Next() {
		var c Capacity
		var off json.RawMessage
		if err := rows.Scan(&c.Login, &c.HoursPerDay, &off, &c.DirectiveID, &c.UpdatedAt); err != nil {
			return nil, fmt.Errorf("capacity calendar of project %d: %w", projectID, err)
		}
		if err := json.Unmarshal(off, &c.TimeOff); err != nil {
			return nil, fmt.Errorf("decode time off of %s: %w", c.Login, err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// PutCapacity changes one person's capacity: hours per day when set
// (otherwise kept), and time off added to what is already there.
func PutCapacity(ctx context.Context, q DBTX, projectID int64, c Capacity) error {
	off, err := json.Marshal(nonNilSpans(c.TimeOff))
	if err != nil {
		return fmt.Errorf("encode time off: %w", err)
	}
	_, err = q.Exec(ctx, `INSERT INTO capacity (project_id, login, hours_per_day, time_off, directive_id)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (project_id, login) DO UPDATE SET
			hours_per_day = coalesce(EXCLUDED.hours_per_day, capacity.hours_per_day),
			time_off = (SELECT coalesce(jsonb_agg(DISTINCT e), '[]') FROM jsonb_array_elements(capacity.time_off || EXCLUDED.time_off) e),
			directive_id = coalesce(EXCLUDED.directive_id, capacity.directive_id),
			updated_at = now()`, projectID, c.Login, c.HoursPerDay, off, c.DirectiveID)
	if err != nil {
		return fmt.Errorf("put capacity of %s: %w", c.Login, err)
	}
	return nil
}

func nonNilSpans(s []DateSpan) []DateSpan {
	if s == nil {
		return []DateSpan{}
	}
	return s
}
