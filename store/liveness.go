package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// A process that runs River jobs holds a session advisory lock named after
// its River client id for as long as it lives. Postgres releases a session
// lock when the session ends, however it ends (kill -9, a lost host, a
// terminated backend), so "nobody holds the lock of the client a running
// job was last attempted by" is exact evidence that the job's process is
// gone, where River's own rescuer can only guess from a running time.

// livenessKey is the advisory lock key of a River client id; its 64 bits
// keep it apart from the other keys (migrations, idempotency keys).
const livenessKey = `hashtextextended('commitea liveness ' || $1::text, 0)`

// LivenessLock is a held liveness lock on a connection of its own.
type LivenessLock struct {
	conn     *pgxpool.Conn
	clientID string
}

// HoldLiveness takes the liveness lock of clientID on a connection it keeps
// until Release. A lock another session holds (a process with the same
// client id) makes it wait, so it is taken with a bounded ctx.
func HoldLiveness(ctx context.Context, pool *Pool, clientID string) (*LivenessLock, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("liveness lock of %s: %w", clientID, err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(`+livenessKey+`)`, clientID); err != nil {
		// The connection may hold the lock or be broken: never reuse it.
		_ = conn.Conn().Close(context.WithoutCancel(ctx))
		conn.Release()
		return nil, fmt.Errorf("liveness lock of %s: %w", clientID, err)
	}
	return &LivenessLock{conn: conn, clientID: clientID}, nil
}

// Held reports whether the lock's session still answers; a terminated
// backend or a lost connection has taken the lock with it.
func (l *LivenessLock) Held(ctx context.Context) bool {
	// The lock is never given up while the session lives, so a session
	// that answers still holds it.
	_, err := l.conn.Exec(ctx, `SELECT 1`)
	return err == nil
}

// Release gives the lock up and closes its connection.
func (l *LivenessLock) Release() {
	ctx := context.Background()
	_ = l.conn.Conn().Close(ctx)
	l.conn.Release()
}

// OrphanedJobs lists the running River jobs whose last attempt belongs to
// a client other than self whose liveness lock nobody holds. Trying the
// lock in a transaction of its own answers exactly that without keeping
// it: a transaction-level try fails while any session holds the lock.
func OrphanedJobs(ctx context.Context, pool *Pool, self string) ([]int64, error) {
	var ids []int64
	err := InTx(ctx, pool, func(tx Tx) error {
		rows, err := tx.Query(ctx, `
SELECT id FROM (
    SELECT id, attempted_by[array_upper(attempted_by, 1)] AS holder
    FROM river_job
    WHERE state = 'running' AND attempted_by IS NOT NULL AND array_upper(attempted_by, 1) IS NOT NULL
) j
WHERE holder <> $1 AND pg_try_advisory_xact_lock(hashtextextended('commitea liveness ' || holder, 0))
ORDER BY id`, self)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("orphaned jobs: %w", err)
	}
	return ids, nil
}

// RescueJobs makes the given running jobs available again at once, or
// discards those that used their last attempt, recording why on the job
// as River's rescuer does. A job that left the running state since it was
// listed, or whose holder came back, is left alone.
func RescueJobs(ctx context.Context, pool *Pool, ids []int64, now time.Time) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	tag, err := pool.Exec(ctx, `
UPDATE river_job SET
    errors = array_append(errors, jsonb_build_object(
        'at', $2::timestamptz, 'attempt', attempt,
        'error', 'rescued: the process running it (' || attempted_by[array_upper(attempted_by, 1)] || ') is gone',
        'trace', '')),
    metadata = metadata || jsonb_build_object('commitea:rescued_at', $2::timestamptz),
    state = CASE WHEN attempt >= max_attempts THEN 'discarded'::river_job_state ELSE 'available'::river_job_state END,
    finalized_at = CASE WHEN attempt >= max_attempts THEN $2::timestamptz END,
    scheduled_at = $2::timestamptz
WHERE id = ANY($1) AND state = 'running'
  AND pg_try_advisory_xact_lock(hashtextextended('commitea liveness ' || attempted_by[array_upper(attempted_by, 1)], 0))`, ids, now)
	if err != nil {
		return 0, fmt.Errorf("rescue jobs %v: %w", ids, err)
	}
	return tag.RowsAffected(), nil
}
