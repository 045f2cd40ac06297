package tools

import (
	"fmt"
	"strings"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
)

// The milestone view: one milestone's due date, whether it is hard, its
// numbers, its forecast cone and its issues, those driving the date first.

// MilestoneView is the milestone payload.
type MilestoneView struct {
	ID     int64           `json:"id"`
	Title  string          `json:"title"`
	Due    string          `json:"due,omitempty"`
	Hard   bool            `json:"hard"`
	State  string          `json:"state"`
	Stats  MilestoneStats  `json:"stats"`
	Cone   *Range          `json:"cone,omitempty"`
	Issues []MilestoneItem `json:"issues"`
	// Rescue is, for a milestone at risk, what would make its date (at
	// most five, best first); RescueNote says how they stand, or that
	// nothing within the rules makes it.
	Rescue     []RescueOption `json:"rescue,omitempty"`
	RescueNote string         `json:"rescueNote,omitempty"`
	// RescuePending says the snapshot's rescue options are still being
	// computed (they are searched after it is published): rescue is
	// empty for now, not because nothing would help.
	RescuePending bool `json:"rescuePending,omitempty"`
	Meta
}

// MilestoneStats counts a milestone's issues.
type MilestoneStats struct {
	Total           int            `json:"total"`
	Open            int            `json:"open"`
	Done            int            `json:"done"`
	ByState         map[string]int `json:"byState"`
	Blocked         int            `json:"blocked"`
	MissingEstimate int            `json:"missingEstimate"`
	Unschedulable   int            `json:"unschedulable"`
	// PDue is the chance of the due date to two decimals; Slack is due −
	// p80 in working days, named and rounded as the runway names it.
	PDue      float64 `json:"pDue"`
	SlackDays float64 `json:"slack"`
}

// MilestoneItem is one issue of the milestone.
type MilestoneItem struct {
	Issue        int64   `json:"issue"`
	Title        string  `json:"title"`
	State        string  `json:"state"`
	Assignee     string  `json:"assignee,omitempty"`
	Finish       *Range  `json:"finish,omitempty"`
	CriticalFreq float64 `json:"criticalFreq,omitempty"`
}

func (q *query) milestone() (Answer[any], error) {
	if q.f.MilestoneID == nil {
		return Answer[any]{}, Errorf(CodeInvalidInput, "filters.milestoneId", "view milestone needs filters.milestoneId; view runway lists every milestone with its id")
	}
	id := *q.f.MilestoneID
	var ms *store.Milestone
	for i := range q.v.Milestones {
		if q.v.Milestones[i].ID == id {
			ms = &q.v.Milestones[i]
		}
	}
	fc := q.v.Milestone[id]
	if ms == nil && fc == nil {
		return Answer[any]{}, Errorf(CodeNotFound, "filters.milestoneId", "milestone %d does not exist in %s; view runway lists the milestones", id, q.v.Project.FullName())
	}
	out := MilestoneView{ID: id, Stats: MilestoneStats{ByState: map[string]int{}}}
	if ms != nil {
		out.Title, out.State, out.Due = ms.Title, ms.State, dayPtr(ms.DueOn)
		out.Hard = hardDeadline(ms.Description)
	}
	if fc != nil {
		out.Title, out.Hard = fc.Title, fc.Hard
		if !fc.Due.IsZero() {
			out.Due = day(fc.Due)
		}
		out.Stats.PDue, out.Stats.SlackDays = round2(fc.PDue), round1(fc.SlackDays)
		if !fc.P50.IsZero() {
			out.Cone = &Range{P10: day(fc.P10), P50: day(fc.P50), P80: day(fc.P80)}
		}
	}
	// Stats cover the whole milestone; the list honours the filters.
	list := q.v.orders.byMilestone[id]
	for _, it := range list {
		st := it.st
		out.Stats.Total++
		out.Stats.ByState[string(st.State)]++
		if st.State == scheduler.Done {
			out.Stats.Done++
			continue
		}
		out.Stats.Open++
		if st.Blocked {
			out.Stats.Blocked++
		}
		if st.MissingEstimate {
			out.Stats.MissingEstimate++
		}
		if st.Unschedulable != "" {
			out.Stats.Unschedulable++
		}
	}
	others := &query{f: q.f}
	others.f.MilestoneID = nil
	shown, _ := Take(q.caps, list, q.keep, "issues", "issues: milestone "+out.Title+" has no issues"+others.filterWords())
	out.Issues = make([]MilestoneItem, len(shown))
	for i, it := range shown {
		out.Issues[i] = MilestoneItem{Issue: it.st.Number, Title: q.v.title(it.st.Number), State: string(it.st.State),
			Assignee: assigneeOf(it.h), Finish: rangeOf(it.fc), CriticalFreq: critical(it.fc)}
	}
	if r := rescueOf(q.v.Data.Rescue, id); r != nil {
		out.Rescue, out.RescueNote = RescueOptions(*r, q.v.Version), r.Note
	} else if rescuePending(&q.v.Data, fc) {
		out.RescuePending, out.RescueNote = true, RescuePendingNote(q.v.Version)
	}
	if out.Cone == nil {
		q.caps.Note("cone: no forecast range; the milestone has no open schedulable work in the latest snapshot")
	}
	out.Meta = q.meta()
	instr := fmt.Sprintf("Report milestone %d as a range (p50 %s, p80 %s) against its due date; the first issues drive the date.", id, rangeP50(out.Cone), rangeP80(out.Cone))
	if out.Stats.SlackDays < 0 && out.Due != "" {
		instr = fmt.Sprintf("Milestone %d is at risk: p80 is %.1f working days past due %s; propose scope or priority changes with record_directive.", id, -out.Stats.SlackDays, out.Due)
	}
	if out.RescuePending {
		instr = fmt.Sprintf("Milestone %d is at risk (%.0f%% for %s); its rescue options are still being computed: ask query_project for it again in a few seconds before proposing changes.",
			id, out.Stats.PDue*100, out.Due)
	}
	if len(out.Rescue) > 0 {
		instr = fmt.Sprintf("Milestone %d is at risk (%.0f%% for %s): offer rescue[0] (%s: %s) and the others to the PM; "+
			"each batch applies as is through apply_changes once they agree, a directive through record_directive.",
			id, out.Stats.PDue*100, out.Due, out.Rescue[0].Summary, out.Rescue[0].CostText)
	}
	return Answer[any]{Data: out, Instruction: instr}, nil
}

// hardDeadline reads the milestone convention: a line reading exactly
// "deadline: hard".
func hardDeadline(desc string) bool {
	for _, line := range strings.Split(desc, "\n") {
		if strings.TrimSpace(line) == "deadline: hard" {
			return true
		}
	}
	return false
}

func rangeP50(r *Range) string {
	if r == nil {
		return "unknown"
	}
	return r.P50
}

func rangeP80(r *Range) string {
	if r == nil {
		return "unknown"
	}
	return r.P80
}
