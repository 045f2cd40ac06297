package tools

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/worker"
)

// Rescue options as the tools show them: the scheduler's changes (stored
// with the snapshot by the recompute's rescue search) mapped to a ready
// apply_changes batch or record_directive input. Milestone and issue
// changes are ops; capacity and a new due date are directives (capacity
// has no Gitea side and takes effect when recorded; a due date is carried
// out by a person in Gitea). A batch carries an idempotency key naming the
// snapshot it was computed on, so a retry replays and apply_changes can say
// when the mirror has moved since.

// RescueOption is one option of a milestone at risk.
type RescueOption struct {
	Kind    string `json:"kind"`
	Summary string `json:"summary"`
	// Batch is the apply_changes input that carries the option out (send
	// it with approved: true when it holds set_assignees); Directive the
	// record_directive input, for capacity and the due date.
	Batch     *ApplyChangesInput    `json:"batch,omitempty"`
	Directive *RecordDirectiveInput `json:"directive,omitempty"`
	After     RescueBand            `json:"after"`
	Makes     bool                  `json:"makes"`
	Cost      scheduler.RescueCost  `json:"cost"`
	CostText  string                `json:"costText"`
	// SnapshotVersion is the snapshot the option was computed on.
	SnapshotVersion int64 `json:"snapshotVersion"`
}

// RescueBand is the milestone once the option landed.
type RescueBand struct {
	P50  string  `json:"p50"`
	P80  string  `json:"p80"`
	PDue float64 `json:"pDue"`
}

// rescueKeyPattern reads the snapshot version out of a rescue batch's
// idempotency key.
var rescueKeyPattern = regexp.MustCompile(`^rescue-v(\d+)-`)

// rescueKey is the idempotency key of option k of a milestone's rescue on
// a snapshot.
func rescueKey(version, milestone int64, k int) string {
	return fmt.Sprintf("rescue-v%d-m%d-%d", version, milestone, k+1)
}

// rescueVersion is the snapshot a rescue batch's key names (0 for a key
// that is not one).
func rescueVersion(key string) int64 {
	m := rescueKeyPattern.FindStringSubmatch(key)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseInt(m[1], 10, 64)
	return v
}

// RescueOptions maps a milestone's stored rescue to what the tools show.
func RescueOptions(r scheduler.MilestoneRescue, version int64) []RescueOption {
	out := make([]RescueOption, 0, len(r.Options))
	for k, o := range r.Options {
		v := RescueOption{Kind: string(o.Kind), Summary: o.Summary, Makes: o.Makes, Cost: o.Cost, CostText: o.CostText,
			After: RescueBand{P50: o.After.P50, P80: o.After.P80, PDue: o.After.PDue}, SnapshotVersion: version}
		ops, directive := rescueActions(r, o)
		if len(ops) > 0 {
			v.Batch = &ApplyChangesInput{Ops: ops, IdempotencyKey: rescueKey(version, r.Milestone, k)}
			for _, op := range ops {
				v.Batch.Approved = v.Batch.Approved || DestructiveOps[op.Op]
			}
		}
		v.Directive = directive
		out = append(out, v)
	}
	return out
}

// rescueActions maps an option's changes: issue changes to ops, the
// rest to one directive.
func rescueActions(r scheduler.MilestoneRescue, o scheduler.RescueOption) ([]Op, *RecordDirectiveInput) {
	var ops []Op
	var d *RecordDirectiveInput
	quote := "Rescue " + r.Title + ": " + o.Summary
	for _, c := range o.Changes {
		switch c.Kind {
		case scheduler.SetMilestone:
			op := Op{Op: "set_milestone", Issue: c.Issue}
			if c.Milestone != 0 {
				m := c.Milestone
				op.Milestone = &m
			}
			ops = append(ops, op)
		case scheduler.SetPriority:
			ops = append(ops, Op{Op: "set_priority", Issue: c.Issue, Priority: fmt.Sprintf("p/%d", c.Priority)})
		case scheduler.SetAssignees:
			ops = append(ops, Op{Op: "set_assignees", Issue: c.Issue, Assignees: append([]string{}, c.Assignees...)})
		case scheduler.SetCapacity:
			params := map[string]any{}
			if c.HoursPerDay > 0 {
				params["hoursPerDay"] = c.HoursPerDay
			}
			raw, _ := json.Marshal(params)
			d = &RecordDirectiveInput{Kind: "capacity", Quote: quote, Target: &Target{Member: c.Person}, Params: raw}
		case scheduler.SetDueDate:
			m := c.Milestone
			raw, _ := json.Marshal(map[string]string{"due": c.Due.UTC().Format(time.DateOnly)})
			d = &RecordDirectiveInput{Kind: "set-deadline", Quote: quote, Target: &Target{Milestone: &m}, Params: raw}
		}
	}
	return ops, d
}

// rescueOf is the stored rescue of a milestone, nil when it is not at
// risk (or the snapshot predates rescue plans).
func rescueOf(rs []scheduler.MilestoneRescue, id int64) *scheduler.MilestoneRescue {
	for k := range rs {
		if rs[k].Milestone == id {
			return &rs[k]
		}
	}
	return nil
}

// RescuePendingNote is what a milestone at risk says while its snapshot's
// rescue options are still being computed: they are searched after the
// snapshot is published, about a second per milestone at risk.
func RescuePendingNote(version int64) string {
	return fmt.Sprintf("Rescue options for snapshot %d are still being computed (about a second per milestone at risk); ask again in a few seconds. None listed here does not mean none exist.", version)
}

// rescuePending is whether milestone m at risk waits for the snapshot's
// rescue options: the rescue search's own test of risk (an open milestone
// with a due date and open work, under scheduler.AtRiskPDue).
func rescuePending(d *worker.SnapshotData, m *scheduler.MilestoneForecast) bool {
	return d.RescuePending && MilestoneAtRisk(m)
}

// MilestoneAtRisk is the rescue search's test of a milestone forecast: a
// due date, open work and a chance of it under scheduler.AtRiskPDue.
func MilestoneAtRisk(m *scheduler.MilestoneForecast) bool {
	return m != nil && !m.Due.IsZero() && m.Open > 0 && scheduler.RoundPDue(m.PDue) < scheduler.AtRiskPDue
}
