package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"unicode"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/models"
)

// capture_work turns a braindump into a proposed issue set through a short
// interview, on the big model. The model decomposes and estimates; the
// engine's what-if (add_issue changes on the live mirror) computes the
// one-line consequence, never the model. Nothing is filed, and the tool
// has no write path at all: it reads the snapshot and the mirror, calls the
// model and the what-if, and answers. Each proposed issue is a create_issue
// op of apply_changes (the estimate and priority as its est/* and p/*
// labels), so the reviewed proposal is filed by passing proposal.issues as
// apply_changes' ops unchanged.
//
// The model's answer is data, never instructions: it is decoded into the
// narrow shape below (unknown keys fail validation, and the router asks
// once for a repair), function calls in it are ignored (none is offered),
// references to milestones and issues are checked against the mirror, and
// the only thing it can produce is text in a proposal for a person to
// review. Issue titles and the PM's words reach the model inside delimited
// blocks that the system prompt declares to be data.

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

// CaptureWorkOutput is capture_work's data: questions or a proposal.
type CaptureWorkOutput struct {
	NeedsMoreInfo []string         `json:"needsMoreInfo,omitempty"`
	Proposal      *CaptureProposal `json:"proposal,omitempty"`
}

// CaptureProposal is a proposed issue set with its one-line schedule impact.
type CaptureProposal struct {
	Issues []ProposedIssue `json:"issues"`
	// Consequence is the engine's what-if of filing every issue, as
	// scheduler.WhatIfResult.Consequence words it; a proposed issue is
	// named there by its title, having no number yet.
	Consequence string `json:"consequence"`
	// Effects are the milestones filing the proposal moves, as numbers:
	// before and after, in the shape of record_directive's consequence.
	Effects []BeforeAfter `json:"effects"`
}

// ProposedIssue is one issue of a proposal, shaped exactly as an
// apply_changes create_issue op (op, title, body, labels, milestone, deps)
// so that the reviewed proposal is filed by passing proposal.issues as ops
// unchanged. The contract's estimate and optional priority are its labels:
// always one est/* label first, then a p/* label when the PM gave a
// priority; create_issue takes them as labels and nothing else.
// Deps are existing issue numbers, or -k for the k-th issue of this
// proposal (always an earlier one), the numbering the engine's what-if
// gives proposed issues.
type ProposedIssue struct {
	Op        string   `json:"op"`
	Title     string   `json:"title"`
	Body      string   `json:"body"`
	Labels    []string `json:"labels"`
	Milestone *int64   `json:"milestone,omitempty"`
	Deps      []int64  `json:"deps,omitempty"`
}

// op is the proposed issue as the create_issue op it stands for.
func (pi ProposedIssue) op() Op {
	return Op{Op: "create_issue", Title: pi.Title, Body: pi.Body, Labels: pi.Labels, Milestone: pi.Milestone, Deps: pi.Deps}
}

// Interview and input bounds. They keep the prompt within a 4B local
// model's context (under 6,000 tokens with the project context) and the
// interview short.
const (
	// MaxCaptureQuestions is the most follow-up questions one answer asks.
	MaxCaptureQuestions = 5
	// MaxCaptureAnswers is the most interview turns accepted; from there
	// on the model must propose.
	MaxCaptureAnswers   = 10
	maxBraindumpBytes   = 6000
	maxAnswersBytes     = 4000
	maxProposedIssues   = 15
	maxSimilarIssues    = 8
	maxContextMilestone = 12
	maxContextPeople    = 12
	maxTitleRunes       = 120
	maxBodyRunes        = 2000
)

var estimateLabels = []string{"est/xs", "est/s", "est/m", "est/l", "est/xl"}
var priorityLabels = []string{"p/0", "p/1", "p/2", "p/3"}

const captureWorkInputSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["braindump"],
  "properties": {
    ` + ProjectProperty + `,
    "braindump": {"type": "string", "minLength": 1, "maxLength": 6000, "description": "the PM's words"},
    "answers": {
      "type": "array",
      "maxItems": 10,
      "description": "needsMoreInfo questions with their answers",
      "items": {
        "type": "object",
        "required": ["question", "answer"],
        "properties": {"question": {"type": "string"}, "answer": {"type": "string"}}
      }
    }
  }
}`

var captureWorkOutputSchema = `{
  "type": "object",
  "required": ["data", "instruction"],
  "properties": {
    "data": {
      "type": "object",
      "properties": {
        "needsMoreInfo": {"type": "array", "maxItems": 5, "items": {"type": "string"}, "description": "follow-up questions; present as chips"},
        "proposal": {
          "type": "object",
          "required": ["issues", "consequence"],
          "properties": {
            "issues": {"type": "array", "description": "apply_changes create_issue ops; pass them as ops unchanged", "items": {
              "type": "object",
              "required": ["op", "title", "body", "labels"],
              "properties": {
                "op": {"const": "create_issue"},
                "title": {"type": "string"}, "body": {"type": "string"},
                "labels": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string"},
                  "description": "the estimate (est/xs, est/s, est/m, est/l, est/xl) first, then the priority (p/0..p/3) when one was given"},
                "deps": {"type": "array", "items": {"type": "integer"}, "description": "existing issue numbers, or -k for the k-th issue of this proposal"},
                "milestone": {"type": "integer"}
              }
            }},
            "consequence": {"type": "string", "description": "one-line schedule impact, computed by the engine's what-if"},
            "effects": ` + effectsSchema + `
          }
        }
      }
    },
    "instruction": {"type": "string"},
    "safety": {"type": "string"}
  }
}`

func (s *Service) captureWorkTool() Tool {
	// Read-only: it files nothing and records nothing; it needs write
	// because it spends the big model's budget on a proposal to write.
	return Declare(Tool{Name: "capture_work", Scope: ScopeWrite, Hints: Hints{ReadOnly: true, OpenWorld: true},
		Description: "Turn a braindump into proposed issues by a short interview: questions (needsMoreInfo) " +
			"or create_issue ops with their consequence. Files nothing.",
		InputSchema: json.RawMessage(captureWorkInputSchema), OutputSchema: json.RawMessage(captureWorkOutputSchema)},
		s.captureWork)
}

func (s *Service) captureWork(ctx context.Context, _ Caller, in CaptureWorkInput) (Answer[CaptureWorkOutput], error) {
	var none Answer[CaptureWorkOutput]
	p, err := s.project(in.Project)
	if err != nil {
		return none, err
	}
	if err := checkCaptureInput(in); err != nil {
		return none, err
	}
	// Without the big model nothing else happens: no read, no request.
	if !s.hasModel(models.Big) {
		return none, Errorf(CodeModelUnavailable, "",
			"capture_work needs the big language model and none is configured; file issues directly with apply_changes (create_issue)")
	}
	v, err := s.view(ctx, p)
	if err != nil {
		return none, err
	}
	similar, err := s.similarOpenIssues(ctx, v, captureText(in))
	if err != nil {
		return none, err
	}
	forceProposal := len(in.Answers) >= MaxCaptureAnswers
	req := captureRequest(v, similar, in, forceProposal)
	resp, err := s.Models.Generate(ctx, models.Big, req)
	if err != nil {
		return none, modelError("capture_work", err)
	}
	var ans captureModelAnswer
	if err := json.Unmarshal(resp.JSON, &ans); err != nil {
		return none, fmt.Errorf("capture_work: decode validated answer: %w", err)
	}
	// The schema and checkCaptureAnswer hold the answer to at least one
	// question or one issue; the router repaired it once if it had none.
	if ans.Kind == "questions" && !forceProposal {
		qs := cleanQuestions(ans.Questions)
		return Answer[CaptureWorkOutput]{
			Data: CaptureWorkOutput{NeedsMoreInfo: qs},
			Instruction: "Ask the PM these questions (as chips), then call capture_work again with the same braindump " +
				"and every question with its answer in answers.",
		}, nil
	}
	issues, dropped, notes := proposedIssues(v, ans.Issues)
	// The write tools' what-if: the recompute's input (capacity calendar
	// included), seed and trials, so the consequence is what the next
	// recompute would say once the proposal is filed.
	res, err := s.whatIf(ctx, p.ID, func(in scheduler.Input) []scheduler.Change { return addIssueChanges(in, issues) })
	if err != nil {
		return none, fmt.Errorf("capture_work: consequence of the proposal: %w", err)
	}
	if len(dropped) > 0 {
		s.Log.InfoContext(ctx, "capture_work dropped references the mirror does not have",
			slog.String("project", p.FullName()), slog.Any("dropped", dropped))
	}
	instr := "Show the proposal with its consequence for review; nothing is filed. After the PM approves (and edits), " +
		"file it with apply_changes, passing proposal.issues as ops unchanged (a negative dep -k is the k-th proposed issue)."
	if len(dropped) > 0 {
		instr += " Removed from the model's answer because they do not exist here: " + strings.Join(dropped, "; ") + "."
	}
	if len(notes) > 0 {
		instr += " Also: " + strings.Join(notes, "; ") + "."
	}
	return Answer[CaptureWorkOutput]{
		Data:        CaptureWorkOutput{Proposal: &CaptureProposal{Issues: issues, Consequence: res.Consequence, Effects: beforeAfter(res.WhatIfResult)}},
		Instruction: instr,
		Safety:      "Proposal only: no issue was created or changed. Filing it needs the PM's review first.",
	}, nil
}

func checkCaptureInput(in CaptureWorkInput) error {
	if strings.TrimSpace(in.Braindump) == "" {
		return Errorf(CodeInvalidInput, "braindump", "braindump is required")
	}
	if len(in.Braindump) > maxBraindumpBytes {
		return Errorf(CodeInvalidInput, "braindump", "braindump is %d bytes; keep it under %d (capture the rest in a second call)", len(in.Braindump), maxBraindumpBytes)
	}
	if len(in.Answers) > MaxCaptureAnswers {
		return Errorf(CodeInvalidInput, "answers", "at most %d answers, got %d", MaxCaptureAnswers, len(in.Answers))
	}
	n := 0
	for i, a := range in.Answers {
		if strings.TrimSpace(a.Question) == "" {
			return Errorf(CodeInvalidInput, fmt.Sprintf("answers[%d].question", i), "question is empty")
		}
		n += len(a.Question) + len(a.Answer)
	}
	if n > maxAnswersBytes {
		return Errorf(CodeInvalidInput, "answers", "answers are %d bytes together; keep them under %d", n, maxAnswersBytes)
	}
	return nil
}

// captureText is the PM's words, for finding similar issues.
func captureText(in CaptureWorkInput) string {
	var b strings.Builder
	b.WriteString(in.Braindump)
	for _, a := range in.Answers {
		b.WriteString("\n")
		b.WriteString(a.Answer)
	}
	return b.String()
}

// captureModelAnswer is the structured answer the big model gives.
type captureModelAnswer struct {
	Kind      string             `json:"kind"`
	Questions []string           `json:"questions"`
	Issues    []captureModelItem `json:"issues"`
}

type captureModelItem struct {
	Title     string  `json:"title"`
	Body      string  `json:"body"`
	Estimate  string  `json:"estimate"`
	Priority  string  `json:"priority"`
	Milestone *int64  `json:"milestone"`
	DependsOn []int64 `json:"dependsOn"`
	After     []int64 `json:"after"`
}

// captureAnswerSchema is the schema of the model's answer: questions (at
// least one) or a proposal (at least one issue), each shape saying what it
// requires; with proposalOnly the model may no longer ask. The same
// document is sent as response_format and validated here.
func captureAnswerSchema(proposalOnly bool) *models.Schema {
	item := models.Object(map[string]*models.Schema{
		"title":     {Type: "string", MinLength: models.Ptr(1), MaxLength: models.Ptr(maxTitleRunes)},
		"body":      {Type: "string", MaxLength: models.Ptr(maxBodyRunes)},
		"estimate":  models.Enum(estimateLabels...),
		"priority":  models.Enum(priorityLabels...),
		"milestone": models.Integer("id of an open milestone"),
		"dependsOn": models.ArrayOf(models.Integer("existing issue number")),
		"after":     models.ArrayOf(models.Integer("1-based position of an earlier proposed issue")),
	}, "priority", "milestone", "dependsOn", "after")
	issues := models.ArrayOf(item)
	issues.MinItems, issues.MaxItems = models.Ptr(1), models.Ptr(maxProposedIssues)
	proposal := models.Object(map[string]*models.Schema{"kind": models.Enum("proposal"), "issues": issues})
	if proposalOnly {
		return proposal
	}
	questions := models.ArrayOf(&models.Schema{Type: "string", MinLength: models.Ptr(1), MaxLength: models.Ptr(300)})
	questions.MinItems, questions.MaxItems = models.Ptr(1), models.Ptr(MaxCaptureQuestions)
	ask := models.Object(map[string]*models.Schema{"kind": models.Enum("questions"), "questions": questions})
	return models.AnyOf(ask, proposal)
}

// checkCaptureAnswer refuses what the schema lets through: questions that
// are all blanks, issues whose titles are. The router then asks once more.
func checkCaptureAnswer(raw json.RawMessage) error {
	var ans captureModelAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return err
	}
	if ans.Kind == "questions" {
		if len(cleanQuestions(ans.Questions)) == 0 {
			return errors.New("$.questions: every question is blank; ask at least one real question, or propose")
		}
		return nil
	}
	for i, it := range ans.Issues {
		if strings.TrimSpace(it.Title) == "" {
			return fmt.Errorf("$.issues[%d].title: the title is blank", i)
		}
	}
	return nil
}

func cleanQuestions(qs []string) []string {
	var out []string
	for _, q := range qs {
		q = strings.TrimSpace(q)
		if q == "" || slices.Contains(out, q) {
			continue
		}
		out = append(out, q)
		if len(out) == MaxCaptureQuestions {
			break
		}
	}
	return out
}

// proposedIssues turns the model's items into create_issue ops, keeping
// only references the mirror has: an open milestone, an existing issue,
// an earlier proposed issue. What it drops it names; notes name proposed
// issues titled like an open one.
func proposedIssues(v *projectView, items []captureModelItem) (issues []ProposedIssue, dropped, notes []string) {
	openMilestone := map[int64]bool{}
	for _, m := range v.Milestones {
		if m.State == "open" {
			openMilestone[m.ID] = true
		}
	}
	openTitle := map[string]int64{}
	for _, h := range v.Heads {
		if h.State == "open" && !h.IsPull {
			openTitle[strings.ToLower(flatLine(h.Title))] = h.Number
		}
	}
	out := make([]ProposedIssue, 0, len(items))
	for k, it := range items {
		pi := ProposedIssue{
			Op:     "create_issue",
			Title:  strings.TrimSpace(it.Title),
			Body:   strings.TrimSpace(it.Body),
			Labels: []string{it.Estimate},
		}
		if it.Priority != "" {
			pi.Labels = append(pi.Labels, it.Priority)
		}
		if n, ok := openTitle[strings.ToLower(flatLine(pi.Title))]; ok {
			// Kept (the PM decides), but said: the model was told not to.
			notes = append(notes, fmt.Sprintf("issue %d has the title of open #%d; check it is not a duplicate", k+1, n))
		}
		if it.Milestone != nil {
			if openMilestone[*it.Milestone] {
				m := *it.Milestone
				pi.Milestone = &m
			} else {
				dropped = append(dropped, fmt.Sprintf("issue %d: milestone %d (no such open milestone)", k+1, *it.Milestone))
			}
		}
		for _, n := range it.DependsOn {
			h := v.Head[n]
			switch {
			case h == nil || h.IsPull:
				dropped = append(dropped, fmt.Sprintf("issue %d: dependency on #%d (no such issue)", k+1, n))
			case !slices.Contains(pi.Deps, n):
				pi.Deps = append(pi.Deps, n)
			}
		}
		for _, j := range it.After {
			switch {
			case j < 1 || j > int64(k):
				// Only earlier items: a later or own position could close
				// a cycle, which the schedule cannot hold.
				dropped = append(dropped, fmt.Sprintf("issue %d: dependency on proposed issue %d (not an earlier one)", k+1, j))
			case !slices.Contains(pi.Deps, -j):
				pi.Deps = append(pi.Deps, -j)
			}
		}
		out = append(out, pi)
	}
	return out, dropped, notes
}

// addIssueChanges is the what-if of filing the proposal: one add_issue per
// proposed issue, numbered -1, -2, … in order, as create_issue would label
// and place it (no assignee: a new issue starts in triage).
func addIssueChanges(in scheduler.Input, issues []ProposedIssue) []scheduler.Change {
	ops := make([]Op, len(issues))
	for k, pi := range issues {
		ops[k] = pi.op()
	}
	return opsChanges(in, ops, nil, nil)
}

// similarOpenIssues finds open issues whose title or description shares
// words with the PM's text, by Postgres full-text search: any of the
// words, best match first. The model sees their titles so that it does
// not propose duplicates.
func (s *Service) similarOpenIssues(ctx context.Context, v *projectView, text string) ([]similarIssue, error) {
	query := anyWordQuery(text)
	if query == "" {
		return nil, nil
	}
	open := []int64{}
	for _, h := range v.Heads {
		if h.State == "open" && !h.IsPull {
			open = append(open, h.Number)
		}
	}
	if len(open) == 0 {
		return nil, nil
	}
	hits, _, err := store.SearchIssues(ctx, s.Pool, v.Project.ID, store.SearchQuery{Text: query, Numbers: open, Limit: maxSimilarIssues})
	if err != nil {
		return nil, fmt.Errorf("capture_work: similar issues: %w", err)
	}
	out := make([]similarIssue, 0, len(hits))
	for _, h := range hits {
		out = append(out, similarIssue{Number: h.Number, Title: h.Title})
	}
	return out, nil
}

type similarIssue struct {
	Number int64
	Title  string
}

// maxQueryWords bounds the search query built from a braindump.
const maxQueryWords = 40

// anyWordQuery makes a websearch_to_tsquery text matching any of the
// distinct words of at least three letters in text ("sso or keycloak or
// login"); Postgres drops the stop words.
func anyWordQuery(text string) string {
	var words []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len([]rune(w)) < 3 || w == "or" || seen[w] {
			continue
		}
		seen[w] = true
		words = append(words, w)
		if len(words) == maxQueryWords {
			break
		}
	}
	return strings.Join(words, " or ")
}
