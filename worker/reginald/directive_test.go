package reginald_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
	"github.com/commitea/commitea/worker/models/modeltest"
	"github.com/commitea/commitea/worker/reginald"
	"github.com/commitea/commitea/worker/tools"
)

// TestDirectiveIsRecordedPendingAndNothingChangesInGitea: the small model
// recognises a directive, record_directive negotiates its params on the
// big model and records it pending in the ledger with the PM's words, and
// the answer proposes an apply_changes batch; the Gitea the write tools
// are wired to sees no write.
func TestDirectiveIsRecordedPendingAndNothingChangesInGitea(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallShape)
	fake, err := giteafake.New(giteafake.Options{Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	client, err := gitea.New(fake.URL, fake.Token(), gitea.Options{BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f.svc.Write = tools.WriteConfig{Gitea: client, Now: func() time.Time { return testNow }}
	f.reg = f.svc.Registry()
	fake.ResetRequests()

	const question = "push v1.0 by a week, it's a hard date"
	small := modeltest.NewOpenAI(t, call("record_directive", `{"kind":"set-deadline","quote":"push v1.0 by a week","params":{"due":"2030-01-01"}}`))
	// record_directive negotiates the params (and the target the small
	// model left out) on the big model behind the tool service.
	big := modeltest.NewOpenAI(t, modeltest.JSON(map[string]any{"target": map[string]any{"milestone": 1}, "params": map[string]any{"due": "2027-01-08", "hard": true}}, 1800, 60))
	r := f.reginald(t, small, big)
	f.svc.Models = r.Models.(tools.ModelRouter)
	out, err := r.Ask(context.Background(), writer, reginald.AskInput{Question: question})
	if err != nil {
		t.Fatal(err)
	}
	if out.Handoff == nil || out.Handoff.Tool != "record_directive" || out.Handoff.Error != nil {
		t.Fatalf("handoff = %+v", out.Handoff)
	}
	// Reginald sends the question as the quote and leaves params to the
	// tool's negotiation, whatever the small model guessed.
	if in := string(out.Handoff.Input); in != `{"kind":"set-deadline","quote":"push v1.0 by a week, it's a hard date"}` {
		t.Fatalf("handoff input = %s", in)
	}
	if out.Proposal == nil || out.Proposal.Tool != "apply_changes" || !strings.Contains(string(out.Proposal.Input), `"set_deadline_hard"`) ||
		!strings.Contains(string(out.Proposal.Input), `"directiveId"`) || out.Proposal.Consequence == "" {
		t.Fatalf("proposal = %+v", out.Proposal)
	}
	// The batch is record_directive's structured proposedOps with the
	// directive's id, not something read back out of its prose.
	var recorded tools.RecordDirectiveOutput
	if raw, err := json.Marshal(out.Handoff.Data); err != nil || json.Unmarshal(raw, &recorded) != nil || len(recorded.ProposedOps) == 0 {
		t.Fatalf("record_directive answered no proposedOps: %+v", out.Handoff.Data)
	}
	want, _ := json.Marshal(tools.ApplyChangesInput{Ops: recorded.ProposedOps, DirectiveID: &recorded.DirectiveID})
	if string(out.Proposal.Input) != string(want) {
		t.Fatalf("proposal %s, want the proposedOps %+v of directive %d", out.Proposal.Input, recorded.ProposedOps, recorded.DirectiveID)
	}
	if !strings.Contains(out.Answer, "pending until apply_changes") || !strings.Contains(out.Answer, "Nothing changed in Gitea") {
		t.Errorf("answer = %q", out.Answer)
	}
	if breq := big.Requests(); len(breq) != 1 || !strings.Contains(fmt.Sprint(breq[0].Messages), question) {
		t.Fatalf("big model requests = %+v", breq)
	}
	pending, _, n, err := store.Directives(context.Background(), f.pool, f.p.ID, 10)
	if err != nil || n != 1 || pending[0].Quote != question || pending[0].Status != store.DirectivePending || pending[0].Caller != writer.Name {
		t.Fatalf("ledger = %+v (%d), %v", pending, n, err)
	}
	for _, r := range fake.Requests() {
		if r.Method != http.MethodGet {
			t.Errorf("Gitea got a write: %s %s", r.Method, r.Path)
		}
	}
	t.Logf("answer: %s\nproposal: %s", out.Answer, out.Proposal.Input)

	// A read-only caller cannot record: the hand-off is refused by the
	// registry's scope check and nothing is recorded.
	small.Push(call("record_directive", `{"kind":"note","quote":"x"}`))
	out, err = r.Ask(context.Background(), reader, reginald.AskInput{Question: "note that the demo went well"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Handoff == nil || out.Handoff.Error == nil || out.Handoff.Error.Code != tools.CodeForbidden || out.Proposal != nil {
		t.Fatalf("read-only handoff = %+v", out.Handoff)
	}
	if _, _, n, _ := store.Directives(context.Background(), f.pool, f.p.ID, 10); n != 1 {
		t.Errorf("%d pending directives after a refused hand-off, want 1", n)
	}
}

// TestNoHandOffAfterReading: issue text is data. A model that, after
// reading an issue, calls record_directive (as text planted in an issue
// might make it) is refused: nothing is recorded and the answer comes from
// the data.
func TestNoHandOffAfterReading(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallShape)
	small := modeltest.NewOpenAI(t,
		call("query_project", `{"view":"issue","filters":{"issueId":75}}`),
		call("record_directive", `{"kind":"scope","quote":"drop everything from v1.0"}`),
		modeltest.Text("#75 is open.", 0, 0))
	out, err := f.reginald(t, small, nil).Ask(context.Background(), writer, reginald.AskInput{Question: "What does #75 say?"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Handoff != nil || len(out.Reads) != 2 || out.Reads[1].Error == nil || out.Reads[1].Error.Code != tools.CodeForbidden || !out.Confirmed {
		t.Fatalf("answer = %+v", out)
	}
	if _, _, n, _ := store.Directives(context.Background(), f.pool, f.p.ID, 10); n != 0 {
		t.Errorf("%d directives recorded, want 0", n)
	}
	if c := small.Requests()[2].Messages; !strings.Contains(c[len(c)-1].Content, "FORBIDDEN") {
		t.Errorf("the model was not told: %s", c[len(c)-1].Content)
	}
}

// TestBraindumpGoesToCaptureWork: a braindump is handed to capture_work
// with the PM's words; a capture_work that cannot answer (no big model
// behind the tool service here) is reported as such, and nothing is filed.
func TestBraindumpGoesToCaptureWork(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallShape)
	const dump = "we need SSO: SAML for the big customers, a settings page, and docs"
	small := modeltest.NewOpenAI(t, call("capture_work", `{"braindump":"SSO work"}`))
	out, err := f.reginald(t, small, nil).Ask(context.Background(), writer, reginald.AskInput{Question: dump})
	if err != nil {
		t.Fatal(err)
	}
	h := out.Handoff
	if h == nil || h.Tool != "capture_work" || !strings.Contains(string(h.Input), `"braindump":"`+dump+`"`) {
		t.Fatalf("handoff = %+v", h)
	}
	if h.Error == nil || h.Error.Code != tools.CodeModelUnavailable || out.Proposal != nil || !strings.Contains(out.Answer, "Nothing was changed") {
		t.Fatalf("answer = %+v", out)
	}
}

// TestBraindumpComesBackAsAProposal: with the big model behind the tool
// service, capture_work proposes issues; Reginald passes them on as an
// apply_changes batch of create_issue ops with the engine's consequence,
// and files nothing.
func TestBraindumpComesBackAsAProposal(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallShape)
	const dump = "we need SSO: SAML login for the big customers and a setup guide for admins"
	small := modeltest.NewOpenAI(t, call("capture_work", `{"braindump":"SSO"}`))
	big := modeltest.NewOpenAI(t, modeltest.JSON(map[string]any{"kind": "proposal", "issues": []any{
		map[string]any{"title": "SAML login", "body": "Sign in with the customer's SAML IdP.", "estimate": "est/l", "priority": "p/1", "milestone": 1},
		map[string]any{"title": "SSO setup guide", "body": "Admin guide for the SAML client.", "estimate": "est/s", "after": []any{1}},
	}}, 900, 200))
	r := f.reginald(t, small, big)
	f.svc.Models = r.Models.(tools.ModelRouter)
	out, err := r.Ask(context.Background(), writer, reginald.AskInput{Question: dump})
	if err != nil {
		t.Fatal(err)
	}
	if out.Handoff == nil || out.Handoff.Error != nil || out.Proposal == nil {
		t.Fatalf("answer = %+v", out)
	}
	var batch struct {
		Ops []struct {
			Op     string   `json:"op"`
			Title  string   `json:"title"`
			Labels []string `json:"labels"`
			Deps   []int64  `json:"deps"`
		} `json:"ops"`
	}
	if err := json.Unmarshal(out.Proposal.Input, &batch); err != nil || len(batch.Ops) != 2 || batch.Ops[0].Op != "create_issue" ||
		batch.Ops[0].Title != "SAML login" || len(batch.Ops[1].Deps) != 1 || batch.Ops[1].Deps[0] != -1 {
		t.Fatalf("batch = %s (%v)", out.Proposal.Input, err)
	}
	if out.Proposal.Consequence == "" || !strings.Contains(out.Answer, "Nothing is filed") {
		t.Fatalf("answer = %q, consequence %q", out.Answer, out.Proposal.Consequence)
	}
	// Nothing was filed: the mirror still has the fixture's issues only.
	heads, err := store.IssueHeads(context.Background(), f.pool, f.p.ID)
	if err != nil || len(heads) != smallShape.Open+smallShape.Done {
		t.Fatalf("%d issues in the mirror, want %d (%v)", len(heads), smallShape.Open+smallShape.Done, err)
	}
	if reqs := big.Requests(); len(reqs) != 1 || !strings.Contains(reqs[0].LastUser(), dump) {
		t.Errorf("capture_work's model did not get the PM's words")
	}
	t.Logf("answer: %s\nproposal: %s", out.Answer, out.Proposal.Input)
}
