package tools

import "context"

// capture_work turns a braindump into a proposed issue set through a short
// interview. Decomposition and estimate negotiation need the big model, so
// until the agent worker gives it one, the tool answers MODEL_UNAVAILABLE.
// It never files anything: the proposal goes through apply_changes.

// CaptureWorkInput is capture_work's input, as in the tool contract.
type CaptureWorkInput struct {
	Project   string          `json:"project,omitempty"`
	Braindump string          `json:"braindump"`
	Answers   []CaptureAnswer `json:"answers,omitempty"`
}

// CaptureAnswer is one interview turn so far.
type CaptureAnswer struct {
	Question string `json:"question"`
	Answer   string `json:"answer"`
}

// CaptureWorkOutput is capture_work's data.
type CaptureWorkOutput struct {
	NeedsMoreInfo []string         `json:"needsMoreInfo,omitempty"`
	Proposal      *CaptureProposal `json:"proposal,omitempty"`
}

// CaptureProposal is a proposed issue set with its one-line schedule impact.
type CaptureProposal struct {
	Issues      []ProposedIssue `json:"issues"`
	Consequence string          `json:"consequence"`
}

// ProposedIssue is one issue of a proposal.
type ProposedIssue struct {
	Title     string  `json:"title"`
	Body      string  `json:"body"`
	Estimate  string  `json:"estimate"`
	Priority  string  `json:"priority,omitempty"`
	Deps      []int64 `json:"deps,omitempty"`
	Milestone *int64  `json:"milestone,omitempty"`
}

const captureWorkInputSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["braindump"],
  "properties": {
    "project": {"type": "string", "description": "owner/repo; defaults to the only configured project"},
    "braindump": {"type": "string", "minLength": 1, "description": "the PM's unstructured description of the work"},
    "answers": {
      "type": "array",
      "description": "interview turns so far",
      "items": {
        "type": "object",
        "additionalProperties": false,
        "required": ["question", "answer"],
        "properties": {"question": {"type": "string"}, "answer": {"type": "string"}}
      }
    }
  }
}`

const captureWorkOutputSchema = `{
  "type": "object",
  "required": ["data", "instruction"],
  "properties": {
    "data": {
      "type": "object",
      "properties": {
        "needsMoreInfo": {"type": "array", "items": {"type": "string"}, "description": "follow-up questions; present as chips"},
        "proposal": {
          "type": "object",
          "required": ["issues", "consequence"],
          "properties": {
            "issues": {"type": "array", "items": {
              "type": "object",
              "required": ["title", "body", "estimate"],
              "properties": {
                "title": {"type": "string"}, "body": {"type": "string"},
                "estimate": {"enum": ["est/xs", "est/s", "est/m", "est/l", "est/xl"]},
                "priority": {"enum": ["p/0", "p/1", "p/2", "p/3"]},
                "deps": {"type": "array", "items": {"type": "integer"}},
                "milestone": {"type": "integer"}
              }
            }},
            "consequence": {"type": "string", "description": "one-line schedule impact"}
          }
        }
      }
    },
    "instruction": {"type": "string"},
    "safety": {"type": "string"}
  }
}`

func (s *Service) captureWorkTool() Tool {
	return Declare("capture_work",
		"Turn a braindump into a proposed issue set through a short interview. Returns follow-up questions "+
			"(needsMoreInfo) or a proposal with estimates and a one-line schedule consequence; never files "+
			"anything: file the reviewed proposal with apply_changes.",
		false, false, captureWorkInputSchema, captureWorkOutputSchema, s.captureWork)
}

func (s *Service) captureWork(_ context.Context, _ Caller, in CaptureWorkInput) (Answer[CaptureWorkOutput], error) {
	if _, err := s.project(in.Project); err != nil {
		return Answer[CaptureWorkOutput]{}, err
	}
	if in.Braindump == "" {
		return Answer[CaptureWorkOutput]{}, Errorf(CodeInvalidInput, "braindump", "braindump is required")
	}
	return Answer[CaptureWorkOutput]{}, Errorf(CodeModelUnavailable, "",
		"capture_work needs the big language model and none is configured; file issues directly with apply_changes (create_issue)")
}
