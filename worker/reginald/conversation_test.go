package reginald_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/commitea/commitea/worker/models/modeltest"
	"github.com/commitea/commitea/worker/reginald"
	"github.com/commitea/commitea/worker/tools"
)

// The recorded conversation: five questions a PM asks about the generated
// fixture project, answered by a scripted model that reads what the tools
// return and phrases from it, as a well-behaved small model would.

type step struct {
	question string
	calls    []string // query_project arguments, in order
	answer   func(t testing.TB, res []json.RawMessage) string
}

var conversation = []step{
	{"What should I work on next?", []string{`{"view":"focus"}`}, func(t testing.TB, res []json.RawMessage) string {
		f := decode[tools.FocusView](t, res[0])
		return fmt.Sprintf("Work on #%d next: %s. After that, #%d.", f.Now.Issue, f.Now.Title, f.Next[0].Issue)
	}},
	{"Will v1.0 make its date?", []string{`{"view":"runway"}`}, func(t testing.TB, res []json.RawMessage) string {
		m := decode[tools.RunwayView](t, res[0]).Milestones[0]
		return fmt.Sprintf("%s is due %s and lands between %s (p50) and %s (p80), so it is at risk.", m.Title, m.Due, m.Band.P50, m.Band.P80)
	}},
	{"Tell me about #75.", []string{`{"view":"issue","filters":{"issueId":75}}`}, func(t testing.TB, res []json.RawMessage) string {
		is := decode[tools.IssueView](t, res[0])
		s := fmt.Sprintf("#75 (%s) is in %s, sized %s.", is.Intent.Title, is.Derived.State, is.Derived.Estimate)
		if fc := is.Derived.Forecast; fc != nil {
			s += fmt.Sprintf(" It finishes between %s and %s.", fc.P50, fc.P80)
		}
		return s
	}},
	{"What is dev01 doing, and what is in milestone 2?", []string{`{"view":"focus","filters":{"assignee":"dev01"}}`, `{"view":"milestone","filters":{"milestoneId":2}}`},
		func(t testing.TB, res []json.RawMessage) string {
			f := decode[tools.FocusView](t, res[0])
			m := decode[tools.MilestoneView](t, res[1])
			s := "dev01 has nothing in focus."
			if f.Now != nil {
				s = fmt.Sprintf("dev01 is on #%d (%s).", f.Now.Issue, f.Now.Title)
			}
			return s + fmt.Sprintf(" %s holds #%d among its open issues.", m.Title, m.Issues[0].Issue)
		}},
	{"How good are our estimates?", []string{`{"view":"calibration"}`}, func(t testing.TB, res []json.RawMessage) string {
		c := decode[tools.CalibrationView](t, res[0])
		return fmt.Sprintf("From %d finished issues, work takes %.2f times its estimate.", c.N, c.GlobalMultiplier)
	}},
}

// scriptConversation makes the server answer the conversation's questions.
func scriptConversation(t testing.TB, s *modeltest.Server) {
	s.Handle(func(req modeltest.Request) modeltest.Reply {
		first := ""
		for _, m := range req.Messages {
			if m.Role == "user" {
				first = m.Content
				break
			}
		}
		for _, st := range conversation {
			if !strings.HasSuffix(first, "Question: "+st.question) {
				continue
			}
			res := results(t, req)
			if len(res) < len(st.calls) {
				return call("query_project", st.calls[len(res)])
			}
			return modeltest.Text(st.answer(t, res), 0, 0)
		}
		return modeltest.Text("I do not know that question.", 0, 0)
	})
}

// TestRecordedConversation runs the five questions in one conversation and
// logs each prompt's size: every prompt stays under 6,000 tokens, later
// prompts carry the summaries of earlier turns, and every answer is
// confirmed against its turn's data.
func TestRecordedConversation(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallShape)
	small := modeltest.NewOpenAI(t)
	scriptConversation(t, small)
	r := f.reginald(t, small, nil)
	id := ""
	var log strings.Builder
	fmt.Fprintf(&log, "%-50s %-5s %-22s %s\n", "question", "calls", "prompt tokens", "answer")
	for _, st := range conversation {
		out, err := r.Ask(context.Background(), reader, reginald.AskInput{Question: st.question, ConversationID: id})
		if err != nil {
			t.Fatalf("%s: %v", st.question, err)
		}
		id = out.ConversationID
		if !out.Confirmed || out.Stats.ToolCalls != len(st.calls) || len(out.Cites) == 0 && strings.Contains(out.Answer, "#") {
			t.Errorf("%s: %+v", st.question, out)
		}
		if n := out.Stats.MaxPromptTokens(); n >= 6000 {
			t.Errorf("%s: a prompt of %d tokens, want < 6,000", st.question, n)
		}
		fmt.Fprintf(&log, "%-50s %-5d %-22s %s\n", st.question, out.Stats.ToolCalls, fmt.Sprint(out.Stats.PromptTokens), out.Answer)
	}
	reqs := small.Requests()
	last := reqs[len(reqs)-1].Messages[0].Content
	for turn := 1; turn <= 4; turn++ {
		if !strings.Contains(last, fmt.Sprintf("[turn %d] Q:", turn)) {
			t.Errorf("the last prompt lacks turn %d's summary:\n%s", turn, last)
		}
	}
	if strings.Contains(last, `"rationale"`) {
		t.Errorf("tool data leaked into the conversation memory:\n%s", last)
	}
	t.Logf("recorded conversation (prompt tokens estimated with models.RequestTokens, functions included):\n%s", log.String())
}
