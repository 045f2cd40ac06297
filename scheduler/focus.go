package scheduler

// Focus and runway. Focus ranks the open, schedulable issues of one person
// (their assigned issues plus unassigned ones the forecast's planning pass
// gives them) or of the team, by: priority; hard deadline (the issue's or its
// milestone's); milestone risk (lower chance of meeting the due date first;
// no due date counts as no risk); how often the issue is on its milestone's
// critical chain; how many open issues it unblocks (directly or not); its
// forecast p50; number. Issues still blocked by open dependencies cannot be
// started and go to Later whatever their rank. Now is the person's issue
// already in progress (steeping with time spent, best-ranked first), or the
// top unblocked issue; Next holds the following FocusNextLimit, Later up to
// FocusLaterLimit more. Each item carries a one-line rationale naming the
// factors that ranked it, in ranking order, so equal inputs give equal text.
//
// Runway is the milestones' p50/p80 band against their due dates, with the
// team's capacity (hours per week from each calendar) and forecast load.

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Focus list sizes.
const (
	FocusNextLimit  = 3
	FocusLaterLimit = 20
)

// FocusItem is one issue in a focus list.
type FocusItem struct {
	Number    int64  `json:"number"`
	Title     string `json:"title"`
	Rationale string `json:"rationale"`
}

// FocusResult is what to work on now, next and later.
type FocusResult struct {
	Who   string      `json:"who,omitempty"` // empty for the team
	Now   *FocusItem  `json:"now"`
	Next  []FocusItem `json:"next"`
	Later []FocusItem `json:"later"`
}

// focusCandidate gathers the ranking factors of one issue.
type focusCandidate struct {
	is         Issue
	milestone  *MilestoneForecast
	hard       bool
	risk       float64 // 1 - PDue for a milestone with a due date, else 0
	crit       float64
	unblocks   int
	p50        time.Time
	blockedBy  []int64
	inProgress bool
	unassigned bool
}

// Focus ranks the work of who ("" for the team) from a forecast of in.
func Focus(in Input, f Forecast, who string, now time.Time) FocusResult {
	res := FocusResult{Who: who, Next: []FocusItem{}, Later: []FocusItem{}}
	fi := map[int64]IssueForecast{}
	for _, x := range f.Issues {
		fi[x.Number] = x
	}
	fm := map[int64]*MilestoneForecast{}
	for i := range f.Milestones {
		fm[f.Milestones[i].ID] = &f.Milestones[i]
	}
	hardMilestone := map[int64]bool{}
	for _, m := range in.Milestones {
		hardMilestone[m.ID] = m.Hard
	}
	open := map[int64]Issue{}
	for _, is := range in.Issues {
		if is.State != Done {
			open[is.Number] = is
		}
	}
	// Dependents (reverse edges) among open issues, for "unblocks".
	dependents := map[int64][]int64{}
	for _, is := range open {
		for _, d := range is.DependsOn {
			if _, ok := open[d]; ok {
				dependents[d] = append(dependents[d], is.Number)
			}
		}
	}

	var cands []focusCandidate
	for _, is := range open {
		x, ok := fi[is.Number]
		if !ok || x.Unschedulable != "" {
			continue
		}
		if who != "" && is.Assignee != who && !(is.Assignee == "" && x.Assignee == who) {
			continue
		}
		c := focusCandidate{
			is: is, milestone: fm[is.Milestone], hard: is.HardDeadline || hardMilestone[is.Milestone],
			crit: x.CriticalFreq, p50: x.P50, unassigned: is.Assignee == "",
			inProgress: (is.State == Steeping && is.SpentHours > 0),
			unblocks:   countReachable(is.Number, dependents),
		}
		if c.milestone != nil && !c.milestone.Due.IsZero() {
			c.risk = 1 - c.milestone.PDue
		}
		for _, d := range is.DependsOn {
			if _, ok := open[d]; ok {
				c.blockedBy = append(c.blockedBy, d)
			}
		}
		slices.Sort(c.blockedBy)
		cands = append(cands, c)
	}
	slices.SortFunc(cands, func(a, b focusCandidate) int {
		if c := cmp.Compare(a.is.Priority, b.is.Priority); c != 0 {
			return c
		}
		if a.hard != b.hard {
			if a.hard {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.risk, a.risk); c != 0 {
			return c
		}
		if c := cmp.Compare(b.crit, a.crit); c != 0 {
			return c
		}
		if c := cmp.Compare(b.unblocks, a.unblocks); c != 0 {
			return c
		}
		if c := a.p50.Compare(b.p50); c != 0 {
			return c
		}
		return cmp.Compare(a.is.Number, b.is.Number)
	})

	nowIdx := -1
	for k, c := range cands {
		if c.inProgress {
			nowIdx = k
			break
		}
	}
	if nowIdx < 0 {
		for k, c := range cands {
			if len(c.blockedBy) == 0 {
				nowIdx = k
				break
			}
		}
	}
	if nowIdx >= 0 {
		item := focusItem(cands[nowIdx], now)
		res.Now = &item
	}
	for k, c := range cands {
		if k == nowIdx {
			continue
		}
		item := focusItem(c, now)
		if len(c.blockedBy) == 0 && len(res.Next) < FocusNextLimit {
			res.Next = append(res.Next, item)
		} else if len(res.Later) < FocusLaterLimit {
			res.Later = append(res.Later, item)
		}
	}
	return res
}

// countReachable counts the open issues that transitively wait for num.
func countReachable(num int64, dependents map[int64][]int64) int {
	seen := map[int64]bool{num: true}
	stack := []int64{num}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, d := range dependents[n] {
			if !seen[d] {
				seen[d] = true
				stack = append(stack, d)
			}
		}
	}
	return len(seen) - 1
}

// focusItem writes the rationale from the factors in ranking order.
func focusItem(c focusCandidate, now time.Time) FocusItem {
	var why []string
	if c.inProgress {
		why = append(why, fmt.Sprintf("in progress (%sh spent)", hoursText(c.is.SpentHours)))
	}
	why = append(why, fmt.Sprintf("p/%d", c.is.Priority))
	if c.hard {
		why = append(why, "hard deadline")
	}
	if m := c.milestone; m != nil {
		if m.Due.IsZero() {
			why = append(why, fmt.Sprintf("milestone %s has no due date", m.Title))
		} else {
			days := math.Round(WorkingDaysBetween(Calendar{}, now, m.Due))
			why = append(why, fmt.Sprintf("%s due %s (%g working days), %d%% likely on time",
				m.Title, shortDate(now, m.Due), days, int(math.Round(m.PDue*100))))
		}
	}
	if c.crit >= 0.05 {
		why = append(why, fmt.Sprintf("on the critical chain in %d%% of trials", int(math.Round(c.crit*100))))
	}
	switch c.unblocks {
	case 0:
	case 1:
		why = append(why, "unblocks 1 issue")
	default:
		why = append(why, fmt.Sprintf("unblocks %d issues", c.unblocks))
	}
	if len(c.blockedBy) > 0 {
		refs := make([]string, len(c.blockedBy))
		for i, d := range c.blockedBy {
			refs[i] = fmt.Sprintf("#%d", d)
		}
		why = append(why, "blocked by "+strings.Join(refs, ", "))
	}
	if c.unassigned {
		why = append(why, "unassigned")
	}
	if !c.p50.IsZero() {
		why = append(why, "likely done "+shortDate(now, c.p50))
	}
	return FocusItem{Number: c.is.Number, Title: c.is.Title, Rationale: strings.Join(why, "; ")}
}

// RunwayBand is a milestone's likely finish range.
type RunwayBand struct {
	P50 time.Time `json:"p50"`
	P80 time.Time `json:"p80"`
}

// RunwayMilestone is one milestone against its due date.
type RunwayMilestone struct {
	ID        int64      `json:"id"`
	Milestone string     `json:"milestone"`
	Due       time.Time  `json:"due,omitzero"`
	Hard      bool       `json:"hard,omitempty"`
	Open      int        `json:"open"`
	Band      RunwayBand `json:"band"`
	PDue      float64    `json:"pDue"`
	Slack     float64    `json:"slack"` // working days, due − p80
}

// RunwayCapacity is one person's weekly capacity and forecast load.
type RunwayCapacity struct {
	Login        string    `json:"login"`
	HoursPerWeek float64   `json:"hoursPerWeek"`
	LoadHours    float64   `json:"loadHours"`
	LoadWeeks    float64   `json:"loadWeeks"` // load over capacity
	Issues       int       `json:"issues"`
	FreeFromP50  time.Time `json:"freeFromP50"`
}

// RunwayResult is the milestones' runway and the team's capacity.
type RunwayResult struct {
	Milestones []RunwayMilestone `json:"milestones"`
	Capacity   []RunwayCapacity  `json:"capacity"`
}

// Runway summarises a forecast of in per milestone and per person.
func Runway(in Input, f Forecast) RunwayResult {
	res := RunwayResult{Milestones: []RunwayMilestone{}, Capacity: []RunwayCapacity{}}
	for _, m := range f.Milestones {
		res.Milestones = append(res.Milestones, RunwayMilestone{
			ID: m.ID, Milestone: m.Title, Due: m.Due, Hard: m.Hard, Open: m.Open,
			Band: RunwayBand{P50: m.P50, P80: m.P80}, PDue: m.PDue, Slack: m.SlackDays,
		})
	}
	cals := map[string]Calendar{}
	for _, p := range in.People {
		cals[p.Login] = p.Calendar
	}
	for _, l := range f.Load {
		c := cals[l.Login].normalized()
		days := 0
		for _, d := range c.WorkingDays {
			if d {
				days++
			}
		}
		perWeek := c.HoursPerDay * float64(days)
		res.Capacity = append(res.Capacity, RunwayCapacity{
			Login: l.Login, HoursPerWeek: perWeek, LoadHours: l.Hours,
			LoadWeeks: math.Round(l.Hours/perWeek*10) / 10,
			Issues:    l.Issues, FreeFromP50: l.FreeFromP50,
		})
	}
	return res
}

// hoursText prints hours as people read them: whole hours from 10 on, one
// decimal below (trailing .0 dropped).
func hoursText(h float64) string {
	if h >= 10 {
		return strconv.FormatFloat(math.Round(h), 'f', 0, 64)
	}
	return strconv.FormatFloat(math.Round(h*10)/10, 'f', -1, 64)
}
