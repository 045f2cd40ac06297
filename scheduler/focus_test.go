package scheduler

import (
	"encoding/json"
	"strings"
	"testing"
)

func focusProject() Input {
	return Input{
		Now:    genNow,
		People: []Person{{Login: "ann"}, {Login: "bob"}},
		Milestones: []Milestone{
			{ID: 1, Title: "v1.2", Due: genNow.AddDate(0, 0, 10), Hard: true},
			{ID: 2, Title: "v2", Due: genNow.AddDate(0, 3, 0)},
		},
		Issues: []Issue{
			{Number: 1, Title: "low", State: Steeping, Estimate: SizeS, Priority: 3, Assignee: "ann"},
			{Number: 2, Title: "in progress", State: Steeping, Estimate: SizeM, Priority: 2, Assignee: "ann", Milestone: 2, SpentHours: 3},
			{Number: 3, Title: "urgent", State: Steeping, Estimate: SizeM, Priority: 0, Assignee: "ann", Milestone: 1},
			{Number: 4, Title: "blocked", State: Steeping, Estimate: SizeS, Priority: 0, Assignee: "ann", Milestone: 1, DependsOn: []int64{3}},
			{Number: 5, Title: "bob's", State: Steeping, Estimate: SizeS, Priority: 1, Assignee: "bob", Milestone: 2},
			{Number: 6, Title: "pool", State: Triage, Estimate: SizeS, Priority: 2, Milestone: 2},
			{Number: 7, Title: "unblocker", State: Steeping, Estimate: SizeS, Priority: 1, Assignee: "ann", Milestone: 2},
			{Number: 8, Title: "waits", State: Triage, Estimate: SizeS, Priority: 2, Milestone: 2, DependsOn: []int64{7}},
		},
	}
}

func TestFocusPerson(t *testing.T) {
	in := focusProject()
	f := mustRun(t, in, Options{Trials: 400})
	res := Focus(in, f, "ann", genNow)
	if res.Now == nil || res.Now.Number != 2 {
		t.Fatalf("now should be the issue in progress: %+v", res.Now)
	}
	if !strings.HasPrefix(res.Now.Rationale, "in progress (3h spent); p/2") {
		t.Errorf("now rationale %q", res.Now.Rationale)
	}
	var nums []int64
	for _, x := range res.Next {
		nums = append(nums, x.Number)
	}
	if len(nums) != 3 || nums[0] != 3 || nums[1] != 7 {
		t.Fatalf("next: %v", nums)
	}
	if !strings.Contains(res.Next[0].Rationale, "p/0; hard deadline; v1.2 due") || !strings.Contains(res.Next[0].Rationale, "unblocks 1 issue") {
		t.Errorf("rationale %q", res.Next[0].Rationale)
	}
	var blocked *FocusItem
	for i, x := range res.Later {
		if x.Number == 4 {
			blocked = &res.Later[i]
		}
		if x.Number == 5 {
			t.Error("bob's issue in ann's focus")
		}
	}
	if blocked == nil || !strings.Contains(blocked.Rationale, "blocked by #3") {
		t.Errorf("blocked issue should be later with its blocker: %+v", res.Later)
	}
	// Deterministic.
	a, _ := json.Marshal(res)
	b, _ := json.Marshal(Focus(in, mustRun(t, in, Options{Trials: 400}), "ann", genNow))
	if string(a) != string(b) {
		t.Error("focus not deterministic")
	}
}

func TestFocusTeam(t *testing.T) {
	in := focusProject()
	f := mustRun(t, in, Options{Trials: 400})
	res := Focus(in, f, "", genNow)
	if res.Now == nil || res.Now.Number != 2 {
		t.Fatalf("team now: %+v", res.Now)
	}
	total := 1 + len(res.Next) + len(res.Later)
	if total != len(in.Issues) {
		t.Errorf("team focus lists %d issues, want %d", total, len(in.Issues))
	}
	for _, x := range append(res.Next, res.Later...) {
		if x.Number == 6 && !strings.Contains(x.Rationale, "unassigned") {
			t.Errorf("pool issue rationale %q", x.Rationale)
		}
	}
}

func TestRunway(t *testing.T) {
	in := focusProject()
	in.People[1].Calendar = Calendar{HoursPerDay: 8}
	f := mustRun(t, in, Options{Trials: 300})
	r := Runway(in, f)
	if len(r.Milestones) != 2 || r.Milestones[0].Milestone != "v1.2" || !r.Milestones[0].Hard {
		t.Fatalf("milestones: %+v", r.Milestones)
	}
	for _, m := range r.Milestones {
		if m.Band.P80.Before(m.Band.P50) {
			t.Errorf("band inverted: %+v", m)
		}
	}
	if len(r.Capacity) != 2 || r.Capacity[0].HoursPerWeek != 30 || r.Capacity[1].HoursPerWeek != 40 {
		t.Fatalf("capacity: %+v", r.Capacity)
	}
	if r.Capacity[0].LoadHours <= 0 || r.Capacity[0].LoadWeeks <= 0 {
		t.Errorf("ann has work: %+v", r.Capacity[0])
	}
}
