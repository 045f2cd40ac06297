package scheduler

// What-if: apply hypothetical changes to a deep copy of the input and
// forecast both with the baseline's seed. Draws are keyed by (seed, issue,
// trial), so every issue the changes do not reach keeps exactly the same
// samples and the difference is what the changes caused, not noise. A
// what-if that changes nothing reports "no change".
//
// Unassigned issues keep the person the baseline's planning pass gave them
// (new ones are planned afresh), so a change moves only what depends on it,
// and more work can never make anything earlier. A batch with set_capacity
// re-plans all unassigned work instead: giving someone fewer hours, or
// hiring, is precisely a question about who picks up what.
//
// Proposed issues (add_issue) without a number, or with one already taken,
// get the next free negative number (-1, -2, ...). set_capacity on a login
// outside Input.People adds that person to the team (a hire). Changes are
// validated as a batch: one bad change fails the call and nothing is
// forecast.

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// ChangeKind names one kind of hypothetical change.
type ChangeKind string

// The change kinds WhatIf understands.
const (
	SetEstimate  ChangeKind = "set_estimate"  // Issue, Estimate ("" clears it)
	SetPriority  ChangeKind = "set_priority"  // Issue, Priority
	SetMilestone ChangeKind = "set_milestone" // Issue, Milestone (0 removes it)
	SetDueDate   ChangeKind = "set_due_date"  // Milestone, Due (zero clears it)
	SetHardness  ChangeKind = "set_hardness"  // Milestone, Hard
	AddDep       ChangeKind = "add_dep"       // Issue depends on DependsOn
	RemoveDep    ChangeKind = "remove_dep"    // Issue no longer depends on DependsOn
	CloseIssue   ChangeKind = "close"         // Issue
	AddIssue     ChangeKind = "add_issue"     // NewIssue
	SetCapacity  ChangeKind = "set_capacity"  // Person, HoursPerDay and/or TimeOff
)

// Change is one hypothetical change; Kind says which fields it reads.
type Change struct {
	Kind        ChangeKind  `json:"kind"`
	Issue       int64       `json:"issue,omitempty"`
	Estimate    Size        `json:"estimate,omitempty"`
	Priority    int         `json:"priority,omitempty"`
	Milestone   int64       `json:"milestone,omitempty"`
	Due         time.Time   `json:"due,omitzero"`
	Hard        bool        `json:"hard,omitempty"`
	DependsOn   int64       `json:"dependsOn,omitempty"`
	NewIssue    *Issue      `json:"newIssue,omitempty"`
	Person      string      `json:"person,omitempty"`
	HoursPerDay float64     `json:"hoursPerDay,omitempty"`
	TimeOff     []DateRange `json:"timeOff,omitempty"`
}

// MilestoneDelta is one milestone before and after a what-if.
type MilestoneDelta struct {
	ID     int64              `json:"id"`
	Title  string             `json:"title"`
	Before *MilestoneForecast `json:"before,omitempty"`
	After  *MilestoneForecast `json:"after,omitempty"`
	// P80ShiftDays is the move of p80 in working days of the team calendar.
	P80ShiftDays float64 `json:"p80ShiftDays"`
}

// IssueDelta is one issue before and after a what-if; Before is nil for a
// proposed issue, After for one the changes closed.
type IssueDelta struct {
	Number int64          `json:"number"`
	Before *IssueForecast `json:"before,omitempty"`
	After  *IssueForecast `json:"after,omitempty"`
}

// WhatIfResult compares the baseline forecast with the changed one. Only
// milestones and issues whose forecast changed are listed.
type WhatIfResult struct {
	Seed        uint64           `json:"seed"`
	Changed     bool             `json:"changed"`
	Consequence string           `json:"consequence"`
	Milestones  []MilestoneDelta `json:"milestones"`
	Issues      []IssueDelta     `json:"issues"`
	// Proposed maps each add_issue change (by position in the batch) to
	// the number the proposed issue got.
	Proposed []int64 `json:"proposed,omitempty"`
}

// WhatIf forecasts in with and without changes, using the same seed (the
// baseline's: opts.Seed, or the one derived from in).
func WhatIf(in Input, changes []Change, opts Options) (WhatIfResult, error) {
	if opts.Seed == 0 {
		opts.Seed = InputSeed(in)
	}
	changed, proposed, err := ApplyChanges(in, changes)
	if err != nil {
		return WhatIfResult{}, err
	}
	base, err := newPlan(in, opts, nil)
	if err != nil {
		return WhatIfResult{}, fmt.Errorf("what-if baseline: %w", err)
	}
	before := base.run()
	// Unassigned issues keep the person the baseline planned for them, so
	// the comparison shows what the changes did, not a reshuffle.
	pins := base.plannedAssignments()
	if slices.ContainsFunc(changes, func(c Change) bool { return c.Kind == SetCapacity }) {
		pins = nil
	}
	next, err := newPlan(changed, opts, pins)
	if err != nil {
		return WhatIfResult{}, fmt.Errorf("what-if forecast: %w", err)
	}
	after := next.run()
	res := compareForecasts(before, after)
	res.Seed, res.Proposed = opts.Seed, proposed
	res.Consequence = consequence(in.Now, res)
	return res, nil
}

// ApplyChanges returns a deep copy of in with the changes applied, and the
// numbers given to proposed issues. in itself is never modified.
func ApplyChanges(in Input, changes []Change) (Input, []int64, error) {
	out := cloneInput(in)
	var proposed []int64
	issueAt := func(num int64) (*Issue, error) {
		for i := range out.Issues {
			if out.Issues[i].Number == num {
				return &out.Issues[i], nil
			}
		}
		return nil, fmt.Errorf("issue #%d not found", num)
	}
	milestoneAt := func(id int64) (*Milestone, error) {
		for i := range out.Milestones {
			if out.Milestones[i].ID == id {
				return &out.Milestones[i], nil
			}
		}
		return nil, fmt.Errorf("milestone %d not found", id)
	}
	for k, c := range changes {
		var err error
		var is *Issue
		switch c.Kind {
		case SetEstimate, SetPriority, SetMilestone, AddDep, RemoveDep, CloseIssue:
			is, err = issueAt(c.Issue)
		}
		if err == nil {
			err = applyChange(&out, c, is, milestoneAt, issueAt, &proposed)
		}
		if err != nil {
			return Input{}, nil, fmt.Errorf("what-if change %d (%s): %w", k+1, c.Kind, err)
		}
	}
	return out, proposed, nil
}

func applyChange(out *Input, c Change, is *Issue, milestoneAt func(int64) (*Milestone, error), issueAt func(int64) (*Issue, error), proposed *[]int64) error {
	switch c.Kind {
	case SetEstimate:
		if c.Estimate != "" && !c.Estimate.Valid() {
			return fmt.Errorf("unknown estimate %q", c.Estimate)
		}
		is.Estimate = c.Estimate
		is.Labels = replaceLabel(is.Labels, "est/", string(c.Estimate))
	case SetPriority:
		if c.Priority < 0 || c.Priority > 3 {
			return fmt.Errorf("priority %d outside 0..3", c.Priority)
		}
		is.Priority = c.Priority
		is.Labels = replaceLabel(is.Labels, "p/", fmt.Sprint(c.Priority))
	case SetMilestone:
		if c.Milestone != 0 {
			if _, err := milestoneAt(c.Milestone); err != nil {
				return err
			}
		}
		is.Milestone = c.Milestone
	case SetDueDate:
		m, err := milestoneAt(c.Milestone)
		if err != nil {
			return err
		}
		m.Due = c.Due
	case SetHardness:
		m, err := milestoneAt(c.Milestone)
		if err != nil {
			return err
		}
		m.Hard = c.Hard
	case AddDep:
		if _, err := issueAt(c.DependsOn); err != nil {
			return err
		}
		if c.DependsOn == c.Issue {
			return errors.New("an issue cannot depend on itself")
		}
		if !slices.Contains(is.DependsOn, c.DependsOn) {
			is.DependsOn = append(is.DependsOn, c.DependsOn)
		}
	case RemoveDep:
		if !slices.Contains(is.DependsOn, c.DependsOn) {
			return fmt.Errorf("issue #%d does not depend on #%d", c.Issue, c.DependsOn)
		}
		is.DependsOn = slices.DeleteFunc(is.DependsOn, func(d int64) bool { return d == c.DependsOn })
	case CloseIssue:
		is.State = Done
	case AddIssue:
		if c.NewIssue == nil {
			return errors.New("no newIssue")
		}
		n := *c.NewIssue
		n.Labels = slices.Clone(n.Labels)
		n.DependsOn = slices.Clone(n.DependsOn)
		if _, err := issueAt(n.Number); n.Number == 0 || err == nil {
			n.Number = -1
			for {
				if _, err := issueAt(n.Number); err != nil {
					break
				}
				n.Number--
			}
		}
		if n.State == "" || n.State == Done {
			n.State = Triage
			if n.Assignee != "" {
				n.State = Steeping
			}
		}
		if n.Title == "" {
			n.Title = "proposed issue"
		}
		out.Issues = append(out.Issues, n)
		*proposed = append(*proposed, n.Number)
	case SetCapacity:
		if c.Person == "" {
			return errors.New("no person")
		}
		if c.HoursPerDay < 0 || c.HoursPerDay > 24 {
			return fmt.Errorf("hours per day %v outside 0..24", c.HoursPerDay)
		}
		k := slices.IndexFunc(out.People, func(p Person) bool { return p.Login == c.Person })
		if k < 0 {
			out.People = append(out.People, Person{Login: c.Person})
			k = len(out.People) - 1
		}
		cal := &out.People[k].Calendar
		if c.HoursPerDay > 0 {
			cal.HoursPerDay = c.HoursPerDay
		}
		cal.TimeOff = append(cal.TimeOff, c.TimeOff...)
	default:
		return fmt.Errorf("unknown change kind %q", c.Kind)
	}
	return nil
}

// replaceLabel swaps the labels of one namespace (est/, p/) for
// prefix+value, or drops them when value is empty, so labels keep agreeing
// with the fields they were read from.
func replaceLabel(labels []string, prefix, value string) []string {
	labels = slices.DeleteFunc(labels, func(l string) bool {
		return strings.HasPrefix(strings.ToLower(strings.TrimSpace(l)), prefix)
	})
	if value != "" {
		labels = append(labels, prefix+value)
	}
	return labels
}

// pairByKey indexes two lists by key and returns every key of either, in
// ascending order, with both indexes (nil where a list lacks the key).
func pairByKey[T any](before, after []T, key func(*T) int64) ([]int64, map[int64]*T, map[int64]*T) {
	index := func(xs []T) map[int64]*T {
		m := make(map[int64]*T, len(xs))
		for i := range xs {
			m[key(&xs[i])] = &xs[i]
		}
		return m
	}
	b, a := index(before), index(after)
	keys := make([]int64, 0, len(b))
	for k := range b {
		keys = append(keys, k)
	}
	for k := range a {
		if b[k] == nil {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, b, a
}

// compareForecasts lists the milestones and issues whose forecast differs.
func compareForecasts(before, after Forecast) WhatIfResult {
	res := WhatIfResult{Milestones: []MilestoneDelta{}, Issues: []IssueDelta{}}
	ids, bm, am := pairByKey(before.Milestones, after.Milestones, func(m *MilestoneForecast) int64 { return m.ID })
	team := Calendar{}
	for _, id := range ids {
		b, a := bm[id], am[id]
		if b != nil && a != nil && *b == *a {
			continue
		}
		d := MilestoneDelta{ID: id, Before: b, After: a}
		if a != nil {
			d.Title = a.Title
		} else {
			d.Title = b.Title
		}
		if a != nil && b != nil {
			d.P80ShiftDays = math.Round(WorkingDaysBetween(team, b.P80, a.P80)*10) / 10
		}
		res.Milestones = append(res.Milestones, d)
	}

	nums, bi, ai := pairByKey(before.Issues, after.Issues, func(i *IssueForecast) int64 { return i.Number })
	for _, n := range nums {
		b, a := bi[n], ai[n]
		if b != nil && a != nil && *b == *a {
			continue
		}
		res.Issues = append(res.Issues, IssueDelta{Number: n, Before: b, After: a})
	}
	res.Changed = len(res.Milestones) > 0 || len(res.Issues) > 0
	return res
}

// consequence is the one-line summary: each changed milestone's p80 move and
// resulting slack, largest move first, or the changed issues when no
// milestone moved.
func consequence(now time.Time, res WhatIfResult) string {
	if !res.Changed {
		return "no change"
	}
	ms := slices.Clone(res.Milestones)
	slices.SortStableFunc(ms, func(a, b MilestoneDelta) int {
		if c := -cmp.Compare(math.Abs(a.P80ShiftDays), math.Abs(b.P80ShiftDays)); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	var parts []string
	for _, d := range ms {
		switch {
		case d.Before == nil:
			parts = append(parts, fmt.Sprintf("%s p80 %s (new)", d.Title, shortDate(now, d.After.P80)))
		case d.After == nil:
			parts = append(parts, fmt.Sprintf("%s leaves the forecast", d.Title))
		case !d.Before.P80.Equal(d.After.P80):
			s := fmt.Sprintf("%s p80 moves %s → %s (%s working days)", d.Title,
				shortDate(now, d.Before.P80), shortDate(now, d.After.P80), signed(d.P80ShiftDays))
			if !d.After.Due.IsZero() {
				s += "; slack " + signedDays(d.After.SlackDays)
			}
			parts = append(parts, s)
		case !d.After.Due.IsZero() && d.Before.SlackDays != d.After.SlackDays:
			parts = append(parts, fmt.Sprintf("%s p80 stays %s; slack %s → %s", d.Title,
				shortDate(now, d.After.P80), signedDays(d.Before.SlackDays), signedDays(d.After.SlackDays)))
		case d.Before.PDue != d.After.PDue:
			parts = append(parts, fmt.Sprintf("%s on-time chance %d%% → %d%%", d.Title,
				int(math.Round(d.Before.PDue*100)), int(math.Round(d.After.PDue*100))))
		}
	}
	if len(parts) > 0 {
		return strings.Join(parts, "; ")
	}
	// No milestone moved: name up to three changed issues.
	for _, d := range res.Issues {
		if len(parts) == 3 {
			parts = append(parts, fmt.Sprintf("and %d more issues", len(res.Issues)-3))
			break
		}
		switch {
		case d.Before == nil:
			parts = append(parts, fmt.Sprintf("#%d p80 %s (new)", d.Number, shortDate(now, d.After.P80)))
		case d.After == nil:
			parts = append(parts, fmt.Sprintf("#%d leaves the forecast", d.Number))
		case d.Before.P80.Equal(d.After.P80):
			parts = append(parts, fmt.Sprintf("#%d p80 stays %s", d.Number, shortDate(now, d.After.P80)))
		default:
			parts = append(parts, fmt.Sprintf("#%d p80 moves %s → %s", d.Number,
				shortDate(now, d.Before.P80), shortDate(now, d.After.P80)))
		}
	}
	return strings.Join(parts, "; ")
}

// shortDate prints "Mar 3", with the year when it is not now's year.
func shortDate(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	if t.Year() != now.Year() {
		return t.Format("Jan 2 2006")
	}
	return t.Format("Jan 2")
}

// signed prints a number of days with its sign (a real minus sign).
func signed(x float64) string {
	s := strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", math.Abs(x)), "0"), ".")
	switch {
	case s == "0":
		return "±0"
	case x < 0:
		return "−" + s
	}
	return "+" + s
}

func signedDays(x float64) string { return signed(x) + "d" }

// cloneInput deep-copies everything a what-if may change, so the caller's
// input stays untouched.
func cloneInput(in Input) Input {
	out := in
	out.People = slices.Clone(in.People)
	for i := range out.People {
		c := &out.People[i].Calendar
		c.Holidays = slices.Clone(c.Holidays)
		c.TimeOff = slices.Clone(c.TimeOff)
	}
	out.Milestones = slices.Clone(in.Milestones)
	out.Issues = slices.Clone(in.Issues)
	for i := range out.Issues {
		out.Issues[i].Labels = slices.Clone(out.Issues[i].Labels)
		out.Issues[i].DependsOn = slices.Clone(out.Issues[i].DependsOn)
	}
	out.Calibration.ByLabelBias = slices.Clone(in.Calibration.ByLabelBias)
	out.Calibration.ByPersonBias = slices.Clone(in.Calibration.ByPersonBias)
	return out
}
