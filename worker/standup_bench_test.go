package worker

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker/standup"
)

// BenchmarkStandupGenerate measures a standup of a generated project of
// 5,000 open issues (plus 2,000 done), 20 people, 30% of open issues with
// dependencies and 3 milestones, without a model: loading the snapshot,
// issues, previous standup and transitions, decoding the snapshot, the
// report (drift against the previous day's standup, plans, stale blockers)
// and the template. It also logs the size of the phrasing prompt.
func BenchmarkStandupGenerate(b *testing.B) {
	ctx := context.Background()
	_, pool := storetest.NewDB(b)
	p, err := store.EnsureProject(ctx, pool, "bench", "standup")
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	shape := storetest.ProjectShape{Open: 5000, Done: 2000, People: 20, DepShare: 0.3, Milestones: 3, Seed: 1}
	if err := storetest.SeedProject(ctx, pool, p.ID, shape, now); err != nil {
		b.Fatal(err)
	}
	clock := func() time.Time { return now }
	f := &Forecaster{Pool: pool, Log: quietLog(), Trials: 2000, StaleWorkingDays: 3, Now: clock}
	if err := f.Recompute(ctx, p.ID); err != nil {
		b.Fatal(err)
	}
	s := &Standups{Pool: pool, Log: quietLog(), Location: time.UTC, Now: clock}
	w := &StandupWorker{Standups: s}
	if err := w.Work(ctx, &river.Job[StandupArgs]{Args: StandupArgs{ProjectID: p.ID, Day: "2026-12-01"}}); err != nil {
		b.Fatal(err)
	}
	now = now.AddDate(0, 0, 1)
	if err := f.Recompute(ctx, p.ID); err != nil {
		b.Fatal(err)
	}
	day := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	g, err := s.Generate(ctx, p.ID, day)
	if err != nil {
		b.Fatal(err)
	}
	req := standup.Prompt(g.Report)
	content, _ := json.Marshal(g.Report)
	b.Logf("standup of %d open issues: %d drifting milestones, %d people, %d stale blockers; stored content %d bytes; "+
		"phrasing prompt %d bytes, about %d tokens", shape.Open, len(g.Report.Drift), len(g.Report.Plan),
		len(g.Report.StaleBlockers), len(content), len(req.Instructions)+len(req.Draft), req.Tokens())
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Generate(ctx, p.ID, day); err != nil {
			b.Fatal(err)
		}
	}
}
