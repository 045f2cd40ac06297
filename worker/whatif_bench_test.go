package worker

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store/storetest"
)

// BenchmarkWhatIfProposal measures what capture_work adds to the model's
// time: the what-if of filing five proposed issues on a generated project
// of 5,000 open issues (plus 1,000 done), 20 people and 3 milestones, at
// the default 2,000 trials: mirror load, lifecycle, calibration, and two
// forecasts (baseline and changed).
func BenchmarkWhatIfProposal(b *testing.B) {
	ctx := context.Background()
	shape := storetest.ProjectShape{Open: 5000, Done: 1000, People: 20, DepShare: 0.3, Milestones: 3, Seed: 1}
	_, p, f := seededProject(b, "whatif", shape, 2000)
	if err := f.Recompute(ctx, p.ID); err != nil {
		b.Fatal(err)
	}
	var changes []scheduler.Change
	for k := range 5 {
		ni := &scheduler.Issue{Number: -int64(k + 1), Title: "proposed", State: scheduler.Triage, Estimate: scheduler.SizeM, Priority: 2, Milestone: 1, Labels: []string{"est/m"}}
		if k > 0 {
			ni.DependsOn = []int64{-int64(k)}
		}
		changes = append(changes, scheduler.Change{Kind: scheduler.AddIssue, NewIssue: ni})
	}
	b.ResetTimer()
	for b.Loop() {
		res, err := f.WhatIf(ctx, p.ID, func(scheduler.Input) []scheduler.Change { return changes })
		if err != nil {
			b.Fatal(err)
		}
		if !res.Changed {
			b.Fatal("five more issues changed nothing")
		}
	}
}

// BenchmarkWhatIfInput is the part of BenchmarkWhatIfProposal before the
// forecasts: mirror load, lifecycle rules and calibration.
func BenchmarkWhatIfInput(b *testing.B) {
	ctx := context.Background()
	shape := storetest.ProjectShape{Open: 5000, Done: 1000, People: 20, DepShare: 0.3, Milestones: 3, Seed: 1}
	_, p, f := seededProject(b, "whatif", shape, 2000)
	b.ResetTimer()
	for b.Loop() {
		st, err := loadProjectState(ctx, f.Pool, p.ID, nil)
		if err != nil {
			b.Fatal(err)
		}
		f.model(st, freshPlan(benchNow), benchNow)
	}
}

// BenchmarkWhatIfVsRun is the issue's what-if benchmark: on the 2,000-issue
// benchmark project (plus 1,000 done) at 10,000 trials, right after a
// recompute (so the snapshot covers the mirror and the what-if's baseline
// is read from it), a what-if of one re-estimate, end to end (mirror load,
// lifecycle, calibration, the changed forecast, the baseline), against a
// plain scheduler.Run of the same engine input. Each iteration times one of
// each back to back; the medians and their ratio are reported (target:
// whatif/run at most 1.2).
func BenchmarkWhatIfVsRun(b *testing.B) {
	ctx := context.Background()
	shape := storetest.ProjectShape{Open: 2000, Done: 1000, People: 20, DepShare: 0.3, Milestones: 3, Seed: 1}
	_, p, f := seededProject(b, "whatifvsrun", shape, 10000)
	if err := f.Recompute(ctx, p.ID); err != nil {
		b.Fatal(err)
	}
	st, err := loadProjectState(ctx, f.Pool, p.ID, nil)
	if err != nil {
		b.Fatal(err)
	}
	plan, _, err := st.quotedPlan(benchNow)
	if err != nil {
		b.Fatal(err)
	}
	in := f.model(st, plan, benchNow).input
	var change scheduler.Change
	for _, is := range in.Issues {
		if is.State != scheduler.Done && is.Estimate != "" && is.Estimate != scheduler.SizeXL {
			change = scheduler.Change{Kind: scheduler.SetEstimate, Issue: is.Number, Estimate: scheduler.SizeXL}
			break
		}
	}
	if change.Issue == 0 {
		b.Fatal("no open issue to re-estimate")
	}
	opts := f.forecastOptions(p.ID)
	var runs, whatifs []time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if _, err := scheduler.Run(in, opts); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		q, err := f.WhatIf(ctx, p.ID, func(scheduler.Input) []scheduler.Change { return []scheduler.Change{change} })
		if err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if !q.Changed {
			b.Fatal("an XL estimate changed nothing")
		}
		runs, whatifs = append(runs, t1.Sub(t0)), append(whatifs, t2.Sub(t1))
	}
	median := func(ds []time.Duration) time.Duration {
		ds = slices.Clone(ds)
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	r, w := median(runs), median(whatifs)
	b.ReportMetric(float64(r.Microseconds())/1000, "run-ms")
	b.ReportMetric(float64(w.Microseconds())/1000, "whatif-ms")
	b.ReportMetric(float64(w)/float64(r), "whatif/run")
}
