package standup

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/worker/prose"
)

// atRiskDay is twoDays with v1.0 at risk (p80 after its hard due date,
// 12% chance), #22 (est/xl, on v1.0's critical chain in 88% of trials)
// scheduled next for dana, #11 on the chain in 64%, and v2.0 without a
// due date, whose #30 is on its own chain.
func atRiskDay() Input {
	in := twoDays()
	ms := in.Snapshot.Forecast.Milestones
	ms[0].Open, ms[0].Hard, ms[0].PDue, ms[0].SlackDays = 3, true, 0.1234, -1.5
	ms[1].Open = 1
	in.Snapshot.Statuses = append(in.Snapshot.Statuses, scheduler.IssueStatus{Number: 22, State: scheduler.Triage, Estimate: "xl"})
	in.Issues = append(in.Issues, Issue{Number: 22, Title: "Payment gateway", Milestone: 1})
	fs := in.Snapshot.Forecast.Issues
	for i := range fs {
		switch fs[i].Number {
		case 11:
			fs[i].CriticalFreq = 0.64
		case 20:
			fs[i].CriticalFreq = 0.3
		case 30:
			fs[i].CriticalFreq = 0.71
		}
	}
	in.Snapshot.Forecast.Issues = append(fs, scheduler.IssueForecast{Number: 22, P50: at(9), Assignee: "dana", Unassigned: true, CriticalFreq: 0.88})
	in.Snapshot.Capacity = []scheduler.RunwayCapacity{{Login: "dana", HoursPerWeek: 9, LoadWeeks: 4.4, FreeFromP50: at(30)}}
	return in
}

func TestAtRiskMilestonesAndTheirChains(t *testing.T) {
	r := Build(atRiskDay())
	if len(r.AtRisk) != 1 {
		t.Fatalf("at risk = %+v, want v1.0 only (v2.0 has no due date)", r.AtRisk)
	}
	a := r.AtRisk[0]
	if a.Milestone != 1 || a.Title != "v1.0" || !a.Hard || a.Late || a.Chance != 0.12 || a.Due != "2026-12-16" || a.P80 != "2026-12-18" || a.Open != 3 {
		t.Errorf("at risk = %+v", a)
	}
	var chain []int64
	for _, c := range a.Chain {
		chain = append(chain, c.Number)
	}
	if !slices.Equal(chain, []int64{22, 11}) || a.Chain[0].Share != 0.88 || a.Chain[0].Assignee != "dana" {
		t.Errorf("chain = %+v, want #22 (88%%, dana) then #11; #20 is under half the trials", a.Chain)
	}
	// When no issue is on the chain in half the trials, the likeliest
	// links are listed all the same.
	in := atRiskDay()
	for i := range in.Snapshot.Forecast.Issues {
		in.Snapshot.Forecast.Issues[i].CriticalFreq /= 4
	}
	if c := Build(in).AtRisk[0].Chain; len(c) != 3 || c[0].Number != 22 {
		t.Errorf("weak chain = %+v, want the three likeliest", c)
	}
}

func TestPlanFlagsCriticalChainWork(t *testing.T) {
	r := Build(atRiskDay())
	var dana, bob PersonPlan
	for _, p := range r.Plan {
		switch p.Login {
		case "dana":
			dana = p
		case "bob":
			bob = p
		}
	}
	if len(dana.Next) != 1 || dana.Next[0].Number != 22 || dana.HoursPerWeek != 9 || dana.LoadWeeks != 4.4 || dana.FreeFrom != "2026-12-31" {
		t.Fatalf("dana = %+v", dana)
	}
	if c := dana.Next[0].Critical; c == nil || c.Milestone != 1 || c.Share != 0.88 || !c.AtRisk {
		t.Errorf("dana's next #22 flag = %+v, want v1.0 at 88%%, at risk", c)
	}
	if c := bob.Next[1].Critical; bob.Next[1].Number != 30 || c == nil || c.AtRisk {
		t.Errorf("bob's #30 flag = %+v, want v2.0's chain, not at risk", c)
	}
	if bob.Next[0].Critical != nil {
		t.Errorf("bob's #21 has no milestone, flagged %+v", bob.Next[0].Critical)
	}
	text := Template(r)
	for _, want := range []string{
		"At risk:\n- v1.0 (due 2026-12-16): 12% chance to make it; p50 2026-12-15, p80 2026-12-18, slack -1.5 working days, 3 open [hard deadline]\n" +
			"  critical chain: #22 Payment gateway (88% of trials, dana); #11 Session store (64% of trials, ann)\n",
		"- dana (9 h a week, 4.4 weeks of work, free from 2026-12-31)\n  next: #22 Payment gateway (p50 2026-12-10) [critical chain of v1.0 in 88% of trials, which is at risk]\n",
		"now: #11 Session store (p50 2026-12-04) [critical chain of v1.0 in 64% of trials, which is at risk]",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("template lacks %q:\n%s", want, text)
		}
	}
	facts, err := Facts(r, Known{}, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if err := prose.Check(text, facts); err != nil {
		t.Errorf("the template does not pass its own check: %v\n%s", err, text)
	}
}

func TestSectionsNameEverySubject(t *testing.T) {
	r := Build(atRiskDay())
	var keys []string
	for _, s := range r.Sections() {
		keys = append(keys, s.Key)
	}
	if !slices.Equal(keys, []string{SectionAtRisk, SectionDrift, SectionPlan, SectionStaleBlockers, SectionAging}) {
		t.Errorf("sections = %v", keys)
	}
	var mentions []string
	for _, s := range r.Subjects() {
		mentions = append(mentions, s.Mention())
	}
	// Every at-risk milestone, every critical-chain issue, every person and
	// every issue of their plans, every drifted milestone, every stale
	// blocker: each once, in reading order.
	want := []string{"v1.0", "#22", "#11", "ann", "#10", "#20", "bob", "#21", "#30", "cid", "#40", "dana"}
	if !slices.Equal(mentions, want) {
		t.Errorf("subjects = %q, want %q", mentions, want)
	}
	// The template mentions every one of them: a text carrying the
	// report's content can be checked against Subjects.
	text := Template(r)
	for _, m := range mentions {
		if !strings.Contains(text, m) {
			t.Errorf("template does not mention %s", m)
		}
	}
}

// A part-time person planned on critical-chain work gets a second flag:
// dana's 9 h a week against a team of 30 h weeks, on v1.0's chain.
func TestPlanFlagsPartTimeOnCriticalChain(t *testing.T) {
	in := atRiskDay()
	in.Snapshot.Capacity = append(in.Snapshot.Capacity,
		scheduler.RunwayCapacity{Login: "ann", HoursPerWeek: 30, LoadWeeks: 1, FreeFromP50: at(10)},
		scheduler.RunwayCapacity{Login: "bob", HoursPerWeek: 30, LoadWeeks: 1, FreeFromP50: at(10)})
	r := Build(in)
	flags := map[string][]string{}
	for _, s := range r.Sections() {
		if s.Key != SectionPlan {
			continue
		}
		for _, e := range s.Entries {
			for _, sub := range e.Entries {
				for _, f := range sub.Flags {
					flags[e.Subject.Person] = append(flags[e.Subject.Person], f.Kind+": "+f.Text)
				}
			}
		}
	}
	if !slices.Contains(flags["dana"], FlagPartTime+": part-time: dana has 9 h a week") {
		t.Errorf("dana's flags = %q, want the part-time flag beside the critical chain", flags["dana"])
	}
	for _, who := range []string{"ann", "bob"} {
		for _, f := range flags[who] {
			if strings.HasPrefix(f, FlagPartTime) {
				t.Errorf("%s (30 h a week) flagged %q", who, f)
			}
		}
	}
	if text := Template(r); !strings.Contains(text, "[critical chain of v1.0 in 88% of trials, which is at risk] [part-time: dana has 9 h a week]") {
		t.Errorf("template lacks the part-time flag:\n%s", text)
	}
}

// Work the at-risk part names as a milestone's chain is flagged in the
// plan even under half the trials: the report points at it twice.
func TestPlanFlagsListedChainUnderTheBar(t *testing.T) {
	in := atRiskDay()
	for i := range in.Snapshot.Forecast.Issues {
		in.Snapshot.Forecast.Issues[i].CriticalFreq /= 4
	}
	r := Build(in)
	for _, p := range r.Plan {
		if p.Login != "dana" {
			continue
		}
		if c := p.Next[0].Critical; c == nil || c.Share != 0.22 || !c.AtRisk {
			t.Errorf("dana's #22 at 22%% of trials, listed in v1.0's chain: flag %+v", c)
		}
	}
}

// TestAtRiskNamesTheBestRescue: an at-risk milestone whose snapshot holds
// rescue options names the first one under it, and the template carrying
// it passes its own check; one with nothing that makes the date says so.
func TestAtRiskNamesTheBestRescue(t *testing.T) {
	in := atRiskDay()
	in.Snapshot.Rescue = []scheduler.MilestoneRescue{{Milestone: 1, Title: "v1.0", Options: []scheduler.RescueOption{
		{Kind: scheduler.RescueCutScope, Summary: "move #20 to v2.0", Makes: true, CostText: "moves 1 issue, 40 estimated hours, to v2.0",
			Changes: []scheduler.Change{{Kind: scheduler.SetMilestone, Issue: 20, Milestone: 2}},
			After:   scheduler.Band{P50: "2026-12-10", P80: "2026-12-15", PDue: 0.86}},
		{Kind: scheduler.RescueCapacity, Summary: "dana works 8 hours a day instead of 6", CostText: "asks dana for 2 more focused hours a day",
			Changes: []scheduler.Change{{Kind: scheduler.SetCapacity, Person: "dana", HoursPerDay: 8}},
			After:   scheduler.Band{P50: "2026-12-12", P80: "2026-12-16", PDue: 0.81}},
	}}}
	r := Build(in)
	o := r.AtRisk[0].Rescue
	if o == nil || o.Summary != "move #20 to v2.0" || o.Chance != 0.86 || o.P80 != "2026-12-15" || !o.Makes || !slices.Equal(o.Issues, []int64{20}) || o.To != "v2.0" {
		t.Fatalf("best rescue = %+v", o)
	}
	check := func(in Input, want string) {
		t.Helper()
		r := Build(in)
		text := Template(r)
		if !strings.Contains(text, want) {
			t.Errorf("template lacks %q:\n%s", want, text)
		}
		facts, err := Facts(r, Known{}, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		if err := prose.Check(text, facts); err != nil {
			t.Errorf("the template with a rescue does not pass its own check: %v\n%s", err, text)
		}
	}
	check(in, "best rescue: v1.0 reaches 86% chance, p80 2026-12-15, if #20 move to v2.0")
	many := in
	many.Snapshot.Rescue = slices.Clone(in.Snapshot.Rescue)
	many.Snapshot.Rescue[0].Options = slices.Clone(in.Snapshot.Rescue[0].Options)
	many.Snapshot.Rescue[0].Options[0].Changes = nil
	for _, n := range []int64{10, 11, 12, 20, 21, 22, 30, 40} {
		many.Snapshot.Rescue[0].Options[0].Changes = append(many.Snapshot.Rescue[0].Options[0].Changes, scheduler.Change{Kind: scheduler.SetMilestone, Issue: n, Milestone: 2})
	}
	check(many, "if #10, #11, #12, #20, #21, #22 and 2 more move to v2.0")
	in.Snapshot.Rescue[0].Options = in.Snapshot.Rescue[0].Options[1:]
	in.Snapshot.Rescue[0].Options[0].Makes = false
	check(in, "best rescue: v1.0 reaches at best 81% chance, p80 2026-12-16, if dana gives more hours a day: nothing within the rules makes the date")
}

// TestAtRiskSaysRescueIsBeingComputed: while the snapshot's rescue
// options are still being computed, an at-risk milestone's best-rescue
// line says so rather than nothing, and the template passes its check.
func TestAtRiskSaysRescueIsBeingComputed(t *testing.T) {
	in := atRiskDay()
	in.Snapshot.Rescue, in.Snapshot.RescuePending = nil, true
	r := Build(in)
	if a := r.AtRisk[0]; a.Rescue != nil || !a.RescuePending {
		t.Fatalf("at risk while the rescue is computed: %+v", a)
	}
	text := Template(r)
	if want := "best rescue: v1.0" + RescuePendingText; !strings.Contains(text, want) {
		t.Errorf("template lacks %q:\n%s", want, text)
	}
	facts, err := Facts(r, Known{}, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if err := prose.Check(text, facts); err != nil {
		t.Errorf("the template does not pass its own check: %v\n%s", err, text)
	}
}
