package tools

import (
	"fmt"
	"strings"

	"github.com/commitea/commitea/scheduler"
)

// The focus view: what to work on now, next and later, each item with the
// reasons behind its place. The ranking is the scheduler's (scheduler.Focus,
// computed with the snapshot for the team and for each person); filters
// narrow its lists (assignee picks that person's ranking) and the limit
// cuts them.

// FocusView is the focus payload.
type FocusView struct {
	Who   string      `json:"who,omitempty"`
	Now   *FocusItem  `json:"now"`
	Next  []FocusItem `json:"next"`
	Later []FocusItem `json:"later"`
	Meta
}

// FocusItem is one issue in the focus list.
type FocusItem struct {
	Issue     int64  `json:"issue"`
	Title     string `json:"title"`
	Rationale string `json:"rationale"`
	State     string `json:"state,omitempty"`
	Assignee  string `json:"assignee,omitempty"`
	Finish    *Range `json:"finish,omitempty"`
}

func (q *query) focus() (Answer[any], error) {
	who := q.f.Assignee
	out := FocusView{Who: who, Next: []FocusItem{}, Later: []FocusItem{}}
	res, ok := q.v.Data.Focus[who]
	switch {
	case q.v.Data.Focus == nil:
		q.caps.Note("focus: this snapshot predates the scheduler's focus ranking; it appears after the next recompute")
	case !ok:
		q.caps.Note("focus: " + who + " has no open work in the latest snapshot")
	}
	// The assignee filter chose the ranking; the others narrow it.
	rest := &query{v: q.v, f: q.f}
	rest.f.Assignee = ""
	keep := func(it scheduler.FocusItem) bool { return rest.matches(q.v.Status[it.Number], q.v.Head[it.Number]) }
	w := q.filterWords()
	if res.Now != nil && keep(*res.Now) {
		item := q.focusItem(*res.Now)
		out.Now = &item
	} else if ok {
		q.caps.Note("now: nothing to start or continue" + w)
	}
	next, _ := Take(q.caps, res.Next, keep, "next", "next: nothing else is ready to start"+w)
	later, _ := Take(q.caps, res.Later, keep, "later", "later: nothing is waiting"+w)
	for _, it := range next {
		out.Next = append(out.Next, q.focusItem(it))
	}
	for _, it := range later {
		out.Later = append(out.Later, q.focusItem(it))
	}
	out.Meta = q.meta()
	var instr string
	switch {
	case out.Now != nil:
		instr = fmt.Sprintf("Suggest #%d as the issue to work on now; the rationale says why, and view issue gives its details.", out.Now.Issue)
	case len(out.Next) > 0:
		instr = fmt.Sprintf("Suggest #%d next; the rationale says why.", out.Next[0].Issue)
	case len(out.Later) > 0:
		instr = "Nothing can start now: the later list says what blocks each issue; unblock, estimate or triage them."
	default:
		instr = "Nothing is open" + w + "; say so, or widen the filters."
	}
	return Answer[any]{Data: out, Instruction: instr}, nil
}

func (q *query) focusItem(it scheduler.FocusItem) FocusItem {
	out := FocusItem{Issue: it.Number, Title: it.Title, Rationale: it.Rationale, Assignee: assigneeOf(q.v.Head[it.Number]), Finish: rangeOf(q.v.Forecast[it.Number])}
	if st := q.v.Status[it.Number]; st != nil {
		out.State = string(st.State)
	}
	if out.Title == "" {
		out.Title = q.v.title(it.Number)
	}
	return out
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
