package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
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
	if err := storetest.MarkBackfilled(ctx, pool, p.ID, now); err != nil {
		t.Fatal(err)
	}
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
	res, err := f.WhatIf(ctx, p.ID, func(scheduler.Input) []scheduler.Change {
		return []scheduler.Change{{Kind: scheduler.SetEstimate, Issue: 5, Estimate: scheduler.SizeXL}}
	})
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

// quoteStack is a generated project with a settable clock, for checking
// quotes against the snapshots that follow them. Changes are written to the
// mirror as apply_changes' write-through does, without Gitea.
type quoteStack struct {
	t    *testing.T
	ctx  context.Context
	pool *store.Pool
	p    store.Project
	f    *Forecaster
	now  time.Time
}

func newQuoteStack(t *testing.T, now time.Time) *quoteStack {
	s := &quoteStack{t: t, ctx: context.Background(), now: now}
	_, s.pool = storetest.NewDB(t)
	var err error
	if s.p, err = store.EnsureProject(s.ctx, s.pool, "ceo", "quotes"); err != nil {
		t.Fatal(err)
	}
	shape := storetest.ProjectShape{Open: 40, Done: 30, People: 4, DepShare: 0.3, Milestones: 3, Seed: 7}
	if err := storetest.SeedProject(s.ctx, s.pool, s.p.ID, shape, now); err != nil {
		t.Fatal(err)
	}
	s.f = &Forecaster{Pool: s.pool, Log: quietLog(), Trials: 300, Now: func() time.Time { return s.now }}
	s.recompute()
	return s
}

func (s *quoteStack) recompute() {
	s.t.Helper()
	if err := s.f.Recompute(s.ctx, s.p.ID); err != nil {
		s.t.Fatal(err)
	}
}

func (s *quoteStack) snapshots() []SnapshotData {
	s.t.Helper()
	var out []SnapshotData
	for v := int64(1); ; v++ {
		raw, err := store.SnapshotPart(s.ctx, s.pool, s.p.ID, v, "forecast")
		if err != nil {
			return out
		}
		var d SnapshotData
		if err := json.Unmarshal(raw, &d.Forecast); err != nil {
			s.t.Fatal(err)
		}
		plan, _ := store.SnapshotPart(s.ctx, s.pool, s.p.ID, v, "plan")
		if err := json.Unmarshal(plan, &d.Plan); err != nil {
			s.t.Fatal(err)
		}
		out = append(out, d)
	}
}

func (s *quoteStack) quote(changes ...scheduler.Change) Quote {
	s.t.Helper()
	q, err := s.f.WhatIf(s.ctx, s.p.ID, func(scheduler.Input) []scheduler.Change { return changes })
	if err != nil {
		s.t.Fatal(err)
	}
	return q
}

func (s *quoteStack) write(q Quote, fn func(tx store.Tx) error) {
	s.t.Helper()
	err := store.InTx(s.ctx, s.pool, func(tx store.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		if err := store.BumpChangeCounters(s.ctx, tx, []int64{s.p.ID}); err != nil {
			return err
		}
		if q.PlanVersion > 0 {
			return store.HoldPlan(s.ctx, tx, s.p.ID, q.PlanVersion)
		}
		return nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
}

func (s *quoteStack) issue(n int64) store.Issue {
	s.t.Helper()
	is, err := store.GetIssue(s.ctx, s.pool, s.p.ID, n)
	if err != nil {
		s.t.Fatal(err)
	}
	return is
}

func (s *quoteStack) upsert(is store.Issue) func(tx store.Tx) error {
	return func(tx store.Tx) error {
		return store.UpsertIssues(s.ctx, tx, s.p.ID, []store.IssueWrite{{Issue: is}})
	}
}

// check recomputes and compares the first snapshot after the quote with it.
func (s *quoteStack) check(what string, q Quote, filed map[int64]int64) []SnapshotData {
	s.t.Helper()
	before := s.snapshots()
	s.recompute()
	all := s.snapshots()
	fresh := all[len(before):]
	s.t.Logf("%s: %s", what, q.Consequence)
	if miss := scheduler.ForecastMismatches(q.After, fresh[0].Forecast, filed); len(miss) > 0 {
		s.t.Errorf("%s: the quote %q did not come true:\n%s", what, q.Consequence, strings.Join(miss, "\n"))
	}
	return fresh
}

// TestQuotesComeTrue: for each kind of change, what the what-if quotes is
// what the first snapshot after the change shows, including a close that
// makes a calibration sample, a proposed issue that Gitea numbers other
// than expected, a capacity directive, and a change whose recompute comes
// after the hour it was quoted in.
func TestQuotesComeTrue(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 1, 10, 20, 0, 0, time.UTC)
	s := newQuoteStack(t, start)
	// A day later, the assigned issues have hours in them.
	s.now = start.Add(24 * time.Hour)
	s.recompute()

	var fc scheduler.Forecast
	if snaps := s.snapshots(); len(snaps) > 0 {
		fc = snaps[len(snaps)-1].Forecast
	}
	var assigned, unassigned []int64
	for _, is := range fc.Issues {
		if is.Unschedulable != "" {
			continue
		}
		if is.Unassigned {
			unassigned = append(unassigned, is.Number)
		} else {
			assigned = append(assigned, is.Number)
		}
	}
	if len(assigned) < 3 || len(unassigned) < 3 {
		t.Fatalf("generated project: %d assigned, %d unassigned", len(assigned), len(unassigned))
	}

	// An estimate on unassigned work.
	n := unassigned[1]
	q := s.quote(scheduler.Change{Kind: scheduler.SetEstimate, Issue: n, Estimate: scheduler.SizeXL})
	is := s.issue(n)
	is.Labels = append(slices.DeleteFunc(is.Labels, func(l string) bool { return strings.HasPrefix(l, "est/") }), "est/xl")
	s.now = s.now.Add(10 * time.Minute)
	s.write(q, s.upsert(is))
	s.check("set_estimate", q, nil)

	// Closing work in progress makes a calibration sample.
	n = assigned[0]
	q = s.quote(scheduler.Change{Kind: scheduler.CloseIssue, Issue: n})
	s.now = s.now.Add(5 * time.Minute)
	is = s.issue(n)
	closed := s.now
	is.State, is.ClosedAt = "closed", &closed
	s.write(q, s.upsert(is))
	s.check("close", q, nil)

	// Two proposed issues, the second depending on the first; Gitea gives
	// them numbers past a gap.
	key := func(title string) int64 { return scheduler.ProposalDrawKey(title, "", 0) }
	q = s.quote(
		scheduler.Change{Kind: scheduler.AddIssue, NewIssue: &scheduler.Issue{Number: -1, Title: "Spike", Estimate: scheduler.SizeL, Milestone: 1, Labels: []string{"est/l", "p/1"}, DrawKey: key("Spike")}},
		scheduler.Change{Kind: scheduler.AddIssue, NewIssue: &scheduler.Issue{Number: -2, Title: "Follow-up", Estimate: scheduler.SizeS, Milestone: 2, Labels: []string{"est/s"}, DependsOn: []int64{-1, assigned[1]}, DrawKey: key("Follow-up")}},
	)
	if len(q.Proposed) != 2 {
		t.Fatalf("proposed = %v", q.Proposed)
	}
	top := q.Proposed[0] - 1
	a, b := top+3, top+4
	one := int64(1)
	two := int64(2)
	s.write(q, func(tx store.Tx) error {
		err := store.UpsertIssues(s.ctx, tx, s.p.ID, []store.IssueWrite{
			{Issue: store.Issue{Number: a, Title: "Spike", State: "open", Labels: []string{"est/l", "p/1"}, Milestone: &one, CreatedAt: s.now, UpdatedAt: s.now, LastActivityAt: s.now}},
			{Issue: store.Issue{Number: b, Title: "Follow-up", State: "open", Labels: []string{"est/s"}, Milestone: &two, CreatedAt: s.now, UpdatedAt: s.now, LastActivityAt: s.now}},
		})
		if err != nil {
			return err
		}
		for n, k := range map[int64]int64{a: key("Spike"), b: key("Follow-up")} {
			if err := store.PutDrawKey(s.ctx, tx, s.p.ID, n, k); err != nil {
				return err
			}
		}
		return store.ReplaceDependencies(s.ctx, tx, s.p.ID, b, []store.Dependency{{Issue: b, DependsOn: a}, {Issue: b, DependsOn: assigned[1]}})
	})
	s.check("add_issue", q, map[int64]int64{q.Proposed[0]: a, q.Proposed[1]: b})

	// Time off for someone, as a capacity directive records it.
	off := scheduler.DateRange{From: time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 12, 18, 0, 0, 0, 0, time.UTC)}
	q = s.quote(scheduler.Change{Kind: scheduler.SetCapacity, Person: "dev01", HoursPerDay: 3, TimeOff: []scheduler.DateRange{off}})
	hours := 3.0
	s.write(q, func(tx store.Tx) error {
		return store.PutCapacity(s.ctx, tx, s.p.ID, store.Capacity{Login: "dev01", HoursPerDay: &hours, TimeOff: []store.DateSpan{{From: "2026-12-07", To: "2026-12-18"}}})
	})
	s.check("set_capacity", q, nil)

	// Quoted at 10:59, recomputed at 11:02: the first snapshot after the
	// change is the quote's hour; the next one moves on to 11:00.
	s.now = time.Date(2026, 12, 2, 10, 59, 0, 0, time.UTC)
	n = unassigned[2]
	q = s.quote(scheduler.Change{Kind: scheduler.SetPriority, Issue: n, Priority: 0})
	is = s.issue(n)
	is.Labels = append(slices.DeleteFunc(is.Labels, func(l string) bool { return strings.HasPrefix(l, "p/") }), "p/0")
	s.write(q, s.upsert(is))
	s.now = time.Date(2026, 12, 2, 11, 2, 0, 0, time.UTC)
	fresh := s.check("across the hour", q, nil)
	if len(fresh) != 2 || !fresh[0].Forecast.Now.Equal(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)) ||
		!fresh[1].Forecast.Now.Equal(time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)) {
		t.Fatalf("across the hour: %d snapshots", len(fresh))
	}
	if fresh[1].Plan.AsOf != fresh[1].Forecast.Now || len(fresh[1].Plan.Planned) == 0 {
		t.Errorf("the new hour's plan: %+v", fresh[1].Plan)
	}
	// Nothing held any more: the next recompute makes one snapshot.
	s.recompute()
	if all := s.snapshots(); !all[len(all)-1].Forecast.Now.Equal(fresh[1].Forecast.Now) {
		t.Error("a recompute without changes moved the hour back")
	}
}
