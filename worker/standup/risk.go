package standup

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/commitea/commitea/scheduler"
)

// AtRiskMilestone is a milestone whose forecast says it will probably miss
// its due date: it has open work and its p80 is after the due date (the
// runway's amber and red). Chance is the forecast's probability of meeting
// the date; Chain lists the issues on its critical chain.
type AtRiskMilestone struct {
	Milestone int64  `json:"milestone"`
	Title     string `json:"title"`
	Due       string `json:"due"`
	Hard      bool   `json:"hard,omitempty"`
	// Late is true when even the p50 is after the due date.
	Late bool `json:"late,omitempty"`
	// Chance is P(finished by the due date), rounded to hundredths.
	Chance    float64 `json:"chance"`
	P50       string  `json:"p50"`
	P80       string  `json:"p80"`
	SlackDays float64 `json:"slackDays"`
	Open      int     `json:"open"`
	Chain     []Chain `json:"chain"`
	// MoreChain is how many further issues met the chain's bar.
	MoreChain int `json:"moreChain,omitempty"`
	// Rescue is the best rescue option the snapshot holds for the
	// milestone, nil when it holds none (or predates rescue plans).
	Rescue *Rescue `json:"rescue,omitempty"`
	// RescuePending says the snapshot's rescue options are still being
	// computed: there may be a rescue the standup cannot name yet.
	RescuePending bool `json:"rescuePending,omitempty"`
}

// Rescue is a milestone's best rescue option, as query_project lists it
// first: its kind and the issues, person or new due date it names, and
// the chance and p80 it reaches; Makes is false when nothing within the
// rules makes the date. The line says it in words and names only what
// these fields hold (the option's own summary has figures the prose check
// could not place; query_project and the dashboard show it).
type Rescue struct {
	Kind    string  `json:"kind"`
	Summary string  `json:"summary"`
	Chance  float64 `json:"chance"`
	P80     string  `json:"p80"`
	Makes   bool    `json:"makes"`
	// Issues are the issues the option moves, raises or hands over; To
	// where cut scope moves them ("" for no milestone); Person whose
	// hours it asks for; Due the new due date.
	// (at most maxRescueIssues of them; IssuesCount is how many in all).
	Issues      []int64 `json:"issues,omitempty"`
	IssuesCount int     `json:"issuesCount,omitempty"`
	To          string  `json:"to,omitempty"`
	Person      string  `json:"person,omitempty"`
	Due         string  `json:"due,omitempty"`
}

// Chain is one issue on a milestone's critical chain.
type Chain struct {
	Number   int64  `json:"number"`
	Title    string `json:"title"`
	Assignee string `json:"assignee,omitempty"`
	// Share is the fraction of trials in which the issue lay on the chain,
	// rounded to hundredths.
	Share float64 `json:"share"`
}

// CriticalFlag marks plan work on a milestone's critical chain.
type CriticalFlag struct {
	Milestone int64   `json:"milestone"`
	Title     string  `json:"title"`
	Share     float64 `json:"share"`
	// AtRisk is set when the milestone is in the report's at-risk list.
	AtRisk bool `json:"atRisk,omitempty"`
}

const (
	// criticalShare is the share of trials from which an issue counts as
	// on its milestone's critical chain: more often on it than not.
	criticalShare = 0.5
	// minChain is how many of the most frequent issues an at-risk
	// milestone lists when none reaches criticalShare (the chain then
	// changes from trial to trial, and the likeliest links still tell the
	// reader where to look).
	minChain = 3
	maxChain = 5
)

// maxRescueIssues is how many issues a rescue line names.
const maxRescueIssues = 6

func round100(x float64) float64 { return math.Round(x*100) / 100 }

// bestRescue is milestone id's first rescue option, nil when there is none.
func bestRescue(rs []scheduler.MilestoneRescue, id int64, titles map[int64]string) *Rescue {
	for _, r := range rs {
		if r.Milestone != id || len(r.Options) == 0 {
			continue
		}
		o := r.Options[0]
		out := &Rescue{Kind: string(o.Kind), Summary: o.Summary, Chance: o.After.PDue, P80: o.After.P80, Makes: o.Makes}
		for _, c := range o.Changes {
			switch c.Kind {
			case scheduler.SetMilestone, scheduler.SetAssignees:
				out.Issues = append(out.Issues, c.Issue)
				out.To = titles[c.Milestone]
			case scheduler.SetPriority:
				if c.Priority == 0 { // the chain raised; what is lowered is other work
					out.Issues = append(out.Issues, c.Issue)
				}
			case scheduler.SetCapacity:
				out.Person = c.Person
			case scheduler.SetDueDate:
				out.Due = c.Due.UTC().Format(time.DateOnly)
			}
		}
		out.IssuesCount = len(out.Issues)
		if len(out.Issues) > maxRescueIssues {
			out.Issues = out.Issues[:maxRescueIssues]
		}
		return out
	}
	return nil
}

// atRisk lists the milestones at risk, hard deadlines first, then the
// lowest chance, then the earliest due date.
func atRisk(in Input, date func(time.Time) string, issues map[int64]*Issue) []AtRiskMilestone {
	chains := map[int64][]Chain{}
	for _, f := range in.Snapshot.Forecast.Issues {
		is := issues[f.Number]
		if is == nil || is.Milestone == 0 || f.CriticalFreq <= 0 {
			continue
		}
		who := is.Assignee
		if who == "" {
			who = f.Assignee
		}
		chains[is.Milestone] = append(chains[is.Milestone], Chain{Number: f.Number, Title: is.Title, Assignee: who, Share: round100(f.CriticalFreq)})
	}
	titles := map[int64]string{}
	for _, m := range in.Snapshot.Forecast.Milestones {
		titles[m.ID] = m.Title
	}
	out := []AtRiskMilestone{}
	for _, m := range in.Snapshot.Forecast.Milestones {
		if m.Due.IsZero() || m.Open == 0 || m.P80.IsZero() || !m.P80.After(m.Due) {
			continue
		}
		a := AtRiskMilestone{Milestone: m.ID, Title: m.Title, Due: date(m.Due), Hard: m.Hard, Late: m.P50.After(m.Due),
			Chance: round100(m.PDue), P50: date(m.P50), P80: date(m.P80), SlackDays: roundTenth(m.SlackDays), Open: m.Open}
		a.Chain, a.MoreChain = chainOf(chains[m.ID])
		a.Rescue = bestRescue(in.Snapshot.Rescue, m.ID, titles)
		a.RescuePending = in.Snapshot.RescuePending
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b AtRiskMilestone) int {
		if a.Hard != b.Hard {
			if a.Hard {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(a.Chance, b.Chance); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Due, b.Due); c != 0 {
			return c
		}
		return cmp.Compare(a.Milestone, b.Milestone)
	})
	return out
}

// chainOf picks a milestone's critical chain from its issues' shares.
func chainOf(cs []Chain) ([]Chain, int) {
	slices.SortFunc(cs, func(a, b Chain) int {
		if c := cmp.Compare(b.Share, a.Share); c != 0 {
			return c
		}
		return cmp.Compare(a.Number, b.Number)
	})
	n := 0
	for n < len(cs) && cs[n].Share >= criticalShare {
		n++
	}
	if n == 0 {
		return slices.Clone(cs[:min(len(cs), minChain)]), 0
	}
	return slices.Clone(cs[:min(n, maxChain)]), max(n-maxChain, 0)
}

// criticalFlag says whether plan work n is on its milestone's chain: at or
// above the bar, or named in an at-risk milestone's chain (listed), so
// that work the report's at-risk part points at is flagged where a person
// plans it.
func criticalFlag(n int64, issues map[int64]*Issue, fc map[int64]*scheduler.IssueForecast,
	titles map[int64]string, risky, listed map[int64]bool) *CriticalFlag {
	f, is := fc[n], issues[n]
	if f == nil || is == nil || is.Milestone == 0 || f.CriticalFreq <= 0 || (f.CriticalFreq < criticalShare && !listed[n]) {
		return nil
	}
	return &CriticalFlag{Milestone: is.Milestone, Title: titles[is.Milestone], Share: round100(f.CriticalFreq), AtRisk: risky[is.Milestone]}
}
