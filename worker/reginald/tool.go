package reginald

import (
	"context"
	"encoding/json"

	"github.com/commitea/commitea/worker/tools"
)

// The ask tool: Reginald declared once, like the four tools, so that
// POST /v1/tools/ask, POST /v1/ask and MCP serve the same thing. An agent
// with a big model of its own can delegate its cheap reads to it.

const askInputSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["question"],
  "properties": {
    "question": {"type": "string", "minLength": 1, "maxLength": 4000, "description": "a question, directive or braindump"},
    ` + tools.ProjectProperty + `,
    "conversationId": {"type": "string", "maxLength": 100, "description": "to continue one"}
  }
}`

const askOutputSchema = `{
  "type": "object",
  "required": ["data", "instruction"],
  "properties": {
    "data": {
      "type": "object",
      "required": ["conversationId", "answer", "confirmed", "reads", "stats"],
      "properties": {
        "conversationId": {"type": "string"},
        "answer": {"type": "string", "description": "every number and date in it comes from this turn's tool results"},
        "confirmed": {"type": "boolean", "description": "false: the model stated what the data does not; unconfirmed names it and data shows what was read"},
        "unconfirmed": {"type": "array", "items": {"type": "string"}},
        "cites": {"type": "array", "items": {"type": "integer"}, "description": "issues the answer talks about"},
        "reads": {"type": "array", "items": {"type": "object", "properties": {"tool": {"type": "string"}, "input": {"type": "object"}, "error": {"type": "object"}}}},
        "data": {"type": "array", "items": {"type": "object"}},
        "handoff": {"type": "object", "description": "the write tool a directive or braindump went to, with its answer", "properties": {
          "tool": {"enum": ["record_directive", "capture_work"]}, "input": {"type": "object"}, "data": {}, "instruction": {"type": "string"},
          "safety": {"type": "string"}, "error": {"type": "object"}}},
        "proposal": {"type": "object", "description": "an apply_changes batch to send once a person approves", "properties": {
          "tool": {"const": "apply_changes"}, "input": {"type": "object"}, "consequence": {"type": "string"}}},
        "stopped": {"type": "string"},
        "stats": {"type": "object", "properties": {"modelRequests": {"type": "integer"}, "models": {"type": "array", "items": {"type": "string"}, "description": "the provider:model that served each answer"}, "promptTokens": {"type": "array", "items": {"type": "integer"}},
          "toolCalls": {"type": "integer"}, "modelMs": {"type": "number"}, "totalMs": {"type": "number"}}}
      }
    },
    "instruction": {"type": "string"},
    "safety": {"type": "string"}
  }
}`

// Tool declares ask. Its scope is read: a directive it hands on is
// recorded only with the caller's write scope, and nothing reaches Gitea
// without an approved apply_changes the caller sends. It is not read-only
// while it can hand a directive to record_directive, which writes the
// ledger; a braindump handed to capture_work writes nothing.
func (r *Reginald) Tool() tools.Tool {
	handsOff := false
	if r.Tools != nil {
		_, handsOff = r.Tools.Lookup("record_directive")
	}
	return tools.Declare(tools.Tool{Name: "ask", Scope: tools.ScopeRead, Hints: tools.Hints{ReadOnly: !handsOff, OpenWorld: true},
		Description: "Ask Reginald, CommiTea's assistant, in plain words; a directive or braindump comes " +
			"back as an apply_changes proposal. Applies nothing.",
		InputSchema: json.RawMessage(askInputSchema), OutputSchema: json.RawMessage(askOutputSchema)},
		r.ask)
}

func (r *Reginald) ask(ctx context.Context, c tools.Caller, in AskInput) (tools.Answer[AskOutput], error) {
	out, err := r.Ask(ctx, c, in)
	if err != nil {
		return tools.Answer[AskOutput]{}, err
	}
	a := tools.Answer[AskOutput]{Data: out}
	switch {
	case out.Proposal != nil:
		a.Instruction = "Show the person the consequence; once they approve, send proposal.input to apply_changes."
		a.Safety = "A person must approve before the proposed batch is sent to apply_changes."
	case out.Handoff != nil && out.Handoff.Error != nil:
		a.Instruction = "The hand-off failed; see handoff.error, and call " + out.Handoff.Tool + " directly if you can supply what it needs."
	case out.Handoff != nil:
		a.Instruction = "Relay the answer; " + out.Handoff.Instruction
	case !out.Confirmed:
		a.Instruction = "Show the person the data rather than a guess; call query_project for the view you need."
	default:
		a.Instruction = "Relay the answer; send conversationId with a follow-up question."
	}
	return a, nil
}

// Registry is base with ask added: the registry both transports serve.
// Reginald itself calls base, so the model cannot reach ask.
func Registry(base *tools.Registry, r *Reginald) *tools.Registry {
	return base.WithTools(r.Tool())
}
