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
// consequence diff (what the what-if said when they were recorded); recent
// entries of any status follow, newest first.

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
	// Predicted is what was quoted for every milestone when the directive
	// was applied; Realized what the first snapshot after its writes showed
	// (RealizedVersion), once it is in. CameTrue says whether every
	// milestone's band read the same in both.
	Predicted       json.RawMessage `json:"predicted,omitempty"`
	Realized        json.RawMessage `json:"realized,omitempty"`
	RealizedVersion *int64          `json:"realizedVersion,omitempty"`
	CameTrue        *bool           `json:"cameTrue,omitempty"`
}

func (q *query) directives(ctx context.Context) (Answer[any], error) {
	// One more than the limit tells whether the recent list was cut.
	pending, recent, pendingTotal, err := store.Directives(ctx, q.s.Pool, q.v.Project.ID, q.caps.Limit+1)
	if err != nil {
		return Answer[any]{}, err
	}
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
		}
		return out
	}
	out := DirectivesView{PendingTotal: pendingTotal}
	out.Pending = List(q.caps, entries(pending), "pending", "pending: no directive is waiting to be applied")
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
