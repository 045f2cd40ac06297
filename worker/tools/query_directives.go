package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
)

// The directives view: the ledger. Pending directives come with their
// consequence diff (what the what-if said when they were recorded) and the
// apply_changes ops that would land them (proposedOps, read again from the
// directive's params against today's mirror, so an agent or a person copies
// a batch instead of parsing it out of prose); recent entries of any
// status follow, newest first. An entry is superseded when a later
// directive of the same kind names the same target: the later one is what
// the PM wants now.

// DirectivesView is the directives payload.
type DirectivesView struct {
	Pending      []DirectiveEntry `json:"pending"`
	PendingTotal int              `json:"pendingTotal"`
	Recent       []DirectiveEntry `json:"recent"`
	Meta
}

// DirectiveEntry is one ledger entry.
type DirectiveEntry struct {
	ID     int64           `json:"id"`
	Kind   string          `json:"kind"`
	Quote  string          `json:"quote"`
	Target json.RawMessage `json:"target,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	// NegotiatedBy names the model that turned the quote into params.
	NegotiatedBy string          `json:"negotiatedBy,omitempty"`
	Rationale    string          `json:"rationale,omitempty"`
	Caller       string          `json:"caller"`
	Status       string          `json:"status"`
	Consequence  json.RawMessage `json:"consequence,omitempty"`
	Summary      string          `json:"summary,omitempty"`
	CreatedAt    time.Time       `json:"createdAt"`
	AppliedAt    *time.Time      `json:"appliedAt,omitempty"`
	// ProposedOps is the apply_changes batch of a pending directive (sent
	// with its directiveId); empty for kinds a person lands in Gitea (a due
	// date) and for directives whose target has left the mirror.
	ProposedOps []Op `json:"proposedOps,omitempty"`
	// Predicted is what was quoted for every milestone when the directive
	// was applied; Realized what the first snapshot after its writes showed
	// (RealizedVersion), once it is in. CameTrue says whether every
	// milestone's band read the same in both.
	Predicted       json.RawMessage `json:"predicted,omitempty"`
	Realized        json.RawMessage `json:"realized,omitempty"`
	RealizedVersion *int64          `json:"realizedVersion,omitempty"`
	CameTrue        *bool           `json:"cameTrue,omitempty"`
	// SupersededBy is the id of the nearest later directive of the same
	// kind on the same target.
	SupersededBy int64 `json:"supersededBy,omitempty"`
}

func (q *query) directives(ctx context.Context) (Answer[any], error) {
	// One more than the limit tells whether the recent list was cut.
	pending, recent, pendingTotal, err := store.Directives(ctx, q.s.Pool, q.v.Project.ID, q.caps.Limit+1)
	if err != nil {
		return Answer[any]{}, err
	}
	superseded := supersededBy(recent)
	entries := func(ds []store.Directive) []DirectiveEntry {
		out := make([]DirectiveEntry, len(ds))
		for i, d := range ds {
			out[i] = DirectiveEntry{ID: d.ID, Kind: d.Kind, Quote: Truncate(d.Quote, MaxCommentBytes), Target: d.Target, Params: d.Params, NegotiatedBy: d.NegotiatedBy,
				Rationale: Truncate(d.Rationale, MaxCommentBytes), Caller: d.Caller, Status: d.Status, Consequence: d.Consequence,
				Summary: d.Summary, CreatedAt: d.CreatedAt, AppliedAt: d.AppliedAt,
				Predicted: d.Predicted, Realized: d.Realized, RealizedVersion: d.RealizedVersion}
			if mismatches, ok := realization(d); ok {
				came := len(mismatches) == 0
				out[i].CameTrue = &came
			}
			out[i].SupersededBy = superseded[d.ID]
		}
		return out
	}
	pendingEntries := entries(pending)
	for i := range pendingEntries {
		pendingEntries[i].ProposedOps = q.proposedOps(ctx, pendingEntries[i])
	}
	out := DirectivesView{PendingTotal: pendingTotal}
	out.Pending = List(q.caps, pendingEntries, "pending", "pending: no directive is waiting to be applied")
	if len(pending) > q.caps.Limit && pendingTotal > len(pending) {
		// List noted "shown N of limit+1"; the true total is pendingTotal.
		q.caps.Note(fmt.Sprintf("pending: %d directives are pending in all", pendingTotal))
	}
	recentEntries := entries(recent)
	if len(recentEntries) > q.caps.Limit {
		recentEntries = recentEntries[:q.caps.Limit]
		q.caps.Note(fmt.Sprintf("recent: shown the latest %d; older entries are in GET /v1/pm-state.md", q.caps.Limit))
	}
	out.Recent = List(q.caps, recentEntries, "recent", "recent: the directive ledger is empty")
	out.Meta = q.meta()
	instr := "No directive is pending; record one with record_directive when the PM states intent."
	if pendingTotal > 0 {
		instr = fmt.Sprintf("%d directive(s) are pending: show each one's consequence and, once the PM approves, carry it out with apply_changes and its directiveId.", pendingTotal)
	}
	return Answer[any]{Data: out, Instruction: instr}, nil
}

// realization compares a directive's predicted and realized figures: the
// milestones whose band came out otherwise than quoted, and whether both
// are there to compare.
func realization(d store.Directive) ([]string, bool) {
	if len(d.Predicted) == 0 || len(d.Realized) == 0 {
		return nil, false
	}
	var predicted []BeforeAfter
	var realized []scheduler.MilestoneBand
	if json.Unmarshal(d.Predicted, &predicted) != nil || json.Unmarshal(d.Realized, &realized) != nil {
		return nil, false
	}
	return scheduler.RealizedMismatches(predicted, realized), true
}

// supersededBy maps each directive of ds (newest first) that a later one of
// the same kind on the same target overrides to that later one's id. Notes
// override nothing: each is kept for the record.
func supersededBy(ds []store.Directive) map[int64]int64 {
	out := map[int64]int64{}
	newest := map[string]int64{}
	for _, d := range ds {
		if d.Kind == "note" {
			continue
		}
		key := d.Kind + " " + string(d.Target)
		if id, ok := newest[key]; ok {
			out[d.ID] = id
		}
		newest[key] = d.ID
	}
	return out
}

// proposedOps reads a pending directive's params again into the ops that
// land it; a directive that no longer checks (its issue left the mirror)
// proposes nothing, and its summary still says what it was.
func (q *query) proposedOps(ctx context.Context, e DirectiveEntry) []Op {
	in := RecordDirectiveInput{Kind: e.Kind, Params: e.Params}
	if len(e.Target) > 0 {
		var t Target
		if err := json.Unmarshal(e.Target, &t); err == nil {
			in.Target = &t
		}
	}
	d, err := q.s.parseDirective(ctx, q.v.Project, in)
	if err != nil {
		return nil
	}
	return d.ops
}
