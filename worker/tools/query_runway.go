package tools

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/commitea/commitea/scheduler"
)

// The runway view: every milestone's p50/p80 band against its due date,
// with the slack, and each person's weekly capacity against their
// forecast load: scheduler.Runway, computed with the snapshot (a snapshot
// older than that field is read from its forecast, without capacity).

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
	// RescueOptions counts the rescue options view milestone lists.
	RescueOptions int `json:"rescueOptions"`
	// RescuePending says the count is not known yet: the snapshot's
	// rescue options are still being computed.
	RescuePending bool `json:"rescuePending,omitempty"`
}

// Capacity is one person's weekly capacity and scheduled load; LoadWeeks
// is the load over the capacity.
type Capacity struct {
	Login        string  `json:"login"`
	HoursPerWeek float64 `json:"hoursPerWeek,omitempty"`
	LoadHours    float64 `json:"loadHours"`
	LoadWeeks    float64 `json:"loadWeeks,omitempty"`
	Issues       int     `json:"issues"`
	FreeFrom     string  `json:"freeFromP50,omitempty"`
}

func (q *query) runway() (Answer[any], error) {
	rw := q.v.Data.Runway
	if rw == nil {
		rw = runwayFromForecast(q.v.Data.Forecast)
	}
	var ms []RunwayMilestone
	for _, m := range rw.Milestones {
		if q.f.MilestoneID != nil && m.ID != *q.f.MilestoneID {
			continue
		}
		r := RunwayMilestone{ID: m.ID, Title: m.Milestone, Due: day(m.Due), Hard: m.Hard, Open: m.Open,
			Band: Range{P50: day(m.Band.P50), P80: day(m.Band.P80)}, SlackDays: round1(m.Slack), PDue: round2(m.PDue)}
		r.AtRisk = !m.Due.IsZero() && m.Slack < 0
		if rs := rescueOf(q.v.Data.Rescue, m.ID); rs != nil {
			r.RescueOptions = len(rs.Options)
		} else if rescuePending(&q.v.Data, q.v.Milestone[m.ID]) {
			r.RescuePending = true
		}
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
	for _, c := range rw.Capacity {
		if q.f.Assignee != "" && !strings.EqualFold(c.Login, q.f.Assignee) {
			continue
		}
		capacity = append(capacity, Capacity{Login: c.Login, HoursPerWeek: round1(c.HoursPerWeek), LoadHours: round1(c.LoadHours),
			LoadWeeks: c.LoadWeeks, Issues: c.Issues, FreeFrom: day(c.FreeFromP50)})
	}
	out := RunwayView{
		Milestones: List(q.caps, ms, "milestones", "milestones: the project has no open milestone with a forecast"),
		Capacity:   List(q.caps, capacity, "capacity", "capacity: nobody has scheduled work"+q.filterWords()),
	}
	out.Meta = q.meta()
	var risky []string
	for _, m := range out.Milestones {
		if m.AtRisk {
			risky = append(risky, fmt.Sprintf("milestone %d", m.ID))
		}
	}
	instr := "Report each milestone as its p50–p80 band against the due date; all are within their due dates at p80."
	if len(risky) > 0 {
		instr = fmt.Sprintf("Flag %s: p80 lands after the due date; view milestone shows what drives each.", strings.Join(risky, ", "))
	} else if len(out.Milestones) == 0 {
		instr = "There is no milestone to report; say so."
	}
	for _, m := range out.Milestones {
		if m.RescuePending {
			instr += " The rescue options of the milestones marked rescuePending are still being computed; their rescueOptions count is not known yet."
			break
		}
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

// runwayFromForecast reads a runway out of an older snapshot's forecast;
// capacity per week is unknown there.
func runwayFromForecast(f scheduler.Forecast) *scheduler.RunwayResult {
	r := &scheduler.RunwayResult{}
	for _, m := range f.Milestones {
		r.Milestones = append(r.Milestones, scheduler.RunwayMilestone{ID: m.ID, Milestone: m.Title, Due: m.Due, Hard: m.Hard, Open: m.Open,
			Band: scheduler.RunwayBand{P50: m.P50, P80: m.P80}, PDue: m.PDue, Slack: m.SlackDays})
	}
	for _, l := range f.Load {
		r.Capacity = append(r.Capacity, scheduler.RunwayCapacity{Login: l.Login, LoadHours: l.Hours, Issues: l.Issues, FreeFromP50: l.FreeFromP50})
	}
	return r
}
