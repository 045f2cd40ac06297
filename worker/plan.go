package worker

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/worker/flow"
)

// The one planning rule (scheduler/doc.go): the recompute and the what-if
// turn a mirror state into a forecast through the same function, on a
// plan: the hour the forecast starts from and who picks up unassigned
// work. This file holds the function and the rules that choose the plan.

// Plan is what a forecast is computed on besides the mirror. AsOf is the
// hour it starts from (scheduler.AsOf); Planned is who each unassigned
// issue went to when a forecast of that hour first planned it, kept by
// every later forecast of the hour.
type Plan struct {
	AsOf    time.Time        `json:"asOf"`
	Planned map[int64]string `json:"planned,omitempty"`
	// fresh marks a plan not decided yet: its forecast decides Planned.
	fresh bool
}

// freshPlan is a plan whose forecast decides who picks up what.
func freshPlan(asOf time.Time) Plan { return Plan{AsOf: asOf, fresh: true} }

// decodePlan reads a snapshot's plan; a snapshot older than plans has none.
func decodePlan(raw json.RawMessage) (*Plan, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var p Plan
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("decode plan: %w", err)
	}
	return &p, nil
}

// planned is the forecast of a project state on a plan, with the plan as
// it now stands (a fresh one decided) and the hash of what it was computed
// from (inputsHash, before flow flags are added to the statuses).
type planned struct {
	model    engineModel
	forecast scheduler.Forecast
	plan     Plan
	hash     string
	// doneBy and horizon are the "how many by when" counted with the
	// trials, when asked for (the recompute stores them; a what-if does
	// not need them).
	doneBy  scheduler.DoneBy
	horizon scheduler.DoneByOptions
}

// model builds the engine's input from a project state on a plan:
// lifecycle at the plan's hour, the calibration fit, the capacity calendar,
// draw keys and the plan's choices for unassigned work.
func (f *Forecaster) model(st projectState, plan Plan, now time.Time) engineModel {
	m := buildModel(st.source(f.People, f.DefaultCalendar, f.StaleWorkingDays), plan.AsOf, now)
	m.input.Calibration = scheduler.Calibrate(m.samples, f.Calibration)
	if !plan.fresh {
		m.input.Planned = plan.Planned
	}
	return m
}

// forecast is the one path from a project state to its forecast. doneBy
// also counts "how many by when" over the same trials, which changes
// nothing in the forecast.
func (f *Forecaster) forecast(st projectState, plan Plan, now time.Time, doneBy bool) (planned, error) {
	m := f.model(st, plan, now)
	opts := f.forecastOptions(st.project.ID)
	var out planned
	var err error
	if doneBy {
		out.horizon = flow.Horizon(m.input, f.flowOptions())
		out.forecast, out.doneBy, err = scheduler.RunDoneBy(m.input, opts, out.horizon)
	} else {
		out.forecast, err = scheduler.Run(m.input, opts)
	}
	if err != nil {
		return planned{}, fmt.Errorf("forecast %s: %w", st.project.FullName(), err)
	}
	// The plan goes on with every choice this forecast made: those it was
	// given and those it made for unassigned issues new to the plan, which
	// then stay put too. Its input, and so its hash, says so as the next
	// forecast on the plan will (the same choices, given, forecast the
	// same).
	plan = Plan{AsOf: plan.AsOf, Planned: out.forecast.Planned()}
	m.input.Planned = plan.Planned
	out.model, out.plan, out.hash = m, plan, inputsHash(m)
	return out, nil
}

// latestPlan is the plan of the latest snapshot, nil when there is none
// (or it predates plans).
func (st projectState) latestPlan() (*Plan, error) {
	if st.head == nil {
		return nil, nil
	}
	return decodePlan(st.head.Plan)
}

// quotedPlan is the plan a what-if quotes on now, and the snapshot version
// it comes from (0 for a fresh plan): the plan the next recompute forecasts
// the change on first. That is the plan a write tool already holds the next
// recompute to, else the latest snapshot's (what the caller is looking at),
// else, before the first snapshot, a fresh one for the current hour.
func (st projectState) quotedPlan(now time.Time) (Plan, int64, error) {
	if st.heldPlan != nil {
		return *st.heldPlan, st.hold.SnapshotVersion, nil
	}
	latest, err := st.latestPlan()
	if err != nil || latest == nil {
		return freshPlan(scheduler.AsOf(now)), 0, err
	}
	return *latest, st.head.Version, nil
}

// recomputePlans are the plans a recompute forecasts on, in order, each
// one stored as a snapshot. Changes since the latest snapshot were quoted
// on a plan (the held one, else the latest snapshot's); when that plan's
// hour has passed they are forecast on it all the same, so the snapshot
// that first shows them is the one their quote described, and then on the
// current hour's plan: the latest snapshot's when it is of this hour (the
// hour's choices of who picks up what stand), otherwise a fresh one.
// Without changes there is nothing quoted to honour, only the current
// hour. The hour never goes back, even when this clock is behind the one
// that made the latest snapshot.
func recomputePlans(latest, held *Plan, changed bool, now time.Time) []Plan {
	cur := scheduler.AsOf(now)
	if latest != nil && latest.AsOf.After(cur) {
		cur = latest.AsOf
	}
	quoted := held
	if quoted == nil && changed {
		quoted = latest
	}
	var out []Plan
	if quoted != nil && quoted.AsOf.Before(cur) {
		out = append(out, *quoted)
	}
	switch {
	case latest != nil && latest.AsOf.Equal(cur):
		out = append(out, *latest)
	case quoted != nil && quoted.AsOf.Equal(cur):
		out = append(out, *quoted)
	default:
		out = append(out, freshPlan(cur))
	}
	return out
}
