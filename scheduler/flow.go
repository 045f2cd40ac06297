package scheduler

// Flow metrics from the recorded lifecycle transitions: what Kanban teams
// read every day. The definitions (see "Flow" in doc.go) in short:
//
//   - Everything is counted in calendar days of the project's time zone
//     (FlowOptions.Location): a day is a local date, a week runs Monday to
//     Sunday, and an issue's state on a day is its state at the end of that
//     day (after the day's last transition).
//   - The window is the last WindowDays local dates up to today (90 by
//     default), starting no earlier than the project's first recorded
//     transition: days before the project existed are not history.
//   - Started means the first transition into steeping or in_review; done
//     means the issue's last transition is into done, and its date is that
//     transition's. A reopened issue's clock runs on from its first start.
//   - Discarded issues (done through a discard label) are not delivered
//     work and are left out of every figure.
//   - Cycle time of an issue done in the window: done date − start date + 1
//     (an issue started and finished on the same day took one day). Issues
//     done without ever starting count in throughput but have no cycle time
//     (Unstarted says how many).
//   - Percentiles are nearest rank: the pth percentile is the smallest value
//     that at least p% of the values do not exceed.
//   - Work item age of an open issue in steeping or in_review: today − start
//     date + 1, against the cycle-time percentiles.
//   - The service level expectation is the SLEPercentile-th percentile of
//     cycle time (85 by default), from at least MinSLESamples cycle times;
//     an open, started issue older than it is aging.
//   - Throughput is the number of issues done per Monday week; predictability
//     compares the 90th to the 10th percentile of the complete weeks.
//   - Work in progress on a day is the number of issues in steeping or
//     in_review at its end; the cumulative flow diagram counts the issues in
//     each of the five states at the end of every day.

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// Flow defaults.
const (
	DefaultFlowWindowDays = 90
	DefaultSLEPercentile  = 85
	// MinSLESamples is the fewest cycle times an SLE is read from: one or two
	// finished issues say nothing about what the team's work usually takes.
	MinSLESamples = 5
)

// FlowPercentiles are the cycle-time percentiles every flow figure is read
// against.
var FlowPercentiles = [4]int{50, 70, 85, 95}

// FlowOptions tunes the flow metrics. The zero value means a 90-day window,
// UTC and an SLE at the 85th percentile.
type FlowOptions struct {
	WindowDays    int
	Location      *time.Location
	SLEPercentile int // 1..99
}

func (o FlowOptions) normalized() FlowOptions {
	if o.WindowDays <= 0 {
		o.WindowDays = DefaultFlowWindowDays
	}
	if o.Location == nil {
		o.Location = time.UTC
	}
	if o.SLEPercentile <= 0 || o.SLEPercentile >= 100 {
		o.SLEPercentile = DefaultSLEPercentile
	}
	return o
}

// FlowInput is what the flow metrics read: every recorded transition of the
// project's issues (any order) and which done issues are discarded.
type FlowInput struct {
	Now         time.Time
	Transitions []Transition
	Discarded   map[int64]bool
}

// FlowMetrics is the flow view of a project at one instant.
type FlowMetrics struct {
	Now        time.Time `json:"now"`
	TimeZone   string    `json:"timeZone"`
	WindowDays int       `json:"windowDays"`
	// From and To are the window's first and last local dates (To is today).
	From string `json:"from"`
	To   string `json:"to"`

	CycleTime  CycleTimes    `json:"cycleTime"`
	SLE        SLE           `json:"sle"`
	Age        []WorkItemAge `json:"age"`
	Throughput Throughput    `json:"throughput"`
	// WIP is, per day of the window, the issues in progress at its end.
	WIP []DayCount `json:"wip"`
	// CFD is, per day of the window, the issues in each state at its end.
	CFD []CFDDay `json:"cfd"`
}

// Percentiles are cycle-time percentiles in calendar days (0: no data).
type Percentiles struct {
	P50 int `json:"p50"`
	P70 int `json:"p70"`
	P85 int `json:"p85"`
	P95 int `json:"p95"`
}

// At returns the pth percentile for p in FlowPercentiles, else 0.
func (p Percentiles) At(pct int) int {
	switch pct {
	case 50:
		return p.P50
	case 70:
		return p.P70
	case 85:
		return p.P85
	case 95:
		return p.P95
	}
	return 0
}

// CycleTimes are the cycle times of the issues done in the window.
type CycleTimes struct {
	N           int         `json:"n"`
	Percentiles Percentiles `json:"percentiles"`
	// Unstarted counts issues done in the window that were never in
	// steeping or in_review: they count in throughput, not here.
	Unstarted int `json:"unstarted"`
	// Items are the scatterplot's points, by done date then number.
	Items []CycleItem `json:"items"`
}

// CycleItem is one finished issue's cycle time.
type CycleItem struct {
	Number  int64     `json:"number"`
	Started time.Time `json:"started"`
	Done    time.Time `json:"done"`
	DoneDay string    `json:"doneDay"` // local date
	Days    int       `json:"days"`
}

// SLE is the service level expectation: Percentile% of the team's work
// finishes within Days calendar days. Days is 0 when fewer than
// MinSLESamples cycle times are known, and then nothing is aging.
type SLE struct {
	Percentile int `json:"percentile"`
	Days       int `json:"days"`
	N          int `json:"n"`
}

// WorkItemAge is one open, started issue's age.
type WorkItemAge struct {
	Number   int64     `json:"number"`
	State    State     `json:"state"`
	Started  time.Time `json:"started"`
	StartDay string    `json:"startDay"` // local date
	Days     int       `json:"days"`
	// Past is the highest of FlowPercentiles whose cycle time the age
	// exceeds (0: none).
	Past  int  `json:"past"`
	Aging bool `json:"aging"`
}

// Throughput is the number of issues done per Monday week of the window.
type Throughput struct {
	Weeks          []WeekCount    `json:"weeks"`
	Predictability Predictability `json:"predictability"`
}

// WeekCount is one week's throughput. Days is how many of its days lie in
// the window (7 for a complete week; the window's first and last weeks may
// be partial, and the current one is until Sunday is over).
type WeekCount struct {
	Start string `json:"start"` // the Monday, local date
	Count int    `json:"count"`
	Days  int    `json:"days"`
}

// Complete reports whether the whole week lies in the window.
func (w WeekCount) Complete() bool { return w.Days == 7 }

// Predictability says how stable weekly throughput is over the complete
// weeks: their 10th, 50th and 90th percentiles, and Ratio = P90/P10 (1:
// every week alike; the larger, the less a single week says). Ratio is 0
// when P10 is 0 (some weeks finish nothing) or there are no complete weeks.
type Predictability struct {
	Weeks int     `json:"weeks"`
	P10   int     `json:"p10"`
	P50   int     `json:"p50"`
	P90   int     `json:"p90"`
	Ratio float64 `json:"ratio"`
}

// DayCount is a count on one local date.
type DayCount struct {
	Day   string `json:"day"`
	Count int    `json:"count"`
}

// CFDDay is how many issues were in each state at the end of one day.
type CFDDay struct {
	Day       string `json:"day"`
	Diagnosis int    `json:"diagnosis"`
	Triage    int    `json:"triage"`
	Steeping  int    `json:"steeping"`
	InReview  int    `json:"inReview"`
	Done      int    `json:"done"`
}

// Count returns the day's count of state s.
func (c CFDDay) Count(s State) int {
	switch s {
	case Diagnosis:
		return c.Diagnosis
	case Triage:
		return c.Triage
	case Steeping:
		return c.Steeping
	case InReview:
		return c.InReview
	case Done:
		return c.Done
	}
	return 0
}

func (c *CFDDay) add(s State, n int) {
	switch s {
	case Diagnosis:
		c.Diagnosis += n
	case Triage:
		c.Triage += n
	case Steeping:
		c.Steeping += n
	case InReview:
		c.InReview += n
	case Done:
		c.Done += n
	}
}

// localDay numbers local dates: days since 1970-01-01 of t's date in loc.
func localDay(t time.Time, loc *time.Location) int {
	y, m, d := t.In(loc).Date()
	return int(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// dayDate formats a local day number as YYYY-MM-DD.
func dayDate(day int) string {
	return time.Unix(int64(day)*86400, 0).UTC().Format(time.DateOnly)
}

// mondayOf is the Monday on or before a local day (1970-01-01 was a
// Thursday).
func mondayOf(day int) int {
	return day - ((day+3)%7+7)%7
}

func active(s State) bool { return s == Steeping || s == InReview }

// flowStep is an issue's state from a local day on.
type flowStep struct {
	day   int
	state State
}

// flowIssue is one issue's history as the metrics read it.
type flowIssue struct {
	number  int64
	steps   []flowStep // one per day with a transition: the state at its end
	started time.Time  // first move into steeping or in_review; zero if none
	doneAt  time.Time  // the final move into done; zero while not done
	state   State      // current
}

// Flow computes the flow metrics at in.Now.
func Flow(in FlowInput, opts FlowOptions) FlowMetrics {
	o := opts.normalized()
	loc := o.Location
	today := localDay(in.Now, loc)
	issues := flowIssues(in, loc)
	first := today
	for _, is := range issues {
		first = min(first, is.steps[0].day)
	}
	from := max(today-o.WindowDays+1, first)
	m := FlowMetrics{
		Now: in.Now, TimeZone: loc.String(), WindowDays: o.WindowDays,
		From: dayDate(from), To: dayDate(today),
	}

	// Cycle times and throughput of the issues done in the window.
	var days []int
	weekly := map[int]int{}
	for _, is := range issues {
		if is.doneAt.IsZero() {
			continue
		}
		d := localDay(is.doneAt, loc)
		if d < from || d > today {
			continue
		}
		weekly[mondayOf(d)]++
		if is.started.IsZero() {
			m.CycleTime.Unstarted++
			continue
		}
		ct := d - localDay(is.started, loc) + 1
		days = append(days, ct)
		m.CycleTime.Items = append(m.CycleTime.Items, CycleItem{Number: is.number, Started: is.started, Done: is.doneAt, DoneDay: dayDate(d), Days: ct})
	}
	slices.SortFunc(m.CycleTime.Items, func(a, b CycleItem) int {
		return cmp.Or(cmp.Compare(a.DoneDay, b.DoneDay), cmp.Compare(a.Number, b.Number))
	})
	slices.Sort(days)
	m.CycleTime.N = len(days)
	m.CycleTime.Percentiles = Percentiles{
		P50: nearestRank(days, 50), P70: nearestRank(days, 70), P85: nearestRank(days, 85), P95: nearestRank(days, 95),
	}
	m.SLE = SLE{Percentile: o.SLEPercentile, N: len(days)}
	if len(days) >= MinSLESamples {
		m.SLE.Days = nearestRank(days, o.SLEPercentile)
	}

	// Work item age of open, started issues.
	for _, is := range issues {
		if !active(is.state) || is.started.IsZero() {
			continue
		}
		sd := localDay(is.started, loc)
		a := WorkItemAge{Number: is.number, State: is.state, Started: is.started, StartDay: dayDate(sd), Days: today - sd + 1}
		for _, p := range FlowPercentiles {
			if v := m.CycleTime.Percentiles.At(p); v > 0 && a.Days > v {
				a.Past = p
			}
		}
		a.Aging = m.SLE.Days > 0 && a.Days > m.SLE.Days
		m.Age = append(m.Age, a)
	}
	slices.SortFunc(m.Age, func(a, b WorkItemAge) int {
		return cmp.Or(cmp.Compare(b.Days, a.Days), cmp.Compare(a.Number, b.Number))
	})

	// Weekly throughput and its predictability over complete weeks.
	var full []int
	for w := mondayOf(from); w <= today; w += 7 {
		wc := WeekCount{Start: dayDate(w), Count: weekly[w], Days: min(w+6, today) - max(w, from) + 1}
		m.Throughput.Weeks = append(m.Throughput.Weeks, wc)
		if wc.Complete() {
			full = append(full, wc.Count)
		}
	}
	slices.Sort(full)
	pr := Predictability{Weeks: len(full), P10: nearestRank(full, 10), P50: nearestRank(full, 50), P90: nearestRank(full, 90)}
	if pr.P10 > 0 {
		pr.Ratio = math.Round(float64(pr.P90)/float64(pr.P10)*100) / 100
	}
	m.Throughput.Predictability = pr

	// WIP and the cumulative flow diagram: each issue adds one to its state
	// from the day of each step until the next, as a difference over days.
	n := today - from + 1
	delta := make([]CFDDay, n+1)
	for _, is := range issues {
		for k, st := range is.steps {
			end := today + 1
			if k+1 < len(is.steps) {
				end = is.steps[k+1].day
			}
			lo, hi := max(st.day, from), min(end, today+1)
			if lo >= hi {
				continue
			}
			delta[lo-from].add(st.state, 1)
			delta[hi-from].add(st.state, -1)
		}
	}
	var run CFDDay
	for k := range n {
		d := delta[k]
		for _, s := range []State{Diagnosis, Triage, Steeping, InReview, Done} {
			run.add(s, d.Count(s))
		}
		day := run
		day.Day = dayDate(from + k)
		m.CFD = append(m.CFD, day)
		m.WIP = append(m.WIP, DayCount{Day: day.Day, Count: day.Steeping + day.InReview})
	}
	return m
}

// flowIssues groups the transitions by issue, leaves out discarded issues
// and reads each one's steps, start and final done.
func flowIssues(in FlowInput, loc *time.Location) []flowIssue {
	byIssue := map[int64][]Transition{}
	for _, t := range in.Transitions {
		if in.Discarded[t.Issue] || t.At.After(in.Now) {
			continue
		}
		byIssue[t.Issue] = append(byIssue[t.Issue], t)
	}
	numbers := make([]int64, 0, len(byIssue))
	for n := range byIssue {
		numbers = append(numbers, n)
	}
	slices.Sort(numbers)
	out := make([]flowIssue, 0, len(numbers))
	for _, n := range numbers {
		ts := byIssue[n]
		slices.SortStableFunc(ts, func(a, b Transition) int { return a.At.Compare(b.At) })
		is := flowIssue{number: n}
		for _, t := range ts {
			d := localDay(t.At, loc)
			if k := len(is.steps); k > 0 && is.steps[k-1].day == d {
				is.steps[k-1].state = t.To
			} else {
				is.steps = append(is.steps, flowStep{day: d, state: t.To})
			}
			if active(t.To) && is.started.IsZero() {
				is.started = t.At
			}
			is.state = t.To
		}
		if is.state == Done {
			is.doneAt = ts[len(ts)-1].At
		}
		out = append(out, is)
	}
	return out
}

// nearestRank is the pth percentile of sorted xs by nearest rank; 0 when xs
// is empty.
func nearestRank(xs []int, p int) int {
	if len(xs) == 0 {
		return 0
	}
	k := (p*len(xs)+99)/100 - 1
	return xs[max(0, min(k, len(xs)-1))]
}

// MarkAging sets the aging flag, with its provenance, on the statuses of
// the issues m found older than its SLE.
func MarkAging(statuses []IssueStatus, m FlowMetrics) {
	aging := map[int64]WorkItemAge{}
	for _, a := range m.Age {
		if a.Aging {
			aging[a.Number] = a
		}
	}
	for i := range statuses {
		s := &statuses[i]
		a, ok := aging[s.Number]
		if !ok || s.State == Done {
			continue
		}
		s.Aging = true
		s.Why.Aging = []string{fmt.Sprintf("age:%dd since %s", a.Days, a.StartDay),
			fmt.Sprintf("sle:p%d=%dd of %d", m.SLE.Percentile, m.SLE.Days, m.SLE.N)}
	}
}
