package scheduler

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func whatIfProject(seed uint64) Input {
	return genProject(seed, genSpec{issues: 80, people: 4, milestones: 3, depFrac: 0.3, unassignedFrac: 0.2, missingEstFrac: 0.1, steepingFrac: 0.2})
}

// A what-if that changes nothing says so, whatever the no-op.
func TestWhatIfNoChange(t *testing.T) {
	in := whatIfProject(3)
	open := in.Issues[30]
	noops := [][]Change{
		nil,
		{{Kind: SetEstimate, Issue: open.Number, Estimate: open.Estimate}},
		{{Kind: SetPriority, Issue: open.Number, Priority: open.Priority}},
		{{Kind: SetMilestone, Issue: open.Number, Milestone: open.Milestone}},
		{{Kind: SetHardness, Milestone: 1, Hard: in.Milestones[0].Hard}},
		{{Kind: SetDueDate, Milestone: 2, Due: in.Milestones[1].Due}},
	}
	for _, changes := range noops {
		res, err := WhatIf(in, changes, Options{Trials: 300})
		if err != nil {
			t.Fatal(err)
		}
		if res.Changed || res.Consequence != "no change" || len(res.Milestones) != 0 || len(res.Issues) != 0 {
			t.Errorf("%+v: %q, %d milestones, %d issues", changes, res.Consequence, len(res.Milestones), len(res.Issues))
		}
	}
}

// Common random numbers: a change reaches only what depends on it. An
// issue nobody shares a person or a dependency with stays put.
func TestWhatIfTouchesOnlyWhatItChanges(t *testing.T) {
	in := Input{
		Now:        genNow,
		People:     []Person{{Login: "ann"}, {Login: "bob"}},
		Milestones: []Milestone{{ID: 1, Title: "v1.2", Due: genNow.AddDate(0, 0, 20)}, {ID: 2, Title: "v2", Due: genNow.AddDate(0, 1, 0)}},
		Issues: []Issue{
			{Number: 1, State: Steeping, Estimate: SizeM, Assignee: "ann", Milestone: 1},
			{Number: 2, State: Steeping, Estimate: SizeL, Assignee: "ann", Milestone: 1, DependsOn: []int64{1}},
			{Number: 3, State: Steeping, Estimate: SizeM, Assignee: "bob", Milestone: 2},
		},
	}
	res, err := WhatIf(in, []Change{{Kind: SetEstimate, Issue: 1, Estimate: SizeXL}}, Options{Trials: 500})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Milestones) != 1 || res.Milestones[0].ID != 1 {
		t.Fatalf("milestones: %+v", res.Milestones)
	}
	for _, d := range res.Issues {
		if d.Number == 3 {
			t.Fatalf("issue 3 moved: %+v → %+v", d.Before, d.After)
		}
	}
	if len(res.Issues) != 2 {
		t.Errorf("issues: %+v", res.Issues)
	}
	d := res.Milestones[0]
	if d.P80ShiftDays <= 0 || !d.After.P80.After(d.Before.P80) {
		t.Errorf("bigger estimate did not move v1.2: %+v", d)
	}
	if !strings.HasPrefix(res.Consequence, "v1.2 p80 moves ") || !strings.Contains(res.Consequence, "working days); slack ") {
		t.Errorf("consequence %q", res.Consequence)
	}
	t.Log(res.Consequence)
}

func TestWhatIfKinds(t *testing.T) {
	in := whatIfProject(5)
	before, _ := json.Marshal(in)
	a, b := in.Issues[40].Number, in.Issues[45].Number
	changes := []Change{
		{Kind: SetEstimate, Issue: a, Estimate: SizeXL},
		{Kind: SetPriority, Issue: a, Priority: 0},
		{Kind: SetMilestone, Issue: b, Milestone: 1},
		{Kind: SetDueDate, Milestone: 1, Due: genNow.AddDate(0, 0, 10)},
		{Kind: SetHardness, Milestone: 2, Hard: true},
		{Kind: AddDep, Issue: b, DependsOn: a},
		{Kind: CloseIssue, Issue: in.Issues[50].Number},
		{Kind: AddIssue, NewIssue: &Issue{Title: "spike", Estimate: SizeL, Milestone: 1, Assignee: "dev00"}},
		{Kind: AddIssue, NewIssue: &Issue{Title: "spike 2", Estimate: SizeS, DependsOn: []int64{a}}},
		{Kind: SetCapacity, Person: "dev01", HoursPerDay: 2, TimeOff: []DateRange{{From: genNow.AddDate(0, 0, 3), To: genNow.AddDate(0, 0, 12)}}},
		{Kind: SetCapacity, Person: "newhire", HoursPerDay: 6},
	}
	res, err := WhatIf(in, changes, Options{Trials: 300})
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := json.Marshal(in); string(after) != string(before) {
		t.Fatal("WhatIf modified its input")
	}
	top := in.Issues[len(in.Issues)-1].Number
	if !res.Changed || len(res.Proposed) != 2 || res.Proposed[0] != top+1 || res.Proposed[1] != top+2 {
		t.Fatalf("result: changed %v proposed %v, highest number %d", res.Changed, res.Proposed, top)
	}
	var sawNew bool
	for _, d := range res.Issues {
		if d.Number == top+1 && d.Before == nil && d.After != nil && !d.After.P50.IsZero() && d.Title == "spike" {
			sawNew = true
		}
	}
	if !sawNew {
		t.Errorf("proposed issue %d missing from the deltas", top+1)
	}
	changed, _, err := ApplyChanges(in, changes)
	if err != nil {
		t.Fatal(err)
	}
	if is := changed.Issues[40]; is.Estimate != SizeXL || is.Priority != 0 || !containsStr(is.Labels, "est/xl") || !containsStr(is.Labels, "p/0") {
		t.Errorf("issue a after changes: %+v", is)
	}
	if changed.Issues[50].State != Done || len(changed.People) != len(in.People)+1 || changed.People[1].Calendar.HoursPerDay != 2 {
		t.Error("close or capacity not applied")
	}
	// A removed dependency goes again.
	back, _, err := ApplyChanges(changed, []Change{{Kind: RemoveDep, Issue: b, DependsOn: a}})
	if err != nil || containsInt(back.Issues[45].DependsOn, a) {
		t.Errorf("remove_dep: %v %v", err, back.Issues[45].DependsOn)
	}

	bad := [][]Change{
		{{Kind: SetEstimate, Issue: 99999, Estimate: SizeS}},
		{{Kind: SetEstimate, Issue: a, Estimate: "huge"}},
		{{Kind: SetPriority, Issue: a, Priority: 7}},
		{{Kind: SetDueDate, Milestone: 42}},
		{{Kind: AddDep, Issue: a, DependsOn: a}},
		{{Kind: RemoveDep, Issue: a, DependsOn: 12345}},
		{{Kind: AddIssue}},
		{{Kind: SetCapacity}},
		{{Kind: "rename"}},
	}
	for _, changes := range bad {
		if _, err := WhatIf(in, changes, Options{Trials: 50}); err == nil {
			t.Errorf("%+v accepted", changes)
		}
	}
}

// More work through a what-if never moves a milestone earlier.
func TestWhatIfMoreWorkNeverEarlier(t *testing.T) {
	for seed := range uint64(6) {
		in := genProject(seed, genSpec{issues: 60, people: 4, milestones: 3, depFrac: 0.3, unassignedFrac: 0.3, missingEstFrac: 0.1, steepingFrac: 0.2})
		// Within a plan, who picks up unassigned work stays put.
		base, err := Run(in, Options{Trials: 300})
		if err != nil {
			t.Fatal(err)
		}
		in.Planned = base.Planned()
		r := rand.New(rand.NewPCG(seed, 3))
		target := in.Issues[20+r.IntN(60)]
		res, err := WhatIf(in, []Change{
			{Kind: SetEstimate, Issue: target.Number, Estimate: SizeXL},
			{Kind: AddIssue, NewIssue: &Issue{Estimate: SizeM, Assignee: "dev02", Milestone: 1 + int64(r.IntN(3))}},
			{Kind: AddIssue, NewIssue: &Issue{Estimate: SizeS, Milestone: 1 + int64(r.IntN(3))}},
		}, Options{Trials: 300})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range res.Milestones {
			if d.Before == nil || d.After == nil {
				continue
			}
			if d.After.P50.Before(d.Before.P50) || d.After.P80.Before(d.Before.P80) || d.After.PDue > d.Before.PDue {
				t.Fatalf("seed %d: %s earlier with more work: %+v → %+v", seed, d.Title, d.Before, d.After)
			}
		}
	}
}

func TestConsequenceWording(t *testing.T) {
	now := time.Date(2026, 2, 20, 0, 0, 0, 0, time.UTC)
	b := &MilestoneForecast{ID: 1, Title: "v1.2", Due: time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC), P80: time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC), SlackDays: 3}
	a := *b
	a.P80, a.SlackDays = time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), -2
	got := consequence(now, WhatIfResult{Changed: true, Milestones: []MilestoneDelta{{ID: 1, Title: "v1.2", Before: b, After: &a, P80ShiftDays: 5}}})
	if want := "v1.2 p80 moves Mar 3 → Mar 10 (+5 working days); slack −2d"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func containsInt(list []int64, n int64) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}

// A fresh plan gives unassigned work to whoever frees up first, so a hire
// takes some of it; within a plan (Input.Planned) it stays where it was.
func TestWhatIfHireTakesUnassignedWork(t *testing.T) {
	in := Input{
		Now:        genNow,
		People:     []Person{{Login: "ann"}},
		Milestones: []Milestone{{ID: 1, Title: "v1", Due: genNow.AddDate(0, 0, 10)}},
	}
	for k := range 8 {
		in.Issues = append(in.Issues, Issue{Number: int64(k + 1), State: Triage, Estimate: SizeM, Milestone: 1})
	}
	res, err := WhatIf(in, []Change{{Kind: SetCapacity, Person: "zed", HoursPerDay: 6}}, Options{Trials: 300})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Milestones) != 1 || !res.Milestones[0].After.P80.Before(res.Milestones[0].Before.P80) {
		t.Fatalf("a hire should bring v1 forward: %+v (%s)", res.Milestones, res.Consequence)
	}
	var zed int
	for _, d := range res.Issues {
		if d.After != nil && d.After.Assignee == "zed" {
			zed++
		}
	}
	if zed == 0 {
		t.Error("the hire took no unassigned issue")
	}
	t.Log(res.Consequence)

	base, err := Run(in, Options{Trials: 300})
	if err != nil {
		t.Fatal(err)
	}
	in.Planned = base.Planned()
	if res, err = WhatIf(in, []Change{{Kind: SetCapacity, Person: "zed", HoursPerDay: 6}}, Options{Trials: 300}); err != nil || res.Changed {
		t.Errorf("a hire within a plan moved work: %v %s", err, res.Consequence)
	}
}
