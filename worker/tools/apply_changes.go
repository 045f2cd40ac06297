package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/gitea"
)

// apply_changes is the one mutation tool: a batch of ops validated as a
// whole, applied in order through the Gitea adapter and written through to
// the mirror (input and output exactly as in the tool contract, plus
// idempotencyKey and directiveId). The handler is in apply_batch.go.

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
	// Assignees replaces the issue's assignees (set_assignees; [] leaves
	// it to nobody).
	Assignees []string `json:"assignees,omitempty"`

	present map[string]bool // fields present in the decoded JSON
}

// DestructiveOps need approved: true.
// set_assignees is one: it can take an issue away from a person.
var DestructiveOps = map[string]bool{"remove_dep": true, "close_issue": true, "remove_label": true, "set_assignees": true}

// ApplyChangesOutput is apply_changes' data.
type ApplyChangesOutput struct {
	Applied     int    `json:"applied"`
	Consequence string `json:"consequence"`
	// Effects are the milestones the quote moves, as numbers: before and
	// after, in the shape of record_directive's consequence entries.
	Effects  []BeforeAfter `json:"effects"`
	Rejected []RejectedOp  `json:"rejected,omitempty"`
	Created  []int64       `json:"created,omitempty"`
	// Stale says that the rescue option the batch came from (its
	// idempotency key names the snapshot) was computed on a mirror that
	// has moved since: the consequence above is recomputed, not the
	// option's.
	Stale string `json:"stale,omitempty"`
}

// RejectedOp names an op refused and why.
type RejectedOp struct {
	Op     int    `json:"op"` // index in ops
	Reason string `json:"reason"`
}

// applyChangesInputSchema is one flat op object rather than a oneOf of
// nine: a small model fills it more reliably, it is a third of the size in
// every prompt, and the batch validation names the op and field a wrong
// combination breaks. The op enum and which fields each op takes come
// from opOrder, opFields and opRequired below.
var applyChangesInputSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["ops"],
  "properties": {
    ` + ProjectProperty + `,
    "ops": {
      "type": "array",
      "minItems": 1,
      "maxItems": 100,
      "items": {
        "type": "object",
        "required": ["op"],
        "properties": {
          "op": {"enum": ` + jsonText(opOrder) + `, "description": ` + jsonText(opDoc()) + `},
          "issue": {"type": "integer"},
          "title": {"type": "string"},
          "body": {"type": "string"},
          "labels": {"type": "array", "items": {"type": "string"}},
          "milestone": {"type": ["integer", "null"], "description": "null: none"},
          "deps": {"type": "array", "items": {"type": "integer"}, "description": "-k: the k-th create_issue here"},
          "estimate": {"enum": ["est/xs", "est/s", "est/m", "est/l", "est/xl"]},
          "priority": {"enum": ["p/0", "p/1", "p/2", "p/3"]},
          "hard": {"type": "boolean"},
          "dependsOn": {"type": "integer"},
          "label": {"type": "string"},
          "assignees": {"type": "array", "items": {"type": "string"}}
        }
      }
    },
    "approved": {"type": "boolean", "description": "by a person; approve scope"},
    "idempotencyKey": {"type": "string", "description": "retries replay the first answer (24 h)"},
    "directiveId": {"type": "integer", "description": "the directive it lands"}
  }
}`

var applyChangesOutputSchema = `{
  "type": "object",
  "required": ["data", "instruction"],
  "properties": {
    "data": {
      "type": "object",
      "required": ["applied", "consequence"],
      "properties": {
        "applied": {"type": "integer"},
        "consequence": {"type": "string"},
        "effects": ` + effectsSchema + `,
        "rejected": {"type": "array", "items": {"type": "object", "properties": {"op": {"type": "integer"}, "reason": {"type": "string"}}}},
        "created": {"type": "array", "items": {"type": "integer"}, "description": "numbers of created issues"}
      }
    },
    "instruction": {"type": "string"},
    "safety": {"type": "string"}
  }
}`

func (s *Service) applyChangesTool() Tool {
	return Declare(Tool{Name: "apply_changes", Scope: ScopeWrite, Hints: Hints{Destructive: true, OpenWorld: true},
		Description: "Change the plan in Gitea (est/*, p/*, deadline/hard labels, native fields) in one batch, " +
			"checked whole first. Unapproved destructive ops apply nothing: NEEDS_APPROVAL, with error.preview " +
			"for a person.",
		InputSchema: json.RawMessage(applyChangesInputSchema), OutputSchema: json.RawMessage(applyChangesOutputSchema)},
		s.applyChanges)
}

// opOrder is every op, in the order the tool documents them.
var opOrder = []string{"create_issue", "set_estimate", "set_priority", "set_milestone", "set_deadline_hard",
	"add_dep", "remove_dep", "close_issue", "remove_label", "set_assignees"}

// opDoc says which fields each op takes ("set_estimate issue,estimate;
// …", optional ones marked ?, destructive ops starred).
func opDoc() string {
	docs := make([]string, len(opOrder))
	for i, op := range opOrder {
		fields := slices.Clone(opFields[op])
		for j := opRequired[op]; j < len(fields); j++ {
			fields[j] += "?"
		}
		if DestructiveOps[op] {
			op += "*"
		}
		docs[i] = op + " " + strings.Join(fields, ",")
	}
	return strings.Join(docs, "; ") + ". *: destructive"
}

// jsonText is v as JSON, for building a schema from declarations.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("tools: schema fragment: %v", err))
	}
	return string(b)
}

// opFields are the fields each op takes besides "op"; required ones first,
// up to the count in opRequired.
var opFields = map[string][]string{
	"create_issue":      {"title", "body", "labels", "milestone", "deps"},
	"set_estimate":      {"issue", "estimate"},
	"set_priority":      {"issue", "priority"},
	"set_milestone":     {"issue", "milestone"},
	"set_deadline_hard": {"milestone", "hard"},
	"add_dep":           {"issue", "dependsOn"},
	"remove_dep":        {"issue", "dependsOn"},
	"close_issue":       {"issue"},
	"remove_label":      {"issue", "label"},
	"set_assignees":     {"issue", "assignees"},
}

var opRequired = map[string]int{
	"create_issue": 2, "set_estimate": 2, "set_priority": 2, "set_milestone": 2, "set_deadline_hard": 2,
	"add_dep": 2, "remove_dep": 2, "close_issue": 1, "remove_label": 2, "set_assignees": 2,
}

// maxOps bounds one batch: a coherent change, not a migration.
const maxOps = 100

// UnmarshalJSON decodes an op strictly and remembers which fields were
// present, so "milestone": null (remove it) differs from no milestone.
func (o *Op) UnmarshalJSON(b []byte) error {
	type plain Op
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p plain
	if err := dec.Decode(&p); err != nil {
		return err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return err
	}
	*o = Op(p)
	o.present = make(map[string]bool, len(keys))
	for k := range keys {
		o.present[k] = true
	}
	return nil
}

// MarshalJSON writes the op as it came, null milestone and empty
// assignees included.
func (o Op) MarshalJSON() ([]byte, error) {
	type plain Op
	b, err := json.Marshal(plain(o))
	switch {
	case err != nil:
		return b, err
	case o.Op == "set_milestone" && o.Milestone == nil:
		return append(b[:len(b)-1], []byte(`,"milestone":null}`)...), nil
	case o.Op == "set_assignees" && len(o.Assignees) == 0:
		return append(b[:len(b)-1], []byte(`,"assignees":[]}`)...), nil
	}
	return b, nil
}

func (o Op) has(field string) bool {
	if o.present != nil {
		return o.present[field]
	}
	// An op built in Go rather than decoded: set fields are present.
	switch field {
	case "title":
		return o.Title != ""
	case "body":
		return o.Body != "" || o.Op == "create_issue"
	case "labels":
		return o.Labels != nil
	case "milestone":
		return o.Milestone != nil || o.Op == "set_milestone"
	case "deps":
		return o.Deps != nil
	case "issue":
		return o.Issue != 0
	case "estimate":
		return o.Estimate != ""
	case "priority":
		return o.Priority != ""
	case "hard":
		return o.Hard != nil
	case "dependsOn":
		return o.DependsOn != 0
	case "label":
		return o.Label != ""
	case "assignees":
		return o.Assignees != nil || o.Op == "set_assignees"
	}
	return false
}

// opsHash identifies a batch, so an idempotency key cannot be reused for a
// different one.
func opsHash(project string, ops []Op, directive *int64) string {
	h := sha256.New()
	fmt.Fprintln(h, strings.ToLower(project))
	if directive != nil {
		fmt.Fprintln(h, *directive)
	}
	_ = json.NewEncoder(h).Encode(ops)
	return hex.EncodeToString(h.Sum(nil))
}

// batch is one apply_changes call on its way through.
type batch struct {
	s          *Service
	p          store.Project
	c          Caller
	in         ApplyChangesInput
	heads      map[int64]store.IssueHead
	milestones map[int64]store.Milestone
	// assignable maps the project's people by lowercase login to their
	// spelling: those configured for it (team or capacity calendar) and
	// those assigned to any of its issues, the only ones set_assignees
	// may name.
	assignable map[string]string
	// labels are the repository's labels by lowercase name, loaded on
	// first need.
	labels map[string]gitea.Label
	// done and created are the progress: ops applied (by index) and the
	// issues create_issue ops filed.
	done    map[int]bool
	created map[int]int64
	// quote is the what-if of the ops not yet applied; its plan is held
	// with every write.
	quote worker.Quote
}

func (s *Service) applyChanges(ctx context.Context, c Caller, in ApplyChangesInput) (Answer[ApplyChangesOutput], error) {
	p, err := s.project(in.Project)
	if err != nil {
		return Answer[ApplyChangesOutput]{}, err
	}
	if in.Approved && !c.Has(ScopeApprove) {
		s.audit(ctx, p.ID, "apply_changes", c, in, "forbidden", nil)
		return Answer[ApplyChangesOutput]{}, Errorf(CodeForbidden, "approved",
			"token %q lacks the approve scope that approved: true needs; ask a person holding it to approve the batch", c.Name)
	}
	if len(in.Ops) == 0 {
		return Answer[ApplyChangesOutput]{}, Errorf(CodeInvalidInput, "ops", "ops is empty: send at least one op")
	}
	if len(in.Ops) > maxOps {
		return Answer[ApplyChangesOutput]{}, Errorf(CodeInvalidInput, "ops", "%d ops in one batch; at most %d", len(in.Ops), maxOps)
	}
	key := strings.TrimSpace(in.IdempotencyKey)
	if len(key) > 200 {
		return Answer[ApplyChangesOutput]{}, Errorf(CodeInvalidInput, "idempotencyKey", "idempotencyKey is longer than 200 characters")
	}
	b := &batch{s: s, p: p, c: c, in: in, done: map[int]bool{}, created: map[int]int64{}}
	hash := opsHash(p.FullName(), in.Ops, in.DirectiveID)
	if key != "" {
		// Calls with one key run one after the other, so the second sees
		// the first one's progress.
		unlock, err := store.LockIdempotency(ctx, s.Pool, p.ID, key)
		if err != nil {
			return Answer[ApplyChangesOutput]{}, err
		}
		defer unlock()
		prev, found, err := store.PeekIdempotency(ctx, s.Pool, p.ID, key, s.now())
		if err != nil {
			return Answer[ApplyChangesOutput]{}, err
		}
		if found && prev.OpsHash != hash {
			return Answer[ApplyChangesOutput]{}, Errorf(CodeInvalidInput, "idempotencyKey",
				"idempotencyKey %q was used for a different batch within 24 hours; use a new key for a new batch", key)
		}
		if found && prev.Status == "done" {
			var env struct {
				Data        ApplyChangesOutput `json:"data"`
				Instruction string             `json:"instruction"`
				Safety      string             `json:"safety"`
			}
			if err := json.Unmarshal(prev.Answer, &env); err != nil {
				return Answer[ApplyChangesOutput]{}, fmt.Errorf("decode the stored answer of key %q: %w", key, err)
			}
			s.audit(ctx, p.ID, "apply_changes", c, in, "replayed", env.Data)
			return Answer[ApplyChangesOutput]{Data: env.Data, Instruction: env.Instruction, Safety: env.Safety}, nil
		}
		if found {
			for _, i := range prev.Done {
				b.done[i] = true
			}
			maps.Copy(b.created, prev.Created)
		}
	}

	if err := b.load(ctx); err != nil {
		return Answer[ApplyChangesOutput]{}, err
	}
	if rejected := b.validate(); len(rejected) > 0 {
		out := ApplyChangesOutput{Applied: 0, Rejected: rejected, Effects: []BeforeAfter{},
			Consequence: "nothing applied: the batch was rejected as a whole"}
		s.audit(ctx, p.ID, "apply_changes", c, in, "rejected", out)
		return Answer[ApplyChangesOutput]{Data: out,
			Instruction: fmt.Sprintf("Nothing was written: %d op(s) were rejected (see rejected[].reason); fix or drop them and send the whole batch again.", len(rejected))}, nil
	}
	b.spellAssignees()
	if in.DirectiveID != nil {
		if _, err := store.GetDirective(ctx, s.Pool, p.ID, *in.DirectiveID); err != nil {
			return Answer[ApplyChangesOutput]{}, notFound(err, "directiveId", "directive %d is not in the ledger of %s", *in.DirectiveID, p.FullName())
		}
	}

	consequence := b.consequence(ctx)
	stale, err := b.staleOption(ctx, key)
	if err != nil {
		return Answer[ApplyChangesOutput]{}, err
	}
	if destructive := b.destructive(); len(destructive) > 0 && !in.Approved {
		s.audit(ctx, p.ID, "apply_changes", c, in, "needs_approval", map[string]any{"consequence": consequence, "destructive": destructive})
		e := Errorf(CodeNeedsApproval, "approved",
			"nothing was applied: op(s) %s are destructive and need approved: true. Consequence preview: %s. "+
				"Show this to the PM; once they approve, send the same batch with approved: true (a token with the approve scope).",
			strings.Join(destructive, ", "), consequence)
		if stale != "" {
			e.Message += " " + stale
		}
		e.Preview = consequence
		return Answer[ApplyChangesOutput]{}, e
	}
	if s.Write.Gitea == nil {
		return Answer[ApplyChangesOutput]{}, Errorf(CodeGiteaUnavailable, "", "this CommiTea has no Gitea client configured; nothing was applied")
	}
	rejected, err := b.unassignable(ctx)
	if err != nil {
		if isGiteaError(err) {
			return Answer[ApplyChangesOutput]{}, giteaError(err, "no op was applied")
		}
		return Answer[ApplyChangesOutput]{}, err
	}
	if len(rejected) > 0 {
		out := ApplyChangesOutput{Applied: 0, Rejected: rejected, Effects: []BeforeAfter{},
			Consequence: "nothing applied: the batch was rejected as a whole"}
		s.audit(ctx, p.ID, "apply_changes", c, in, "rejected", out)
		return Answer[ApplyChangesOutput]{Data: out,
			Instruction: fmt.Sprintf("Nothing was written: %d op(s) name people Gitea will not assign (see rejected[].reason); drop them or grant access and send the whole batch again.", len(rejected))}, nil
	}
	if key != "" {
		if _, err := store.ClaimIdempotency(ctx, s.Pool, p.ID, key, hash, c.Name, s.now()); err != nil {
			return Answer[ApplyChangesOutput]{}, err
		}
	}

	defer s.Invalidate(p.ID)
	for i, op := range in.Ops {
		if b.done[i] {
			continue
		}
		if err := b.apply(ctx, i, op); err != nil {
			var te *Error
			if errors.As(err, &te) {
				return Answer[ApplyChangesOutput]{}, err
			}
			if !isGiteaError(err) {
				return Answer[ApplyChangesOutput]{}, err
			}
			progress := b.progress(i, key)
			s.audit(ctx, p.ID, "apply_changes", c, in, "partial", map[string]any{"failedOp": i, "error": err.Error(), "progress": progress})
			return Answer[ApplyChangesOutput]{}, giteaError(err, progress)
		}
	}

	out := ApplyChangesOutput{Applied: len(b.done), Consequence: consequence, Effects: beforeAfter(b.quote.WhatIfResult), Stale: stale}
	for i := range in.Ops {
		if n, ok := b.created[i]; ok {
			out.Created = append(out.Created, n)
		}
	}
	instr := "Applied; the forecast recomputes in the background: read query_project (milestone or focus) in a moment to see the new plan."
	if len(out.Created) > 0 {
		instr = fmt.Sprintf("Applied; created issue(s) %s. The forecast recomputes in the background: read query_project in a moment to see the new plan.", numberList(out.Created))
	}
	if stale != "" {
		instr += " " + stale
	}
	ans := Answer[ApplyChangesOutput]{Data: out, Instruction: instr}
	if in.DirectiveID != nil {
		if err := s.markDirectiveApplied(ctx, p.ID, *in.DirectiveID, b.quote); err != nil {
			return Answer[ApplyChangesOutput]{}, err
		}
	}
	if key != "" {
		raw, err := json.Marshal(Envelope{Data: ans.Data, Instruction: ans.Instruction, Safety: ans.Safety})
		if err != nil {
			return Answer[ApplyChangesOutput]{}, fmt.Errorf("encode answer: %w", err)
		}
		if err := store.FinishIdempotency(ctx, s.Pool, p.ID, key, raw); err != nil {
			return Answer[ApplyChangesOutput]{}, err
		}
	}
	s.audit(ctx, p.ID, "apply_changes", c, in, "applied", out)
	return ans, nil
}

// staleOption says, for a batch from a rescue option (its idempotency key
// names the snapshot it was computed on), whether the mirror has moved
// since that snapshot: a newer snapshot, or changes no snapshot covers
// yet. "" when the option is current or the batch is not one.
func (b *batch) staleOption(ctx context.Context, key string) (string, error) {
	v := rescueVersion(key)
	if v == 0 || len(b.done) > 0 {
		return "", nil // not an option, or a retry after its own first writes
	}
	head, err := store.LatestPlanHead(ctx, b.s.Pool, b.p.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return "", err
	}
	counter, err := store.ChangeCounter(ctx, b.s.Pool, b.p.ID)
	if err != nil {
		return "", err
	}
	if head.Version == v && head.ChangeCounter == counter {
		return "", nil
	}
	msg := fmt.Sprintf("The rescue option was stale: it was computed on snapshot %d and the mirror has moved since "+
		"(latest snapshot %d), so the consequence is recomputed on the mirror as it is now and may differ from the option's.", v, head.Version)
	switch {
	case head.Version != v && !head.Rescued:
		msg += fmt.Sprintf(" The rescue options of snapshot %d are still being computed; query_project lists them in a few seconds.", head.Version)
	case head.Version != v:
		msg += fmt.Sprintf(" query_project lists the rescue options of snapshot %d.", head.Version)
	}
	return msg, nil
}

// isGiteaError tells a failed Gitea call (the client reports every one,
// transport failures included, as an *APIError) from a failure of our own.
func isGiteaError(err error) bool {
	var apiErr *gitea.APIError
	return errors.As(err, &apiErr)
}

// progress says exactly which ops were applied when op failed stopped the
// batch, and how to go on.
func (b *batch) progress(failed int, key string) string {
	var applied []string
	for i := range b.in.Ops {
		if b.done[i] {
			applied = append(applied, fmt.Sprintf("%d (%s)", i, b.in.Ops[i].Op))
		}
	}
	msg := fmt.Sprintf("the batch stopped at op %d (%s)", failed, b.in.Ops[failed].Op)
	if len(applied) == 0 {
		msg += "; no op was applied"
	} else {
		msg += "; applied: ops " + strings.Join(applied, ", ")
	}
	if n, ok := b.created[failed]; ok && !b.done[failed] {
		msg += fmt.Sprintf("; op %d already filed issue #%d but not all its dependencies", failed, n)
	}
	if key != "" {
		return msg + "; retry with the same idempotencyKey to continue without repeating them"
	}
	return msg + "; resend only the ops not applied (or send an idempotencyKey next time so a retry continues by itself)"
}

func numberList(ns []int64) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprintf("#%d", n)
	}
	return strings.Join(parts, ", ")
}

// load reads the mirror's issues and milestones the validation checks
// against: the mirror itself, not the cached snapshot, so a write sees the
// writes before it.
func (b *batch) load(ctx context.Context) error {
	heads, err := store.IssueHeads(ctx, b.s.Pool, b.p.ID)
	if err != nil {
		return err
	}
	ms, err := store.Milestones(ctx, b.s.Pool, b.p.ID)
	if err != nil {
		return err
	}
	b.heads = make(map[int64]store.IssueHead, len(heads))
	for _, h := range heads {
		b.heads[h.Number] = h
	}
	b.milestones = make(map[int64]store.Milestone, len(ms))
	for _, m := range ms {
		b.milestones[m.ID] = m
	}
	caps, err := store.CapacityCalendar(ctx, b.s.Pool, b.p.ID)
	if err != nil {
		return err
	}
	b.assignable = map[string]string{}
	add := func(login string) {
		if login = strings.TrimSpace(login); login != "" {
			if _, ok := b.assignable[strings.ToLower(login)]; !ok {
				b.assignable[strings.ToLower(login)] = login
			}
		}
	}
	for _, h := range heads {
		for _, a := range h.Assignees {
			add(a)
		}
	}
	for _, p := range b.s.engine().People {
		add(p.Login)
	}
	for _, c := range caps {
		add(c.Login)
	}
	return nil
}

// spellAssignees writes every set_assignees login as the project spells
// it (Gitea matches logins case-insensitively and answers its own
// spelling, which the quote must use too). Validation has passed.
func (b *batch) spellAssignees() {
	for i, op := range b.in.Ops {
		if op.Op != "set_assignees" {
			continue
		}
		spelled := make([]string, len(op.Assignees))
		for k, login := range op.Assignees {
			spelled[k] = b.assignable[strings.ToLower(strings.TrimSpace(login))]
		}
		b.in.Ops[i].Assignees = spelled
	}
}

// unassignable asks Gitea whether each login set_assignees adds may be
// assigned there (write access to the repository, Gitea's rule for
// assignees) and returns the rejections, so a batch Gitea would stop
// half-way is refused before anything is written.
func (b *batch) unassignable(ctx context.Context) ([]RejectedOp, error) {
	var out []RejectedOp
	checked := map[string]string{}
	for i, op := range b.in.Ops {
		if op.Op != "set_assignees" || b.done[i] {
			continue
		}
		for _, login := range op.Assignees {
			if slices.Contains(b.heads[op.Issue].Assignees, login) {
				continue // already on it: Gitea keeps them
			}
			perm, seen := checked[login]
			if !seen {
				var err error
				if perm, err = b.gitea().RepoPermission(ctx, b.p.Owner, b.p.Name, login); err != nil {
					if !errors.Is(err, gitea.ErrNotFound) {
						return nil, err
					}
					perm = gitea.AccessNone
				}
				checked[login] = perm
			}
			if perm != gitea.AccessWrite && perm != gitea.AccessAdmin && perm != gitea.AccessOwner {
				out = append(out, RejectedOp{Op: i, Reason: fmt.Sprintf("%s: Gitea does not let %s be assigned in %s (permission %q; assignees need write access)",
					CodeInvalidInput, login, b.p.FullName(), perm)})
				break
			}
		}
	}
	return out, nil
}

// validate checks every op (fields, namespaces, existence in the mirror)
// and returns the rejections; nothing is written when there is one.
func (b *batch) validate() []RejectedOp {
	var out []RejectedOp
	for i, op := range b.in.Ops {
		if reason := b.validateOp(i, op); reason != "" {
			out = append(out, RejectedOp{Op: i, Reason: reason})
		}
	}
	return out
}

func (b *batch) validateOp(i int, op Op) string {
	fields, known := opFields[op.Op]
	if !known {
		return fmt.Sprintf("%s: unknown op %q; one of %s", CodeInvalidInput, op.Op, strings.Join(opOrder, ", "))
	}
	for _, f := range fields[:opRequired[op.Op]] {
		if !op.has(f) {
			return fmt.Sprintf("%s: %s needs %s", CodeInvalidInput, op.Op, f)
		}
	}
	for _, f := range slices.Sorted(maps.Keys(op.present)) {
		if f != "op" && !slices.Contains(fields, f) {
			return fmt.Sprintf("%s: %s takes no %s (it takes %s)", CodeInvalidInput, op.Op, f, strings.Join(fields, ", "))
		}
	}
	issue := func(n int64, what string) string {
		h, ok := b.heads[n]
		switch {
		case n <= 0:
			return fmt.Sprintf("%s: %s must be an issue number", CodeInvalidInput, what)
		case !ok:
			return fmt.Sprintf("%s: issue #%d is not in the mirror of %s", CodeNotFound, n, b.p.FullName())
		case h.IsPull:
			return fmt.Sprintf("%s: #%d is a pull request; CommiTea plans issues", CodeInvalidInput, n)
		}
		return ""
	}
	milestone := func(id int64) string {
		if _, ok := b.milestones[id]; !ok {
			return fmt.Sprintf("%s: milestone %d is not in the mirror of %s", CodeNotFound, id, b.p.FullName())
		}
		return ""
	}
	switch op.Op {
	case "create_issue":
		if strings.TrimSpace(op.Title) == "" {
			return CodeInvalidInput + ": create_issue needs a non-empty title"
		}
		scopes := map[string]bool{}
		for _, l := range op.Labels {
			canon, reason := canonicalLabel(l)
			if reason != "" {
				return reason
			}
			if sc := labelScope(canon); scopes[sc] {
				return fmt.Sprintf("%s: more than one %s* label; an issue carries one", CodeInvalidInput, sc)
			}
			scopes[labelScope(canon)] = true
		}
		if op.Milestone != nil {
			if r := milestone(*op.Milestone); r != "" {
				return r
			}
		}
		earlier := len(createIndexes(b.in.Ops[:i]))
		for _, d := range op.Deps {
			if d < 0 {
				// -k: the k-th create_issue of this batch, as capture_work
				// proposes dependencies among its own items.
				if -d > int64(earlier) {
					return fmt.Sprintf("%s: deps %d names the %d. create_issue of this batch, but only %d come before this one",
						CodeInvalidInput, d, -d, earlier)
				}
				continue
			}
			if r := issue(d, "deps"); r != "" {
				return r
			}
		}
	case "set_estimate", "set_priority", "remove_label":
		if r := issue(op.Issue, "issue"); r != "" {
			return r
		}
		name := op.Estimate + op.Priority + op.Label
		canon, reason := canonicalLabel(name)
		if reason != "" {
			return reason
		}
		want := map[string]string{"set_estimate": "est/", "set_priority": "p/"}[op.Op]
		if want != "" && labelScope(canon) != want {
			return fmt.Sprintf("%s: %s takes a %s* label, not %q", CodeInvalidInput, op.Op, want, name)
		}
	case "set_milestone":
		if r := issue(op.Issue, "issue"); r != "" {
			return r
		}
		if op.Milestone != nil {
			if r := milestone(*op.Milestone); r != "" {
				return r
			}
		}
	case "set_deadline_hard":
		if op.Milestone == nil {
			return CodeInvalidInput + ": set_deadline_hard needs milestone"
		}
		if r := milestone(*op.Milestone); r != "" {
			return r
		}
	case "add_dep", "remove_dep":
		if r := issue(op.Issue, "issue"); r != "" {
			return r
		}
		if r := issue(op.DependsOn, "dependsOn"); r != "" {
			return r
		}
		if op.Issue == op.DependsOn {
			return fmt.Sprintf("%s: an issue cannot depend on itself (#%d)", CodeInvalidInput, op.Issue)
		}
	case "close_issue":
		if r := issue(op.Issue, "issue"); r != "" {
			return r
		}
	case "set_assignees":
		if r := issue(op.Issue, "issue"); r != "" {
			return r
		}
		for _, login := range op.Assignees {
			if _, ok := b.assignable[strings.ToLower(strings.TrimSpace(login))]; !ok {
				return fmt.Sprintf("%s: %q is neither configured for %s nor assigned to any of its issues; "+
					"CommiTea assigns only the project's own people", CodeInvalidInput, login, b.p.FullName())
			}
		}
	}
	return ""
}

// destructive lists the destructive ops of the batch, as "index (op)".
func (b *batch) destructive() []string {
	var out []string
	for i, op := range b.in.Ops {
		if DestructiveOps[op.Op] {
			out = append(out, fmt.Sprintf("%d (%s)", i, op.Op))
		}
	}
	return out
}

// consequence is the engine's what-if of the ops not yet applied, in one
// line; a what-if that cannot run says why instead of failing the batch.
func (b *batch) consequence(ctx context.Context) string {
	q, err := b.s.whatIf(ctx, b.p.ID, func(in scheduler.Input) []scheduler.Change {
		return opsChanges(in, b.in.Ops, b.done, b.created)
	})
	if err != nil {
		b.s.Log.WarnContext(ctx, "apply_changes what-if", slog.String("project", b.p.FullName()), slog.Any("error", err))
		return "consequence not computed (" + err.Error() + ")"
	}
	b.quote = q
	return q.Consequence
}

// QuoteOps is the what-if apply_changes quotes for a batch of ops on the
// project ("" names the only one) as it stands now: the consequence it
// would answer, with the whole forecasts it compares. Nothing is validated
// or written; callers that propose batches (and tests) quote them with it.
func (s *Service) QuoteOps(ctx context.Context, project string, ops []Op) (worker.Quote, error) {
	p, err := s.project(project)
	if err != nil {
		return worker.Quote{}, err
	}
	return s.whatIf(ctx, p.ID, func(in scheduler.Input) []scheduler.Change { return opsChanges(in, ops, nil, nil) })
}

// opsChanges turns ops into the engine's hypothetical changes, leaving out
// ops already done or filed (a retry) and those the engine's input makes
// moot (a dependency that is not there to remove, an issue the engine does
// not plan). A dependency -k on a create_issue already filed names the
// issue it filed.
func opsChanges(in scheduler.Input, ops []Op, done map[int]bool, created map[int]int64) []scheduler.Change {
	issues := make(map[int64]*scheduler.Issue, len(in.Issues))
	for k := range in.Issues {
		issues[in.Issues[k].Number] = &in.Issues[k]
	}
	milestones := map[int64]bool{}
	for _, m := range in.Milestones {
		milestones[m.ID] = true
	}
	var out []scheduler.Change
	creates := createIndexes(ops) // proposed issues are -1, -2, ... in the order filed
	proposed := map[int64]bool{}
	keys := proposalDrawKeys(ops)
	for i, op := range ops {
		if done[i] || created[i] != 0 {
			continue
		}
		is := issues[op.Issue]
		switch op.Op {
		case "create_issue":
			canon := make([]string, 0, len(op.Labels))
			for _, l := range op.Labels {
				if c, reason := canonicalLabel(l); reason == "" {
					canon = append(canon, c)
				}
			}
			size, priority, hard := scheduler.ParseLabels(canon)
			placeholder := -int64(slices.Index(creates, i) + 1)
			n := &scheduler.Issue{Number: placeholder, Title: op.Title, Estimate: size, Priority: priority, HardDeadline: hard,
				Labels: canon, DrawKey: keys[i]}
			if op.Milestone != nil && milestones[*op.Milestone] {
				n.Milestone = *op.Milestone
			}
			for _, d := range op.Deps {
				if d < 0 && -d <= int64(len(creates)) {
					if filed := created[creates[-d-1]]; filed != 0 {
						d = filed
					}
				}
				if issues[d] != nil || proposed[d] {
					n.DependsOn = append(n.DependsOn, d)
				}
			}
			proposed[placeholder] = true
			out = append(out, scheduler.Change{Kind: scheduler.AddIssue, NewIssue: n})
		case "set_estimate":
			if is != nil {
				out = append(out, scheduler.Change{Kind: scheduler.SetEstimate, Issue: op.Issue,
					Estimate: scheduler.Size(strings.TrimPrefix(strings.ToLower(op.Estimate), "est/"))})
			}
		case "set_priority":
			if is != nil {
				out = append(out, scheduler.Change{Kind: scheduler.SetPriority, Issue: op.Issue,
					Priority: int(strings.ToLower(op.Priority)[2] - '0')})
			}
		case "set_milestone":
			if is != nil {
				var m int64
				if op.Milestone != nil && milestones[*op.Milestone] {
					m = *op.Milestone
				}
				out = append(out, scheduler.Change{Kind: scheduler.SetMilestone, Issue: op.Issue, Milestone: m})
			}
		case "set_deadline_hard":
			if op.Milestone != nil && milestones[*op.Milestone] && op.Hard != nil {
				out = append(out, scheduler.Change{Kind: scheduler.SetHardness, Milestone: *op.Milestone, Hard: *op.Hard})
			}
		case "add_dep":
			if is != nil && issues[op.DependsOn] != nil {
				out = append(out, scheduler.Change{Kind: scheduler.AddDep, Issue: op.Issue, DependsOn: op.DependsOn})
			}
		case "remove_dep":
			if is != nil && slices.Contains(is.DependsOn, op.DependsOn) {
				out = append(out, scheduler.Change{Kind: scheduler.RemoveDep, Issue: op.Issue, DependsOn: op.DependsOn})
			}
		case "close_issue":
			if is != nil && is.State != scheduler.Done {
				out = append(out, scheduler.Change{Kind: scheduler.CloseIssue, Issue: op.Issue})
			}
		case "set_assignees":
			if is != nil {
				out = append(out, scheduler.Change{Kind: scheduler.SetAssignees, Issue: op.Issue, Assignees: slices.Clone(op.Assignees)})
			}
		case "remove_label":
			canon, _ := canonicalLabel(op.Label)
			if is != nil && slices.ContainsFunc(is.Labels, func(l string) bool { return strings.EqualFold(strings.TrimSpace(l), canon) }) {
				out = append(out, scheduler.Change{Kind: scheduler.RemoveLabel, Issue: op.Issue, Label: canon})
			}
		}
	}
	return out
}

// proposalDrawKeys are the draw keys of the batch's create_issue ops, by
// op index: the same in the quote and for the issue Gitea files, so it
// keeps the draws it was quoted with.
func proposalDrawKeys(ops []Op) map[int]int64 {
	out := map[int]int64{}
	seen := map[[2]string]int{}
	for i, op := range ops {
		if op.Op != "create_issue" {
			continue
		}
		k := [2]string{op.Title, op.Body}
		out[i] = scheduler.ProposalDrawKey(op.Title, op.Body, seen[k])
		seen[k]++
	}
	return out
}

// createIndexes lists the positions of the create_issue ops; a dependency
// -k names the issue the k-th of them files.
func createIndexes(ops []Op) []int {
	var out []int
	for i, op := range ops {
		if op.Op == "create_issue" {
			out = append(out, i)
		}
	}
	return out
}
