package history

import (
	"slices"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
)

func TestFromTimelineAndAt(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	h := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Hour) }
	ms := func(id int64) *int64 { return &id }
	closed := h(30)
	issue := store.Issue{Number: 5, State: "closed", ClosedAt: &closed, CreatedAt: t0, UpdatedAt: closed,
		Labels: []string{"est/m", "p/1"}, Milestone: ms(2), Assignees: []string{"bruno"}}
	deps := []store.Dependency{{Issue: 5, DependsOn: 3}, {Issue: 5, DependsOn: 9, DependsOnRepo: "other/repo"}}
	events := []store.TimelineEvent{
		{ID: 1, Kind: "label", Label: "est/s", CreatedAt: t0},
		{ID: 2, Kind: "label", Label: "p/1", CreatedAt: t0},
		{ID: 3, Kind: "milestone", Milestone: ms(1), CreatedAt: t0},
		{ID: 4, Kind: "add_dependency", RefIssue: 3, CreatedAt: h(2)},
		{ID: 5, Kind: "assignees", Assignee: "amara", CreatedAt: h(4)},
		{ID: 6, Kind: "label", Label: "est/s", Removed: true, CreatedAt: h(5)},
		{ID: 7, Kind: "label", Label: "est/m", CreatedAt: h(5)},
		{ID: 8, Kind: "milestone", Milestone: ms(2), CreatedAt: h(6)},
		{ID: 9, Kind: "assignees", Assignee: "amara", Removed: true, CreatedAt: h(8)},
		{ID: 10, Kind: "assignees", Assignee: "bruno", CreatedAt: h(8)},
		{ID: 11, Kind: "close", CreatedAt: h(20)},
		{ID: 12, Kind: "reopen", CreatedAt: h(22)},
		{ID: 13, Kind: "close", CreatedAt: closed},
	}
	vs := FromTimeline(issue, deps, events)
	if !vs[0].ValidFrom.Equal(t0) || vs[len(vs)-1].State != "closed" {
		t.Fatalf("versions %+v: want the first at creation, the last closed", vs)
	}
	m := store.Mirror{Issues: []store.Issue{{Number: 3, CreatedAt: t0.Add(-time.Hour), UpdatedAt: t0, State: "open"}, issue},
		Dependencies: deps, Milestones: []store.Milestone{{ID: 1, State: "closed", ClosedAt: &closed}}}
	cases := []struct {
		at        time.Time
		state     string
		labels    []string
		milestone int64
		assignees []string
		deps      []int64
	}{
		{h(1), "open", []string{"est/s", "p/1"}, 1, nil, nil},
		{h(3), "open", []string{"est/s", "p/1"}, 1, nil, []int64{3}},
		{h(5), "open", []string{"est/m", "p/1"}, 1, []string{"amara"}, []int64{3}},
		{h(7), "open", []string{"est/m", "p/1"}, 2, []string{"amara"}, []int64{3}},
		{h(9), "open", []string{"est/m", "p/1"}, 2, []string{"bruno"}, []int64{3}},
		{h(21), "closed", []string{"est/m", "p/1"}, 2, []string{"bruno"}, []int64{3}},
		{h(25), "open", []string{"est/m", "p/1"}, 2, []string{"bruno"}, []int64{3}},
		{h(31), "closed", []string{"est/m", "p/1"}, 2, []string{"bruno"}, []int64{3}},
	}
	for _, c := range cases {
		got := At(m, vs, c.at)
		if len(got.Issues) != 2 {
			t.Fatalf("at %v: %d issues, want 2", c.at, len(got.Issues))
		}
		i := got.Issues[1]
		slices.Sort(i.Labels)
		var d []int64
		for _, x := range got.Dependencies {
			if x.Issue == 5 && x.DependsOnRepo == "" {
				d = append(d, x.DependsOn)
			}
		}
		if i.State != c.state || !slices.Equal(i.Labels, c.labels) || i.Milestone == nil || *i.Milestone != c.milestone ||
			!slices.Equal(i.Assignees, c.assignees) || !slices.Equal(d, c.deps) {
			t.Errorf("at +%v: state %s labels %v milestone %v assignees %v deps %v; want %s %v %d %v %v",
				c.at.Sub(t0), i.State, i.Labels, i.Milestone, i.Assignees, d, c.state, c.labels, c.milestone, c.assignees, c.deps)
		}
		if c.state == "closed" && (i.ClosedAt == nil || i.ClosedAt.After(c.at)) {
			t.Errorf("at +%v: closed at %v", c.at.Sub(t0), i.ClosedAt)
		}
		if want := c.at.After(closed); (got.Milestones[0].State == "closed") != want {
			t.Errorf("at +%v: milestone 1 %s", c.at.Sub(t0), got.Milestones[0].State)
		}
	}
	if got := At(m, vs, t0.Add(-30*time.Minute)); len(got.Issues) != 1 || len(got.Dependencies) != 0 {
		t.Errorf("before #5 was filed: %d issues, %d dependencies; want 1, 0", len(got.Issues), len(got.Dependencies))
	}
}

// An issue closed without a close event (a bulk import) was open until
// its closing time, not from its creation.
func TestFromTimelineClosedWithoutEvent(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	closed := t0.Add(48 * time.Hour)
	issue := store.Issue{Number: 1, State: "closed", ClosedAt: &closed, CreatedAt: t0, UpdatedAt: closed}
	vs := FromTimeline(issue, nil, nil)
	if len(vs) != 2 || vs[0].State != "open" || vs[1].State != "closed" || !vs[1].ValidFrom.Equal(closed) {
		t.Fatalf("versions %+v: want open from creation, closed from %v", vs, closed)
	}
}

// An issue mirrored before the history was kept gets the start of its
// history from the mirrored timeline.
func TestCompleteFromMirroredTimeline(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	later := t0.Add(72 * time.Hour)
	issue := store.Issue{Number: 2, State: "open", CreatedAt: t0, UpdatedAt: later, Labels: []string{"est/s"}, Assignees: []string{"chen"}}
	m := store.Mirror{Issues: []store.Issue{issue}, Timeline: []store.TimelineEvent{
		{ID: 1, Issue: 2, Kind: "label", Label: "est/s", CreatedAt: t0},
		{ID: 2, Issue: 2, Kind: "assignees", Assignee: "chen", CreatedAt: t0.Add(24 * time.Hour)},
	}}
	recorded := []store.IssueVersion{{Number: 2, ValidFrom: later, State: "open", Labels: []string{"est/s", "p/1"}, Assignees: []string{"chen"}}}
	vs := Complete(m, recorded)
	if len(vs) != 3 || !vs[0].ValidFrom.Equal(t0) || len(vs[0].Assignees) != 0 || !vs[2].ValidFrom.Equal(later) {
		t.Fatalf("completed history %+v", vs)
	}
	if got := At(m, vs, t0.Add(time.Hour)).Issues[0]; len(got.Assignees) != 0 {
		t.Errorf("an hour after filing: assignees %v", got.Assignees)
	}
}
