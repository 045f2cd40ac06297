package worker

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
)

// The "half-ready answers" of finding 7 of issue #12, in the worker: an
// empty project's snapshot encoded its lists as null (the standup's
// jsonb_to_recordset failed on them), a history too short to backtest
// failed the backtest job on every retry, and a standup due before the
// first import failed (and logged an error) until the import was in.

// TestEmptyProjectEncodesEmptyLists: a recompute of a project with nothing
// in it stores [] for every list, and a standup of it is generated.
func TestEmptyProjectEncodesEmptyLists(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "acme", "empty")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	if err := storetest.MarkBackfilled(ctx, pool, p.ID, now); err != nil {
		t.Fatal(err)
	}
	f := &Forecaster{Pool: pool, Log: quietLog(), Trials: 20, Now: func() time.Time { return now }}
	if err := f.Recompute(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	snap, err := store.LatestSnapshot(ctx, pool, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, list := range []string{`"issues"`, `"milestones"`, `"load"`, `"statuses"`, `"age"`, `"items"`} {
		if bytes.Contains(bytes.ReplaceAll(snap.Data, []byte(" "), nil), []byte(list+":null")) {
			t.Errorf("the empty project's snapshot encodes %s as null", list)
		}
	}
	s := &Standups{Pool: pool, Log: quietLog(), Location: time.UTC, Now: func() time.Time { return now }}
	if err := (&StandupWorker{Standups: s}).Work(ctx, &river.Job[StandupArgs]{Args: StandupArgs{ProjectID: p.ID, Day: "2026-12-01"}}); err != nil {
		t.Fatalf("standup of an empty project: %v", err)
	}
}

// TestNothingToDoYetIsNoFailure: a standup due before the first import
// waits (a snooze: no attempt used, no error logged), and a backtest of a
// history too short for any cut-off succeeds with nothing stored.
func TestNothingToDoYetIsNoFailure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "acme", "new")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelInfo}))
	s := &Standups{Pool: pool, Log: log, Location: time.UTC, Now: func() time.Time { return now }}
	err = (&StandupWorker{Standups: s}).Work(ctx, &river.Job[StandupArgs]{Args: StandupArgs{ProjectID: p.ID, Day: "2026-12-01"}})
	var snooze *river.JobSnoozeError
	if !errors.As(err, &snooze) {
		t.Errorf("a standup before the first import answered %v, want a snooze", err)
	}
	if strings.Contains(logged.String(), "level=ERROR") || strings.Contains(logged.String(), "level=WARN") {
		t.Errorf("the wait logged a problem:\n%s", logged.String())
	}

	// A brand-new project: no finished work, nothing to score.
	if err := store.UpsertIssues(ctx, pool, p.ID, []store.IssueWrite{{Issue: store.Issue{Number: 1, Title: "Only one", State: "open",
		CreatedAt: now.Add(-time.Hour), UpdatedAt: now, LastActivityAt: now}}}); err != nil {
		t.Fatal(err)
	}
	bw := &BacktestWorker{Pool: pool, Log: log, Now: func() time.Time { return now }}
	if err := bw.Work(ctx, &river.Job[BacktestArgs]{Args: BacktestArgs{ProjectID: p.ID}}); err != nil {
		t.Fatalf("a backtest of a history too short failed the job: %v", err)
	}
	if _, err := store.LatestBacktest(ctx, pool, p.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a backtest of nothing was stored: %v", err)
	}
}

// TestNoSnapshotBeforeTheFirstBackfill: a recompute of a project whose
// first backfill has not completed (issue rows in, their details still
// being written, as a chunk's change triggers it) publishes nothing, and
// is no failure; once the backfill's marker is set, the next one does.
// The demo's first forecast differed from run to run when it came from a
// half-imported mirror.
func TestNoSnapshotBeforeTheFirstBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "acme", "importing")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	shape := storetest.ProjectShape{Open: 40, Done: 40, People: 3, DepShare: 0.2, Milestones: 1, Seed: 5}
	if err := storetest.SeedProject(ctx, pool, p.ID, shape, now); err != nil {
		t.Fatal(err)
	}
	// As mid-backfill: the rows are there, the marker is not.
	if err := store.PutSyncState(ctx, pool, store.SyncState{ProjectID: p.ID, BackfillCursor: 20}); err != nil {
		t.Fatal(err)
	}
	f := &Forecaster{Pool: pool, Log: quietLog(), Trials: 50, Now: func() time.Time { return now }}
	if err := f.Recompute(ctx, p.ID); err != nil {
		t.Fatalf("a recompute during the first backfill failed: %v", err)
	}
	if _, err := store.LatestSnapshot(ctx, pool, p.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a recompute during the first backfill published a snapshot (%v)", err)
	}
	if err := storetest.MarkBackfilled(ctx, pool, p.ID, now); err != nil {
		t.Fatal(err)
	}
	if err := f.Recompute(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := store.LatestSnapshot(ctx, pool, p.ID); err != nil {
		t.Fatalf("no snapshot after the first backfill: %v", err)
	}
}
