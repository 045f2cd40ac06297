package tools_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/commitea/commitea/worker/models/modeltest"
	"github.com/commitea/commitea/worker/tools"
)

// capture_work next to the real write path: the recorded Forgejo
// repository behind the loopback fake, the real Gitea client, the write
// tools wired as serve wires them.

// TestCaptureWorkInjectionReachesNoGitea scripts a big model that obeys
// an injection (close ops in its JSON, a function call to apply_changes)
// with the write path fully wired: Gitea receives no write at all and the
// mirror's change counter stays put.
func TestCaptureWorkInjectionReachesNoGitea(t *testing.T) {
	t.Parallel()
	calls := []modeltest.Call{{Name: "apply_changes", Arguments: `{"ops":[{"op":"close_issue","issue":1}],"approved":true}`}}
	big := modeltest.NewOpenAI(t)
	big.Handle(func(modeltest.Request) modeltest.Reply {
		return modeltest.Reply{Calls: calls, Text: `{"kind":"proposal","issues":[{"title":"Close everything","body":"` + injection + `","estimate":"est/xs"}]}`}
	})
	router, _, _ := modeltest.Router(t, nil, big)
	s := newWriteStack(t)
	s.svc.Models = router
	reg := s.svc.Registry()
	before := s.counter(t)
	env, terr := reg.Call(t.Context(), approver, "capture_work", json.RawMessage(`{"braindump":"`+injection+`"}`))
	if terr != nil {
		t.Fatalf("capture_work: %v", terr)
	}
	out := env.Data.(tools.CaptureWorkOutput)
	if out.Proposal == nil || len(out.Proposal.Issues) != 1 || out.Proposal.Issues[0].Op != "create_issue" {
		t.Fatalf("proposal = %+v", out.Proposal)
	}
	if w := s.writes(); len(w) != 0 {
		t.Fatalf("capture_work wrote to Gitea: %+v", w)
	}
	if after := s.counter(t); after != before {
		t.Fatalf("change counter %d → %d", before, after)
	}
	if st := s.issue(t, 1).State; st != "open" && st != "closed" {
		t.Fatalf("issue 1 state %q", st)
	}
}

// TestCaptureWorkProposalFilesThroughApplyChanges passes a proposal to
// apply_changes as its ops, unchanged: the issues land in Gitea with their
// est/* and p/* labels, and the consequence apply_changes reports is the
// one capture_work announced.
func TestCaptureWorkProposalFilesThroughApplyChanges(t *testing.T) {
	t.Parallel()
	big := modeltest.NewOpenAI(t, modeltest.JSON(map[string]any{"kind": "proposal", "issues": []any{
		map[string]any{"title": "Add Keycloak login", "body": "Sign in with Keycloak.", "estimate": "est/m", "priority": "p/1", "dependsOn": []any{1}},
		map[string]any{"title": "Document SSO", "body": "Admin guide.", "estimate": "est/s", "after": []any{1}},
	}}, 800, 120))
	router, _, _ := modeltest.Router(t, nil, big)
	s := newWriteStack(t)
	s.svc.Models = router
	reg := s.svc.Registry()
	env, terr := reg.Call(t.Context(), writer, "capture_work", json.RawMessage(`{"braindump":"Keycloak SSO and its admin guide."}`))
	if terr != nil {
		t.Fatalf("capture_work: %v", terr)
	}
	proposal := env.Data.(tools.CaptureWorkOutput).Proposal
	if w := s.writes(); len(w) != 0 {
		t.Fatalf("capture_work wrote to Gitea: %+v", w)
	}
	raw, err := json.Marshal(map[string]any{"ops": proposal.Issues})
	if err != nil {
		t.Fatal(err)
	}
	out := s.apply(t, writer, string(raw))
	if out.Applied != 2 || len(out.Rejected) != 0 || len(out.Created) != 2 {
		t.Fatalf("apply_changes of the proposal: %+v", out)
	}
	first := s.issue(t, out.Created[0])
	// The repository spells its labels its own way (est/M); apply_changes
	// uses the existing ones.
	got := strings.ToLower(strings.Join(labelNames(first.Labels), ","))
	if first.Title != "Add Keycloak login" || got != "est/m,p/1" {
		t.Fatalf("filed issue = %q %v", first.Title, labelNames(first.Labels))
	}
	// The second proposed issue depends on the first (-1 in the proposal),
	// filed as a dependency on the number Gitea gave the first.
	second := s.issue(t, out.Created[1])
	if second.Title != "Document SSO" || !slices.Contains(s.deps(t, out.Created[1]), out.Created[0]) {
		t.Fatalf("second filed issue %q depends on %v, want #%d", second.Title, s.deps(t, out.Created[1]), out.Created[0])
	}
	// Filing it has the consequence capture_work announced: the same
	// what-if of the same issues.
	if out.Consequence != proposal.Consequence {
		t.Fatalf("apply_changes consequence %q, capture_work announced %q", out.Consequence, proposal.Consequence)
	}
}
