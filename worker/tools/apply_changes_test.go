package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
	"github.com/commitea/commitea/worker/tools"
)

// The recorded repository ceo/demo: #1 closed (est/S, p/1, deadline/hard,
// milestone 1 "v1.0"), #2 and #3 open, #2 depends on #1 and #3, #4 a merged
// pull request; labels est/S (1), est/M (2), p/1 (3), deadline/hard (4).

func TestApplyChangesEveryOp(t *testing.T) {
	t.Parallel()
	s := newWriteStack(t)
	ctx := context.Background()
	before := s.counter(t)

	t.Run("create_issue", func(t *testing.T) {
		out := s.apply(t, writer, `{"ops":[{"op":"create_issue","title":"Export as CSV","body":"Users ask for CSV.","labels":["EST/m","p/1"],"milestone":1,"deps":[3]}]}`)
		if out.Applied != 1 || len(out.Created) != 1 || out.Consequence == "" {
			t.Fatalf("answer = %+v", out)
		}
		n := out.Created[0]
		is := s.issue(t, n)
		// est/M matched case-insensitively: the existing label, no duplicate.
		if got := labelNames(is.Labels); !slices.Equal(got, []string{"est/M", "p/1"}) {
			t.Fatalf("labels of #%d = %v", n, got)
		}
		if is.Milestone == nil || is.Milestone.ID != 1 || is.Title != "Export as CSV" {
			t.Fatalf("created issue = %+v", is)
		}
		deps, err := s.client.ListDependencies(ctx, "ceo", "demo", n)
		if err != nil || len(deps) != 1 || deps[0].Number != 3 {
			t.Fatalf("deps of #%d = %v, %v", n, deps, err)
		}
		// Written through to the mirror at once.
		m := s.mirrorIssue(t, n)
		if m.Title != "Export as CSV" || m.Milestone == nil || *m.Milestone != 1 {
			t.Fatalf("mirror row = %+v", m)
		}
		dependsOn, _, err := store.IssueDependencies(ctx, s.pool, s.p.ID, n)
		if err != nil || len(dependsOn) != 1 || dependsOn[0].DependsOn != 3 {
			t.Fatalf("mirror deps = %v, %v", dependsOn, err)
		}
	})

	t.Run("create_issue/new-label-created-lowercase-exclusive", func(t *testing.T) {
		out := s.apply(t, writer, `{"ops":[{"op":"create_issue","title":"Huge migration","body":"","labels":["est/XL"]}]}`)
		ls, err := s.client.ListLabels(ctx, "ceo", "demo")
		if err != nil {
			t.Fatal(err)
		}
		k := slices.IndexFunc(ls, func(l gitea.Label) bool { return l.Name == "est/xl" })
		if k < 0 || !ls[k].Exclusive {
			t.Fatalf("labels = %+v", ls)
		}
		if got := labelNames(s.issue(t, out.Created[0]).Labels); !slices.Equal(got, []string{"est/xl"}) {
			t.Fatalf("labels = %v", got)
		}
		// The mirror knows the new label too.
		mirror, err := store.LoadMirror(ctx, s.pool, s.p.ID)
		if err != nil || !slices.ContainsFunc(mirror.Labels, func(l store.Label) bool { return l.Name == "est/xl" && l.Exclusive }) {
			t.Fatalf("mirror labels = %+v, %v", mirror.Labels, err)
		}
	})

	t.Run("set_estimate/replaces", func(t *testing.T) {
		s.apply(t, writer, `{"ops":[{"op":"set_estimate","issue":2,"estimate":"est/s"}]}`)
		s.apply(t, writer, `{"ops":[{"op":"set_estimate","issue":2,"estimate":"est/l"}]}`)
		if got := labelNames(s.issue(t, 2).Labels); !slices.Equal(got, []string{"est/l"}) {
			t.Fatalf("labels of #2 = %v", got)
		}
		if got := s.mirrorIssue(t, 2).Labels; !slices.Equal(got, []string{"est/l"}) {
			t.Fatalf("mirror labels of #2 = %v", got)
		}
	})

	t.Run("set_priority/replaces-even-a-non-exclusive-label", func(t *testing.T) {
		// Someone made p/3 by hand without the exclusive flag: CommiTea
		// still leaves one p/* label.
		if _, err := s.client.CreateLabel(ctx, "ceo", "demo", gitea.CreateLabelOptions{Name: "p/3", Color: "#cccccc"}); err != nil {
			t.Fatal(err)
		}
		s.apply(t, writer, `{"ops":[{"op":"set_priority","issue":2,"priority":"p/3"}]}`)
		s.apply(t, writer, `{"ops":[{"op":"set_priority","issue":2,"priority":"p/0"}]}`)
		if got := labelNames(s.issue(t, 2).Labels); !slices.Equal(got, []string{"est/l", "p/0"}) {
			t.Fatalf("labels of #2 = %v", got)
		}
	})

	t.Run("set_milestone/and-null-removes", func(t *testing.T) {
		s.apply(t, writer, `{"ops":[{"op":"set_milestone","issue":3,"milestone":1}]}`)
		if is := s.issue(t, 3); is.Milestone == nil || is.Milestone.ID != 1 {
			t.Fatalf("milestone of #3 = %+v", is.Milestone)
		}
		s.apply(t, writer, `{"ops":[{"op":"set_milestone","issue":3,"milestone":null}]}`)
		if is := s.issue(t, 3); is.Milestone != nil {
			t.Fatalf("milestone of #3 = %+v", is.Milestone)
		}
		if m := s.mirrorIssue(t, 3); m.Milestone != nil {
			t.Fatalf("mirror milestone of #3 = %v", *m.Milestone)
		}
	})

	t.Run("set_deadline_hard/only-that-line", func(t *testing.T) {
		desc := func() string {
			ms, err := s.client.ListMilestones(ctx, "ceo", "demo")
			if err != nil || len(ms) != 1 {
				t.Fatalf("milestones = %v, %v", ms, err)
			}
			return ms[0].Description
		}
		s.apply(t, writer, `{"ops":[{"op":"set_deadline_hard","milestone":1,"hard":true}]}`)
		if got := desc(); got != "first release\ndeadline: hard" {
			t.Fatalf("description = %q", got)
		}
		s.fake.ResetRequests()
		s.apply(t, writer, `{"ops":[{"op":"set_deadline_hard","milestone":1,"hard":true}]}`)
		if w := s.writes(); len(w) != 0 {
			t.Fatalf("an already hard deadline was edited again: %v", w)
		}
		ms, err := store.Milestones(ctx, s.pool, s.p.ID)
		if err != nil || ms[0].Description != "first release\ndeadline: hard" {
			t.Fatalf("mirror milestone = %+v, %v", ms, err)
		}
		s.apply(t, writer, `{"ops":[{"op":"set_deadline_hard","milestone":1,"hard":false}]}`)
		if got := desc(); got != "first release" {
			t.Fatalf("description = %q", got)
		}
	})

	t.Run("add_dep/idempotent", func(t *testing.T) {
		s.apply(t, writer, `{"ops":[{"op":"add_dep","issue":3,"dependsOn":5}]}`)
		// Again: the dependency exists, which counts as done.
		out := s.apply(t, writer, `{"ops":[{"op":"add_dep","issue":3,"dependsOn":5}]}`)
		if out.Applied != 1 {
			t.Fatalf("answer = %+v", out)
		}
		deps, err := s.client.ListDependencies(ctx, "ceo", "demo", 3)
		if err != nil || len(deps) != 1 || deps[0].Number != 5 {
			t.Fatalf("deps of #3 = %v, %v", deps, err)
		}
	})

	t.Run("add_dep/forgejo-500-already-exists", func(t *testing.T) {
		// The dependency appears between the check and the write: Forgejo
		// answers 500 "issue dependency does already exist", counted as done.
		s.fake.InjectFault(giteafake.Fault{Method: http.MethodPost, PathPrefix: "/repos/ceo/demo/issues/3/dependencies",
			Status: http.StatusInternalServerError, Body: `{"message":"issue dependency does already exist","url":""}`})
		out := s.apply(t, writer, `{"ops":[{"op":"add_dep","issue":3,"dependsOn":6}]}`)
		if out.Applied != 1 {
			t.Fatalf("answer = %+v", out)
		}
	})

	t.Run("remove_dep/approved", func(t *testing.T) {
		out := s.apply(t, approver, `{"ops":[{"op":"remove_dep","issue":3,"dependsOn":5}],"approved":true}`)
		if out.Applied != 1 {
			t.Fatalf("answer = %+v", out)
		}
		deps, err := s.client.ListDependencies(ctx, "ceo", "demo", 3)
		if err != nil || slices.ContainsFunc(deps, func(d gitea.Issue) bool { return d.Number == 5 }) {
			t.Fatalf("deps of #3 = %v, %v", deps, err)
		}
		dependsOn, _, _ := store.IssueDependencies(ctx, s.pool, s.p.ID, 3)
		if slices.ContainsFunc(dependsOn, func(d store.Dependency) bool { return d.DependsOn == 5 }) {
			t.Fatalf("mirror still has 3 -> 5: %v", dependsOn)
		}
	})

	t.Run("remove_label/approved", func(t *testing.T) {
		s.apply(t, approver, `{"ops":[{"op":"remove_label","issue":2,"label":"P/0"}],"approved":true}`)
		if got := labelNames(s.issue(t, 2).Labels); !slices.Equal(got, []string{"est/l"}) {
			t.Fatalf("labels of #2 = %v", got)
		}
		// A label the issue does not carry: done, nothing sent.
		s.fake.ResetRequests()
		out := s.apply(t, approver, `{"ops":[{"op":"remove_label","issue":2,"label":"deadline/hard"}],"approved":true}`)
		if out.Applied != 1 || len(s.writes()) != 0 {
			t.Fatalf("answer = %+v, writes %v", out, s.writes())
		}
	})

	t.Run("close_issue/approved", func(t *testing.T) {
		s.apply(t, approver, `{"ops":[{"op":"close_issue","issue":3}],"approved":true}`)
		if is := s.issue(t, 3); is.State != "closed" {
			t.Fatalf("state of #3 = %s", is.State)
		}
		if m := s.mirrorIssue(t, 3); m.State != "closed" {
			t.Fatalf("mirror state of #3 = %s", m.State)
		}
	})

	if after := s.counter(t); after <= before {
		t.Fatalf("change counter %d -> %d: the writes did not mark the mirror changed", before, after)
	}
	checkAcceptedByGitea(t, s.fake.Requests())
	// Every call was audited with its caller.
	log, err := store.AuditLog(ctx, s.pool, s.p.ID, 100)
	if err != nil || len(log) < 15 {
		t.Fatalf("audit log = %d entries, %v", len(log), err)
	}
	if log[0].Caller != "pm" || log[0].Tool != "apply_changes" || log[0].Outcome != "applied" {
		t.Fatalf("latest audit entry = %+v", log[0])
	}
}

func TestApplyChangesRejectsWithoutWriting(t *testing.T) {
	t.Parallel()
	s := newWriteStack(t)
	before := s.counter(t)
	cases := []struct {
		name, input string
		rejected    []int
		reason      string
	}{
		{"foreign label", `{"ops":[{"op":"set_estimate","issue":2,"estimate":"est/m"},{"op":"create_issue","title":"x","body":"","labels":["bug"]}]}`, []int{1}, "NAMESPACE_FORBIDDEN"},
		{"remove foreign label", `{"ops":[{"op":"remove_label","issue":2,"label":"needs-design"}],"approved":true}`, []int{0}, "NAMESPACE_FORBIDDEN"},
		{"unknown estimate", `{"ops":[{"op":"set_estimate","issue":2,"estimate":"est/huge"}]}`, []int{0}, "not an estimate"},
		{"priority as estimate", `{"ops":[{"op":"set_estimate","issue":2,"estimate":"p/1"}]}`, []int{0}, "takes a est/* label"},
		{"two estimates", `{"ops":[{"op":"create_issue","title":"x","body":"","labels":["est/s","est/m"]}]}`, []int{0}, "more than one est/*"},
		{"unknown issue", `{"ops":[{"op":"close_issue","issue":999}],"approved":true}`, []int{0}, "NOT_FOUND: issue #999"},
		{"pull request", `{"ops":[{"op":"set_priority","issue":4,"priority":"p/1"}]}`, []int{0}, "pull request"},
		{"unknown milestone", `{"ops":[{"op":"set_milestone","issue":2,"milestone":42}]}`, []int{0}, "milestone 42"},
		{"unknown dep", `{"ops":[{"op":"create_issue","title":"x","body":"","deps":[77]}]}`, []int{0}, "#77"},
		{"self dep", `{"ops":[{"op":"add_dep","issue":2,"dependsOn":2}]}`, []int{0}, "itself"},
		{"proposal dep ahead", `{"ops":[{"op":"create_issue","title":"a","body":""},{"op":"create_issue","title":"b","body":"","deps":[-2]}]}`, []int{1}, "only 1 come before"},
		{"proposal dep on itself", `{"ops":[{"op":"create_issue","title":"a","body":"","deps":[-1]}]}`, []int{0}, "only 0 come before"},
		{"missing field", `{"ops":[{"op":"set_milestone","issue":2}]}`, []int{0}, "needs milestone"},
		{"foreign field", `{"ops":[{"op":"set_estimate","issue":2,"estimate":"est/s","label":"p/1"}]}`, []int{0}, "takes no label"},
		{"unknown op", `{"ops":[{"op":"delete_repo"}]}`, []int{0}, "unknown op"},
		{"empty title", `{"ops":[{"op":"create_issue","title":"  ","body":""}]}`, []int{0}, "non-empty title"},
		{"several", `{"ops":[{"op":"add_dep","issue":2,"dependsOn":3},{"op":"set_priority","issue":2,"priority":"urgent"},{"op":"close_issue","issue":0}],"approved":true}`, []int{1, 2}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env, terr := s.call(t, approver, "apply_changes", c.input)
			if terr != nil {
				t.Fatalf("error %v; want rejections", terr)
			}
			out := env.Data.(tools.ApplyChangesOutput)
			var idx []int
			for _, r := range out.Rejected {
				idx = append(idx, r.Op)
			}
			if out.Applied != 0 || !slices.Equal(idx, c.rejected) {
				t.Fatalf("answer = %+v", out)
			}
			if !strings.Contains(out.Rejected[0].Reason, c.reason) {
				t.Fatalf("reason = %q, want %q", out.Rejected[0].Reason, c.reason)
			}
			if !strings.Contains(env.Instruction, "Nothing was written") {
				t.Fatalf("instruction = %q", env.Instruction)
			}
		})
	}
	if w := s.writes(); len(w) != 0 {
		t.Fatalf("rejected batches wrote to Gitea: %v", w)
	}
	if after := s.counter(t); after != before {
		t.Fatalf("rejected batches moved the change counter %d -> %d", before, after)
	}

	errs := []struct {
		name, input, code, field string
		caller                   tools.Caller
	}{
		{"no ops", `{"ops":[]}`, tools.CodeInvalidInput, "ops", writer},
		{"approved without the approve scope", `{"ops":[{"op":"close_issue","issue":2}],"approved":true}`, tools.CodeForbidden, "approved", writer},
		{"op field of the wrong type", `{"ops":[{"op":"close_issue","issue":"two"}]}`, tools.CodeInvalidInput, "ops.issue", writer},
		{"unknown directive", `{"ops":[{"op":"add_dep","issue":2,"dependsOn":3}],"directiveId":12345}`, tools.CodeNotFound, "directiveId", writer},
		{"reader", `{"ops":[{"op":"add_dep","issue":2,"dependsOn":3}]}`, tools.CodeForbidden, "", tools.Caller{Name: "r", Scopes: []string{tools.ScopeRead}}},
	}
	for _, c := range errs {
		t.Run(c.name, func(t *testing.T) {
			_, terr := s.call(t, c.caller, "apply_changes", c.input)
			if terr == nil || terr.Code != c.code || terr.Field != c.field {
				t.Fatalf("error = %v, want %s on %q", terr, c.code, c.field)
			}
		})
	}
	if w := s.writes(); len(w) != 0 {
		t.Fatalf("refused calls wrote to Gitea: %v", w)
	}
}

func TestApplyChangesDestructiveNeedsApproval(t *testing.T) {
	t.Parallel()
	s := newWriteStack(t)
	before := s.counter(t)
	batch := `{"ops":[{"op":"set_estimate","issue":3,"estimate":"est/m"},{"op":"close_issue","issue":3},{"op":"remove_dep","issue":2,"dependsOn":3}]`
	_, terr := s.call(t, approver, "apply_changes", batch+`}`)
	if terr == nil || terr.Code != tools.CodeNeedsApproval {
		t.Fatalf("error = %v, want NEEDS_APPROVAL", terr)
	}
	for _, want := range []string{"1 (close_issue)", "2 (remove_dep)", "Consequence preview:", "approved: true"} {
		if !strings.Contains(terr.Message, want) {
			t.Fatalf("message lacks %q: %s", want, terr.Message)
		}
	}
	if w := s.writes(); len(w) != 0 {
		t.Fatalf("an unapproved destructive batch wrote to Gitea: %v", w)
	}
	if is := s.issue(t, 3); is.State != "open" || len(is.Labels) != 0 {
		t.Fatalf("#3 changed: %+v", is)
	}
	if after := s.counter(t); after != before {
		t.Fatalf("the change counter moved %d -> %d", before, after)
	}

	// The same batch approved, sent three times with one key (twice at
	// once), applies once and answers the same each time.
	var (
		wg      sync.WaitGroup
		answers = make([]string, 3)
		errs    = make([]*tools.Error, 3)
	)
	send := func(k int) {
		env, terr := s.call(t, approver, "apply_changes", batch+`,"approved":true,"idempotencyKey":"batch-7"}`)
		errs[k] = terr
		b, _ := json.Marshal(env)
		answers[k] = string(b)
	}
	send(0)
	wg.Add(2)
	for k := 1; k < 3; k++ {
		go func() { defer wg.Done(); send(k) }()
	}
	wg.Wait()
	for k := range 3 {
		if errs[k] != nil {
			t.Fatalf("call %d: %v", k, errs[k])
		}
		if answers[k] != answers[0] {
			t.Fatalf("answer %d differs:\n%s\n%s", k, answers[k], answers[0])
		}
	}
	if !strings.Contains(answers[0], `"applied":3`) {
		t.Fatalf("answer = %s", answers[0])
	}
	count := func(method, path string) int {
		n := 0
		for _, r := range s.writes() {
			if r.Method == method && r.Path == path {
				n++
			}
		}
		return n
	}
	if n := count("PATCH", "/repos/ceo/demo/issues/3"); n != 1 {
		t.Fatalf("close sent %d times", n)
	}
	if n := count("POST", "/repos/ceo/demo/issues/3/labels"); n != 1 {
		t.Fatalf("set_estimate sent %d times", n)
	}
	if n := count("DELETE", "/repos/ceo/demo/issues/2/dependencies"); n != 1 {
		t.Fatalf("remove_dep sent %d times", n)
	}
	// The key cannot carry another batch.
	_, terr = s.call(t, approver, "apply_changes", `{"ops":[{"op":"close_issue","issue":2}],"approved":true,"idempotencyKey":"batch-7"}`)
	if terr == nil || terr.Code != tools.CodeInvalidInput || terr.Field != "idempotencyKey" {
		t.Fatalf("reused key: %v", terr)
	}
	checkAcceptedByGitea(t, s.fake.Requests())
}

func TestApplyChangesGiteaFailureMidBatch(t *testing.T) {
	t.Parallel()
	s := newWriteStack(t)
	batch := `{"ops":[{"op":"set_estimate","issue":2,"estimate":"est/s"},{"op":"create_issue","title":"Docs","body":"","deps":[2]},{"op":"set_priority","issue":3,"priority":"p/1"}],"idempotencyKey":"k-fail"}`
	// Creating the issue works but adding its dependency keeps failing.
	s.fake.InjectFault(giteafake.Fault{Method: http.MethodGet, PathPrefix: "/repos/ceo/demo/issues/5/dependencies", Status: http.StatusServiceUnavailable, Times: 4}) // every attempt of one call
	_, terr := s.call(t, writer, "apply_changes", batch)
	if terr == nil || terr.Code != tools.CodeGiteaUnavailable {
		t.Fatalf("error = %v, want GITEA_UNAVAILABLE", terr)
	}
	for _, want := range []string{"stopped at op 1 (create_issue)", "applied: ops 0 (set_estimate)", "already filed issue #5", "same idempotencyKey"} {
		if !strings.Contains(terr.Message, want) {
			t.Fatalf("message lacks %q: %s", want, terr.Message)
		}
	}
	if got := labelNames(s.issue(t, 3).Labels); len(got) != 0 {
		t.Fatalf("op 2 ran after the failure: #3 labels %v", got)
	}
	// The retry continues: op 0 is not sent again, the issue is not filed
	// twice, its dependency and op 2 land.
	s.fake.ResetRequests()
	out := s.apply(t, writer, batch)
	if out.Applied != 3 || !slices.Equal(out.Created, []int64{5}) {
		t.Fatalf("retry answer = %+v", out)
	}
	for _, r := range s.writes() {
		if r.Path == "/repos/ceo/demo/issues" || r.Path == "/repos/ceo/demo/issues/2/labels" {
			t.Fatalf("retry repeated %s %s", r.Method, r.Path)
		}
	}
	if _, err := s.client.GetIssue(context.Background(), "ceo", "demo", 6); err == nil {
		t.Fatal("a second issue was filed")
	}
	deps, err := s.client.ListDependencies(context.Background(), "ceo", "demo", 5)
	if err != nil || len(deps) != 1 || deps[0].Number != 2 {
		t.Fatalf("deps of #5 = %v, %v", deps, err)
	}
	if got := labelNames(s.issue(t, 3).Labels); !slices.Equal(got, []string{"p/1"}) {
		t.Fatalf("labels of #3 = %v", got)
	}
	// A third call replays.
	s.fake.ResetRequests()
	again := s.apply(t, writer, batch)
	if fmt.Sprint(again) != fmt.Sprint(out) || len(s.writes()) != 0 {
		t.Fatalf("replay = %+v, writes %v", again, s.writes())
	}
	checkAcceptedByGitea(t, s.fake.Requests())
}

func TestApplyChangesWithoutGitea(t *testing.T) {
	t.Parallel()
	s := newWriteStack(t)
	s.svc.Write.Gitea = nil
	reg := s.svc.Registry()
	_, terr := reg.Call(context.Background(), writer, "apply_changes", json.RawMessage(`{"ops":[{"op":"set_estimate","issue":2,"estimate":"est/s"}]}`))
	if terr == nil || terr.Code != tools.CodeGiteaUnavailable {
		t.Fatalf("error = %v", terr)
	}
}

// TestApplyChangesSetAssignees: set_assignees replaces an issue's
// assignees in Gitea and the mirror; it is destructive (it can take work
// from someone), names only the project's own people, and a person Gitea
// would not assign (no write access) stops the batch before any write.
func TestApplyChangesSetAssignees(t *testing.T) {
	t.Parallel()
	s := newWriteStack(t)
	s.engine.People = []scheduler.Person{{Login: "dev"}}

	if _, terr := s.call(t, writer, "apply_changes", `{"ops":[{"op":"set_assignees","issue":3,"assignees":["dev"]}]}`); terr == nil || terr.Code != tools.CodeNeedsApproval {
		t.Fatalf("unapproved set_assignees: error %v, want NEEDS_APPROVAL", terr)
	}
	out := s.apply(t, approver, `{"ops":[{"op":"set_assignees","issue":3,"assignees":["mallory"]}],"approved":true}`)
	if out.Applied != 0 || len(out.Rejected) != 1 || !strings.Contains(out.Rejected[0].Reason, "mallory") {
		t.Fatalf("a stranger: %+v", out)
	}
	out = s.apply(t, approver, `{"ops":[{"op":"set_assignees","issue":3}],"approved":true}`)
	if out.Applied != 0 || len(out.Rejected) != 1 || !strings.Contains(out.Rejected[0].Reason, "needs assignees") {
		t.Fatalf("no assignees field: %+v", out)
	}
	if w := s.writes(); len(w) != 0 {
		t.Fatalf("refused batches wrote to Gitea: %v", w)
	}

	// DEV is dev: Gitea matches logins case-insensitively and answers its
	// own spelling, and so does the quote.
	out = s.apply(t, approver, `{"ops":[{"op":"set_assignees","issue":3,"assignees":["DEV"]}],"approved":true}`)
	if out.Applied != 1 {
		t.Fatalf("answer = %+v", out)
	}
	if is := s.issue(t, 3); len(is.Assignees) != 1 || is.Assignees[0].Login != "dev" {
		t.Fatalf("Gitea's #3 assignees = %+v", is.Assignees)
	}
	if m := s.mirrorIssue(t, 3); !slices.Equal(m.Assignees, []string{"dev"}) {
		t.Fatalf("mirror's #3 assignees = %v", m.Assignees)
	}
	out = s.apply(t, approver, `{"ops":[{"op":"set_assignees","issue":3,"assignees":[]}],"approved":true}`)
	if m := s.mirrorIssue(t, 3); out.Applied != 1 || len(m.Assignees) != 0 {
		t.Fatalf("unassigning: %+v, mirror %v", out, m.Assignees)
	}

	// dev loses write access: Gitea would refuse, so nothing is written.
	s.fake.SetCollaborator("dev", "read")
	s.fake.ResetRequests()
	out = s.apply(t, approver, `{"ops":[{"op":"set_estimate","issue":3,"estimate":"est/m"},{"op":"set_assignees","issue":3,"assignees":["dev"]}],"approved":true}`)
	if out.Applied != 0 || len(out.Rejected) != 1 || out.Rejected[0].Op != 1 || !strings.Contains(out.Rejected[0].Reason, "write access") {
		t.Fatalf("an assignee without write access: %+v", out)
	}
	if w := s.writes(); len(w) != 0 {
		t.Fatalf("a batch Gitea would refuse wrote to Gitea: %v", w)
	}
}
