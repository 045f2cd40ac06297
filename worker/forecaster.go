package worker

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/flow"
	"github.com/commitea/commitea/worker/metrics"
)

// Forecaster is the Recomputer: it loads a project's mirror, runs the
// lifecycle rules, the calibration and the Monte Carlo schedule, records
// lifecycle transitions, and stores a versioned snapshot that read tools
// serve. An error leaves the previous snapshot in place, and River retries.
type Forecaster struct {
	Pool             *store.Pool
	Log              *slog.Logger
	Trials           int
	StaleWorkingDays int
	DefaultCalendar  scheduler.Calendar
	People           []scheduler.Person
	Calibration      scheduler.CalibrationOptions
	// Flow tunes the flow figures; a nil Location means the default
	// calendar's time zone.
	Flow flow.Options
	// Jobs, when set, enqueues a backtest of the project's history whenever
	// its finished work changed since the last one.
	Jobs JobInserter
	// Now is the clock; tests set it.
	Now func() time.Time
}

// SnapshotData is what a snapshot holds; read tools serve it.
type SnapshotData struct {
	ComputedAt  time.Time               `json:"computedAt"`
	Counts      Counts                  `json:"counts"`
	Statuses    []scheduler.IssueStatus `json:"statuses"`
	Calibration scheduler.Calibration   `json:"calibration"`
	Forecast    scheduler.Forecast      `json:"forecast"`
	// Focus is the scheduler's focus list for the team (key "") and for
	// each person with open work; Runway its milestones-and-capacity view.
	// Snapshots older than these fields lack them.
	Focus  map[string]scheduler.FocusResult `json:"focus,omitempty"`
	Runway *scheduler.RunwayResult          `json:"runway,omitempty"`
	// Backtest is the latest backtest of the project's own history, absent
	// until one ran.
	Backtest *BacktestSummary `json:"backtest,omitempty"`
	// Flow is the flow metrics and "how many by when"; snapshots older than
	// this field lack it.
	Flow *flow.Figures `json:"flow,omitempty"`
	// Plan is the plan the forecast was computed on: its hour (the
	// forecast's Now) and who picks up unassigned work in that hour.
	// Snapshots older than plans lack it.
	Plan Plan `json:"plan"`
	// Rescue is the rescue options of every milestone at risk, each
	// re-scored as the snapshot after its changes will read it (see
	// Forecaster.rescue). They are computed after the snapshot is
	// published and stored beside its data (store.Snapshot.Rescue);
	// SetRescue fills them in, and RescuePending says they are still
	// being computed.
	Rescue        []scheduler.MilestoneRescue `json:"-"`
	RescuePending bool                        `json:"-"`
}

// SetRescue fills in a snapshot's rescue options from their stored form:
// nil means still being computed.
func (d *SnapshotData) SetRescue(raw json.RawMessage) error {
	d.Rescue, d.RescuePending = nil, raw == nil
	if raw == nil {
		return nil
	}
	if err := json.Unmarshal(raw, &d.Rescue); err != nil {
		return fmt.Errorf("decode rescue options: %w", err)
	}
	return nil
}

// emptyLists makes the lists of a project with nothing in them encode as
// [] rather than null: readers of the stored JSON (the standup's
// jsonb_to_recordset, agents, the dashboard) take a list to be a list.
func (d *SnapshotData) emptyLists() {
	if d.Statuses == nil {
		d.Statuses = []scheduler.IssueStatus{}
	}
	if d.Forecast.Issues == nil {
		d.Forecast.Issues = []scheduler.IssueForecast{}
	}
	if d.Forecast.Milestones == nil {
		d.Forecast.Milestones = []scheduler.MilestoneForecast{}
	}
	if d.Forecast.Load == nil {
		d.Forecast.Load = []scheduler.PersonLoad{}
	}
	if f := d.Flow; f != nil {
		if f.Age == nil {
			f.Age = []scheduler.WorkItemAge{}
		}
		if f.CycleTime.Items == nil {
			f.CycleTime.Items = []scheduler.CycleItem{}
		}
	}
}

// BacktestSummary is how often the project's past forecasts came true.
type BacktestSummary struct {
	ComputedAt time.Time `json:"computedAt"`
	// Current is false while a backtest of newer finished work is pending.
	Current bool `json:"current"`
	scheduler.BacktestResult
	// Live is the replay of the live model (the forecast users see) on the
	// project's own history; backtests older than it lack it.
	Live *scheduler.LiveBacktest `json:"live,omitempty"`
}

// Counts summarises the mirror a snapshot was computed from.
type Counts struct {
	Issues     int `json:"issues"`
	Open       int `json:"open"`
	Pulls      int `json:"pulls"`
	Milestones int `json:"milestones"`
	Samples    int `json:"samples"`
}

func (f *Forecaster) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// Recompute builds and stores a fresh snapshot of one project: one on
// each plan recomputePlans names (two when changes quoted on a plan whose
// hour has passed come in), in one transaction. Then, the snapshot
// published, it computes the latest one's rescue options and stores them
// with it (attachRescue), unless a newer snapshot supersedes it first.
func (f *Forecaster) Recompute(ctx context.Context, projectID int64) error {
	start := time.Now()
	// No snapshot of a half-imported mirror: the backfill writes issue
	// rows first and their details, dependencies and timelines after, so
	// a recompute a chunk's change triggers would publish a forecast of
	// part of the project (read tools refuse it as NOT_READY, but the
	// standup, the dashboard and the milestones' history would take it).
	// The backfill's last transaction sets the marker and enqueues the
	// recompute that publishes the first snapshot. Read before the mirror,
	// the marker guarantees the mirror read after it is whole.
	sync, err := store.GetSyncState(ctx, f.Pool, projectID)
	if err != nil {
		return err
	}
	if sync.BackfillDoneAt == nil {
		f.Log.DebugContext(ctx, "first backfill still running: no snapshot yet", slog.Int64("project", projectID))
		return nil
	}
	var backtest *store.Backtest
	st, err := loadProjectState(ctx, f.Pool, projectID, func(tx store.Tx) error {
		b, err := store.LatestBacktest(ctx, tx, projectID)
		if err == nil {
			backtest = &b
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	project, mirror, counter := st.project, st.mirror, st.counter
	latest, err := st.latestPlan()
	if err != nil {
		return fmt.Errorf("plan of %s: %w", project.FullName(), err)
	}

	now := f.now().UTC()
	changed := st.head != nil && st.head.ChangeCounter != counter
	var runs []planned
	for _, plan := range recomputePlans(latest, st.heldPlan, changed, now) {
		run, err := f.forecast(st, plan, now, true)
		if err != nil {
			return err
		}
		runs = append(runs, run)
	}
	cur := runs[len(runs)-1]
	done := doneHash(mirror, cur.model.statuses)
	var summary *BacktestSummary
	if backtest != nil {
		sum := BacktestSummary{ComputedAt: backtest.ComputedAt, Current: backtest.DoneHash == done}
		var rec BacktestRecord
		if err := json.Unmarshal(backtest.Result, &rec); err != nil {
			return fmt.Errorf("decode backtest of %s: %w", project.FullName(), err)
		}
		sum.BacktestResult, sum.Live = rec.BacktestResult, rec.Live
		summary = &sum
	}
	needBacktest := f.Jobs != nil && (backtest == nil || backtest.DoneHash != done)
	flowOpts, opts := f.flowOptions(), f.forecastOptions(projectID)
	snaps := make([]store.Snapshot, len(runs))
	for k, run := range runs {
		fm := flow.Metrics(run.model.history, run.model.statuses, now, flowOpts)
		scheduler.MarkAging(run.model.statuses, fm)
		figures := flow.Assemble(fm, run.doneBy, run.horizon, opts.Trials, opts.Seed)
		data := SnapshotData{ComputedAt: now, Statuses: run.model.statuses, Calibration: run.model.input.Calibration,
			Forecast: run.forecast, Flow: &figures, Plan: run.plan, Backtest: summary}
		data.Counts = countMirror(mirror)
		data.Counts.Samples = len(run.model.samples)
		data.Focus, data.Runway = focusAndRunway(run.model.input, run.forecast, run.plan.AsOf)
		data.emptyLists()
		raw, err := json.Marshal(data)
		if err != nil {
			return fmt.Errorf("encode snapshot: %w", err)
		}
		snaps[k] = store.Snapshot{ProjectID: projectID, InputsHash: run.hash, ChangeCounter: counter,
			Duration: time.Since(start), Data: raw}
	}
	realized, err := json.Marshal(scheduler.MilestoneBands(runs[0].forecast))
	if err != nil {
		return fmt.Errorf("encode realized bands: %w", err)
	}
	states, ts := cur.model.states, cur.model.transitions
	var version int64
	err = store.InTx(ctx, f.Pool, func(tx store.Tx) error {
		if err := store.RecordTransitions(ctx, tx, projectID, states, ts); err != nil {
			return err
		}
		if needBacktest {
			if _, err := f.Jobs.InsertManyTx(ctx, tx, []river.InsertManyParams{{Args: BacktestArgs{ProjectID: projectID}}}); err != nil {
				return fmt.Errorf("enqueue backtest: %w", err)
			}
		}
		for k, snap := range snaps {
			v, err := store.PutSnapshot(ctx, tx, snap)
			if err != nil {
				return err
			}
			version = v
			if k == 0 {
				// The first snapshot covering a directive's writes is the
				// one its quote named (on the plan it was quoted on): the
				// ledger keeps its bands as what the directive realized.
				if _, err := store.RealizeDirectives(ctx, tx, projectID, counter, version, realized, now); err != nil {
					return err
				}
			}
		}
		// The milestones' history outlives the snapshots (pruned to the
		// last hundred): the published one, the last, is kept per hour.
		if err := store.RecordMilestoneForecasts(ctx, tx, projectID, milestonePoints(cur.forecast, mirror, version)); err != nil {
			return err
		}
		if st.hold != nil {
			return store.ReleasePlanHold(ctx, tx, projectID, counter)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store snapshot of %s: %w", project.FullName(), err)
	}
	metrics.Recomputed(project.FullName(), time.Since(start))
	f.Log.DebugContext(ctx, "recomputed", slog.String("project", project.FullName()), slog.Int("snapshots", len(snaps)),
		slog.Int("open", countMirror(mirror).Open), slog.Int("transitions", len(ts)), slog.Duration("took", time.Since(start)))
	// Only the latest snapshot is read and acted on, and only once it is
	// published does its rescue search start.
	return f.attachRescue(ctx, st, cur, now, version)
}

// milestonePoints are a forecast's milestones as history points: the
// forecast's range and chance, its open work, and the issues of the
// milestone closed in mirror (the project as the forecast saw it).
func milestonePoints(f scheduler.Forecast, mirror store.Mirror, version int64) []store.MilestonePoint {
	done := map[int64]int{}
	for _, i := range mirror.Issues {
		if !i.IsPull && i.State == "closed" && i.Milestone != nil {
			done[*i.Milestone]++
		}
	}
	onTime := map[int64]float64{}
	for _, fin := range f.Finish {
		if fin.Trials > 0 {
			onTime[fin.ID] = float64(fin.OnTime) / float64(fin.Trials)
		}
	}
	out := make([]store.MilestonePoint, 0, len(f.Milestones))
	for _, m := range f.Milestones {
		p := store.MilestonePoint{MilestoneID: m.ID, At: f.Now, Version: version, Title: m.Title, Due: m.Due, Hard: m.Hard,
			Open: m.Open, Done: done[m.ID], PDue: m.PDue}
		if share, ok := onTime[m.ID]; ok && !m.Due.IsZero() {
			p.PDue = share
		}
		if m.Open > 0 {
			p.P10, p.P50, p.P80 = m.P10, m.P50, m.P80
		}
		out = append(out, p)
	}
	return out
}

// forecastOptions keys a project's random streams to the project itself,
// not to its changing inputs: consecutive snapshots then share their draws
// (common random numbers over time), so a change moves the forecast by its
// own effect and not by fresh noise, and a what-if predicts exactly what
// the next snapshot shows. Identical inputs still give identical output.
func (f *Forecaster) forecastOptions(projectID int64) scheduler.Options {
	z := uint64(projectID) + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	if z == 0 {
		z = 1
	}
	return scheduler.Options{Trials: f.Trials, Seed: z}
}

// flowOptions fills in the project's time zone: the default calendar's.
func (f *Forecaster) flowOptions() flow.Options {
	o := f.Flow
	if o.Location == nil {
		o.Location = f.DefaultCalendar.Location
	}
	return o
}

func countMirror(m store.Mirror) Counts {
	var c Counts
	for _, i := range m.Issues {
		if i.IsPull {
			c.Pulls++
			continue
		}
		c.Issues++
		if i.State == "open" {
			c.Open++
		}
	}
	c.Milestones = len(m.Milestones)
	return c
}

// inputsHash identifies what a snapshot was computed from: the forecast's
// input (through its seed hash) and the inferred statuses.
func inputsHash(m engineModel) string {
	h := sha256.New()
	var seed [8]byte
	binary.BigEndian.PutUint64(seed[:], scheduler.InputSeed(m.input))
	h.Write(seed[:])
	_ = json.NewEncoder(h).Encode(m.statuses)
	return hex.EncodeToString(h.Sum(nil))
}

// lastTransition is each issue's latest recorded transition.
func lastTransition(ts []store.Transition) map[int64]store.Transition {
	out := map[int64]store.Transition{}
	for _, t := range ts {
		out[t.Issue] = t // ordered by issue, then time
	}
	return out
}

// stateFlags is what issue_states keeps of the flags.
type stateFlags struct {
	Blocked         bool   `json:"blocked,omitempty"`
	Stale           bool   `json:"stale,omitempty"`
	MissingEstimate bool   `json:"missingEstimate,omitempty"`
	Discarded       bool   `json:"discarded,omitempty"`
	Unschedulable   string `json:"unschedulable,omitempty"`
}

// stateChanges compares the inferred statuses with the recorded states and
// returns the rows to write and the transitions to record. A transition's
// cause is the delivery that last changed the issue, or "reconcile" when an
// API sync did; a closed issue moves to done at its closing time. An issue
// seen for the first time whose replayed timeline already ends in its
// state gets no second transition.
func stateChanges(m store.Mirror, statuses []scheduler.IssueStatus, prev map[int64]store.IssueState, last map[int64]store.Transition, now time.Time) ([]store.IssueState, []store.Transition) {
	issues := make(map[int64]store.Issue, len(m.Issues))
	for _, i := range m.Issues {
		issues[i.Number] = i
	}
	var states []store.IssueState
	var ts []store.Transition
	for _, s := range statuses {
		flags, _ := json.Marshal(stateFlags{Blocked: s.Blocked, Stale: s.Stale, MissingEstimate: s.MissingEstimate, Discarded: s.Discarded, Unschedulable: s.Unschedulable})
		issue := issues[s.Number]
		cause := "reconcile"
		if d := m.LastDelivery[s.Number]; d != "" {
			cause = "delivery:" + d
		}
		at := now
		if s.State == scheduler.Done && issue.ClosedAt != nil {
			at = *issue.ClosedAt
		}
		p, seen := prev[s.Number]
		from := p.State
		if t, ok := last[s.Number]; ok && !seen {
			from = t.To
		}
		switch {
		case seen && p.State == string(s.State):
			if !bytes.Equal(p.Flags, flags) {
				states = append(states, store.IssueState{Number: s.Number, State: p.State, Flags: flags, Since: p.Since})
			}
			continue
		case !seen:
			if t, ok := last[s.Number]; ok && t.To == string(s.State) {
				states = append(states, store.IssueState{Number: s.Number, State: t.To, Flags: flags, Since: t.At})
				continue
			}
			if _, ok := last[s.Number]; !ok && s.State != scheduler.Done {
				at = issue.CreatedAt
			}
		}
		ts = append(ts, store.Transition{Issue: s.Number, From: from, To: string(s.State), At: at, Cause: cause})
		states = append(states, store.IssueState{Number: s.Number, State: string(s.State), Flags: flags, Since: at})
	}
	return states, ts
}
