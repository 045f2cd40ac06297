package worker

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
)

// TestRescueComesAfterThePublish: the recompute publishes its snapshot
// before the rescue search starts (the snapshot is there, its rescue
// still being computed, while the search runs), then stores the whole
// list with it; and a change arriving mid-search supersedes the search,
// which stops without storing anything, so the recompute that follows is
// not held back and the newer snapshot gets its own options.
func TestRescueComesAfterThePublish(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	shape := storetest.ProjectShape{Open: 300, Done: 300, People: 6, DepShare: 0.3, Milestones: 3, Seed: 3}
	pool, p, f := seededProject(t, "rescue-after", shape, 2000)
	if err := f.Recompute(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	// Each due date at its p50: every milestone at risk, with a search
	// that has something to find (as BenchmarkRescue's due-at-p50).
	snap, err := store.LatestSnapshot(ctx, pool, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	var data SnapshotData
	if err := json.Unmarshal(snap.Data, &data); err != nil {
		t.Fatal(err)
	}
	for _, m := range data.Forecast.Milestones {
		if _, err := pool.Exec(ctx, `UPDATE milestones SET due_on = $3 WHERE project_id = $1 AND id = $2`, p.ID, m.ID, m.P50); err != nil {
			t.Fatal(err)
		}
	}

	// started runs a recompute and returns once it has published a
	// snapshot newer than after, with that snapshot's mark as first seen.
	started := func(after int64) (store.SnapshotMark, chan error) {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- f.Recompute(ctx, p.ID) }()
		for {
			m, err := store.LatestSnapshotMark(ctx, pool, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if m.Version > after {
				return m, done
			}
			select {
			case err := <-done:
				t.Fatalf("the recompute returned (%v) before its snapshot was seen", err)
			case <-time.After(time.Millisecond):
			}
		}
	}

	first, done := started(snap.Version)
	if first.Rescued {
		t.Fatalf("snapshot %d was published with its rescue options: the search ran before the publish", first.Version)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	raw, err := store.SnapshotRescue(ctx, pool, p.ID, first.Version)
	if err != nil {
		t.Fatal(err)
	}
	if err := data.SetRescue(raw); err != nil || data.RescuePending || len(data.Rescue) == 0 {
		t.Fatalf("snapshot %d after the recompute: rescue %s (%v), want the options of its milestones at risk", first.Version, raw, err)
	}
	t.Logf("snapshot %d: %d milestones at risk with options", first.Version, len(data.Rescue))

	second, done := started(first.Version)
	if second.Rescued {
		t.Fatalf("snapshot %d was published with its rescue options", second.Version)
	}
	if err := store.BumpChangeCounters(ctx, pool, []int64{p.ID}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if raw, err := store.SnapshotRescue(ctx, pool, p.ID, second.Version); err != nil || raw != nil {
		t.Fatalf("snapshot %d, superseded mid-search: rescue %s (%v), want none stored", second.Version, raw, err)
	}
	if err := f.Recompute(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	third, err := store.LatestSnapshotMark(ctx, pool, p.ID)
	if err != nil || third.Version <= second.Version || !third.Rescued {
		t.Fatalf("the recompute after the change: %+v (%v), want a newer snapshot with its rescue options", third, err)
	}
}
