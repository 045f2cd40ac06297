package tools

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/commitea/commitea/scheduler"
)

// The focus view: what to work on now, next and later, each item with the
// reasons behind its place. It ranks the snapshot's open issues itself
// (the engine's scheduler.Focus is not in this tree yet), once per
// snapshot (orders.go); the order is
// deterministic: work in progress first, then ready work by priority, hard
// deadlines, critical-chain frequency, due date and forecast, and last the
// work that cannot start, each with why.

// FocusView is the focus payload.
type FocusView struct {
	Now   []FocusItem `json:"now"`
	Next  []FocusItem `json:"next"`
	Later []FocusItem `json:"later"`
	Meta
}

// FocusItem is one issue in the focus list.
type FocusItem struct {
	Issue     int64  `json:"issue"`
	Title     string `json:"title"`
	Rationale string `json:"rationale"`
	State     string `json:"state"`
	Assignee  string `json:"assignee,omitempty"`
	Finish    *Range `json:"finish,omitempty"`
}

func (q *query) focus() (Answer[any], error) {
	o := q.v.orders
	w := q.filterWords()
	now, _ := Take(q.caps, o.focusNow, q.keep, "now", "now: nothing is in progress"+w)
	next, _ := Take(q.caps, o.focusNext, q.keep, "next", "next: no issue is ready to start"+w+" (ready = triaged, estimated, unblocked)")
	later, _ := Take(q.caps, o.focusLater, q.keep, "later", "later: nothing is waiting"+w)
	out := FocusView{Now: q.focusItems(now), Next: q.focusItems(next), Later: q.focusItems(later)}
	out.Meta = q.meta()
	instr := "Report these in order; the rationale says why each is where it is."
	switch {
	case len(out.Now) == 0 && len(out.Next) == 0 && len(out.Later) == 0:
		instr = "Nothing is open" + w + "; say so, or widen the filters."
	case len(out.Next) > 0:
		instr = fmt.Sprintf("Suggest #%d (%s) as the next issue to start; use view issue for its details.", out.Next[0].Issue, out.Next[0].Title)
	case len(out.Now) > 0:
		instr = "Everything ready is in progress; help finish the now list before starting more."
	default:
		instr = "Nothing is ready to start; the later list says what blocks each issue: unblock, estimate or triage them."
	}
	return Answer[any]{Data: out, Instruction: instr}, nil
}

func stateRank(s scheduler.State) int {
	return slices.Index([]scheduler.State{scheduler.Diagnosis, scheduler.Triage, scheduler.Steeping, scheduler.InReview, scheduler.Done}, s)
}

// laterRank puts what is closest to ready first: missing estimate, then
// blocked, then diagnosis, then unschedulable.
func laterRank(st *scheduler.IssueStatus) int {
	switch {
	case st.Unschedulable != "":
		return 3
	case st.State == scheduler.Diagnosis:
		return 2
	case st.Blocked:
		return 1
	}
	return 0
}

func focusOrder(a, b *issueItem) int {
	return cmp.Or(
		cmp.Compare(a.priority, b.priority),
		-cmp.Compare(boolInt(a.hard), boolInt(b.hard)),
		-cmp.Compare(critical(a.fc), critical(b.fc)),
		cmp.Compare(a.due, b.due),
		cmp.Compare(p50Unix(a.fc), p50Unix(b.fc)),
		cmp.Compare(a.st.Number, b.st.Number),
	)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func critical(f *scheduler.IssueForecast) float64 {
	if f == nil {
		return 0
	}
	return f.CriticalFreq
}

func p50Unix(f *scheduler.IssueForecast) int64 {
	if f == nil || f.P50.IsZero() {
		return 1 << 62
	}
	return f.P50.Unix()
}

// focusItems renders only the items shown, so a 5,000-issue project pays
// for twenty rationales, not five thousand.
func (q *query) focusItems(cs []*issueItem) []FocusItem {
	out := make([]FocusItem, len(cs))
	for i, c := range cs {
		out[i] = FocusItem{
			Issue: c.st.Number, Title: q.v.title(c.st.Number), State: string(c.st.State),
			Assignee: assigneeOf(c.h), Finish: rangeOf(c.fc), Rationale: q.rationale(c),
		}
	}
	return out
}

// rationale says, from the snapshot's data only, why an issue sits where
// it does.
func (q *query) rationale(c *issueItem) string {
	var parts []string
	st := c.st
	switch st.State {
	case scheduler.InReview:
		parts = append(parts, "in review")
	case scheduler.Steeping:
		parts = append(parts, "in progress")
	case scheduler.Diagnosis:
		parts = append(parts, "still in diagnosis")
	}
	if st.Unschedulable != "" {
		parts = append(parts, "cannot be scheduled: "+strings.ReplaceAll(st.Unschedulable, "_", " "))
	}
	if st.Blocked {
		parts = append(parts, "blocked by "+issueList(st.BlockedBy))
	}
	if st.MissingEstimate {
		parts = append(parts, "needs an est/* estimate")
	}
	if st.Stale {
		parts = append(parts, "stale: no recent activity")
	}
	parts = append(parts, fmt.Sprintf("priority p/%d", c.priority))
	if c.h != nil && c.h.Milestone != nil {
		m := q.v.Milestone[*c.h.Milestone]
		if m != nil {
			s := "milestone " + m.Title
			if !m.Due.IsZero() {
				s += " due " + day(m.Due)
				if m.Hard {
					s += " (hard)"
				}
			}
			parts = append(parts, s)
		}
	}
	if c.fc != nil && c.fc.CriticalFreq >= 0.05 {
		parts = append(parts, fmt.Sprintf("on its milestone's critical chain in %.0f%% of trials", c.fc.CriticalFreq*100))
	}
	if c.h != nil && len(c.h.Assignees) == 0 && st.State != scheduler.Diagnosis {
		parts = append(parts, "unassigned")
	}
	return strings.Join(parts, "; ")
}

func issueList(ns []int64) string {
	if len(ns) == 0 {
		return "an open dependency"
	}
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprintf("#%d", n)
	}
	return strings.Join(s, ", ")
}
