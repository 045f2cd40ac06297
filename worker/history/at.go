package history

import (
	"cmp"
	"slices"
	"time"

	"github.com/commitea/commitea/store"
)

// At is the mirror as it stood at t, read from the versions (by issue,
// then time, as store.IssueHistory returns them). An issue created by t
// takes the fields of its version current at t; an issue without one (its
// history begins later, as for rows mirrored before the history was kept)
// keeps its row, open when it closed after t. Its updated and activity
// times are the latest sign of it by t. Issues created after t, and
// tracked time, comments and timeline events after t, are left out;
// milestones closed after t are open. Labels, which the mirror keeps as a
// whole set, are taken as they are now.
func At(m store.Mirror, versions []store.IssueVersion, t time.Time) store.Mirror {
	byIssue := map[int64][]store.IssueVersion{}
	for _, v := range versions {
		byIssue[v.Number] = append(byIssue[v.Number], v)
	}
	activity := map[int64]time.Time{}
	seen := func(n int64, at time.Time) {
		if !at.After(t) && at.After(activity[n]) {
			activity[n] = at
		}
	}
	out := store.Mirror{Labels: m.Labels, LastDelivery: map[int64]string{}}
	for _, e := range m.Timeline {
		if !e.CreatedAt.After(t) {
			out.Timeline = append(out.Timeline, e)
			seen(e.Issue, e.CreatedAt)
		}
	}
	for _, c := range m.Comments {
		if !c.CreatedAt.After(t) {
			out.Comments = append(out.Comments, c)
			seen(c.Issue, c.CreatedAt)
		}
	}
	for _, x := range m.TrackedTimes {
		if !x.Created.After(t) {
			out.TrackedTimes = append(out.TrackedTimes, x)
		}
	}
	for _, ms := range m.Milestones {
		if ms.ClosedAt == nil || ms.ClosedAt.After(t) {
			if ms.State == "closed" {
				ms.State, ms.ClosedAt = "open", nil
			}
		}
		out.Milestones = append(out.Milestones, ms)
	}
	deps := map[int64][]store.Dependency{}
	for _, d := range m.Dependencies {
		deps[d.Issue] = append(deps[d.Issue], d)
	}
	created := map[int64]bool{}
	for _, i := range m.Issues {
		if i.CreatedAt.After(t) {
			continue
		}
		created[i.Number] = true
		i.Labels, i.Assignees, i.ClosingRefs = slices.Clone(i.Labels), slices.Clone(i.Assignees), slices.Clone(i.ClosingRefs)
		seen(i.Number, i.CreatedAt)
		var cur *store.IssueVersion
		for k, w := range byIssue[i.Number] {
			if w.ValidFrom.After(t) {
				break
			}
			cur = &byIssue[i.Number][k]
			seen(i.Number, w.ValidFrom)
		}
		if cur == nil {
			if i.ClosedAt != nil && i.ClosedAt.After(t) {
				i.State, i.ClosedAt, i.Merged = "open", nil, false
			}
			if i.State == "closed" && i.ClosedAt != nil {
				seen(i.Number, *i.ClosedAt)
			}
			out.Dependencies = append(out.Dependencies, deps[i.Number]...)
		} else {
			v := *cur
			i.State, i.ClosedAt, i.Labels, i.Milestone, i.Assignees = v.State, v.ClosedAt, slices.Clone(v.Labels), v.Milestone, slices.Clone(v.Assignees)
			if i.ClosedAt != nil && i.ClosedAt.After(t) {
				i.State, i.ClosedAt = "open", nil
			}
			if i.State != "closed" {
				i.Merged = false
			}
			for _, d := range v.DependsOn {
				out.Dependencies = append(out.Dependencies, store.Dependency{Issue: i.Number, DependsOn: d})
			}
			// Dependencies on other repositories have no history: they
			// count from the issue's creation.
			for _, d := range deps[i.Number] {
				if d.DependsOnRepo != "" {
					out.Dependencies = append(out.Dependencies, d)
				}
			}
		}
		i.UpdatedAt, i.LastActivityAt = activity[i.Number], activity[i.Number]
		out.Issues = append(out.Issues, i)
	}
	// A dependency on an issue not yet created did not exist.
	out.Dependencies = slices.DeleteFunc(out.Dependencies, func(d store.Dependency) bool {
		return d.DependsOnRepo == "" && !created[d.DependsOn]
	})
	return out
}

// Complete fills in the start of each issue's history that the recorded
// versions lack (an issue mirrored before the history was kept has only
// the versions written since): the versions FromTimeline derives from the
// mirrored timeline, up to the first recorded one. versions must be by
// issue, then time; so is the result.
func Complete(m store.Mirror, versions []store.IssueVersion) []store.IssueVersion {
	first := map[int64]time.Time{}
	for _, v := range versions {
		if _, ok := first[v.Number]; !ok {
			first[v.Number] = v.ValidFrom
		}
	}
	timeline := map[int64][]store.TimelineEvent{}
	for _, e := range m.Timeline {
		timeline[e.Issue] = append(timeline[e.Issue], e)
	}
	deps := map[int64][]store.Dependency{}
	for _, d := range m.Dependencies {
		deps[d.Issue] = append(deps[d.Issue], d)
	}
	var extra []store.IssueVersion
	for _, i := range m.Issues {
		f, ok := first[i.Number]
		if ok && !f.After(i.CreatedAt) {
			continue
		}
		for _, v := range FromTimeline(i, deps[i.Number], timeline[i.Number]) {
			if !ok || v.ValidFrom.Before(f) {
				extra = append(extra, v)
			}
		}
	}
	if len(extra) == 0 {
		return versions
	}
	out := append(slices.Clone(versions), extra...)
	slices.SortStableFunc(out, func(a, b store.IssueVersion) int {
		if a.Number != b.Number {
			return cmp.Compare(a.Number, b.Number)
		}
		return a.ValidFrom.Compare(b.ValidFrom)
	})
	return out
}
