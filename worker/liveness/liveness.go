// Package liveness frees the jobs a dead process left running.
//
// River marks a job running when a worker fetches it and finished when the
// worker returns. A process killed in between (kill -9, OOM, a lost host)
// leaves the job running, and because River's uniqueness covers running
// jobs, every insert of the same unique job (each delivery's recompute, the
// periodic recompute, the freshness watch) is merged into that dead job.
// River's rescuer frees it only after RescueStuckJobsAfter, a window that
// must exceed the longest job (a backfill runs for up to two hours), so the
// forecast would stay frozen for that long.
//
// The Keeper replaces the guess by evidence. Each process that runs jobs
// holds a Postgres session advisory lock named after its River client id
// for as long as it lives; Postgres drops the lock with the session, however
// the process ends. Every Interval the Keeper lists running jobs whose last
// attempt belongs to a client whose lock nobody holds, and makes them
// available again (or discards those on their last attempt, as River's
// rescuer does). A job must be found orphaned twice in a row, one Interval
// apart, so that a live process whose lock connection was cut (a terminated
// backend) has time to take its lock again before its jobs are touched.
// River's rescuer stays as the backstop, with a window above the longest
// job timeout so that it never rescues a job that is still running.
//
// Every worker process runs a Keeper; the rescue is one conditional UPDATE,
// so two Keepers rescuing the same job at once do no harm.
package liveness

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/commitea/commitea/store"
)

// DefaultInterval is how often the Keeper checks its own lock and looks
// for orphaned jobs: a dead process's job is freed within two intervals.
const DefaultInterval = time.Second

// Keeper holds this process's liveness lock and rescues the jobs of dead
// processes.
type Keeper struct {
	Pool *store.Pool
	// ClientID is this process's River client id (JobClient.ID()).
	ClientID string
	Log      *slog.Logger
	Interval time.Duration
	// Now is the clock; tests set it.
	Now func() time.Time

	lock    *store.LivenessLock
	suspect []int64 // jobs found orphaned at the previous check
}

// Hold takes this process's liveness lock. Call it before the River client
// starts fetching, so no job of this process is ever running without it.
func (k *Keeper) Hold(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	l, err := store.HoldLiveness(ctx, k.Pool, k.ClientID)
	if err != nil {
		return fmt.Errorf("liveness: %w", err)
	}
	k.lock = l
	return nil
}

// Run checks every Interval until ctx is done, then releases the lock.
func (k *Keeper) Run(ctx context.Context) {
	interval := k.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	defer k.Release()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := k.Check(ctx); err != nil && ctx.Err() == nil {
			k.Log.WarnContext(ctx, "liveness check", slog.Any("error", err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Release gives the lock up; Run does it when it returns.
func (k *Keeper) Release() {
	if k.lock != nil {
		k.lock.Release()
		k.lock = nil
	}
}

// Check makes sure this process still holds its lock, then rescues the
// jobs found orphaned now and at the previous check.
func (k *Keeper) Check(ctx context.Context) error {
	if k.lock == nil || !k.lock.Held(ctx) {
		if k.lock != nil {
			k.lock.Release()
			k.lock = nil
			k.Log.WarnContext(ctx, "liveness lock lost with its connection; taking it again", slog.String("client", k.ClientID))
		}
		if err := k.Hold(ctx); err != nil {
			return err
		}
	}
	orphans, err := store.OrphanedJobs(ctx, k.Pool, k.ClientID)
	if err != nil {
		return err
	}
	var confirmed []int64
	for _, id := range orphans {
		if slices.Contains(k.suspect, id) {
			confirmed = append(confirmed, id)
		}
	}
	k.suspect = orphans
	if len(confirmed) == 0 {
		return nil
	}
	n, err := store.RescueJobs(ctx, k.Pool, confirmed, k.now())
	if err != nil {
		return err
	}
	if n > 0 {
		k.Log.InfoContext(ctx, "rescued jobs of a process that is gone", slog.Int64("jobs", n), slog.Any("ids", confirmed))
	}
	return nil
}

func (k *Keeper) now() time.Time {
	if k.Now != nil {
		return k.Now()
	}
	return time.Now()
}
