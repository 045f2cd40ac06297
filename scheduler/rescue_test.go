package scheduler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// rescueProject is a small generated project with one milestone at risk
// more often than not: two or three people, an at-risk milestone of four to
// eight open issues (some deadline/hard, some started, a few dependencies)
// due in two to four weeks, and a later milestone.
func rescueProject(seed uint64) Input {
	r := rand.New(rand.NewPCG(seed, 0x4e5c))
	in := Input{Now: genNow, Calibration: Calibration{N: 30, GlobalMultiplier: 1.2, Sigma: 0.4}}
	for k := range 2 + r.IntN(2) {
		cal := Calendar{HoursPerDay: []float64{4, 5, 6}[r.IntN(3)], Location: time.UTC}
		for d := time.Monday; d <= time.Friday; d++ {
			cal.WorkingDays[d] = true
		}
		in.People = append(in.People, Person{Login: fmt.Sprintf("p%d", k), Calendar: cal})
	}
	due := time.Date(2026, 12, 14+r.IntN(14), 23, 59, 59, 0, time.UTC)
	in.Milestones = []Milestone{
		{ID: 1, Title: "v1", Due: due, Hard: r.IntN(3) == 0},
		{ID: 2, Title: "v2", Due: due.AddDate(0, 2, 0)},
	}
	sizes := []Size{SizeS, SizeM, SizeM, SizeL, SizeXL}
	n := int64(0)
	add := func(ms int64) *Issue {
		n++
		is := Issue{Number: n, Title: fmt.Sprintf("issue %d", n), State: Triage, Estimate: sizes[r.IntN(len(sizes))],
			Priority: r.IntN(4), Milestone: ms}
		is.Labels = []string{"est/" + string(is.Estimate), fmt.Sprintf("p/%d", is.Priority)}
		if r.IntN(3) == 0 {
			is.Assignee, is.State = in.People[r.IntN(len(in.People))].Login, Steeping
			is.SpentHours = float64(r.IntN(4))
		}
		if r.IntN(4) == 0 {
			is.HardDeadline = true
			is.Labels = append(is.Labels, "deadline/hard")
		}
		if n > 1 && r.IntN(5) == 0 {
			is.DependsOn = []int64{1 + r.Int64N(n-1)}
		}
		in.Issues = append(in.Issues, is)
		return &in.Issues[len(in.Issues)-1]
	}
	for range 4 + r.IntN(5) {
		add(1)
	}
	for range 2 + r.IntN(3) {
		add(2)
	}
	return in
}

const rescueTestTrials = 200

func rescueOf(t *testing.T, in Input) ([]MilestoneRescue, Forecast) {
	t.Helper()
	base := mustRun(t, in, Options{Trials: rescueTestTrials, Seed: 7})
	in.Planned = base.Planned()
	res, err := Rescue(in, base, RescueConfig{Trials: rescueTestTrials})
	if err != nil {
		t.Fatal(err)
	}
	return res, base
}

// TestRescueProperty: on small generated projects, no option touches
// deadline/hard work or moves a hard date, every option's changes apply,
// its quoted band is what a forecast of them reads and is better than
// before, and "cut scope" moves no more issues than a brute-force search
// over every subset of the milestone's movable work needs.
func TestRescueProperty(t *testing.T) {
	t.Parallel()
	atRisk, cuts, options := 0, 0, 0
	for seed := range uint64(40) {
		in := rescueProject(seed + 1)
		res, base := rescueOf(t, in)
		in.Planned = base.Planned()
		hard := map[int64]bool{}
		for _, is := range in.Issues {
			hard[is.Number] = is.HardDeadline
		}
		for _, r := range res {
			atRisk++
			if r.Note == "" {
				t.Errorf("seed %d: milestone %s has no note", seed+1, r.Title)
			}
			for _, o := range r.Options {
				options++
				for _, c := range o.Changes {
					switch {
					case c.Kind == SetMilestone && hard[c.Issue]:
						t.Errorf("seed %d: %s moves deadline/hard #%d", seed+1, o.Summary, c.Issue)
					case c.Kind == SetPriority && c.Priority == 3 && hard[c.Issue]:
						t.Errorf("seed %d: %s lowers deadline/hard #%d", seed+1, o.Summary, c.Issue)
					case c.Kind == SetDueDate && r.Hard:
						t.Errorf("seed %d: %s moves a hard date", seed+1, o.Summary)
					case c.Kind == SetHardness || c.Kind == CloseIssue || c.Kind == RemoveLabel:
						t.Errorf("seed %d: %s makes a %s change", seed+1, o.Summary, c.Kind)
					}
				}
				changed, _, err := ApplyChanges(in, o.Changes)
				if err != nil {
					t.Fatalf("seed %d: %s does not apply: %v", seed+1, o.Summary, err)
				}
				got := BandOf(milestoneOf(mustRun(t, changed, Options{Trials: rescueTestTrials, Seed: base.Seed}), r.Milestone))
				if got != o.After {
					t.Errorf("seed %d: %s quoted %+v, a forecast of it reads %+v", seed+1, o.Summary, o.After, got)
				}
				if o.After.PDue < r.Before.PDue || o.After.PDue == r.Before.PDue && o.After.P80 >= r.Before.P80 {
					t.Errorf("seed %d: %s is no better: %+v -> %+v", seed+1, o.Summary, r.Before, o.After)
				}
				if o.Summary == "" || o.CostText == "" {
					t.Errorf("seed %d: option without words: %+v", seed+1, o)
				}
			}
			for k := 1; k < len(r.Options); k++ {
				if r.Options[k].After.PDue > r.Options[k-1].After.PDue {
					t.Errorf("seed %d: options not ranked by chance: %v", seed+1, r.Options)
				}
			}
			need := bruteForceCut(t, in, base.Seed, r.Milestone)
			k := slices.IndexFunc(r.Options, func(o RescueOption) bool { return o.Kind == RescueCutScope })
			switch {
			case k >= 0 && r.Options[k].Makes:
				cuts++
				if need < 0 || r.Options[k].Cost.IssuesMoved > need {
					t.Errorf("seed %d: cut scope moves %d issues (%s); brute force needs %d", seed+1, r.Options[k].Cost.IssuesMoved, r.Options[k].Summary, need)
				}
			case need > 0:
				t.Errorf("seed %d: no cut scope that makes %s, brute force moves %d issues", seed+1, r.Title, need)
			}
		}
	}
	t.Logf("%d milestones at risk, %d options, %d cut scopes that make the date", atRisk, options, cuts)
	if atRisk < 15 || cuts < 5 {
		t.Fatalf("too few cases: %d at risk, %d cuts", atRisk, cuts)
	}
}

// bruteForceCut is the fewest open, not deadline/hard issues of milestone
// id that, moved to the next milestone (v2, never hard here), bring its
// p80 on or before its due date; -1 when no subset does.
func bruteForceCut(t *testing.T, in Input, seed uint64, id int64) int {
	t.Helper()
	var movable []int64
	for _, is := range in.Issues {
		if is.Milestone == id && is.State != Done && !is.HardDeadline {
			movable = append(movable, is.Number)
		}
	}
	best := -1
	for mask := 1; mask < 1<<len(movable); mask++ {
		k := popcount(mask)
		if best >= 0 && k >= best {
			continue
		}
		var cs []Change
		for i, n := range movable {
			if mask&(1<<i) != 0 {
				cs = append(cs, Change{Kind: SetMilestone, Issue: n, Milestone: 2})
			}
		}
		changed, _, err := ApplyChanges(in, cs)
		if err != nil {
			t.Fatal(err)
		}
		if makes(milestoneOf(mustRun(t, changed, Options{Trials: rescueTestTrials, Seed: seed}), id)) {
			best = k
		}
	}
	return best
}

// TestRescueCannotMakeAHardDate: a hard milestone due tomorrow whose work
// is all deadline/hard and far more than anyone can do gets no option that
// drops or moves anything hard, and the answer says the date cannot be
// made within the rules.
func TestRescueCannotMakeAHardDate(t *testing.T) {
	t.Parallel()
	in := rescueProject(3)
	in.Milestones[0].Hard = true
	in.Milestones[0].Due = time.Date(2026, 12, 2, 23, 59, 59, 0, time.UTC)
	for k := range in.Issues {
		is := &in.Issues[k]
		if is.Milestone == 1 {
			is.HardDeadline, is.Estimate = true, SizeXL
			is.Labels = []string{"est/xl", "deadline/hard"}
		}
	}
	res, _ := rescueOf(t, in)
	if len(res) != 1 {
		t.Fatalf("rescues = %+v", res)
	}
	r := res[0]
	if !r.CannotMake || !strings.Contains(r.Note, "within the rules") {
		t.Fatalf("the answer does not say the date cannot be made: %+v", r)
	}
	for _, o := range r.Options {
		if o.Makes {
			t.Errorf("an option makes an impossible date: %+v", o)
		}
		for _, c := range o.Changes {
			if c.Kind == SetMilestone || c.Kind == SetDueDate || c.Kind == CloseIssue {
				t.Errorf("an option drops hard work or moves the hard date: %+v", o)
			}
		}
	}
	t.Logf("%s", r.Note)
}

// TestRescueMovesANonHardDate: a milestone whose date is not hard gets a
// move-the-date option whose new due date its p80 makes.
func TestRescueMovesANonHardDate(t *testing.T) {
	t.Parallel()
	in := rescueProject(3)
	in.Milestones[0].Hard = false
	in.Milestones[0].Due = time.Date(2026, 12, 4, 23, 59, 59, 0, time.UTC)
	res, _ := rescueOf(t, in)
	if len(res) != 1 {
		t.Fatalf("rescues = %+v", res)
	}
	k := slices.IndexFunc(res[0].Options, func(o RescueOption) bool { return o.Kind == RescueMoveDate })
	if k < 0 {
		t.Fatalf("no move-the-date option: %+v", res[0])
	}
	o := res[0].Options[k]
	if !o.Makes || o.After.PDue < AtRiskPDue || len(o.Changes) != 1 || !o.Changes[0].Due.After(in.Milestones[0].Due) {
		t.Fatalf("move the date: %+v", o)
	}
}
