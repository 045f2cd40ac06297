package worker

import (
	"context"
	"testing"

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
