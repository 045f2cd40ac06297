package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
)

// query_project is the single read tool. A view selects the shape and
// filters narrow it; every number comes from the latest snapshot (the
// scheduler's deterministic output) and the mirror. One file per view
// (query_<view>.go) builds its payload.

// QueryProjectInput is query_project's input, as in the tool contract,
// plus the optional project.
type QueryProjectInput struct {
	Project string   `json:"project,omitempty"`
	View    string   `json:"view"`
	Filters *Filters `json:"filters,omitempty"`
}

// Filters narrow a view.
type Filters struct {
	IssueID     *int64 `json:"issueId,omitempty"`
	MilestoneID *int64 `json:"milestoneId,omitempty"`
	State       string `json:"state,omitempty"`
	Assignee    string `json:"assignee,omitempty"`
	Label       string `json:"label,omitempty"`
	Query       string `json:"query,omitempty"`
	Limit       *int   `json:"limit,omitempty"`
}

// Views are the shapes query_project answers in.
var Views = []string{"focus", "issue", "milestone", "board", "runway", "calibration", "directives", "standup", "search"}

// States are the lifecycle states, in board order.
var States = []string{"diagnosis", "triage", "steeping", "in_review", "done"}

// viewFilters says which filters each view reads; the others are noted as
// ignored rather than silently dropped.
var viewFilters = map[string][]string{
	"focus":       {"milestoneId", "state", "assignee", "label", "limit"},
	"issue":       {"issueId", "limit"},
	"milestone":   {"milestoneId", "state", "assignee", "label", "limit"},
	"board":       {"milestoneId", "state", "assignee", "label", "limit"},
	"runway":      {"milestoneId", "assignee", "limit"},
	"calibration": {"assignee", "label", "limit"},
	"directives":  {"limit"},
	"standup":     {"assignee", "limit"},
	"search":      {"query", "milestoneId", "state", "assignee", "label", "limit"},
}

// Meta is what every view's payload carries besides its shape: which
// snapshot answered and what the caps cut or found empty.
type Meta struct {
	Snapshot SnapshotRef `json:"snapshot"`
	Notes    []string    `json:"notes,omitempty"`
}

// SnapshotRef names the snapshot an answer comes from.
type SnapshotRef struct {
	Version    int64     `json:"version"`
	ComputedAt time.Time `json:"computedAt"`
	// AgeMinutes is how many whole minutes ago the snapshot was stored
	// (recomputes run at least every 30 minutes, so minutes are the grain
	// an agent needs, and two calls a moment apart answer alike);
	// CoversLatest whether it includes the mirror's latest change, and
	// ChangesBehind how many changes it lacks (a recompute is on its way),
	// so an agent can tell a forecast that lags a burst or a stalled worker.
	AgeMinutes    int64 `json:"ageMinutes"`
	CoversLatest  bool  `json:"coversLatest"`
	ChangesBehind int64 `json:"changesBehind,omitempty"`
}

// snapshotRef names the view's snapshot as of now.
func (v *projectView) snapshotRef(now time.Time) SnapshotRef {
	return SnapshotRef{Version: v.Version, ComputedAt: v.Data.ComputedAt,
		AgeMinutes:    int64(max(now.Sub(v.SnapshotAt), 0) / time.Minute),
		CoversLatest:  v.SnapshotCounter >= v.Counter,
		ChangesBehind: max(v.Counter-v.SnapshotCounter, 0)}
}

// queryProjectInputSchema is what a model reads on every turn: terse, with
// enums over prose (the tool-list budget is in api's tests).
const queryProjectInputSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["view"],
  "properties": {
    ` + ProjectProperty + `,
    "view": {
      "enum": ["focus", "issue", "milestone", "board", "runway", "calibration", "directives", "standup", "search"],
      "description": "focus: now/next/later; issue: filters.issueId; milestone: cone, filters.milestoneId; board: by state; runway: all milestones; search: filters.query"
    },
    "filters": {
      "type": "object",
      "properties": {
        "issueId": {"type": "integer"},
        "milestoneId": {"type": "integer"},
        "state": {"enum": ["diagnosis", "triage", "steeping", "in_review", "done"]},
        "assignee": {"type": "string", "description": "Gitea login"},
        "label": {"type": "string"},
        "query": {"type": "string"},
        "limit": {"type": "integer", "default": 20, "description": "max 100"}
      }
    }
  }
}`

const queryProjectOutputSchema = `{
  "type": "object",
  "required": ["data", "instruction"],
  "properties": {
    "data": {
      "type": "object",
      "description": "the view's payload: focus {now, next, later}; issue {intent, derived}; milestone {due, hard, stats, cone, issues}; board {columns}; runway {milestones, capacity}; calibration {n, coldStart, globalMultiplier, byLabelBias, byPersonBias}; directives {pending (each with proposedOps: the apply_changes ops that land it, sent with its directiveId), recent}; standup {standup | message}; search {issues}. Every payload has snapshot {version, computedAt} and notes (what was cut or empty). Forecasts are ranges of dates, never points.",
      "required": ["snapshot"],
      "properties": {
        "snapshot": {"type": "object", "properties": {"version": {"type": "integer"}, "computedAt": {"type": "string"}}},
        "notes": {"type": "array", "items": {"type": "string"}}
      }
    },
    "instruction": {"type": "string"},
    "safety": {"type": "string"}
  }
}`

func (s *Service) queryProjectTool() Tool {
	return Declare(Tool{Name: "query_project", Scope: ScopeRead, Hints: Hints{ReadOnly: true, Idempotent: true},
		Description: "Read the plan from the latest forecast snapshot; dates are p10/p50/p80 ranges from " +
			"the scheduler, never your own.",
		InputSchema: json.RawMessage(queryProjectInputSchema), OutputSchema: json.RawMessage(queryProjectOutputSchema)},
		s.queryProject)
}

// query is one query_project request being answered.
type query struct {
	s    *Service
	v    *projectView
	f    Filters
	caps *Caps
}

// Query answers query_project as the tool does, for a reader inside
// CommiTea (the dashboard) that shows the same figures on its pages: no
// caller, no scope check (the caller checks access), and not counted as a
// tool call.
func (s *Service) Query(ctx context.Context, in QueryProjectInput) (Answer[any], error) {
	return s.queryProject(ctx, Caller{}, in)
}

func (s *Service) queryProject(ctx context.Context, _ Caller, in QueryProjectInput) (Answer[any], error) {
	if !slices.Contains(Views, in.View) {
		if in.View == "" {
			return Answer[any]{}, Errorf(CodeInvalidInput, "view", "view is required: one of %s", strings.Join(Views, ", "))
		}
		return Answer[any]{}, Errorf(CodeInvalidInput, "view", "unknown view %q: use one of %s", in.View, strings.Join(Views, ", "))
	}
	var f Filters
	if in.Filters != nil {
		f = *in.Filters
	}
	if f.State != "" && !slices.Contains(States, f.State) {
		return Answer[any]{}, Errorf(CodeInvalidInput, "filters.state", "unknown state %q: use one of %s", f.State, strings.Join(States, ", "))
	}
	for field, v := range map[string]*int64{"filters.issueId": f.IssueID, "filters.milestoneId": f.MilestoneID} {
		if v != nil && *v < 1 {
			return Answer[any]{}, Errorf(CodeInvalidInput, field, "%s must be a positive number, got %d", field, *v)
		}
	}
	caps, err := NewCaps(f.Limit, "filters.limit")
	if err != nil {
		return Answer[any]{}, err
	}
	p, err := s.project(in.Project)
	if err != nil {
		return Answer[any]{}, err
	}
	v, err := s.view(ctx, p)
	if err != nil {
		return Answer[any]{}, err
	}
	q := &query{s: s, v: v, f: f, caps: caps}
	q.noteIgnoredFilters(in.View)
	var a Answer[any]
	switch in.View {
	case "focus":
		a, err = q.focus()
	case "issue":
		a, err = q.issue(ctx)
	case "milestone":
		a, err = q.milestone()
	case "board":
		a, err = q.board()
	case "runway":
		a, err = q.runway()
	case "calibration":
		a, err = q.calibration()
	case "directives":
		a, err = q.directives(ctx)
	case "standup":
		a, err = q.standup(ctx)
	case "search":
		a, err = q.search(ctx)
	}
	if err != nil {
		return Answer[any]{}, err
	}
	a.Instruction = caps.Instruction(a.Instruction)
	return a, nil
}

// meta is the common part of every payload; call it last, after the caps
// have noted everything.
func (q *query) meta() Meta {
	return Meta{Snapshot: q.v.snapshotRef(time.Now()), Notes: q.caps.Notes()}
}

func (q *query) noteIgnoredFilters(view string) {
	set := map[string]bool{
		"issueId": q.f.IssueID != nil, "milestoneId": q.f.MilestoneID != nil, "state": q.f.State != "",
		"assignee": q.f.Assignee != "", "label": q.f.Label != "", "query": q.f.Query != "", "limit": q.f.Limit != nil,
	}
	var ignored []string
	for _, name := range []string{"issueId", "milestoneId", "state", "assignee", "label", "query", "limit"} {
		if set[name] && !slices.Contains(viewFilters[view], name) {
			ignored = append(ignored, name)
		}
	}
	if len(ignored) > 0 {
		q.caps.Note(fmt.Sprintf("filter %s does not apply to view %s and was ignored", strings.Join(ignored, ", "), view))
	}
}

// matches applies the list filters (milestoneId, state, assignee, label)
// to one issue.
func (q *query) matches(st *scheduler.IssueStatus, h *store.IssueHead) bool {
	if q.f.State != "" && (st == nil || string(st.State) != q.f.State) {
		return false
	}
	if q.f.MilestoneID != nil && (h == nil || h.Milestone == nil || *h.Milestone != *q.f.MilestoneID) {
		return false
	}
	if q.f.Assignee != "" && (h == nil || !slices.ContainsFunc(h.Assignees, func(a string) bool { return strings.EqualFold(a, q.f.Assignee) })) {
		return false
	}
	if q.f.Label != "" && (h == nil || !slices.ContainsFunc(h.Labels, func(l string) bool { return strings.EqualFold(l, q.f.Label) })) {
		return false
	}
	return true
}

// filterWords describes the active list filters for empty-result wording.
func (q *query) filterWords() string {
	var parts []string
	if q.f.MilestoneID != nil {
		parts = append(parts, fmt.Sprintf("milestone %d", *q.f.MilestoneID))
	}
	if q.f.State != "" {
		parts = append(parts, "state "+q.f.State)
	}
	if q.f.Assignee != "" {
		parts = append(parts, "assignee "+q.f.Assignee)
	}
	if q.f.Label != "" {
		parts = append(parts, "label "+q.f.Label)
	}
	if len(parts) == 0 {
		return ""
	}
	return " matching " + strings.Join(parts, ", ")
}

// milestoneTitle names a milestone from the forecast or the mirror.
func (q *query) milestoneTitle(id int64) string {
	if m := q.v.Milestone[id]; m != nil {
		return m.Title
	}
	for _, m := range q.v.Milestones {
		if m.ID == id {
			return m.Title
		}
	}
	return fmt.Sprintf("milestone %d", id)
}

func rangeOf(f *scheduler.IssueForecast) *Range {
	if f == nil || f.Unschedulable != "" || f.P50.IsZero() {
		return nil
	}
	return &Range{P10: day(f.P10), P50: day(f.P50), P80: day(f.P80)}
}

func assigneeOf(h *store.IssueHead) string {
	if h == nil || len(h.Assignees) == 0 {
		return ""
	}
	return h.Assignees[0]
}
