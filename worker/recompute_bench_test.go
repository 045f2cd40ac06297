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
	shape := storetest.ProjectShape{Open: 2000, Done: 1000, People: 20, DepShare: 0.3, Milestones: 3, Seed: 1}
	_, p, f := seededProject(b, "recompute", shape, 10000)
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

// benchNow is the clock of generated test projects.
var benchNow = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// seededProject is a fresh database holding one generated project and a
// Forecaster on it with the given trials, its clock at benchNow.
func seededProject(tb testing.TB, name string, shape storetest.ProjectShape, trials int) (*store.Pool, store.Project, *Forecaster) {
	tb.Helper()
	ctx := context.Background()
	_, pool := storetest.NewDB(tb)
	p, err := store.EnsureProject(ctx, pool, "bench", name)
	if err != nil {
		tb.Fatal(err)
	}
	if err := storetest.SeedProject(ctx, pool, p.ID, shape, benchNow); err != nil {
		tb.Fatal(err)
	}
	f := &Forecaster{Pool: pool, Log: quietLog(), Trials: trials, Now: func() time.Time { return benchNow }}
	return pool, p, f
}
