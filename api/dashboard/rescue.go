package dashboard

import (
	"encoding/json"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/worker/tools"
)

// The milestone page's rescue section (templates/rescue.html): for a
// milestone at risk, the options the recompute stored with the snapshot,
// best first, each with the body to send, ready to copy: an apply_changes
// batch, or a record_directive input for capacity and a new due date.

type rescueSection struct {
	Note       string
	CannotMake bool
	// Pending: the snapshot's rescue options are still being computed
	// (they are searched after it is published); Note says so.
	Pending bool
	Version int64
	Options []rescueRow
}

type rescueRow struct {
	tools.RescueOption
	// Tool is where Body goes: apply_changes or record_directive.
	Tool, Body string
}

// rescueFor is milestone id's rescue section, nil when it is not at risk;
// while the snapshot's options are being computed, a section that says so.
func rescueFor(s *snapshot, id int64) *rescueSection {
	for _, r := range s.Rescue {
		if r.Milestone == id {
			return rescueSectionOf(r, s.version)
		}
	}
	if s.RescuePending {
		for i := range s.Forecast.Milestones {
			if m := &s.Forecast.Milestones[i]; m.ID == id && tools.MilestoneAtRisk(m) {
				return &rescueSection{Pending: true, Version: s.version, Note: tools.RescuePendingNote(s.version)}
			}
		}
	}
	return nil
}

func rescueSectionOf(r scheduler.MilestoneRescue, version int64) *rescueSection {
	out := &rescueSection{Note: r.Note, CannotMake: r.CannotMake, Version: version}
	for _, o := range tools.RescueOptions(r, version) {
		row := rescueRow{RescueOption: o}
		var body any
		switch {
		case o.Batch != nil:
			row.Tool, body = "apply_changes", o.Batch
		case o.Directive != nil:
			row.Tool, body = "record_directive", o.Directive
		}
		if body != nil {
			raw, err := json.MarshalIndent(body, "", "  ")
			if err == nil {
				row.Body = string(raw)
			}
		}
		out.Options = append(out.Options, row)
	}
	return out
}
