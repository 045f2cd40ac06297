package scheduler

// What-if: apply hypothetical changes to a deep copy of the input and
// forecast both with the same seed and the same plan (Input.Planned). Draws
// are keyed by (seed, issue, trial), so every issue the changes do not reach
// keeps exactly the same samples and the difference is what the changes
// caused, not noise. A what-if that changes nothing reports "no change".
//
// This is the engine-level what-if, for callers that hold an Input (tests,
// searches over many options). The write tools quote the worker's what-if,
// which makes the same changes to a copy of the mirror and runs it through
// the recompute's own path (lifecycle, calibration), so its quote is what
// the next snapshot shows; both describe the difference with DiffForecasts.
//
// Proposed issues (add_issue) are numbered after the highest number in the
// input, in batch order, as Gitea will number them (so they take the same
// place in the work order); a negative NewIssue.Number is a placeholder that
// later proposals' DependsOn may name. set_capacity on a login outside
// Input.People adds that person to the team (a hire). Changes are validated
// as a batch: one bad change fails the call and nothing is forecast.

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
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
	RemoveLabel  ChangeKind = "remove_label"  // Issue, Label (matched case-insensitively)
	AddIssue     ChangeKind = "add_issue"     // NewIssue
	SetCapacity  ChangeKind = "set_capacity"  // Person, HoursPerDay and/or TimeOff
	SetAssignees ChangeKind = "set_assignees" // Issue, Assignees (none unassigns it)
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
	Label       string      `json:"label,omitempty"`
	NewIssue    *Issue      `json:"newIssue,omitempty"`
	Person      string      `json:"person,omitempty"`
	HoursPerDay float64     `json:"hoursPerDay,omitempty"`
	TimeOff     []DateRange `json:"timeOff,omitempty"`
	Assignees   []string    `json:"assignees,omitempty"`
}

// MilestoneDelta is one milestone before and after a what-if.
type MilestoneDelta struct {
	ID     int64              `json:"id"`
	Title  string             `json:"title"`
	Before *MilestoneForecast `json:"before,omitempty"`
	After  *MilestoneForecast `json:"after,omitempty"`
	// P80ShiftDays is the move of p80 in whole working days (Monday to
	// Friday) between the two dates.
	P80ShiftDays float64 `json:"p80ShiftDays"`
}

// IssueDelta is one issue before and after a what-if; Before is nil for a
// proposed issue, After for one the changes closed.
type IssueDelta struct {
	Number int64          `json:"number"`
	Before *IssueForecast `json:"before,omitempty"`
	After  *IssueForecast `json:"after,omitempty"`
	// Title is set for a proposed issue, which has no number of its own yet.
	Title string `json:"title,omitempty"`
}

// WhatIfResult compares the baseline forecast with the changed one. Only
// milestones and issues whose forecast changed as people read it (a date to
// the day, the chance of the due date to two decimals, the slack) are
// listed.
type WhatIfResult struct {
	Seed        uint64           `json:"seed"`
	Changed     bool             `json:"changed"`
	Consequence string           `json:"consequence"`
	Milestones  []MilestoneDelta `json:"milestones"`
	Issues      []IssueDelta     `json:"issues"`
	// Proposed maps each add_issue change (by position in the batch) to
	// the number the proposed issue got in the forecast.
	Proposed []int64 `json:"proposed,omitempty"`
}

// WhatIf forecasts in with and without changes, using the same seed (the
// baseline's: opts.Seed, or the one derived from in) and the same plan.
func WhatIf(in Input, changes []Change, opts Options) (WhatIfResult, error) {
	if opts.Seed == 0 {
		opts.Seed = InputSeed(in)
	}
	changed, proposed, err := ApplyChanges(in, changes)
	if err != nil {
		return WhatIfResult{}, err
	}
	before, err := Run(in, opts)
	if err != nil {
		return WhatIfResult{}, fmt.Errorf("what-if baseline: %w", err)
	}
	after, err := Run(changed, opts)
	if err != nil {
		return WhatIfResult{}, fmt.Errorf("what-if forecast: %w", err)
	}
	return DiffForecasts(before, after, changed, proposed), nil
}

// DiffForecasts compares two forecasts of one project: after is the forecast of
// afterIn (which names the proposed issues), proposed the numbers the
// proposed issues got. The result lists what changed and says it in one
// line.
func DiffForecasts(before, after Forecast, afterIn Input, proposed []int64) WhatIfResult {
	res := compareForecasts(before, after)
	res.Seed, res.Proposed = after.Seed, proposed
	titles := map[int64]string{}
	for _, n := range proposed {
		titles[n] = ""
	}
	for _, is := range afterIn.Issues {
		if _, ok := titles[is.Number]; ok {
			titles[is.Number] = is.Title
		}
	}
	for k := range res.Issues {
		if t, ok := titles[res.Issues[k].Number]; ok {
			res.Issues[k].Title = cmp.Or(t, "proposed issue")
		}
	}
	res.Consequence = consequence(after.Now, res)
	return res
}

// WorkOrder is the order the schedule takes the open, schedulable issues
// in (their numbers, first first): the list every person works their share
// of, for callers that explain or check it.
func WorkOrder(in Input) ([]int64, error) {
	p, err := newPlan(in, Options{Trials: 1})
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(p.items))
	for k, it := range p.items {
		out[k] = in.Issues[it.issue].Number
	}
	return out, nil
}

// ProposalDrawKey is the draw key (Issue.DrawKey) of a proposed issue: a
// hash of its title and body and of how many proposals of the same batch
// came before with the same title and body. The worker records it for the
// issue once Gitea has filed it, so the issue keeps the draws it was quoted
// with whatever number it got. It is negative, never an issue number.
func ProposalDrawKey(title, body string, occurrence int) int64 {
	h := fnv.New64a()
	for _, s := range []string{"proposal", title, body, strconv.Itoa(occurrence)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return int64(h.Sum64() | 1<<63)
}

// ApplyChanges returns a deep copy of in with the changes applied, and the
// numbers given to proposed issues. in itself is never modified.
func ApplyChanges(in Input, changes []Change) (Input, []int64, error) {
	out := cloneInput(in)
	var proposed []int64
	next := int64(0)
	for _, is := range in.Issues {
		next = max(next, is.Number)
	}
	placeholders := map[int64]int64{}
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
		case SetEstimate, SetPriority, SetMilestone, AddDep, RemoveDep, CloseIssue, RemoveLabel, SetAssignees:
			is, err = issueAt(c.Issue)
		case AddIssue:
			if c.NewIssue == nil {
				err = errors.New("no newIssue")
				break
			}
			next++
			var n Issue
			if n, err = proposedIssue(*c.NewIssue, next, placeholders, issueAt); err == nil {
				if c.NewIssue.Number < 0 {
					placeholders[c.NewIssue.Number] = next
				}
				out.Issues = append(out.Issues, n)
				proposed = append(proposed, next)
			}
		}
		if err == nil && c.Kind != AddIssue {
			err = applyChange(&out, c, is, milestoneAt, issueAt)
		}
		if err != nil {
			return Input{}, nil, fmt.Errorf("what-if change %d (%s): %w", k+1, c.Kind, err)
		}
	}
	return out, proposed, nil
}

// proposedIssue is a proposed issue as the forecast takes it: numbered,
// open, its placeholder dependencies resolved.
func proposedIssue(n Issue, number int64, placeholders map[int64]int64, issueAt func(int64) (*Issue, error)) (Issue, error) {
	n.Number = number
	n.Labels = slices.Clone(n.Labels)
	n.DependsOn = slices.Clone(n.DependsOn)
	for i, d := range n.DependsOn {
		if d < 0 {
			real, ok := placeholders[d]
			if !ok {
				return Issue{}, fmt.Errorf("depends on proposed issue %d, which no earlier change proposes", d)
			}
			n.DependsOn[i] = real
		} else if _, err := issueAt(d); err != nil {
			return Issue{}, err
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
	return n, nil
}

func applyChange(out *Input, c Change, is *Issue, milestoneAt func(int64) (*Milestone, error), issueAt func(int64) (*Issue, error)) error {
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
	case RemoveLabel:
		label := strings.ToLower(strings.TrimSpace(c.Label))
		if label == "" {
			return errors.New("no label")
		}
		is.Labels = slices.DeleteFunc(is.Labels, func(l string) bool { return strings.EqualFold(strings.TrimSpace(l), label) })
		// Only the field the label's namespace sets is read again, so an
		// issue given its fields without labels keeps the others.
		size, priority, hard := ParseLabels(is.Labels)
		switch {
		case strings.HasPrefix(label, "est/"):
			is.Estimate = size
		case strings.HasPrefix(label, "p/"):
			is.Priority = priority
		case label == "deadline/hard":
			is.HardDeadline = hard
		}
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
	case SetAssignees:
		// The first assignee in login order works it, as the mirror reads
		// Gitea's list; assigning is starting (DESIGN §4), so open work
		// not yet in review steeps when someone holds it and goes back to
		// triage when nobody does.
		is.Assignee = FirstAssignee(c.Assignees)
		if is.State == Steeping || is.State == Triage || is.State == Diagnosis {
			switch {
			case is.Assignee != "":
				is.State = Steeping
			case is.Estimate != "" || is.Milestone != 0 || slices.ContainsFunc(is.Labels, func(l string) bool {
				return strings.HasPrefix(strings.ToLower(strings.TrimSpace(l)), "p/")
			}):
				is.State = Triage
			default:
				is.State = Diagnosis
			}
		}
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

// FirstAssignee is the login that works an issue assigned to logins: the
// first in byte order, blanks left out ("" for none), as the mirror keeps
// Gitea's assignees sorted.
func FirstAssignee(logins []string) string {
	first := ""
	for _, l := range logins {
		if l = strings.TrimSpace(l); l != "" && (first == "" || l < first) {
			first = l
		}
	}
	return first
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

// DateOf is the calendar date (UTC) a forecast instant is shown as.
func DateOf(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.DateOnly)
}

// SameMilestoneForecast reports whether two milestone forecasts read the
// same: p10, p50, p80 and due on the same dates, the same chance of the due
// date (two decimals), slack and hardness.
func SameMilestoneForecast(a, b *MilestoneForecast) bool {
	return DateOf(a.P10) == DateOf(b.P10) && DateOf(a.P50) == DateOf(b.P50) && DateOf(a.P80) == DateOf(b.P80) &&
		DateOf(a.Due) == DateOf(b.Due) && RoundPDue(a.PDue) == RoundPDue(b.PDue) &&
		a.SlackDays == b.SlackDays && a.Hard == b.Hard
}

// SameIssueForecast reports whether two issue forecasts read the same:
// p10, p50 and p80 on the same dates, and schedulable alike.
func SameIssueForecast(a, b *IssueForecast) bool {
	return DateOf(a.P10) == DateOf(b.P10) && DateOf(a.P50) == DateOf(b.P50) && DateOf(a.P80) == DateOf(b.P80) &&
		a.Unschedulable == b.Unschedulable
}

// RoundPDue rounds a chance of meeting a due date to the two decimals it
// is shown with everywhere.
func RoundPDue(p float64) float64 { return math.Round(p*100) / 100 }

// compareForecasts lists the milestones and issues whose forecast differs.
func compareForecasts(before, after Forecast) WhatIfResult {
	res := WhatIfResult{Milestones: []MilestoneDelta{}, Issues: []IssueDelta{}}
	ids, bm, am := pairByKey(before.Milestones, after.Milestones, func(m *MilestoneForecast) int64 { return m.ID })
	for _, id := range ids {
		b, a := bm[id], am[id]
		if b != nil && a != nil && SameMilestoneForecast(b, a) {
			continue
		}
		d := MilestoneDelta{ID: id, Before: b, After: a}
		if a != nil {
			d.Title = a.Title
		} else {
			d.Title = b.Title
		}
		if a != nil && b != nil {
			d.P80ShiftDays = float64(workdaysBetweenDates(b.P80, a.P80))
		}
		res.Milestones = append(res.Milestones, d)
	}

	nums, bi, ai := pairByKey(before.Issues, after.Issues, func(i *IssueForecast) int64 { return i.Number })
	for _, n := range nums {
		b, a := bi[n], ai[n]
		if b != nil && a != nil && SameIssueForecast(b, a) {
			continue
		}
		res.Issues = append(res.Issues, IssueDelta{Number: n, Before: b, After: a})
	}
	res.Changed = len(res.Milestones) > 0 || len(res.Issues) > 0
	return res
}

// workdaysBetweenDates counts the Monday-to-Friday days after a's date up
// to b's (UTC), negative when b's date is earlier: 0 for the same date.
func workdaysBetweenDates(a, b time.Time) int {
	da, db := dayNumber(a.UTC()), dayNumber(b.UTC())
	sign := 1
	if db < da {
		da, db, sign = db, da, -1
	}
	n := 0
	for d := da + 1; d <= db; d++ {
		// Day 0 of the Unix epoch was a Thursday.
		if wd := time.Weekday((d + 4) % 7); wd != time.Saturday && wd != time.Sunday {
			n++
		}
	}
	return sign * n
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
		if s := milestoneMove(now, d); s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) > 0 {
		return strings.Join(parts, "; ")
	}
	// No milestone moved: name up to three changed issues.
	for k, d := range res.Issues {
		if k == 3 {
			parts = append(parts, fmt.Sprintf("and %d more issues", len(res.Issues)-3))
			break
		}
		parts = append(parts, issueMove(now, d))
	}
	return strings.Join(parts, "; ")
}

// milestoneMove says how one milestone's forecast moved, as dates read.
func milestoneMove(now time.Time, d MilestoneDelta) string {
	b, a := d.Before, d.After
	switch {
	case b == nil:
		return fmt.Sprintf("%s p80 %s (new)", d.Title, shortDate(now, a.P80))
	case a == nil:
		return fmt.Sprintf("%s leaves the forecast", d.Title)
	case DateOf(b.P80) != DateOf(a.P80):
		s := fmt.Sprintf("%s p80 moves %s → %s (%s)", d.Title,
			shortDate(now, b.P80), shortDate(now, a.P80), workingDays(d.P80ShiftDays))
		if !a.Due.IsZero() {
			s += "; slack " + signedDays(a.SlackDays)
		}
		return s
	case !a.Due.IsZero() && b.SlackDays != a.SlackDays:
		return fmt.Sprintf("%s p80 stays %s; slack %s → %s", d.Title,
			shortDate(now, a.P80), signedDays(b.SlackDays), signedDays(a.SlackDays))
	case RoundPDue(b.PDue) != RoundPDue(a.PDue):
		return fmt.Sprintf("%s on-time chance %d%% → %d%%", d.Title,
			int(math.Round(b.PDue*100)), int(math.Round(a.PDue*100)))
	case DateOf(b.P50) != DateOf(a.P50):
		return fmt.Sprintf("%s p80 stays %s; p50 moves %s → %s", d.Title,
			shortDate(now, a.P80), shortDate(now, b.P50), shortDate(now, a.P50))
	case DateOf(b.P10) != DateOf(a.P10):
		return fmt.Sprintf("%s p80 stays %s; p10 moves %s → %s", d.Title,
			shortDate(now, a.P80), shortDate(now, b.P10), shortDate(now, a.P10))
	}
	return ""
}

// issueMove says how one issue's forecast moved; a proposed issue is named
// by its title, having no number yet.
func issueMove(now time.Time, d IssueDelta) string {
	name := fmt.Sprintf("#%d", d.Number)
	if d.Title != "" {
		name = strconv.Quote(d.Title)
	}
	b, a := d.Before, d.After
	switch {
	case a == nil:
		return name + " leaves the forecast"
	case a.Unschedulable != "":
		return fmt.Sprintf("%s cannot be scheduled (%s)", name, strings.ReplaceAll(a.Unschedulable, "_", " "))
	case b == nil && d.Title != "":
		return fmt.Sprintf("new %s p80 %s", name, shortDate(now, a.P80))
	case b == nil:
		return fmt.Sprintf("%s p80 %s (new)", name, shortDate(now, a.P80))
	case DateOf(b.P80) != DateOf(a.P80):
		return fmt.Sprintf("%s p80 moves %s → %s", name, shortDate(now, b.P80), shortDate(now, a.P80))
	case DateOf(b.P50) != DateOf(a.P50):
		return fmt.Sprintf("%s p80 stays %s; p50 moves %s → %s", name, shortDate(now, a.P80), shortDate(now, b.P50), shortDate(now, a.P50))
	}
	return fmt.Sprintf("%s p80 stays %s; p10 moves %s → %s", name, shortDate(now, a.P80), shortDate(now, b.P10), shortDate(now, a.P10))
}

// shortDate prints "Mar 3", with the year when it is not now's year.
func shortDate(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	t = t.UTC()
	if t.Year() != now.UTC().Year() {
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

// workingDays prints a signed count of working days, "+1 working day" or
// "−3 working days".
func workingDays(x float64) string {
	if math.Abs(x) == 1 {
		return signed(x) + " working day"
	}
	return signed(x) + " working days"
}

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

// ForecastMismatches compares two forecasts of one project as people read
// them (dates to the day, pDue to two decimals, slack): want, what a
// what-if said, and got, what was computed once the changes landed. filed
// maps the number a proposed issue had in want to the number Gitea gave
// it. The result names every difference; none means the quote came true.
func ForecastMismatches(want, got Forecast, filed map[int64]int64) []string {
	var out []string
	ids, wm, gm := pairByKey(want.Milestones, got.Milestones, func(m *MilestoneForecast) int64 { return m.ID })
	for _, id := range ids {
		w, g := wm[id], gm[id]
		switch {
		case w == nil:
			out = append(out, fmt.Sprintf("milestone %d: not quoted, is %s", id, bandText(g.P10, g.P50, g.P80, g.PDue)))
		case g == nil:
			out = append(out, fmt.Sprintf("milestone %d: quoted %s, is out of the forecast", id, bandText(w.P10, w.P50, w.P80, w.PDue)))
		case !SameMilestoneForecast(w, g):
			out = append(out, fmt.Sprintf("milestone %d %s: quoted %s slack %v, is %s slack %v", id, g.Title,
				bandText(w.P10, w.P50, w.P80, w.PDue), w.SlackDays, bandText(g.P10, g.P50, g.P80, g.PDue), g.SlackDays))
		}
	}
	renumbered := slices.Clone(want.Issues)
	for k := range renumbered {
		if n, ok := filed[renumbered[k].Number]; ok {
			renumbered[k].Number = n
		}
	}
	nums, wi, gi := pairByKey(renumbered, got.Issues, func(i *IssueForecast) int64 { return i.Number })
	for _, n := range nums {
		w, g := wi[n], gi[n]
		switch {
		case w == nil:
			out = append(out, fmt.Sprintf("#%d: not quoted, is %s", n, bandText(g.P10, g.P50, g.P80, -1)))
		case g == nil:
			out = append(out, fmt.Sprintf("#%d: quoted %s, is out of the forecast", n, bandText(w.P10, w.P50, w.P80, -1)))
		case !SameIssueForecast(w, g):
			out = append(out, fmt.Sprintf("#%d: quoted %s %s, is %s %s", n, bandText(w.P10, w.P50, w.P80, -1), w.Unschedulable,
				bandText(g.P10, g.P50, g.P80, -1), g.Unschedulable))
		}
	}
	return out
}

func bandText(p10, p50, p80 time.Time, pDue float64) string {
	s := fmt.Sprintf("p10 %s p50 %s p80 %s", DateOf(p10), DateOf(p50), DateOf(p80))
	if pDue >= 0 {
		s += fmt.Sprintf(" pDue %.2f", pDue)
	}
	return s
}

// Band is a milestone's forecast as people read it and as the directive
// ledger keeps it: p10, p50 and p80 as dates (YYYY-MM-DD, "" when nothing
// is forecast) and the chance of the due date to two decimals. Two bands
// are equal exactly when SameMilestoneForecast would call the dates and
// chance the same.
type Band struct {
	P10  string  `json:"p10,omitempty"`
	P50  string  `json:"p50"`
	P80  string  `json:"p80"`
	PDue float64 `json:"pDue"`
}

// BandOf reads a milestone forecast as a band; nil reads as the zero band.
func BandOf(m *MilestoneForecast) Band {
	if m == nil {
		return Band{}
	}
	return Band{P10: DateOf(m.P10), P50: DateOf(m.P50), P80: DateOf(m.P80), PDue: RoundPDue(m.PDue)}
}

// MilestoneBand is one milestone's band in a forecast.
type MilestoneBand struct {
	Milestone int64  `json:"milestone"`
	Title     string `json:"title"`
	Band      Band   `json:"band"`
}

// MilestoneBands reads every milestone of a forecast as a band, in the
// forecast's order.
func MilestoneBands(fc Forecast) []MilestoneBand {
	out := make([]MilestoneBand, len(fc.Milestones))
	for k := range fc.Milestones {
		m := &fc.Milestones[k]
		out[k] = MilestoneBand{Milestone: m.ID, Title: m.Title, Band: BandOf(m)}
	}
	return out
}

// BandEffect is one milestone's band before and after a change.
type BandEffect struct {
	Milestone int64  `json:"milestone"`
	Title     string `json:"title"`
	Before    Band   `json:"before"`
	After     Band   `json:"after"`
}

// Effects reads a what-if's changed milestones as bands before and after,
// in the result's order: what the write tools answer as effects.
func Effects(res WhatIfResult) []BandEffect {
	out := make([]BandEffect, 0, len(res.Milestones))
	for _, m := range res.Milestones {
		out = append(out, BandEffect{Milestone: m.ID, Title: m.Title, Before: BandOf(m.Before), After: BandOf(m.After)})
	}
	return out
}

// AllEffects reads every milestone of either forecast as bands before and
// after, changed or not, by milestone id: what a quote predicts for the
// whole project, which the ledger checks against the snapshot that follows.
func AllEffects(before, after Forecast) []BandEffect {
	ids, bm, am := pairByKey(before.Milestones, after.Milestones, func(m *MilestoneForecast) int64 { return m.ID })
	out := make([]BandEffect, 0, len(ids))
	for _, id := range ids {
		b, a := bm[id], am[id]
		title := ""
		if a != nil {
			title = a.Title
		} else {
			title = b.Title
		}
		out = append(out, BandEffect{Milestone: id, Title: title, Before: BandOf(b), After: BandOf(a)})
	}
	return out
}

// RealizedMismatches compares what a quote predicted for every milestone
// (the After bands) with what the snapshot that followed realized: one line
// per milestone that reads differently, none when the quote came true.
func RealizedMismatches(predicted []BandEffect, realized []MilestoneBand) []string {
	got := make(map[int64]Band, len(realized))
	for _, r := range realized {
		got[r.Milestone] = r.Band
	}
	var out []string
	for _, p := range predicted {
		g, ok := got[p.Milestone]
		if !ok {
			g = Band{}
		}
		if g != p.After {
			out = append(out, fmt.Sprintf("%s: quoted p10 %s p50 %s p80 %s pDue %.2f, came p10 %s p50 %s p80 %s pDue %.2f",
				p.Title, orNever(p.After.P10), orNever(p.After.P50), orNever(p.After.P80), p.After.PDue,
				orNever(g.P10), orNever(g.P50), orNever(g.P80), g.PDue))
		}
	}
	return out
}

func orNever(s string) string { return cmp.Or(s, "never") }
