package tools

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/scheduler"
	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/models"
)

// TestCapturePromptStaysSmall builds the largest prompt capture_work can
// send (every input bound at its maximum, a project with more milestones,
// people and similar issues than the context keeps, titles at their
// longest) and checks it stays under 6,000 tokens, what a 4B local
// model's context allows with room for the answer.
func TestCapturePromptStaysSmall(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	v := &projectView{Project: store.Project{Owner: "acme", Name: "platform"}, Milestone: map[int64]*scheduler.MilestoneForecast{}}
	v.Data.ComputedAt = now
	long := strings.Repeat("Quarterly platform hardening and migration ", 10)
	for k := range 40 {
		due := now.AddDate(0, k, 0)
		v.Milestones = append(v.Milestones, store.Milestone{ID: int64(k + 1), Title: long, State: "open", DueOn: &due})
		v.Milestone[int64(k+1)] = &scheduler.MilestoneForecast{ID: int64(k + 1), Hard: k%2 == 0, P80: due.AddDate(0, 0, 9)}
	}
	for k := range 40 {
		v.Data.Forecast.Load = append(v.Data.Forecast.Load, scheduler.PersonLoad{Login: fmt.Sprintf("developer-%02d", k), Issues: 17})
	}
	var similar []similarIssue
	for k := range maxSimilarIssues {
		similar = append(similar, similarIssue{Number: int64(4000 + k), Title: long})
	}
	prose := "We need single sign-on for the customer portal before the spring launch, with Keycloak over OIDC, group-based roles, an audit log of logins and a short admin guide. "
	in := CaptureWorkInput{Braindump: strings.Repeat(prose, maxBraindumpBytes/len(prose))}
	for range MaxCaptureAnswers {
		in.Answers = append(in.Answers, CaptureAnswer{Question: "Which applications must support single sign-on first?",
			Answer: strings.Repeat("The portal and the billing console, then the admin tools. ", 5)})
	}
	if err := checkCaptureInput(in); err != nil {
		t.Fatalf("the worst case must be an accepted input: %v", err)
	}
	for _, proposalOnly := range []bool{false, true} {
		req := captureRequest(v, similar, in, proposalOnly)
		n := models.RequestTokens(req)
		t.Logf("largest capture_work prompt (proposal only %v): %d tokens, of which context and words %d, system %d, schema %d",
			proposalOnly, n, models.ApproxTokens(req.Messages[1].Content), models.ApproxTokens(req.Messages[0].Content), models.ApproxTokens(req.Schema.String()))
		if n >= 6000 {
			t.Fatalf("largest prompt is %d tokens; it must stay under 6,000", n)
		}
	}
}
