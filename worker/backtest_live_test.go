package worker

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
)

// generatedPeople is the generated team as CommiTea would be configured
// for it: each person on their own calendar.
func generatedPeople(t *testing.T, team []giteafake.Person, now time.Time) []scheduler.Person {
	t.Helper()
	var out []scheduler.Person
	for _, p := range team {
		loc, err := time.LoadLocation(p.TimeZone)
		if err != nil {
			t.Fatal(err)
		}
		c := scheduler.Calendar{HoursPerDay: p.HoursPerDay, Location: loc}
		for _, d := range p.WorkingDays {
			c.WorkingDays[d] = true
		}
		for _, r := range p.TimeOff {
			day := func(n int) time.Time {
				d := now.AddDate(0, 0, n).In(loc)
				return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
			}
			c.TimeOff = append(c.TimeOff, scheduler.DateRange{From: day(r.From), To: day(r.To)})
		}
		out = append(out, scheduler.Person{Login: p.Login, Calendar: c})
	}
	return out
}

// liveBacktest backfills a generated project and runs its backtest with
// the live model, returning what the backtest stored.
func liveBacktest(t *testing.T, gen giteafake.Project) BacktestRecord {
	t.Helper()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	fake, err := giteafake.New(giteafake.Options{Generate: &gen})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	client, err := gitea.New(fake.URL, fake.Token(), gitea.Options{BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p, err := store.EnsureProject(ctx, pool, "acme", "teapot")
	if err != nil {
		t.Fatal(err)
	}
	now := gen.Now
	clock := func() time.Time { return now }
	s := &Syncer{Pool: pool, Gitea: client, Log: quietLog(), Replayer: LifecycleReplayer{}, Now: clock}
	if err := s.Backfill(ctx, p); err != nil {
		t.Fatal(err)
	}
	team := gen.Team
	if len(team) == 0 {
		team = giteafake.DemoTeam()
	}
	def := scheduler.Calendar{HoursPerDay: 6, Location: time.UTC}
	for d := time.Monday; d <= time.Friday; d++ {
		def.WorkingDays[d] = true
	}
	f := &Forecaster{Pool: pool, Log: quietLog(), Trials: 400, People: generatedPeople(t, team, now), DefaultCalendar: def, Now: clock}
	if err := f.Recompute(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	w := &BacktestWorker{Pool: pool, Log: quietLog(), Trials: 400, People: f.People, DefaultCalendar: def, Now: clock, Forecaster: f}
	if err := w.Work(ctx, &river.Job[BacktestArgs]{Args: BacktestArgs{ProjectID: p.ID}}); err != nil {
		t.Fatal(err)
	}
	b, err := store.LatestBacktest(ctx, pool, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	var rec BacktestRecord
	if err := json.Unmarshal(b.Result, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Live == nil {
		t.Fatal("the backtest stored no replay of the live model")
	}
	// The replay's cut-offs are the milestones' history before CommiTea
	// watched: each track-record forecast is one of its points.
	for _, r := range rec.Live.Record {
		h, err := store.MilestoneHistory(ctx, pool, p.ID, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, pt := range h {
			if pt.Source == store.HistoryReplay && pt.At.Equal(r.ForecastAt) && pt.P50.Equal(r.P50) && pt.P80.Equal(r.P80) {
				found = true
			}
		}
		if !found {
			t.Fatalf("%s: no replayed point in its history for the forecast of %s (p50 %s, p80 %s)", r.Title, r.ForecastAt, r.P50, r.P80)
		}
	}
	return rec
}

func logLive(t *testing.T, rec BacktestRecord) {
	t.Helper()
	l := rec.Live
	for _, s := range []struct {
		name string
		r    scheduler.BacktestResult
	}{{"items", l.Items}, {"milestones", l.Milestones}, {"people-less", rec.BacktestResult}} {
		t.Logf("%-11s cutoffs %3d items %5d | p50 %.3f p80 %.3f p90 %.3f width %.2f pinball %.2f | baseline p50 %.3f p80 %.3f p90 %.3f pinball %.2f",
			s.name, s.r.Cutoffs, s.r.Items, s.r.P50Coverage, s.r.P80Coverage, s.r.P90Coverage, s.r.MedianRelWidth, s.r.PinballLoss,
			s.r.Baseline.P50Coverage, s.r.Baseline.P80Coverage, s.r.Baseline.P90Coverage, s.r.Baseline.PinballLoss)
	}
	t.Logf("track record: p80 came true on %d of the last %d milestones (p90 on %d)", l.P80Kept, len(l.Record), l.P90Kept)
	for _, r := range l.Record {
		t.Logf("  %s: forecast %s with %d open, p50 %s p80 %s p90 %s, completed %s", r.Title, r.ForecastAt.Format(time.DateOnly), r.Open,
			r.P50.Format(time.DateOnly), r.P80.Format(time.DateOnly), r.P90.Format(time.DateOnly), r.Completed.Format(time.DateOnly))
	}
}

// TestLiveBacktestGeneratedProject: on a generated project whose team
// works the way the forecast plans (giteafake.Project.Planned) and whose
// effort is known (nominal × the person's speed × lognormal with σ 0.35),
// the replay of the live model in the backtest job gives honest ranges,
// beats the throughput baseline, and keeps a track record of the past
// releases; the snapshot after it carries the replay.
func TestLiveBacktestGeneratedProject(t *testing.T) {
	t.Parallel()
	rec := liveBacktest(t, giteafake.Project{Seed: 1, Now: time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC), Planned: true})
	logLive(t, rec)
	l := rec.Live
	if l.Items.Cutoffs < 10 || l.Items.Items < 200 {
		t.Fatalf("replay scored %d issue forecasts on %d cut-offs; want a year's worth", l.Items.Items, l.Items.Cutoffs)
	}
	if c := l.Items.P80Coverage; c < 0.72 || c > 0.88 {
		t.Errorf("issue p80 coverage %.3f, want near 0.80", c)
	}
	if c := l.Items.P50Coverage; c < 0.40 || c > 0.62 {
		t.Errorf("issue p50 coverage %.3f, want near 0.50", c)
	}
	if l.Items.PinballLoss >= l.Items.Baseline.PinballLoss {
		t.Errorf("issue pinball loss %.2f, baseline's %.2f: want the live forecast better", l.Items.PinballLoss, l.Items.Baseline.PinballLoss)
	}
	if len(l.Record) < 5 || l.P80Kept*10 < len(l.Record)*6 {
		t.Errorf("track record: p80 came true on %d of %d past releases; want at least 5 judged, most kept", l.P80Kept, len(l.Record))
	}
	if l.Milestones.PinballLoss >= l.Milestones.Baseline.PinballLoss {
		t.Errorf("milestone pinball loss %.2f, baseline's %.2f", l.Milestones.PinballLoss, l.Milestones.Baseline.PinballLoss)
	}
}

// TestReplayAtNowIsTheRecompute: the project read back from its history as
// of now forecasts exactly what the recompute does, through the same path:
// what the replay sees at a cut-off is what a recompute then would have.
func TestReplayAtNowIsTheRecompute(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)
	pool, p := backfillGenerated(t, giteafake.Project{Seed: 2, Now: now, HistoryDays: 150})
	clock := func() time.Time { return now }
	f := &Forecaster{Pool: pool, Log: quietLog(), Trials: 300, People: generatedPeople(t, giteafake.DemoTeam(), now), Now: clock}
	var versions []store.IssueVersion
	st, err := loadProjectState(ctx, pool, p.ID, func(tx store.Tx) error {
		var err error
		versions, err = store.IssueHistory(ctx, tx, p.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	plan := freshPlan(scheduler.AsOf(now))
	live, err := f.forecast(st, plan, now, false)
	if err != nil {
		t.Fatal(err)
	}
	replayed, err := f.forecast(atCutoff(st, versions, now), plan, now, false)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(live.forecast)
	b, _ := json.Marshal(replayed.forecast)
	if string(a) != string(b) {
		for k := range live.forecast.Issues {
			if k < len(replayed.forecast.Issues) && live.forecast.Issues[k] != replayed.forecast.Issues[k] {
				t.Errorf("issue forecast differs:\nlive     %+v\nreplayed %+v", live.forecast.Issues[k], replayed.forecast.Issues[k])
				break
			}
		}
		t.Fatalf("the replay at now forecasts differently from the recompute (%d and %d issues)", len(live.forecast.Issues), len(replayed.forecast.Issues))
	}
	if len(live.forecast.Issues) == 0 {
		t.Fatal("nothing forecast")
	}
}

// TestBacktestsAndLiveShareTheRules: the live forecast, its replay and the
// people-less replay fit their calibration through scheduler.Calibrate, the
// one place that applies the sample rule (PlausibleSample) and the spread
// rule (SpreadSigma, SharedSpread); only the effort they measure differs
// (tracked time or a person's working hours; the queue-share stand-in).
func TestBacktestsAndLiveShareTheRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)
	pool, p := backfillGenerated(t, giteafake.Project{Seed: 3, Now: now, HistoryDays: 150, Planned: true})
	clock := func() time.Time { return now }
	f := &Forecaster{Pool: pool, Log: quietLog(), Trials: 100, People: generatedPeople(t, giteafake.DemoTeam(), now), Now: clock}
	var versions []store.IssueVersion
	st, err := loadProjectState(ctx, pool, p.ID, func(tx store.Tx) error {
		var err error
		versions, err = store.IssueHistory(ctx, tx, p.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	cut := now.AddDate(0, 0, -30)
	for _, at := range []time.Time{now, cut} {
		m := f.model(atCutoff(st, versions, at), freshPlan(scheduler.AsOf(at)), at)
		if len(m.samples) < 10 {
			t.Fatalf("%s: %d samples, want a warm calibration", at, len(m.samples))
		}
		if got, want := m.input.Calibration, scheduler.Calibrate(m.samples, f.Calibration); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the live calibration is not Calibrate of its samples:\n got %+v\nwant %+v", at, got, want)
		}
		tracked := 0
		for _, s := range m.samples {
			if s.Effort == scheduler.EffortQueueShare {
				t.Fatalf("a live sample carries the queue-share stand-in")
			}
			if s.Effort == scheduler.EffortTracked {
				tracked++
			}
		}
		if tracked == 0 || tracked == len(m.samples) {
			t.Errorf("%d of %d live samples are tracked time; the generated history tracks about a third", tracked, len(m.samples))
		}
	}
	model := buildModel(st.source(f.People, f.DefaultCalendar, 0), now, now)
	items := historyItems(st.mirror, model.statuses, append(st.transitions, model.transitions...))
	cal, samples := scheduler.BacktestCalibration(items, cut, f.Calibration)
	if len(samples) == 0 {
		t.Fatal("the people-less replay has no samples at the cut-off")
	}
	if want := scheduler.Calibrate(samples, f.Calibration); !reflect.DeepEqual(cal, want) {
		t.Errorf("the people-less calibration is not Calibrate of its samples:\n got %+v\nwant %+v", cal, want)
	}
	for _, s := range samples {
		if s.Effort != scheduler.EffortQueueShare {
			t.Fatalf("a people-less sample does not carry the stand-in")
		}
	}
}
