package standup

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/worker/prose"
)

// agingDay is twoDays with flow figures: 85% of finished work took at most
// 9 days; #40 (cid) has been in progress for 23 days and #11 (ann) for 12,
// both aging; #20's 4 days are not.
func agingDay() Input {
	in := twoDays()
	in.Snapshot.SLE = scheduler.SLE{Percentile: 85, Days: 9, N: 41}
	in.Snapshot.FlowWindowDays = 90
	in.Snapshot.Age = []scheduler.WorkItemAge{
		{Number: 40, State: scheduler.Steeping, StartDay: "2026-11-10", Days: 23, Past: 95, Aging: true},
		{Number: 11, State: scheduler.InReview, StartDay: "2026-11-21", Days: 12, Past: 85, Aging: true},
		{Number: 20, State: scheduler.Steeping, StartDay: "2026-11-29", Days: 4},
	}
	return in
}

func TestAgingSection(t *testing.T) {
	r := Build(agingDay())
	want := []AgingItem{
		{Number: 40, Title: "Schema", Assignee: "cid", State: scheduler.Steeping, AgeDays: 23, Since: "2026-11-10", Past: 95},
		{Number: 11, Title: "Session store", Assignee: "ann", State: scheduler.InReview, AgeDays: 12, Since: "2026-11-21", Past: 85},
	}
	if !slices.Equal(r.Aging.Items, want) || r.Aging.SLE.Days != 9 {
		t.Fatalf("aging = %+v", r.Aging)
	}
	text := Template(r)
	for _, line := range []string{
		"Aging work older than the service level expectation (85% of finished work took at most 9 days)",
		"- #40 Schema (cid, steeping): 23 days in progress, since 2026-11-10 [past the 95th percentile]",
		"- #11 Session store (ann, in_review): 12 days in progress, since 2026-11-21 [past the 85th percentile]",
	} {
		if !strings.Contains(text, line) {
			t.Errorf("template lacks %q:\n%s", line, text)
		}
	}
	facts, err := Facts(r, Known{}, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if err := prose.Check(text, facts); err != nil {
		t.Errorf("the template does not pass its own check: %v\n%s", err, text)
	}
	// The section's issues are subjects a complete text must name.
	var names []string
	for _, s := range r.Subjects() {
		names = append(names, s.Mention())
	}
	if !slices.Contains(names, "#40") || !slices.Contains(names, "#11") {
		t.Errorf("subjects %v lack the aging issues", names)
	}
}

func TestAgingSectionWithoutAnSLE(t *testing.T) {
	in := agingDay()
	in.Snapshot.SLE = scheduler.SLE{Percentile: 85, N: 3}
	for i := range in.Snapshot.Age {
		in.Snapshot.Age[i].Aging = false
	}
	text := Template(Build(in))
	if !strings.Contains(text, "Aging work: no service level expectation yet: 3 finished issues with a cycle time, 5 needed.") {
		t.Errorf("template:\n%s", text)
	}
	in.Snapshot.SLE = scheduler.SLE{Percentile: 85, Days: 30, N: 40}
	if text := Template(Build(in)); !strings.Contains(text, "Aging work: none; all work in progress is within the service level expectation (85% of finished work took at most 30 days).") {
		t.Errorf("template:\n%s", text)
	}
	// Many aging issues: the first ten and a count.
	in = agingDay()
	in.Snapshot.Age = nil
	for n := int64(100); n < 113; n++ {
		in.Snapshot.Age = append(in.Snapshot.Age, scheduler.WorkItemAge{Number: n, State: scheduler.Steeping, Days: 40, StartDay: "2026-10-24", Past: 95, Aging: true})
	}
	r := Build(in)
	if len(r.Aging.Items) != 10 || r.Aging.More != 3 || !strings.Contains(Template(r), "3 more") {
		t.Errorf("capped aging = %d items, %d more", len(r.Aging.Items), r.Aging.More)
	}
}
