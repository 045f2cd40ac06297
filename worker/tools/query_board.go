package tools

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/commitea/commitea/scheduler"
)

// The board view: issues grouped by the five lifecycle columns.

// BoardView is the board payload.
type BoardView struct {
	Columns []BoardColumn `json:"columns"`
	Meta
}

// BoardColumn is one lifecycle column; Count is every matching issue in it,
// Issues the ones shown.
type BoardColumn struct {
	State  string      `json:"state"`
	Count  int         `json:"count"`
	Issues []BoardCard `json:"issues"`
}

// BoardCard is one issue on the board.
type BoardCard struct {
	Issue    int64    `json:"issue"`
	Title    string   `json:"title"`
	Assignee string   `json:"assignee,omitempty"`
	Estimate string   `json:"estimate,omitempty"`
	Priority int      `json:"priority"`
	Flags    []string `json:"flags,omitempty"`
	closed   time.Time
}

func (q *query) board() (Answer[any], error) {
	cols := map[string][]BoardCard{}
	for i := range q.v.Data.Statuses {
		st := &q.v.Data.Statuses[i]
		h := q.v.Head[st.Number]
		if !q.matches(st, h) {
			continue
		}
		c := BoardCard{Issue: st.Number, Title: q.v.title(st.Number), Assignee: assigneeOf(h), Estimate: string(st.Estimate), Priority: scheduler.DefaultPriority}
		if h != nil {
			_, c.Priority, _ = scheduler.ParseLabels(h.Labels)
			if h.ClosedAt != nil {
				c.closed = *h.ClosedAt
			}
		}
		if st.Blocked {
			c.Flags = append(c.Flags, "blocked")
		}
		if st.Stale {
			c.Flags = append(c.Flags, "stale")
		}
		if st.MissingEstimate {
			c.Flags = append(c.Flags, "missingEstimate")
		}
		if st.Unschedulable != "" {
			c.Flags = append(c.Flags, "unschedulable:"+st.Unschedulable)
		}
		cols[string(st.State)] = append(cols[string(st.State)], c)
	}
	out := BoardView{Columns: []BoardColumn{}}
	total := 0
	for _, s := range States {
		if q.f.State != "" && s != q.f.State {
			continue
		}
		cards := cols[s]
		if s == string(scheduler.Done) {
			// The most recently finished first.
			slices.SortFunc(cards, func(a, b BoardCard) int { return cmp.Or(b.closed.Compare(a.closed), cmp.Compare(b.Issue, a.Issue)) })
		} else {
			slices.SortFunc(cards, func(a, b BoardCard) int {
				return cmp.Or(cmp.Compare(a.Priority, b.Priority), cmp.Compare(a.Issue, b.Issue))
			})
		}
		total += len(cards)
		out.Columns = append(out.Columns, BoardColumn{State: s, Count: len(cards),
			Issues: List(q.caps, cards, s, fmt.Sprintf("%s: no issue%s", s, q.filterWords()))})
	}
	out.Meta = q.meta()
	instr := "Present the columns left to right with their counts; in each, higher priority comes first."
	if total == 0 {
		instr = "No issue is on the board" + q.filterWords() + "; say so, or widen the filters."
	}
	return Answer[any]{Data: out, Instruction: instr}, nil
}
