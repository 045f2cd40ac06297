package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker"
)

// record_directive appends a PM's directive to the ledger with their exact
// words and returns the consequence of its structured effect, computed by
// the engine's what-if. It never writes Gitea: a capacity directive changes
// CommiTea's own capacity calendar at once (and is applied); a note has no
// effect to land (and is applied); every other kind stays pending until an
// apply_changes batch carrying its directiveId lands it.
//
// Params per kind (target says what the directive is about):
//
//	reprioritize  target.issue      {"priority": 0..3}             (or "p/1")
//	reestimate    target.issue      {"estimate": "est/m"}          (or "m"; xs, s, m, l, xl)
//	set-deadline  target.milestone  {"due"?: "YYYY-MM-DD", "hard"?: bool}   at least one
//	scope         target.milestone  {"add"?: [issue], "drop"?: [issue]}      at least one; an issue
//	                                labelled deadline/hard cannot be dropped
//	capacity      target.member     {"hoursPerDay"?: (0, 24], "timeOff"?: [{"from","to"}]} at least one;
//	                                dates YYYY-MM-DD, inclusive; time off adds to what is there
//	note          (any)             {} or nothing: no effect, kept for the record
//
// A directive of any other kind without params is negotiated: the big
// model reads the params (and a missing target) from the quote, they go
// through the same checks as given params, and the ledger names the model
// (directive_negotiation.go). Without a big model the answer is
// MODEL_UNAVAILABLE. The declaration of kinds and params is in
// directive_kinds.go.

// RecordDirectiveInput is record_directive's input, as in the contract.
type RecordDirectiveInput struct {
	Project   string          `json:"project,omitempty"`
	Kind      string          `json:"kind"`
	Quote     string          `json:"quote"`
	Target    *Target         `json:"target,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Rationale string          `json:"rationale,omitempty"`
}

// Target is what a directive is about.
type Target struct {
	Issue     *int64 `json:"issue,omitempty"`
	Milestone *int64 `json:"milestone,omitempty"`
	Member    string `json:"member,omitempty"`
}

// RecordDirectiveOutput is record_directive's data.
type RecordDirectiveOutput struct {
	DirectiveID int64         `json:"directiveId"`
	Consequence []BeforeAfter `json:"consequence"`
	Summary     string        `json:"summary"`
	// Negotiated is set when the caller sent no params and the big model
	// read them from the quote: show them to the PM with the consequence.
	Negotiated *Negotiation `json:"negotiated,omitempty"`
	// ProposedOps is the apply_changes batch that lands a pending
	// directive (sent with its directiveId once a person approves), as
	// the directives view lists it; empty for a directive already in
	// effect (capacity, notes) and for one a person lands in Gitea (a due
	// date).
	ProposedOps []Op `json:"proposedOps,omitempty"`
}

// BeforeAfter is one affected milestone's forecast before and after, as
// bands (dates to the day, pDue to two decimals): record_directive's
// consequence entries, apply_changes' and capture_work's effects, and the
// ledger's predicted figures all have this shape.
type BeforeAfter = scheduler.BandEffect

// Band is a milestone's p10/p50/p80 dates with its chance of meeting the
// due date.
type Band = scheduler.Band

// effectsSchema is the schema of a list of BeforeAfter, shared by every
// tool that answers one.
const effectsSchema = `{"type": "array", "items": {"type": "object", "properties": {
          "milestone": {"type": "integer"}, "title": {"type": "string"},
          "before": {"type": "object", "properties": {"p10": {"type": "string"}, "p50": {"type": "string"}, "p80": {"type": "string"}, "pDue": {"type": "number"}}},
          "after": {"type": "object", "description": "same fields as before"}}}}`

var recordDirectiveOutputSchema = `{
  "type": "object",
  "required": ["data", "instruction"],
  "properties": {
    "data": {
      "type": "object",
      "required": ["directiveId", "consequence", "summary"],
      "properties": {
        "directiveId": {"type": "integer"},
        "consequence": ` + effectsSchema + `,
        "summary": {"type": "string"},
        "negotiated": {"type": "object", "description": "present when the big model read params (and a missing target) from the quote",
          "properties": {"model": {"type": "string"}, "params": {"type": "object"}, "target": {"type": "object"}, "repaired": {"type": "boolean"}}},
        "proposedOps": {"type": "array", "items": {"type": "object", "required": ["op"], "properties": {"op": {"type": "string"}}},
          "description": "the apply_changes ops that land the pending directive: send {ops, directiveId} once a person approves; absent when nothing is left to send"}
      }
    },
    "instruction": {"type": "string"},
    "safety": {"type": "string"}
  }
}`

func (s *Service) recordDirectiveTool() Tool {
	return Declare(Tool{Name: "record_directive", Scope: ScopeWrite, Hints: Hints{},
		Description: "Record a PM directive with their exact words; answers the forecast before/after per " +
			"milestone. Gitea changes only via apply_changes with directiveId.",
		InputSchema: json.RawMessage(recordDirectiveInputSchema), OutputSchema: json.RawMessage(recordDirectiveOutputSchema)},
		s.recordDirective)
}

// directiveParams is the union of every kind's params; each kind reads its
// own fields and refuses the others.
type directiveParams struct {
	Priority    json.RawMessage  `json:"priority,omitempty"`
	Estimate    string           `json:"estimate,omitempty"`
	Due         string           `json:"due,omitempty"`
	Hard        *bool            `json:"hard,omitempty"`
	Add         []int64          `json:"add,omitempty"`
	Drop        []int64          `json:"drop,omitempty"`
	HoursPerDay *float64         `json:"hoursPerDay,omitempty"`
	TimeOff     []store.DateSpan `json:"timeOff,omitempty"`
}

// directive is a validated directive: its effect as engine changes and,
// for the kinds that land through apply_changes, the ops that would.
type directive struct {
	changes  []scheduler.Change
	ops      []Op
	capacity *store.Capacity
}

func (s *Service) recordDirective(ctx context.Context, c Caller, in RecordDirectiveInput) (Answer[RecordDirectiveOutput], error) {
	p, err := s.project(in.Project)
	if err != nil {
		return Answer[RecordDirectiveOutput]{}, err
	}
	if !slices.Contains(DirectiveKinds, in.Kind) {
		return Answer[RecordDirectiveOutput]{}, Errorf(CodeInvalidInput, "kind", "kind must be one of %s", strings.Join(DirectiveKinds, ", "))
	}
	if strings.TrimSpace(in.Quote) == "" {
		return Answer[RecordDirectiveOutput]{}, Errorf(CodeInvalidInput, "quote", "quote must hold the PM's words, verbatim")
	}
	noParams := len(in.Params) == 0 || string(in.Params) == "null"
	var negotiated *Negotiation
	if noParams && in.Kind != "note" {
		in, negotiated, err = s.negotiateDirective(ctx, p, in)
		if err != nil {
			return Answer[RecordDirectiveOutput]{}, err
		}
		noParams = false
	}
	d, err := s.parseDirective(ctx, p, in)
	if err != nil {
		if negotiated != nil {
			return Answer[RecordDirectiveOutput]{}, negotiatedInvalid(negotiated, err)
		}
		return Answer[RecordDirectiveOutput]{}, err
	}

	res, err := s.whatIf(ctx, p.ID, func(scheduler.Input) []scheduler.Change { return d.changes })
	if err != nil {
		return Answer[RecordDirectiveOutput]{}, fmt.Errorf("what-if of a %s directive: %w", in.Kind, err)
	}
	out := RecordDirectiveOutput{Consequence: beforeAfter(res.WhatIfResult), Negotiated: negotiated}
	immediate := in.Kind == "capacity" || in.Kind == "note"
	switch {
	case in.Kind == "capacity":
		out.Summary = res.Consequence + "; CommiTea's capacity calendar changed now (no Gitea side) and the forecast recomputes"
	case in.Kind == "note":
		out.Summary = "noted; a note changes nothing in the plan"
	default:
		out.Summary = res.Consequence + "; pending until apply_changes lands it"
	}
	target, err := json.Marshal(in.Target)
	if err != nil || in.Target == nil {
		target = []byte(`{}`)
	}
	cons, err := json.Marshal(out.Consequence)
	if err != nil {
		return Answer[RecordDirectiveOutput]{}, fmt.Errorf("encode consequence: %w", err)
	}
	row := store.Directive{ProjectID: p.ID, Kind: in.Kind, Quote: in.Quote, Target: target, Params: in.Params,
		Rationale: in.Rationale, Caller: c.Name, Consequence: cons, Summary: out.Summary, CreatedAt: s.now()}
	if noParams {
		row.Params = nil
	}
	if negotiated != nil {
		row.NegotiatedBy = negotiated.Model
	}
	if immediate {
		now := s.now()
		row.Status, row.AppliedAt = store.DirectiveApplied, &now
	}
	err = store.InTx(ctx, s.Pool, func(tx store.Tx) error {
		id, err := store.AppendDirective(ctx, tx, row)
		if err != nil {
			return err
		}
		out.DirectiveID = id
		if d.capacity == nil {
			return nil
		}
		d.capacity.DirectiveID = &id
		if err := store.PutCapacity(ctx, tx, p.ID, *d.capacity); err != nil {
			return err
		}
		if err := s.markChanged(ctx, tx, p.ID, res.PlanVersion); err != nil {
			return err
		}
		// In effect at once: the ledger keeps the quote as predicted, for
		// the next snapshot to realize.
		counter, err := store.ChangeCounter(ctx, tx, p.ID)
		if err != nil {
			return err
		}
		predicted, err := predictedJSON(res)
		if err != nil {
			return err
		}
		return store.MarkDirectiveApplied(ctx, tx, p.ID, id, *row.AppliedAt, predicted, counter)
	})
	if err != nil {
		return Answer[RecordDirectiveOutput]{}, err
	}
	if d.capacity != nil {
		s.Invalidate(p.ID)
	}
	if !immediate {
		out.ProposedOps = d.ops
	}
	s.audit(ctx, p.ID, "record_directive", c, in, "recorded", out)

	ans := Answer[RecordDirectiveOutput]{Data: out}
	switch {
	case immediate:
		ans.Instruction = fmt.Sprintf("Directive %d is recorded and already in effect; tell the PM the consequence.", out.DirectiveID)
	case len(d.ops) > 0:
		// The batch is data.proposedOps too; the instruction repeats it
		// so that an agent reading only the instruction has it whole.
		ops, _ := json.Marshal(d.ops)
		ans.Instruction = fmt.Sprintf("Show the PM this consequence; once they approve, carry it out with apply_changes {\"ops\": %s, \"directiveId\": %d}.", ops, out.DirectiveID)
		ans.Safety = "A person must approve before the directive's effect is applied to Gitea."
	default:
		ans.Instruction = fmt.Sprintf("Directive %d is pending: its effect (a due date) is set in Gitea by a person; once it is, send apply_changes with directiveId %d and the remaining ops, if any.", out.DirectiveID, out.DirectiveID)
	}
	return ans, nil
}

// beforeAfter reads the what-if's changed milestones as bands.
func beforeAfter(res scheduler.WhatIfResult) []BeforeAfter { return scheduler.Effects(res) }

// parseDirective checks the target and params of a directive against the
// mirror and turns them into engine changes and apply_changes ops.
func (s *Service) parseDirective(ctx context.Context, p store.Project, in RecordDirectiveInput) (directive, error) {
	var d directive
	var prm directiveParams
	if len(in.Params) > 0 && string(in.Params) != "null" {
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(in.Params, &keys); err != nil {
			return d, Errorf(CodeInvalidInput, "params", "params must be a JSON object")
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			if !slices.Contains(kindParams[in.Kind], k) {
				return d, Errorf(CodeInvalidInput, "params."+k, "a %s directive takes no param %q (it takes %s)", in.Kind, k, orNone(kindParams[in.Kind]))
			}
		}
		if err := json.Unmarshal(in.Params, &prm); err != nil {
			return d, Errorf(CodeInvalidInput, "params", "params do not fit the %s kind: %v", in.Kind, err)
		}
	}
	var t Target
	if in.Target != nil {
		t = *in.Target
	}
	heads, err := store.IssueHeads(ctx, s.Pool, p.ID)
	if err != nil {
		return d, err
	}
	head := make(map[int64]store.IssueHead, len(heads))
	for _, h := range heads {
		head[h.Number] = h
	}
	ms, err := store.Milestones(ctx, s.Pool, p.ID)
	if err != nil {
		return d, err
	}
	hasMilestone := func(id int64) bool {
		return slices.ContainsFunc(ms, func(m store.Milestone) bool { return m.ID == id })
	}
	needIssue := func() (int64, error) {
		if t.Issue == nil {
			return 0, Errorf(CodeInvalidInput, "target.issue", "a %s directive needs target.issue", in.Kind)
		}
		h, ok := head[*t.Issue]
		if !ok || h.IsPull {
			return 0, Errorf(CodeNotFound, "target.issue", "issue #%d is not in the mirror of %s", *t.Issue, p.FullName())
		}
		return *t.Issue, nil
	}
	needMilestone := func() (int64, error) {
		if t.Milestone == nil {
			return 0, Errorf(CodeInvalidInput, "target.milestone", "a %s directive needs target.milestone", in.Kind)
		}
		if !hasMilestone(*t.Milestone) {
			return 0, Errorf(CodeNotFound, "target.milestone", "milestone %d is not in the mirror of %s", *t.Milestone, p.FullName())
		}
		return *t.Milestone, nil
	}
	switch in.Kind {
	case "reprioritize":
		n, err := needIssue()
		if err != nil {
			return d, err
		}
		pr, err := parsePriority(prm.Priority)
		if err != nil {
			return d, err
		}
		d.changes = []scheduler.Change{{Kind: scheduler.SetPriority, Issue: n, Priority: pr}}
		d.ops = []Op{{Op: "set_priority", Issue: n, Priority: fmt.Sprintf("p/%d", pr)}}
	case "reestimate":
		n, err := needIssue()
		if err != nil {
			return d, err
		}
		est := strings.ToLower(strings.TrimSpace(prm.Estimate))
		if !strings.HasPrefix(est, "est/") {
			est = "est/" + est
		}
		size := scheduler.Size(strings.TrimPrefix(est, "est/"))
		if !size.Valid() {
			return d, Errorf(CodeInvalidInput, "params.estimate", "estimate %q is not one of est/xs, est/s, est/m, est/l, est/xl", prm.Estimate)
		}
		d.changes = []scheduler.Change{{Kind: scheduler.SetEstimate, Issue: n, Estimate: size}}
		d.ops = []Op{{Op: "set_estimate", Issue: n, Estimate: est}}
	case "set-deadline":
		m, err := needMilestone()
		if err != nil {
			return d, err
		}
		if prm.Due == "" && prm.Hard == nil {
			return d, Errorf(CodeInvalidInput, "params", "a set-deadline directive needs due and/or hard")
		}
		if prm.Due != "" {
			due, err := time.Parse(time.DateOnly, prm.Due)
			if err != nil {
				return d, Errorf(CodeInvalidInput, "params.due", "due %q is not a YYYY-MM-DD date", prm.Due)
			}
			// Gitea keeps a milestone's due date at the end of the day.
			due = due.Add(24*time.Hour - time.Second)
			d.changes = append(d.changes, scheduler.Change{Kind: scheduler.SetDueDate, Milestone: m, Due: due})
		}
		if prm.Hard != nil {
			d.changes = append(d.changes, scheduler.Change{Kind: scheduler.SetHardness, Milestone: m, Hard: *prm.Hard})
			d.ops = append(d.ops, Op{Op: "set_deadline_hard", Milestone: &m, Hard: prm.Hard})
		}
	case "scope":
		m, err := needMilestone()
		if err != nil {
			return d, err
		}
		if len(prm.Add) == 0 && len(prm.Drop) == 0 {
			return d, Errorf(CodeInvalidInput, "params", "a scope directive needs add and/or drop")
		}
		for _, n := range prm.Add {
			if h, ok := head[n]; !ok || h.IsPull {
				return d, Errorf(CodeNotFound, "params.add", "issue #%d is not in the mirror of %s", n, p.FullName())
			}
			d.changes = append(d.changes, scheduler.Change{Kind: scheduler.SetMilestone, Issue: n, Milestone: m})
			d.ops = append(d.ops, Op{Op: "set_milestone", Issue: n, Milestone: &m})
		}
		for _, n := range prm.Drop {
			h, ok := head[n]
			if !ok || h.IsPull {
				return d, Errorf(CodeNotFound, "params.drop", "issue #%d is not in the mirror of %s", n, p.FullName())
			}
			if _, _, hard := scheduler.ParseLabels(h.Labels); hard {
				return d, Errorf(CodeInvalidInput, "params.drop", "issue #%d carries deadline/hard: it must ship with its milestone and no scope directive may drop it", n)
			}
			d.changes = append(d.changes, scheduler.Change{Kind: scheduler.SetMilestone, Issue: n})
			d.ops = append(d.ops, Op{Op: "set_milestone", Issue: n})
		}
	case "capacity":
		if strings.TrimSpace(t.Member) == "" {
			return d, Errorf(CodeInvalidInput, "target.member", "a capacity directive needs target.member (a Gitea login)")
		}
		if prm.HoursPerDay == nil && len(prm.TimeOff) == 0 {
			return d, Errorf(CodeInvalidInput, "params", "a capacity directive needs hoursPerDay and/or timeOff")
		}
		ch := scheduler.Change{Kind: scheduler.SetCapacity, Person: t.Member}
		if prm.HoursPerDay != nil {
			if h := *prm.HoursPerDay; !(h > 0 && h <= 24) {
				return d, Errorf(CodeInvalidInput, "params.hoursPerDay", "hoursPerDay must be more than 0 and at most 24; for days off use timeOff")
			}
			ch.HoursPerDay = *prm.HoursPerDay
		}
		for _, span := range prm.TimeOff {
			r, err := worker.ParseDateSpan(span, nil)
			if err != nil {
				return d, Errorf(CodeInvalidInput, "params.timeOff", "time off: %v", err)
			}
			ch.TimeOff = append(ch.TimeOff, r)
		}
		d.changes = []scheduler.Change{ch}
		d.capacity = &store.Capacity{Login: t.Member, HoursPerDay: prm.HoursPerDay, TimeOff: prm.TimeOff}
	case "note":
		// Nothing to check: a note has no effect.
	}
	return d, nil
}

func parsePriority(raw json.RawMessage) (int, error) {
	if len(raw) == 0 {
		return 0, Errorf(CodeInvalidInput, "params.priority", "a reprioritize directive needs params.priority (0..3)")
	}
	var n int
	if err := json.Unmarshal(raw, &n); err == nil && n >= 0 && n <= 3 {
		return n, nil
	}
	var sv string
	if err := json.Unmarshal(raw, &sv); err == nil {
		sv = strings.ToLower(strings.TrimSpace(sv))
		if len(sv) == 3 && strings.HasPrefix(sv, "p/") && sv[2] >= '0' && sv[2] <= '3' {
			return int(sv[2] - '0'), nil
		}
	}
	return 0, Errorf(CodeInvalidInput, "params.priority", "priority must be 0..3 (0 urgent, 3 low) or p/0..p/3, not %s", raw)
}

func orNone(ss []string) string {
	if len(ss) == 0 {
		return "none"
	}
	return strings.Join(ss, ", ")
}
