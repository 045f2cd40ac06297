package worker

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker/flow"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
)

func latestData(t *testing.T, pool *store.Pool, projectID int64) SnapshotData {
	t.Helper()
	snap, err := store.LatestSnapshot(context.Background(), pool, projectID)
	if err != nil {
		t.Fatal(err)
	}
	var data SnapshotData
	if err := json.Unmarshal(snap.Data, &data); err != nil {
		t.Fatal(err)
	}
	return data
}

// TestRecordedHistoryToFlowFigures takes the recorded Forgejo scenario both
// ways, live through its webhooks (a recompute after each delivery, at the
// time Forgejo sent it, as the worker would) and through a backfill of its
// timelines, to the flow figures the snapshot stores. In the scenario (all
// on 29 November 2026 around 21:22 UTC, which is 30 November in Tokyo)
// issue #1 is assigned and unassigned, closed, reopened, goes into review
// with a pull request and is done when it merges; #2 and #3 stay open and
// never start.
func TestRecordedHistoryToFlowFigures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 3, 1, 0, 0, 0, time.UTC) // Thursday in Tokyo
	forecaster := func(pool *store.Pool, clock *time.Time) *Forecaster {
		return &Forecaster{Pool: pool, Log: quietLog(), Trials: 200, Flow: flow.Options{Location: tokyo},
			Now: func() time.Time { return *clock }}
	}

	// Live: every delivery through ingest, each followed by a recompute.
	poolA, in, pA := newIngestFixture(t)
	in.Start()
	defer in.Close()
	deliveries, err := giteafake.Deliveries()
	if err != nil {
		t.Fatal(err)
	}
	var clock time.Time
	live := forecaster(poolA, &clock)
	for _, d := range deliveries {
		ch, err := gitea.DecodeDelivery(d.Event, d.RawBody)
		if err != nil {
			t.Fatalf("decode %s: %v", d.Name, err)
		}
		if err := in.Submit(ctx, Incoming{DeliveryID: d.Headers["X-Gitea-Delivery"], Payload: d.RawBody, Change: ch}); err != nil {
			t.Fatalf("ingest %s: %v", d.Name, err)
		}
		if ch.Issue == nil {
			continue
		}
		clock = ch.Issue.UpdatedAt
		if err := live.Recompute(ctx, pA.ID); err != nil {
			t.Fatal(err)
		}
	}
	clock = now
	if err := live.Recompute(ctx, pA.ID); err != nil {
		t.Fatal(err)
	}

	// Backfill: the timelines replayed.
	sf := newSyncFixture(t)
	sf.syncer.Replayer = LifecycleReplayer{}
	if err := sf.syncer.Backfill(ctx, sf.p); err != nil {
		t.Fatal(err)
	}
	if err := forecaster(sf.pool, &now).Recompute(ctx, sf.p.ID); err != nil {
		t.Fatal(err)
	}

	started := time.Date(2026, 11, 29, 21, 22, 3, 0, time.UTC)
	merged := time.Date(2026, 11, 29, 21, 23, 13, 0, time.UTC)
	for _, c := range []struct {
		name    string
		pool    *store.Pool
		project int64
	}{{"webhooks", poolA, pA.ID}, {"backfill", sf.pool, sf.p.ID}} {
		data := latestData(t, c.pool, c.project)
		f := data.Flow
		if f == nil {
			t.Fatalf("%s: snapshot has no flow figures", c.name)
		}
		if f.TimeZone != "Asia/Tokyo" || f.From != "2026-11-30" || f.To != "2026-12-03" || f.WindowDays != 90 {
			t.Errorf("%s: window %s %s..%s (%d days)", c.name, f.TimeZone, f.From, f.To, f.WindowDays)
		}
		// #1: first started when assigned, done when the pull request
		// merged, one calendar day; the reopening does not restart it.
		want := scheduler.CycleItem{Number: 1, Started: started, Done: merged, DoneDay: "2026-11-30", Days: 1}
		if len(f.CycleTime.Items) != 1 || !f.CycleTime.Items[0].Started.Equal(want.Started) || !f.CycleTime.Items[0].Done.Equal(want.Done) ||
			f.CycleTime.Items[0].Days != 1 || f.CycleTime.Items[0].DoneDay != want.DoneDay || f.CycleTime.Items[0].Number != 1 {
			t.Errorf("%s: cycle times %+v, want [%+v]", c.name, f.CycleTime.Items, want)
		}
		if f.CycleTime.N != 1 || f.CycleTime.Percentiles != (scheduler.Percentiles{P50: 1, P70: 1, P85: 1, P95: 1}) || f.CycleTime.Unstarted != 0 {
			t.Errorf("%s: cycle time %+v", c.name, f.CycleTime)
		}
		// One finished issue is no service level expectation.
		if f.SLE != (scheduler.SLE{Percentile: 85, Days: 0, N: 1}) || len(f.Age) != 0 {
			t.Errorf("%s: SLE %+v, age %+v", c.name, f.SLE, f.Age)
		}
		if len(f.Throughput.Weeks) != 1 || f.Throughput.Weeks[0] != (scheduler.WeekCount{Start: "2026-11-30", Count: 1, Days: 4}) {
			t.Errorf("%s: throughput %+v", c.name, f.Throughput.Weeks)
		}
		if len(f.WIP) != 4 || len(f.CFD) != 4 {
			t.Fatalf("%s: %d WIP days, %d CFD days", c.name, len(f.WIP), len(f.CFD))
		}
		for _, w := range f.WIP {
			if w.Count != 0 {
				t.Errorf("%s: WIP %+v, want none (everything in progress finished the same day)", c.name, w)
			}
		}
		for _, day := range f.CFD {
			if day.Done != 1 || day.Diagnosis+day.Triage != 2 || day.Steeping+day.InReview != 0 {
				t.Errorf("%s: CFD %+v, want #1 done and #2, #3 waiting", c.name, day)
			}
		}
		// Two open issues, neither can be done before its turn; the curve
		// is read on every day of the 90-day horizon.
		if f.DoneBy.Open != 2 || f.DoneBy.From != "2026-12-03" || len(f.DoneBy.AtLeast80) != flow.MinHorizonDays || f.DoneBy.TimeZone != "Asia/Tokyo" {
			t.Errorf("%s: done by %+v", c.name, f.DoneBy)
		}
		if last := f.DoneBy.AtLeast50[len(f.DoneBy.AtLeast50)-1]; last != 2 {
			t.Errorf("%s: %d done by the horizon's end at 50%%, want both", c.name, last)
		}
		// Only a partial week of throughput: no baseline to resample.
		if f.Baseline != nil {
			t.Errorf("%s: baseline %+v from no complete week", c.name, f.Baseline)
		}
	}
}

// TestRecomputeStoresFlowAndAging: on a generated project with a year of
// history, the snapshot carries the flow figures, every open issue older
// than the SLE is flagged aging in the statuses and nothing else is, and
// the throughput-only answer sits beside the schedule's.
func TestRecomputeStoresFlowAndAging(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	shape := storetest.ProjectShape{Open: 80, Done: 300, People: 5, DepShare: 0.2, Milestones: 2, Seed: 7}
	pool, p, f := seededProject(t, "flow", shape, 300)
	if err := f.Recompute(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	data := latestData(t, pool, p.ID)
	fl := data.Flow
	if fl == nil {
		t.Fatal("no flow figures")
	}
	if fl.CycleTime.N < scheduler.MinSLESamples || fl.SLE.Days == 0 || fl.SLE.Days != fl.CycleTime.Percentiles.P85 {
		t.Fatalf("cycle time %+v, SLE %+v", fl.CycleTime.Percentiles, fl.SLE)
	}
	aging := map[int64]bool{}
	for _, a := range fl.Age {
		if a.Aging {
			aging[a.Number] = true
			if a.Days <= fl.SLE.Days {
				t.Errorf("#%d aging at %d days, SLE %d", a.Number, a.Days, fl.SLE.Days)
			}
		}
	}
	if len(aging) == 0 || len(aging) == len(fl.Age) {
		t.Fatalf("%d of %d started issues aging: the generated project should have some of each", len(aging), len(fl.Age))
	}
	for _, s := range data.Statuses {
		if s.Aging != aging[s.Number] {
			t.Errorf("#%d: status aging %v, flow %v", s.Number, s.Aging, aging[s.Number])
		}
		if s.Aging && len(s.Why.Aging) != 2 {
			t.Errorf("#%d: aging provenance %q", s.Number, s.Why.Aging)
		}
	}
	if fl.Baseline == nil || fl.Baseline.Open != fl.DoneBy.Open || len(fl.Baseline.AtLeast80) != len(fl.DoneBy.AtLeast80) {
		t.Fatalf("baseline %+v beside %+v", fl.Baseline, fl.DoneBy)
	}
	// Its horizon reaches four weeks past the last due date.
	var due time.Time
	for _, m := range data.Forecast.Milestones {
		if m.Due.After(due) {
			due = m.Due
		}
	}
	last, err := time.Parse(time.DateOnly, fl.DoneBy.Last())
	if err != nil {
		t.Fatal(err)
	}
	if dueDay := due.Truncate(24*time.Hour).AddDate(0, 0, 28); !due.IsZero() && last.Before(dueDay) && len(fl.DoneBy.AtLeast80) < flow.MaxHorizonDays {
		t.Errorf("horizon ends %s, last due %s", fl.DoneBy.Last(), due)
	}
	// The forecast is the one Run gives: counting changes nothing.
	fc, err := scheduler.Run(recomputeInput(t, f, pool, p.ID), f.forecastOptions(p.ID))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(fc)
	b, _ := json.Marshal(data.Forecast)
	if string(a) != string(b) {
		t.Error("the snapshot's forecast differs from Run's")
	}
}

// recomputeInput rebuilds the forecast input a recompute of the project
// uses now.
func recomputeInput(t *testing.T, f *Forecaster, pool *store.Pool, projectID int64) scheduler.Input {
	t.Helper()
	st, err := loadProjectState(context.Background(), pool, projectID, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan, _, err := st.quotedPlan(f.now().UTC())
	if err != nil {
		t.Fatal(err)
	}
	return f.model(st, plan, f.now().UTC()).input
}
