package worker

import (
	"context"
	"testing"

	"github.com/commitea/commitea/store"
)

func TestFreshnessWatchEnqueuesForProjectsBehind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _, p := newIngestFixture(t)
	jobs, err := NewJobClient(pool, JobClientConfig{Log: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	w := &FreshnessWatch{Pool: pool, Jobs: jobs, Log: quietLog()}
	asked := map[int64]int64{}
	recomputes := func() int { return count(t, pool, `SELECT count(*) FROM river_job WHERE kind = 'recompute'`) }

	// A project without any snapshot is behind.
	if err := w.check(ctx, asked); err != nil {
		t.Fatal(err)
	}
	if n := recomputes(); n != 1 {
		t.Fatalf("recompute jobs = %d, want 1", n)
	}
	// The job is still pending: asking again merges into it.
	if err := w.check(ctx, asked); err != nil {
		t.Fatal(err)
	}
	if n := recomputes(); n != 1 {
		t.Fatalf("recompute jobs = %d, want still 1", n)
	}
	// The job finished and a snapshot caught up: nothing to do.
	if _, err := pool.Exec(ctx, `UPDATE river_job SET state = 'completed', finalized_at = now()`); err != nil {
		t.Fatal(err)
	}
	if _, err := store.PutSnapshot(ctx, pool, store.Snapshot{ProjectID: p.ID, InputsHash: "h", ChangeCounter: 0, Data: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := w.check(ctx, asked); err != nil {
		t.Fatal(err)
	}
	if n := recomputes(); n != 1 {
		t.Fatalf("recompute jobs = %d after catching up, want 1", n)
	}
	// A change whose job was lost (merged into a finished run) is caught.
	if err := store.BumpChangeCounters(ctx, pool, []int64{p.ID}); err != nil {
		t.Fatal(err)
	}
	if err := w.check(ctx, asked); err != nil {
		t.Fatal(err)
	}
	if n := recomputes(); n != 2 {
		t.Fatalf("recompute jobs = %d after a lost change, want 2", n)
	}
	// A recompute that failed for good is not retried until the mirror moves.
	if _, err := pool.Exec(ctx, `UPDATE river_job SET state = 'discarded', finalized_at = now()`); err != nil {
		t.Fatal(err)
	}
	if err := w.check(ctx, asked); err != nil {
		t.Fatal(err)
	}
	if n := recomputes(); n != 2 {
		t.Fatalf("recompute jobs = %d after a discarded job, want 2 (no hammering)", n)
	}
}
