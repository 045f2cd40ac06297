package worker

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/commitea/commitea/store/storetest"
)

// BenchmarkRescue is the rescue benchmark: on the 2,000-issue
// benchmark project (plus 1,000 done, 20 people, 3 milestones) at the
// default 2,000 trials, the rescue search the recompute runs (every
// candidate at 2,000 trials, the chosen options re-scored through the
// what-if path), reported per milestone at risk: wall time and the CPU time
// of the whole process (on a shared machine wall time also counts other
// processes' turns). Target: under 2 s per milestone at risk on 2 cores.
func BenchmarkRescue(b *testing.B) {
	ctx := context.Background()
	shape := storetest.ProjectShape{Open: 2000, Done: 1000, People: 20, DepShare: 0.3, Milestones: 3, Seed: 1}
	_, p, f := seededProject(b, "rescue", shape, 2000)
	st, err := loadProjectState(ctx, f.Pool, p.ID, nil)
	if err != nil {
		b.Fatal(err)
	}
	plan, _, err := st.quotedPlan(benchNow)
	if err != nil {
		b.Fatal(err)
	}
	run, err := f.forecast(st, plan, benchNow, false)
	if err != nil {
		b.Fatal(err)
	}
	// As seeded, every milestone is out of reach (p80 years past due):
	// the search finds that fast. With each due date at its p50 (about a
	// 50% chance), every family has something to search.
	reachable := st
	reachable.mirror.Milestones = slices.Clone(st.mirror.Milestones)
	for k := range reachable.mirror.Milestones {
		m := &reachable.mirror.Milestones[k]
		for _, fc := range run.forecast.Milestones {
			if fc.ID == m.ID && !fc.P50.IsZero() {
				due := fc.P50
				m.DueOn = &due
			}
		}
	}
	near, err := f.forecast(reachable, plan, benchNow, false)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("seeded", func(b *testing.B) { benchRescue(b, f, st, run) })
	b.Run("due-at-p50", func(b *testing.B) { benchRescue(b, f, reachable, near) })
}

func benchRescue(b *testing.B, f *Forecaster, st projectState, run planned) {
	ctx := context.Background()
	milestones, options, forecasts := 0, 0, 0
	var wall time.Duration
	cpu0 := processCPU()
	for b.Loop() {
		start := time.Now()
		res, err := f.rescue(ctx, st, run, benchNow)
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		milestones += len(res)
		for _, r := range res {
			options += len(r.Options)
			forecasts += r.Forecasts
		}
	}
	cpu := processCPU() - cpu0
	if milestones == 0 {
		b.Fatal("no milestone at risk")
	}
	last, err := f.rescue(ctx, st, run, benchNow)
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range last {
		b.Logf("%s (%d forecasts): %s", r.Title, r.Forecasts, r.Note)
		for _, o := range r.Options {
			b.Logf("  %s: %s; %s (p80 %s, %.2f)", o.Kind, o.Summary, o.CostText, o.After.P80, o.After.PDue)
		}
	}
	b.ReportMetric(float64(wall.Milliseconds())/float64(milestones), "ms/milestone")
	b.ReportMetric(float64(cpu)/1e6/float64(milestones), "cpu-ms/milestone")
	b.ReportMetric(float64(forecasts)/float64(milestones), "forecasts/milestone")
	b.ReportMetric(float64(milestones)/float64(b.N), "at-risk")
	b.ReportMetric(float64(options)/float64(b.N), "options")
}
