package tools

import (
	"context"
	"encoding/json"
)

// record_directive appends a PM's directive to the ledger with their exact
// words and returns the consequence of its structured effect. Its
// declaration is complete; the handler (ledger append, what-if, capacity)
// lands with the write path and answers NOT_IMPLEMENTED until then. The
// ledger table (migration 003) and store.AppendDirective are in place, and
// the directives view already reads the ledger.

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

// DirectiveKinds are the kinds record_directive accepts.
var DirectiveKinds = []string{"reprioritize", "reestimate", "set-deadline", "scope", "capacity", "note"}

// RecordDirectiveOutput is record_directive's data.
type RecordDirectiveOutput struct {
	DirectiveID int64         `json:"directiveId"`
	Consequence []BeforeAfter `json:"consequence"`
	Summary     string        `json:"summary"`
}

// BeforeAfter is one affected milestone's forecast before and after.
type BeforeAfter struct {
	Milestone int64  `json:"milestone"`
	Title     string `json:"title"`
	Before    Band   `json:"before"`
	After     Band   `json:"after"`
}

// Band is a milestone's p50/p80 range with its chance of meeting the due
// date.
type Band struct {
	P50  string  `json:"p50"`
	P80  string  `json:"p80"`
	PDue float64 `json:"pDue"`
}

const recordDirectiveInputSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["kind", "quote"],
  "properties": {
    "project": {"type": "string", "description": "owner/repo; defaults to the only configured project"},
    "kind": {"enum": ["reprioritize", "reestimate", "set-deadline", "scope", "capacity", "note"]},
    "quote": {"type": "string", "minLength": 1, "description": "verbatim PM words, stored in the ledger"},
    "target": {
      "type": "object",
      "additionalProperties": false,
      "properties": {"issue": {"type": "integer"}, "milestone": {"type": "integer"}, "member": {"type": "string"}}
    },
    "params": {"type": "object", "description": "structured effect, e.g. { \"priority\": 1 }"},
    "rationale": {"type": "string"}
  }
}`

const recordDirectiveOutputSchema = `{
  "type": "object",
  "required": ["data", "instruction"],
  "properties": {
    "data": {
      "type": "object",
      "required": ["directiveId", "consequence", "summary"],
      "properties": {
        "directiveId": {"type": "integer"},
        "consequence": {"type": "array", "items": {"type": "object", "properties": {
          "milestone": {"type": "integer"}, "title": {"type": "string"},
          "before": {"type": "object"}, "after": {"type": "object"}}}},
        "summary": {"type": "string"}
      }
    },
    "instruction": {"type": "string"},
    "safety": {"type": "string"}
  }
}`

func (s *Service) recordDirectiveTool() Tool {
	return Declare("record_directive",
		"Record a PM directive (reprioritize, reestimate, set-deadline, scope, capacity, note) with the PM's "+
			"verbatim words in the ledger and get its consequence per milestone (before/after) for "+
			"propose-approve. It changes nothing in Gitea: effects land later through apply_changes.",
		false, false, recordDirectiveInputSchema, recordDirectiveOutputSchema, s.recordDirective)
}

func (s *Service) recordDirective(_ context.Context, _ Caller, in RecordDirectiveInput) (Answer[RecordDirectiveOutput], error) {
	if _, err := s.project(in.Project); err != nil {
		return Answer[RecordDirectiveOutput]{}, err
	}
	return Answer[RecordDirectiveOutput]{}, Errorf(CodeNotImplemented, "",
		"record_directive is declared but its ledger write is not implemented yet; nothing was recorded")
}
