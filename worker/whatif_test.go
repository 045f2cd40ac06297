package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
)

// TestWhatIfPredictsTheNextSnapshot: the consequence a write tool quotes
// (a what-if on the recompute's own input and options) is exactly what the
// snapshot after the change holds, because a project's random streams do
// not move with its inputs.
func TestWhatIfPredictsTheNextSnapshot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "ceo", "whatif")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	due1, due2 := now.AddDate(0, 1, 0), now.AddDate(0, 2, 0)
	ms := []store.Milestone{
		{ID: 1, Title: "v1", State: "open", DueOn: &due1, Description: "deadline: hard"},
		{ID: 2, Title: "v2", State: "open", DueOn: &due2},
	}
	sizes := []string{"est/s", "est/m", "est/l"}
	people := []string{"ann", "bob", "cat"}
	var issues []store.IssueWrite
	for n := int64(1); n <= 30; n++ {
		m := 1 + n%2
		issues = append(issues, store.IssueWrite{Issue: store.Issue{
			Number: n, Title: fmt.Sprint("work ", n), State: "open", Milestone: &m,
			Labels: []string{sizes[n%3], "p/2"}, Assignees: []string{people[n%3]},
			CreatedAt: now.AddDate(0, 0, -10), UpdatedAt: now.AddDate(0, 0, -10), LastActivityAt: now,
		}})
	}
	err = store.InTx(ctx, pool, func(tx store.Tx) error {
		if err := store.ReplaceMilestones(ctx, tx, p.ID, ms); err != nil {
			return err
		}
		if err := store.UpsertIssues(ctx, tx, p.ID, issues); err != nil {
			return err
		}
		return store.ReplaceDependencies(ctx, tx, p.ID, 9, []store.Dependency{{Issue: 9, DependsOn: 5}})
	})
	if err != nil {
		t.Fatal(err)
	}
	f := &Forecaster{Pool: pool, Log: quietLog(), Trials: 1000, Now: func() time.Time { return now }}
	if err := f.Recompute(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	in, err := f.WhatIfInput(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	res, err := scheduler.WhatIf(in, []scheduler.Change{{Kind: scheduler.ChangeKind("set_estimate"), Issue: 5, Estimate: scheduler.SizeXL}}, f.WhatIfOptions(p.ID))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed || len(res.Milestones) == 0 {
		t.Fatalf("what-if of a bigger estimate changed nothing: %+v", res)
	}

	// The change lands in Gitea and comes back through the mirror.
	five := issues[4].Issue
	five.Labels = []string{"est/xl", "p/2"}
	five.UpdatedAt = now
	if err := store.UpsertIssues(ctx, pool, p.ID, []store.IssueWrite{{Issue: five}}); err != nil {
		t.Fatal(err)
	}
	if err := f.Recompute(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	snap, err := store.LatestSnapshot(ctx, pool, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	var data SnapshotData
	if err := json.Unmarshal(snap.Data, &data); err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Milestones {
		for _, m := range data.Forecast.Milestones {
			if m.ID == d.ID && (!m.P50.Equal(d.After.P50) || !m.P80.Equal(d.After.P80)) {
				t.Errorf("milestone %s: what-if said p50 %v p80 %v, next snapshot has p50 %v p80 %v",
					m.Title, d.After.P50, d.After.P80, m.P50, m.P80)
			}
		}
	}
}

// TestRecomputeIsAFixedPoint: recomputing an unchanged mirror gives the
// same forecast, even the first time, when the recompute itself records the
// issues' first transitions.
func TestRecomputeIsAFixedPoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	shape := storetest.ProjectShape{Open: 80, Done: 100, People: 5, DepShare: 0.3, Milestones: 2, Seed: 11}
	pool, p, f := seededProject(t, "fixed", shape, 500)
	forecast := func() string {
		t.Helper()
		if err := f.Recompute(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		snap, err := store.LatestSnapshot(ctx, pool, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		var data SnapshotData
		if err := json.Unmarshal(snap.Data, &data); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(data.Forecast)
		return snap.InputsHash + string(b)
	}
	if first, second := forecast(), forecast(); first != second {
		t.Error("the second recompute of an unchanged mirror changed the forecast")
	}
}
