package worker

import (
	"context"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
)

// BenchmarkRecompute measures the recompute job end to end on a generated
// project of 2,000 open issues (plus 1,000 done for calibration), 20
// people, 30% of open issues with dependencies and 3 milestones: mirror
// load, lifecycle, calibration, a 10,000-trial forecast and the snapshot
// write.
func BenchmarkRecompute(b *testing.B) {
	ctx := context.Background()
	_, pool := storetest.NewDB(b)
	p, err := store.EnsureProject(ctx, pool, "bench", "project")
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	shape := storetest.ProjectShape{Open: 2000, Done: 1000, People: 20, DepShare: 0.3, Milestones: 3, Seed: 1}
	if err := storetest.SeedProject(ctx, pool, p.ID, shape, now); err != nil {
		b.Fatal(err)
	}
	f := &Forecaster{Pool: pool, Log: quietLog(), Trials: 10000, Now: func() time.Time { return now }}
	if err := f.Recompute(ctx, p.ID); err != nil { // warm: first transitions
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := f.Recompute(ctx, p.ID); err != nil {
			b.Fatal(err)
		}
	}
}
