// Package history keeps and reads what the project looked like at a past
// date, for the project's own backtest to forecast each cut-off with what
// was known then.
//
// An issue's history is a list of versions (store.IssueVersion): its
// state, closing time, labels, milestone, assignees and same-repository
// dependencies from one instant until the next version. Backfill derives
// the versions from the issue's Gitea timeline (FromTimeline); every write
// to the mirror after it appends one when a field changed (package store).
//
// Rules of the derivation, walking back from the issue as it is now:
//   - a label or assignee event is undone (an addition removed, a removal
//     restored);
//   - a milestone event's previous milestone is the one the milestone event
//     before it set, or none: Gitea keeps the old milestone, the mirror
//     does not, and an issue created in a milestone then gives a history
//     without a milestone until its first milestone event;
//   - a close is undone to open, a reopen to closed since the close before
//     it; a closed issue whose timeline holds no close (imports, bulk
//     closes) is taken as closed at its closing time;
//   - a dependency the issue has now starts at the first "add_dependency"
//     event naming the other issue on this issue's timeline, or at the
//     issue's creation. Gitea writes that event on both issues, so it does
//     not say which way the dependency runs; dependencies removed since
//     are not in the mirror and are not recovered.
//
// At reads the mirror as of an instant from the versions: issues created by
// then, in the version then current; tracked time, comments and timeline
// events up to then; milestones open unless closed by then.
package history

import (
	"cmp"
	"slices"
	"time"

	"github.com/commitea/commitea/store"
)

// fields is the part of an issue the history keeps.
type fields struct {
	state     string
	closedAt  *time.Time
	labels    []string
	milestone *int64
	assignees []string
	deps      []int64
}

func (f fields) clone() fields {
	f.labels, f.assignees, f.deps = slices.Clone(f.labels), slices.Clone(f.assignees), slices.Clone(f.deps)
	return f
}

func (f fields) equal(g fields) bool {
	return f.state == g.state && eqTime(f.closedAt, g.closedAt) && sameSet(f.labels, g.labels) &&
		eqID(f.milestone, g.milestone) && sameSet(f.assignees, g.assignees) && slices.Equal(f.deps, g.deps)
}

func (f fields) version(number int64, at time.Time) store.IssueVersion {
	return store.IssueVersion{Number: number, ValidFrom: at, State: f.state, ClosedAt: f.closedAt,
		Labels: f.labels, Milestone: f.milestone, Assignees: f.assignees, DependsOn: f.deps, Source: store.VersionTimeline}
}

// step is one change to undo, at an instant.
type step struct {
	at   time.Time
	id   int64
	undo func(*fields)
}

// FromTimeline derives an issue's versions, oldest first, from its current
// row, its dependencies and its timeline (the package doc has the rules).
// The first version starts at the issue's creation.
func FromTimeline(issue store.Issue, deps []store.Dependency, events []store.TimelineEvent) []store.IssueVersion {
	evs := slices.Clone(events)
	slices.SortStableFunc(evs, func(a, b store.TimelineEvent) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	cur := fields{state: issue.State, closedAt: issue.ClosedAt, labels: slices.Clone(issue.Labels),
		milestone: issue.Milestone, assignees: slices.Clone(issue.Assignees)}
	var steps []step
	var lastMilestone *int64
	var lastClose *time.Time
	closes := 0
	for _, e := range evs {
		e := e
		switch e.Kind {
		case "label":
			steps = append(steps, step{e.CreatedAt, e.ID, func(f *fields) { f.labels = toggle(f.labels, e.Label, e.Removed) }})
		case "assignees":
			steps = append(steps, step{e.CreatedAt, e.ID, func(f *fields) { f.assignees = toggle(f.assignees, e.Assignee, e.Removed) }})
		case "milestone":
			before := lastMilestone
			steps = append(steps, step{e.CreatedAt, e.ID, func(f *fields) { f.milestone = before }})
			lastMilestone = e.Milestone
			if e.Removed {
				lastMilestone = nil
			}
		case "close":
			closes++
			at := e.CreatedAt
			lastClose = &at
			steps = append(steps, step{e.CreatedAt, e.ID, func(f *fields) { f.state, f.closedAt = "open", nil }})
		case "reopen":
			before := lastClose
			steps = append(steps, step{e.CreatedAt, e.ID, func(f *fields) { f.state, f.closedAt = "closed", before }})
		}
	}
	if closes == 0 && issue.State == "closed" && issue.ClosedAt != nil {
		steps = append(steps, step{*issue.ClosedAt, 1<<62 - 1, func(f *fields) { f.state, f.closedAt = "open", nil }})
	}
	for _, d := range deps {
		if d.DependsOnRepo != "" {
			continue
		}
		cur.deps = append(cur.deps, d.DependsOn)
		start := issue.CreatedAt
		for _, e := range evs {
			if e.Kind == "add_dependency" && e.RefIssue == d.DependsOn {
				start = e.CreatedAt
				break
			}
		}
		n := d.DependsOn
		steps = append(steps, step{start, 0, func(f *fields) { f.deps = slices.DeleteFunc(f.deps, func(x int64) bool { return x == n }) }})
	}
	slices.Sort(cur.deps)
	cur.deps = slices.Compact(cur.deps)
	slices.SortStableFunc(steps, func(a, b step) int { return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.id, b.id)) })

	// Walk back: the fields after the steps of an instant hold from that
	// instant on.
	var back []store.IssueVersion
	f := cur.clone()
	for k := len(steps) - 1; k >= 0; {
		at := steps[k].at
		if at.Before(issue.CreatedAt) {
			at = issue.CreatedAt
		}
		back = append(back, f.clone().version(issue.Number, at))
		for ; k >= 0 && (steps[k].at.Equal(at) || !at.After(issue.CreatedAt)); k-- {
			steps[k].undo(&f)
		}
	}
	if len(back) == 0 || back[len(back)-1].ValidFrom.After(issue.CreatedAt) {
		back = append(back, f.clone().version(issue.Number, issue.CreatedAt))
	}
	slices.Reverse(back)
	// Drop versions equal to the one before them.
	out := back[:1]
	for _, v := range back[1:] {
		if !fieldsOf(v).equal(fieldsOf(out[len(out)-1])) {
			out = append(out, v)
		}
	}
	return out
}

func fieldsOf(v store.IssueVersion) fields {
	return fields{state: v.State, closedAt: v.ClosedAt, labels: v.Labels, milestone: v.Milestone, assignees: v.Assignees, deps: v.DependsOn}
}

// toggle undoes an addition (removed false) or a removal of name.
func toggle(set []string, name string, removed bool) []string {
	if removed {
		if !slices.Contains(set, name) {
			set = append(set, name)
			slices.Sort(set)
		}
		return set
	}
	return slices.DeleteFunc(set, func(s string) bool { return s == name })
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

func eqTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

func eqID(a, b *int64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}
