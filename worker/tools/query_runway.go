package tools

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// The runway view: every milestone's p50/p80 band against its due date,
// with the slack, and the capacity each person has committed. It reads the
// snapshot's forecast directly (the engine's scheduler.Runway is not in
// this tree yet).

// RunwayView is the runway payload.
type RunwayView struct {
	Milestones []RunwayMilestone `json:"milestones"`
	Capacity   []Capacity        `json:"capacity"`
	Meta
}

// RunwayMilestone is one milestone's band.
type RunwayMilestone struct {
	ID        int64   `json:"id"`
	Title     string  `json:"title"`
	Due       string  `json:"due,omitempty"`
	Hard      bool    `json:"hard"`
	Open      int     `json:"open"`
	Band      Range   `json:"band"`
	SlackDays float64 `json:"slack"`
	PDue      float64 `json:"pDue"`
	AtRisk    bool    `json:"atRisk"`
}

// Capacity is one person's scheduled load.
type Capacity struct {
	Login    string  `json:"login"`
	Hours    float64 `json:"hours"`
	Issues   int     `json:"issues"`
	FreeFrom string  `json:"freeFromP50,omitempty"`
}

func (q *query) runway() (Answer[any], error) {
	var ms []RunwayMilestone
	for _, m := range q.v.Data.Forecast.Milestones {
		if q.f.MilestoneID != nil && m.ID != *q.f.MilestoneID {
			continue
		}
		r := RunwayMilestone{ID: m.ID, Title: m.Title, Due: day(m.Due), Hard: m.Hard, Open: m.Open,
			Band: Range{P50: day(m.P50), P80: day(m.P80)}, SlackDays: round1(m.SlackDays), PDue: round2(m.PDue)}
		r.AtRisk = !m.Due.IsZero() && m.SlackDays < 0
		ms = append(ms, r)
	}
	if q.f.MilestoneID != nil && len(ms) == 0 {
		return Answer[any]{}, Errorf(CodeNotFound, "filters.milestoneId", "milestone %d has no forecast in %s; drop the filter to list every milestone", *q.f.MilestoneID, q.v.Project.FullName())
	}
	// Soonest due first; milestones without a due date last.
	slices.SortFunc(ms, func(a, b RunwayMilestone) int {
		return cmp.Or(cmp.Compare(boolInt(a.Due == ""), boolInt(b.Due == "")), strings.Compare(a.Due, b.Due), cmp.Compare(a.ID, b.ID))
	})
	var capacity []Capacity
	for _, l := range q.v.Data.Forecast.Load {
		if q.f.Assignee != "" && !strings.EqualFold(l.Login, q.f.Assignee) {
			continue
		}
		capacity = append(capacity, Capacity{Login: l.Login, Hours: round1(l.Hours), Issues: l.Issues, FreeFrom: day(l.FreeFromP50)})
	}
	out := RunwayView{
		Milestones: List(q.caps, ms, "milestones", "milestones: the project has no open milestone with a forecast"),
		Capacity:   List(q.caps, capacity, "capacity", "capacity: nobody has scheduled work"+q.filterWords()),
	}
	out.Meta = q.meta()
	var risky []string
	for _, m := range out.Milestones {
		if m.AtRisk {
			risky = append(risky, m.Title)
		}
	}
	instr := "Report each milestone as its p50–p80 band against the due date; all are within their due dates at p80."
	if len(risky) > 0 {
		instr = fmt.Sprintf("Flag %s: p80 lands after the due date; view milestone shows what drives each.", strings.Join(risky, ", "))
	} else if len(out.Milestones) == 0 {
		instr = "There is no milestone to report; say so."
	}
	return Answer[any]{Data: out, Instruction: instr}, nil
}

func round1(x float64) float64 { return float64(int64(x*10+copysignHalf(x))) / 10 }
func round2(x float64) float64 { return float64(int64(x*100+copysignHalf(x))) / 100 }

func copysignHalf(x float64) float64 {
	if x < 0 {
		return -0.5
	}
	return 0.5
}
