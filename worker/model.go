package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
)

// This file turns the mirror (package store) into the engine's plain inputs
// (package scheduler). It is the only place that knows both.

// projectFacts gathers what the lifecycle rules read: every issue and pull
// request with its dependencies.
func projectFacts(repo string, m store.Mirror) scheduler.ProjectFacts {
	deps := map[int64][]scheduler.DependencyRef{}
	for _, d := range m.Dependencies {
		deps[d.Issue] = append(deps[d.Issue], scheduler.DependencyRef{Number: d.DependsOn, Repo: d.DependsOnRepo})
	}
	facts := scheduler.ProjectFacts{Repo: repo, Issues: make([]scheduler.IssueFacts, 0, len(m.Issues))}
	for _, i := range m.Issues {
		facts.Issues = append(facts.Issues, issueFacts(i, deps[i.Number]))
	}
	return facts
}

func issueFacts(i store.Issue, deps []scheduler.DependencyRef) scheduler.IssueFacts {
	f := scheduler.IssueFacts{
		Number: i.Number, IsPull: i.IsPull, Title: i.Title, Body: i.Body,
		Closed: i.State == "closed", Labels: i.Labels, Assignees: i.Assignees,
		Ref: i.Ref, Merged: i.Merged, ClosingRefs: i.ClosingRefs,
		CreatedAt: i.CreatedAt, UpdatedAt: i.UpdatedAt, LastActivityAt: i.LastActivityAt,
		DependsOn: deps,
	}
	if i.ClosedAt != nil {
		f.ClosedAt = *i.ClosedAt
	}
	if i.Milestone != nil {
		f.Milestone = *i.Milestone
	}
	return f
}

// timelineEvents converts the mirror's timeline rows of one issue.
func timelineEvents(rows []store.TimelineEvent) []scheduler.TimelineEvent {
	out := make([]scheduler.TimelineEvent, 0, len(rows))
	for _, r := range rows {
		e := scheduler.TimelineEvent{
			ID: r.ID, Issue: r.Issue, Kind: r.Kind, CreatedAt: r.CreatedAt,
			Label: r.Label, Assignee: r.Assignee, Removed: r.Removed, RefIssue: r.RefIssue,
		}
		if r.Milestone != nil {
			e.Milestone = *r.Milestone
		}
		out = append(out, e)
	}
	return out
}

// LifecycleReplayer rebuilds an issue's transitions from its Gitea timeline
// with the same rules live ingest uses; backfill calls it.
type LifecycleReplayer struct{}

// Replay implements TimelineReplayer.
func (LifecycleReplayer) Replay(repo string, issue store.Issue, deps []store.Dependency, events []store.TimelineEvent, pulls []store.Issue, now time.Time) []store.Transition {
	refs := make([]scheduler.DependencyRef, 0, len(deps))
	for _, d := range deps {
		refs = append(refs, scheduler.DependencyRef{Number: d.DependsOn, Repo: d.DependsOnRepo})
	}
	pullFacts := make([]scheduler.IssueFacts, 0, len(pulls))
	for _, p := range pulls {
		pullFacts = append(pullFacts, issueFacts(p, nil))
	}
	ts := scheduler.Replay(issueFacts(issue, refs), timelineEvents(events), pullFacts, repo, now)
	out := make([]store.Transition, len(ts))
	for k, t := range ts {
		out[k] = storeTransition(t)
	}
	return out
}

func storeTransition(t scheduler.Transition) store.Transition {
	return store.Transition{Issue: t.Issue, From: string(t.From), To: string(t.To), At: t.At, Cause: t.Cause}
}

// hardDeadline reports whether a milestone description holds a line that
// reads exactly "deadline: hard" (surrounding spaces and case aside).
func hardDeadline(description string) bool {
	for line := range strings.SplitSeq(description, "\n") {
		if isHardLine(line) {
			return true
		}
	}
	return false
}

// hardLine is the milestone description line that makes its deadline hard.
const hardLine = "deadline: hard"

func isHardLine(line string) bool {
	return strings.EqualFold(strings.TrimSpace(line), hardLine)
}

// WithHardLine adds or removes the "deadline: hard" line of a milestone
// description and touches nothing else: adding appends the line on a line
// of its own, removing drops every such line with its line break.
func WithHardLine(description string, hard bool) string {
	lines := strings.SplitAfter(description, "\n")
	has := false
	kept := make([]string, 0, len(lines))
	for _, l := range lines {
		if isHardLine(l) {
			has = true
			continue
		}
		kept = append(kept, l)
	}
	switch {
	case hard && has, !hard && !has:
		return description
	case hard:
		if description == "" {
			return hardLine
		}
		if strings.HasSuffix(description, "\n") {
			return description + hardLine + "\n"
		}
		return description + "\n" + hardLine
	}
	out := strings.Join(kept, "")
	// The line removed was the last one: drop the break that led to it.
	if len(lines) > 0 && isHardLine(lines[len(lines)-1]) {
		out = strings.TrimSuffix(out, "\n")
		out = strings.TrimSuffix(out, "\r")
	}
	return out
}

func engineMilestones(ms []store.Milestone) []scheduler.Milestone {
	out := make([]scheduler.Milestone, 0, len(ms))
	for _, m := range ms {
		x := scheduler.Milestone{ID: m.ID, Title: m.Title, Hard: hardDeadline(m.Description), Closed: m.State == "closed"}
		if m.DueOn != nil {
			x.Due = *m.DueOn
		}
		out = append(out, x)
	}
	return out
}

// trackedHours sums each issue's tracked time.
func trackedHours(times []store.TrackedTime) map[int64]float64 {
	out := map[int64]float64{}
	for _, t := range times {
		out[t.Issue] += float64(t.Seconds) / 3600
	}
	return out
}

// activeIntervals are the spans each issue spent steeping or in review, per
// its transitions, attributed to its first assignee, up to asOf: an issue
// still active runs to asOf, and what happened after asOf is not counted
// yet (so a close or a start later in the hour leaves the effort measured
// as it was at asOf). They give the actual effort of issues without
// tracked time.
func activeIntervals(issues []store.Issue, transitions []store.Transition, asOf time.Time) []scheduler.WorkInterval {
	person := map[int64]string{}
	for _, i := range issues {
		if len(i.Assignees) > 0 {
			person[i.Number] = i.Assignees[0]
		}
	}
	active := func(s string) bool {
		return s == string(scheduler.Steeping) || s == string(scheduler.InReview)
	}
	var out []scheduler.WorkInterval
	open := map[int64]time.Time{}
	// Transitions come ordered by issue, then time.
	for _, t := range transitions {
		from, isOpen := open[t.Issue]
		at := minTime(t.At, asOf)
		switch {
		case active(t.To) && !isOpen:
			open[t.Issue] = at
		case !active(t.To) && isOpen:
			out = append(out, scheduler.WorkInterval{Number: t.Issue, Person: person[t.Issue], From: from, To: at})
			delete(open, t.Issue)
		}
	}
	numbers := make([]int64, 0, len(open))
	for n := range open {
		numbers = append(numbers, n)
	}
	slices.Sort(numbers)
	for _, n := range numbers {
		out = append(out, scheduler.WorkInterval{Number: n, Person: person[n], From: open[n], To: asOf})
	}
	return out
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// engineModel is everything a recompute derives from one mirror.
type engineModel struct {
	statuses []scheduler.IssueStatus
	samples  []scheduler.Sample
	input    scheduler.Input
	// states and transitions are the lifecycle changes this model found
	// against the recorded states, for the recompute to record.
	states      []store.IssueState
	transitions []store.Transition
	// history is every transition, recorded and new, by issue then time:
	// what the flow metrics read.
	history []store.Transition
}

// modelSource is what a model is built from: the mirror, the recorded
// lifecycle (transitions and current states), the configured team, the
// capacity calendar and the draw keys of issues filed from proposals.
type modelSource struct {
	repo        string
	mirror      store.Mirror
	transitions []store.Transition
	prev        map[int64]store.IssueState
	people      []scheduler.Person // as configured
	caps        []store.Capacity
	drawKeys    map[int64]int64
	calendar    scheduler.Calendar // the default one
	staleDays   int
}

// projectState is one consistent read of everything a model is built from.
type projectState struct {
	project     store.Project
	counter     int64
	mirror      store.Mirror
	transitions []store.Transition
	prev        map[int64]store.IssueState
	caps        []store.Capacity
	drawKeys    map[int64]int64
	// head is the latest snapshot's plan head (nil when there is none) and
	// hold the plan a write was quoted on (nil when none is held).
	head     *store.PlanHead
	hold     *store.PlanHold
	heldPlan *Plan // the held snapshot's plan; nil when that snapshot is gone
}

// loadProjectState reads a project's mirror, recorded lifecycle, capacity
// calendar and change counter in one repeatable-read transaction, so the
// parts agree with each other. also, when set, reads more in the same
// transaction.
func loadProjectState(ctx context.Context, pool *store.Pool, projectID int64, also func(tx store.Tx) error) (projectState, error) {
	var st projectState
	err := store.InSnapshotTx(ctx, pool, func(tx store.Tx) error {
		var err error
		if st.project, err = store.ProjectByID(ctx, tx, projectID); err != nil {
			return err
		}
		if st.counter, err = store.ChangeCounter(ctx, tx, projectID); err != nil {
			return err
		}
		if st.mirror, err = store.LoadMirror(ctx, tx, projectID); err != nil {
			return err
		}
		if st.transitions, err = store.Transitions(ctx, tx, projectID); err != nil {
			return err
		}
		if st.caps, err = store.CapacityCalendar(ctx, tx, projectID); err != nil {
			return err
		}
		if st.prev, err = store.IssueStates(ctx, tx, projectID); err != nil {
			return err
		}
		if st.drawKeys, err = store.DrawKeys(ctx, tx, projectID); err != nil {
			return err
		}
		switch h, err := store.LatestPlanHead(ctx, tx, projectID); {
		case err == nil:
			st.head = &h
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		if h, held, err := store.GetPlanHold(ctx, tx, projectID); err != nil {
			return err
		} else if held {
			st.hold = &h
			raw, err := store.SnapshotPart(ctx, tx, projectID, h.SnapshotVersion, "plan")
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			if st.heldPlan, err = decodePlan(raw); err != nil {
				return err
			}
		}
		if also != nil {
			return also(tx)
		}
		return nil
	})
	if err != nil {
		return projectState{}, fmt.Errorf("load project %d: %w", projectID, err)
	}
	return st, nil
}

// source is what buildModel needs from the state and the configuration.
func (st projectState) source(people []scheduler.Person, def scheduler.Calendar, staleDays int) modelSource {
	return modelSource{
		repo: st.project.FullName(), mirror: st.mirror, transitions: st.transitions, prev: st.prev,
		people: people, caps: st.caps, drawKeys: st.drawKeys, calendar: def, staleDays: staleDays,
	}
}

// buildModel runs the lifecycle rules over the mirror as of asOf (the
// plan's hour), works out the transitions they imply at now (the wall
// clock, for the record), and assembles the calibration samples and the
// forecast's input from the recorded transitions plus those new ones, so
// the model a recompute stores is the one the next recompute rebuilds.
// Effort already spent is measured up to asOf on the configured calendars:
// capacity directives shape the forecast's calendars from asOf on and never
// rewrite how much work the past held (which would move the calibration and
// the spent hours of work in progress, either way). Calibration itself is
// left to the caller, which owns its options.
func buildModel(src modelSource, asOf, now time.Time) engineModel {
	m := src.mirror
	people, _ := team(m.Issues, withCapacity(src.people, src.calendar, src.caps), src.calendar)
	_, calendars := team(m.Issues, src.people, src.calendar)
	statuses := scheduler.Infer(projectFacts(src.repo, m), asOf, people, scheduler.LifecycleOptions{StaleWorkingDays: src.staleDays})
	states, fresh := stateChanges(m, statuses, src.prev, lastTransition(src.transitions), now)
	transitions := src.transitions
	if len(fresh) > 0 {
		transitions = append(slices.Clone(src.transitions), fresh...)
		slices.SortStableFunc(transitions, func(a, b store.Transition) int {
			if a.Issue != b.Issue {
				return cmp.Compare(a.Issue, b.Issue)
			}
			return a.At.Compare(b.At)
		})
	}
	byNumber := make(map[int64]scheduler.IssueStatus, len(statuses))
	for _, s := range statuses {
		byNumber[s.Number] = s
	}
	tracked := trackedHours(m.TrackedTimes)
	worked := scheduler.SharedWorkingHours(activeIntervals(m.Issues, transitions, asOf), calendars)
	effort := func(n int64) float64 {
		if h := tracked[n]; h > 0 {
			return h
		}
		return worked[n]
	}
	deps := map[int64][]int64{}
	for _, d := range m.Dependencies {
		if d.DependsOnRepo == "" {
			deps[d.Issue] = append(deps[d.Issue], d.DependsOn)
		}
	}

	model := engineModel{statuses: statuses, states: states, transitions: fresh, history: transitions}
	model.input = scheduler.Input{Now: asOf, People: people, Milestones: engineMilestones(m.Milestones)}
	for _, i := range m.Issues {
		if i.IsPull {
			continue
		}
		st, ok := byNumber[i.Number]
		if !ok {
			continue
		}
		size, priority, hard := scheduler.ParseLabels(i.Labels)
		var assignee string
		if len(i.Assignees) > 0 {
			assignee = i.Assignees[0]
		}
		if st.State == scheduler.Done {
			if !st.Discarded && size.Valid() && effort(i.Number) > 0 {
				s := scheduler.Sample{
					Number: i.Number, NominalHours: size.NominalHours(), ActualHours: effort(i.Number),
					Labels: i.Labels, Person: assignee,
				}
				if tracked[i.Number] > 0 {
					s.Effort = scheduler.EffortTracked
				}
				if i.ClosedAt != nil {
					s.FinishedAt = minTime(*i.ClosedAt, asOf)
				}
				model.samples = append(model.samples, s)
			}
		}
		x := scheduler.Issue{
			Number: i.Number, Title: i.Title, State: st.State, Discarded: st.Discarded,
			Estimate: size, Priority: priority, HardDeadline: hard, Assignee: assignee,
			Labels: i.Labels, DependsOn: deps[i.Number], DrawKey: src.drawKeys[i.Number],
		}
		if i.Milestone != nil {
			x.Milestone = *i.Milestone
		}
		if st.State == scheduler.Steeping || st.State == scheduler.InReview {
			x.SpentHours = effort(i.Number)
		}
		model.input.Issues = append(model.input.Issues, x)
	}
	return model
}

// team is the configured people, each with their calendar or the default
// one, plus anyone assigned to an issue without being configured, on the
// default calendar; sorted by login.
func team(issues []store.Issue, configured []scheduler.Person, def scheduler.Calendar) ([]scheduler.Person, map[string]scheduler.Calendar) {
	calendars := map[string]scheduler.Calendar{}
	people := make([]scheduler.Person, 0, len(configured))
	for _, p := range configured {
		if p.Calendar.HoursPerDay == 0 {
			p.Calendar = def
		}
		calendars[p.Login] = p.Calendar
		people = append(people, p)
	}
	for _, i := range issues {
		if i.IsPull {
			continue
		}
		for _, a := range i.Assignees {
			if _, ok := calendars[a]; !ok {
				calendars[a] = def
				people = append(people, scheduler.Person{Login: a, Calendar: def})
			}
		}
	}
	slices.SortFunc(people, func(a, b scheduler.Person) int { return strings.Compare(a.Login, b.Login) })
	return people, calendars
}
