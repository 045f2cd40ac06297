package tools

import (
	"fmt"

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

// BoardCard is one issue on the board. AgeDays is the work item age of
// started, open work (steeping, in review), in calendar days since it
// first started; the aging flag says it is past the service level
// expectation.
type BoardCard struct {
	Issue    int64    `json:"issue"`
	Title    string   `json:"title"`
	Assignee string   `json:"assignee,omitempty"`
	Estimate string   `json:"estimate,omitempty"`
	Priority int      `json:"priority"`
	AgeDays  int      `json:"ageDays,omitempty"`
	Flags    []string `json:"flags,omitempty"`
}

func (q *query) board() (Answer[any], error) {
	out := BoardView{Columns: []BoardColumn{}}
	total := 0
	for _, s := range States {
		if q.f.State != "" && s != q.f.State {
			continue
		}
		col := q.v.orders.board[scheduler.State(s)]
		shown, count := Take(q.caps, col, q.keep, s, fmt.Sprintf("%s: no issue%s", s, q.filterWords()))
		total += count
		cards := make([]BoardCard, len(shown))
		for i, it := range shown {
			cards[i] = q.card(it)
		}
		out.Columns = append(out.Columns, BoardColumn{State: s, Count: count, Issues: cards})
	}
	out.Meta = q.meta()
	instr := "Present the columns left to right with their counts; in each, higher priority comes first."
	if total == 0 {
		instr = "No issue is on the board" + q.filterWords() + "; say so, or widen the filters."
	}
	return Answer[any]{Data: out, Instruction: instr}, nil
}

func (q *query) card(it *issueItem) BoardCard {
	st := it.st
	c := BoardCard{Issue: st.Number, Title: q.v.title(st.Number), Assignee: assigneeOf(it.h), Estimate: string(st.Estimate), Priority: it.priority}
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
	if st.Aging {
		c.Flags = append(c.Flags, "aging")
	}
	if a := q.v.Age[st.Number]; a != nil && st.State != scheduler.Done {
		c.AgeDays = a.Days
	}
	return c
}
