// Package flow assembles a project's flow figures for its snapshot: the
// flow metrics the scheduler reads from the recorded transitions (cycle
// time, work item age and the aging flag, throughput, work in progress,
// cumulative flow) and "how many by when" from the same Monte Carlo
// schedule as the forecast, beside the throughput-only answer. The
// recompute job computes them with every snapshot, never a request; the
// flow page, board cards, the standup and the flow MCP resource read what
// it stored. The definitions live in the scheduler's package doc ("Flow").
//
// Choices: the project's time zone is that of the default calendar
// (calendar.time_zone); the "how many by when" horizon runs from today to
// four weeks past the latest due date of an open milestone, at least 90
// and at most 366 days, so a release date is always a lookup.
package flow

import (
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
)

// Horizon bounds, in local days from today.
const (
	MinHorizonDays = scheduler.DefaultDoneByDays
	MaxHorizonDays = 366
	// horizonPastDue is how far the horizon reaches past the latest due date.
	horizonPastDue = 28
)

// Options tunes the flow figures; the zero value applies the scheduler's
// defaults (a 90-day window, the SLE at the 85th percentile, UTC).
type Options struct {
	WindowDays    int
	SLEPercentile int
	Location      *time.Location
}

// Figures are what a snapshot stores of a project's flow.
type Figures struct {
	scheduler.FlowMetrics
	// DoneBy is "how many by when" from the schedule's trials.
	DoneBy scheduler.DoneBy `json:"doneBy"`
	// Baseline is the throughput-only answer, absent without a complete
	// week of throughput to resample.
	Baseline *scheduler.DoneBy `json:"baseline,omitempty"`
}

// Metrics reads the flow metrics from a project's recorded transitions at
// now; statuses say which done issues are discarded.
func Metrics(transitions []store.Transition, statuses []scheduler.IssueStatus, now time.Time, o Options) scheduler.FlowMetrics {
	in := scheduler.FlowInput{Now: now, Transitions: make([]scheduler.Transition, 0, len(transitions)), Discarded: map[int64]bool{}}
	for _, t := range transitions {
		in.Transitions = append(in.Transitions, scheduler.Transition{
			Issue: t.Issue, From: scheduler.State(t.From), To: scheduler.State(t.To), At: t.At, Cause: t.Cause,
		})
	}
	for _, s := range statuses {
		if s.Discarded {
			in.Discarded[s.Number] = true
		}
	}
	return scheduler.Flow(in, scheduler.FlowOptions{WindowDays: o.WindowDays, SLEPercentile: o.SLEPercentile, Location: o.Location})
}

// Horizon is the "how many by when" horizon of a forecast input.
func Horizon(in scheduler.Input, o Options) scheduler.DoneByOptions {
	loc := o.Location
	if loc == nil {
		loc = time.UTC
	}
	days := MinHorizonDays
	for _, m := range in.Milestones {
		if m.Closed || m.Due.IsZero() {
			continue
		}
		d := int(m.Due.Sub(in.Now).Hours()/24) + 1 + horizonPastDue
		days = max(days, d)
	}
	return scheduler.DoneByOptions{Days: min(days, MaxHorizonDays), Location: loc}
}

// Assemble puts the figures together, adding the throughput-only answer
// over the same horizon (seeded like the forecast) when there is a complete
// week to resample.
func Assemble(m scheduler.FlowMetrics, doneBy scheduler.DoneBy, horizon scheduler.DoneByOptions, trials int, seed uint64) Figures {
	f := Figures{FlowMetrics: m, DoneBy: doneBy}
	var weeks []int
	for _, w := range m.Throughput.Weeks {
		if w.Complete() {
			weeks = append(weeks, w.Count)
		}
	}
	if b, err := scheduler.BaselineDoneBy(weeks, doneBy.Open, m.Now, horizon, trials, seed); err == nil {
		f.Baseline = &b
	}
	return f
}
