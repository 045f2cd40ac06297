package worker

import (
	"context"
	"errors"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
)

// TestBacktestWaitsForTheFirstImport: while the project's backfill job is
// unfinished the backtest snoozes (a replay then would read half the
// issues' history); once the backfill is done it runs.
func TestBacktestWaitsForTheFirstImport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "acme", "teapot")
	if err != nil {
		t.Fatal(err)
	}
	other, err := store.EnsureProject(ctx, pool, "acme", "kettle")
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := NewJobClient(pool, JobClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	backfill, err := jobs.Insert(ctx, BackfillArgs{ProjectID: p.ID}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := &BacktestWorker{Pool: pool, Log: quietLog(), Trials: 50}
	work := func(id int64) error {
		return w.Work(ctx, &river.Job[BacktestArgs]{Args: BacktestArgs{ProjectID: id}})
	}
	var snooze *rivertype.JobSnoozeError
	if err := work(p.ID); !errors.As(err, &snooze) || snooze.Duration != backfillWait {
		t.Fatalf("backtest during the backfill: %v, want a snooze of %s", err, backfillWait)
	}
	if err := work(other.ID); errors.As(err, &snooze) {
		t.Fatalf("another project's backtest waits for this one's backfill: %v", err)
	}
	if _, err := jobs.JobCancel(ctx, backfill.Job.ID); err != nil {
		t.Fatal(err)
	}
	if err := work(p.ID); errors.As(err, &snooze) {
		t.Fatalf("backtest after the backfill still waits: %v", err)
	}
}
