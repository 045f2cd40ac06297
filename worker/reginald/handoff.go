package reginald

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/commitea/commitea/worker/models"
	"github.com/commitea/commitea/worker/tools"
)

// Hand-offs. A directive or a braindump is not Reginald's to phrase: the
// small model only recognises it, and the question goes on, through the
// tool registry and with the caller's own scopes, to record_directive or
// capture_work, which do their structuring on the big model themselves. Their answers are deterministic (a ledger row, the
// engine's what-if), so Reginald words its answer from a template and
// passes their proposal on as an apply_changes batch; it never sends that
// batch itself.

func (r *Reginald) handOff(ctx context.Context, t *turn, call models.FunctionCall) error {
	var input json.RawMessage
	var err error
	switch call.Name {
	case "record_directive":
		input, err = r.directiveInput(t, call)
	default:
		input, err = json.Marshal(tools.CaptureWorkInput{Project: t.in.Project, Braindump: t.in.Question})
	}
	if err != nil {
		return err
	}
	h := &Handoff{Tool: call.Name, Input: input}
	t.out.Handoff = h
	t.out.Stats.ToolCalls++
	env, terr := r.Tools.Call(ctx, t.caller, call.Name, input)
	if terr != nil {
		h.Error = terr
		t.out.Answer = fmt.Sprintf("This reads as a %s for %s, which answered %s: %s Nothing was changed.",
			kindWord(call.Name), call.Name, terr.Code, terr.Message)
		return nil
	}
	h.Data, h.Instruction, h.Safety = env.Data, env.Instruction, env.Safety
	t.out.Confirmed = true // the answer below is CommiTea's own wording of tool data
	switch call.Name {
	case "record_directive":
		r.directiveAnswer(t, env)
	default:
		r.captureAnswer(t, env)
	}
	return nil
}

func kindWord(tool string) string {
	if tool == "record_directive" {
		return "directive"
	}
	return "braindump"
}

// directiveInput is record_directive's input for the question: the small
// model's reading (kind, and a target when it named one), with the quote
// the question verbatim and the project the question's, and no params:
// turning the words into params is record_directive's negotiation on the
// big model, which also fills a missing target. So a directive's params
// come from one place, whoever calls the tool.
func (r *Reginald) directiveInput(t *turn, call models.FunctionCall) (json.RawMessage, error) {
	in := map[string]any{}
	_ = json.Unmarshal(call.Arguments, &in)
	for k := range in {
		if k != "kind" && k != "target" {
			delete(in, k)
		}
	}
	if t.in.Project != "" {
		in["project"] = t.in.Project
	}
	in["quote"] = t.in.Question
	return json.Marshal(in)
}

// directiveAnswer words a recorded directive and passes on the
// apply_changes batch record_directive proposes.
func (r *Reginald) directiveAnswer(t *turn, env tools.Envelope) {
	var d tools.RecordDirectiveOutput
	if b, err := json.Marshal(env.Data); err == nil {
		_ = json.Unmarshal(b, &d)
	}
	// The summary says whether the directive is pending or, for capacity
	// and notes, already in effect on CommiTea's side.
	t.out.Answer = fmt.Sprintf("I recorded this as directive %d: %s. Nothing changed in Gitea.", d.DirectiveID, strings.TrimSuffix(d.Summary, "."))
	if batch := applyBatch(d); batch != nil {
		t.out.Proposal = &Proposal{Tool: "apply_changes", Input: batch, Consequence: d.Summary}
		t.out.Answer += " To carry it out, a person approves and sends the proposed apply_changes batch."
	}
}

// applyBatch is the apply_changes input that lands a recorded directive:
// the ops record_directive proposes, with its id; nil when it proposes
// none (in effect already, or landed by a person in Gitea).
func applyBatch(d tools.RecordDirectiveOutput) json.RawMessage {
	if len(d.ProposedOps) == 0 {
		return nil
	}
	raw, err := json.Marshal(tools.ApplyChangesInput{Ops: d.ProposedOps, DirectiveID: &d.DirectiveID})
	if err != nil {
		return nil
	}
	return raw
}

// captureAnswer words capture_work's answer: its follow-up questions, or
// its proposal, whose issues are create_issue ops as they stand.
func (r *Reginald) captureAnswer(t *turn, env tools.Envelope) {
	var c struct {
		NeedsMoreInfo []string `json:"needsMoreInfo"`
		Proposal      *struct {
			Issues      []json.RawMessage `json:"issues"`
			Consequence string            `json:"consequence"`
		} `json:"proposal"`
	}
	if b, err := json.Marshal(env.Data); err == nil {
		_ = json.Unmarshal(b, &c)
	}
	switch {
	case c.Proposal != nil:
		input := map[string]any{"ops": c.Proposal.Issues}
		if t.in.Project != "" {
			input["project"] = t.in.Project
		}
		batch, _ := json.Marshal(input)
		t.out.Proposal = &Proposal{Tool: "apply_changes", Input: batch, Consequence: c.Proposal.Consequence}
		t.out.Answer = fmt.Sprintf("capture_work proposes %d issues: %s. Nothing is filed; review them, then a person sends the proposed apply_changes batch.",
			len(c.Proposal.Issues), strings.TrimSuffix(c.Proposal.Consequence, "."))
	case len(c.NeedsMoreInfo) > 0:
		t.out.Answer = "Before proposing issues, capture_work asks: " + strings.Join(c.NeedsMoreInfo, " ") +
			" Answer these and call capture_work with the answers."
	default:
		t.out.Answer = "capture_work answered without a proposal; " + env.Instruction
	}
}
