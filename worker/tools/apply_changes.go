package tools

import "context"

// apply_changes is the one mutation tool: a batch of ops validated as a
// whole, applied in order through the Gitea adapter and written through to
// the mirror. Its declaration (input and output exactly as in the tool
// contract, plus idempotencyKey and directiveId) is complete; the handler
// lands with the write path and answers NOT_IMPLEMENTED until then.

// ApplyChangesInput is apply_changes' input.
type ApplyChangesInput struct {
	Project string `json:"project,omitempty"`
	Ops     []Op   `json:"ops"`
	// Approved is required iff any op is destructive, and needs the
	// approve scope.
	Approved bool `json:"approved,omitempty"`
	// IdempotencyKey replays the first answer for 24 hours instead of
	// applying twice (the Idempotency-Key header sets it too).
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
	// DirectiveID links the batch to the ledger directive it carries out.
	DirectiveID *int64 `json:"directiveId,omitempty"`
}

// Op is one change. Op names which fields apply.
type Op struct {
	Op        string   `json:"op"`
	Title     string   `json:"title,omitempty"`
	Body      string   `json:"body,omitempty"`
	Labels    []string `json:"labels,omitempty"`
	Milestone *int64   `json:"milestone,omitempty"`
	Deps      []int64  `json:"deps,omitempty"`
	Issue     int64    `json:"issue,omitempty"`
	Estimate  string   `json:"estimate,omitempty"`
	Priority  string   `json:"priority,omitempty"`
	Hard      *bool    `json:"hard,omitempty"`
	DependsOn int64    `json:"dependsOn,omitempty"`
	Label     string   `json:"label,omitempty"`
}

// DestructiveOps need approved: true.
var DestructiveOps = map[string]bool{"remove_dep": true, "close_issue": true, "remove_label": true}

// ApplyChangesOutput is apply_changes' data.
type ApplyChangesOutput struct {
	Applied     int          `json:"applied"`
	Consequence string       `json:"consequence"`
	Rejected    []RejectedOp `json:"rejected,omitempty"`
	Created     []int64      `json:"created,omitempty"`
}

// RejectedOp names an op refused and why.
type RejectedOp struct {
	Op     int    `json:"op"` // index in ops
	Reason string `json:"reason"`
}

const applyChangesInputSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["ops"],
  "properties": {
    "project": {"type": "string", "description": "owner/repo; defaults to the only configured project"},
    "ops": {
      "type": "array",
      "minItems": 1,
      "description": "one coherent change; applied in order after the whole batch validates",
      "items": {"oneOf": [
        {"type": "object", "additionalProperties": false, "required": ["op", "title", "body"], "properties": {
          "op": {"const": "create_issue"}, "title": {"type": "string", "minLength": 1}, "body": {"type": "string"},
          "labels": {"type": "array", "items": {"type": "string"}}, "milestone": {"type": "integer"},
          "deps": {"type": "array", "items": {"type": "integer"}}}},
        {"type": "object", "additionalProperties": false, "required": ["op", "issue", "estimate"], "properties": {
          "op": {"const": "set_estimate"}, "issue": {"type": "integer"},
          "estimate": {"enum": ["est/xs", "est/s", "est/m", "est/l", "est/xl"]}}},
        {"type": "object", "additionalProperties": false, "required": ["op", "issue", "priority"], "properties": {
          "op": {"const": "set_priority"}, "issue": {"type": "integer"},
          "priority": {"enum": ["p/0", "p/1", "p/2", "p/3"]}}},
        {"type": "object", "additionalProperties": false, "required": ["op", "issue", "milestone"], "properties": {
          "op": {"const": "set_milestone"}, "issue": {"type": "integer"}, "milestone": {"type": ["integer", "null"]}}},
        {"type": "object", "additionalProperties": false, "required": ["op", "milestone", "hard"], "properties": {
          "op": {"const": "set_deadline_hard"}, "milestone": {"type": "integer"}, "hard": {"type": "boolean"}}},
        {"type": "object", "additionalProperties": false, "required": ["op", "issue", "dependsOn"], "properties": {
          "op": {"const": "add_dep"}, "issue": {"type": "integer"}, "dependsOn": {"type": "integer"}}},
        {"type": "object", "additionalProperties": false, "required": ["op", "issue", "dependsOn"], "description": "destructive", "properties": {
          "op": {"const": "remove_dep"}, "issue": {"type": "integer"}, "dependsOn": {"type": "integer"}}},
        {"type": "object", "additionalProperties": false, "required": ["op", "issue"], "description": "destructive", "properties": {
          "op": {"const": "close_issue"}, "issue": {"type": "integer"}}},
        {"type": "object", "additionalProperties": false, "required": ["op", "issue", "label"], "description": "destructive", "properties": {
          "op": {"const": "remove_label"}, "issue": {"type": "integer"}, "label": {"type": "string"}}}
      ]}
    },
    "approved": {"type": "boolean", "description": "required iff any op is destructive (remove_dep, close_issue, remove_label); needs the approve scope"},
    "idempotencyKey": {"type": "string", "description": "a retry with the same key replays the first answer for 24 hours"},
    "directiveId": {"type": "integer", "description": "the ledger directive this batch carries out"}
  }
}`

const applyChangesOutputSchema = `{
  "type": "object",
  "required": ["data", "instruction"],
  "properties": {
    "data": {
      "type": "object",
      "required": ["applied", "consequence"],
      "properties": {
        "applied": {"type": "integer"},
        "consequence": {"type": "string"},
        "rejected": {"type": "array", "items": {"type": "object", "properties": {"op": {"type": "integer"}, "reason": {"type": "string"}}}},
        "created": {"type": "array", "items": {"type": "integer"}, "description": "numbers of created issues"}
      }
    },
    "instruction": {"type": "string"},
    "safety": {"type": "string"}
  }
}`

func (s *Service) applyChangesTool() Tool {
	return Declare("apply_changes",
		"Apply one coherent batch of plan changes to Gitea: create_issue, set_estimate, set_priority, "+
			"set_milestone, set_deadline_hard, add_dep, and the destructive remove_dep, close_issue, remove_label "+
			"(these need approved: true, which needs the approve scope). Only est/*, p/* and deadline/hard labels "+
			"and native fields are touched. Returns how many ops applied and the schedule consequence.",
		false, true, applyChangesInputSchema, applyChangesOutputSchema, s.applyChanges)
}

func (s *Service) applyChanges(_ context.Context, c Caller, in ApplyChangesInput) (Answer[ApplyChangesOutput], error) {
	if in.Approved && !c.Has(ScopeApprove) {
		return Answer[ApplyChangesOutput]{}, Errorf(CodeForbidden, "approved", "token %q lacks the approve scope that approved: true needs; nothing was changed", c.Name)
	}
	if _, err := s.project(in.Project); err != nil {
		return Answer[ApplyChangesOutput]{}, err
	}
	return Answer[ApplyChangesOutput]{}, Errorf(CodeNotImplemented, "",
		"apply_changes is declared but its write path is not implemented yet; nothing was changed")
}
