package reginald_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker/models/modeltest"
	"github.com/commitea/commitea/worker/reginald"
)

// BenchmarkConversation runs the recorded five-question conversation per
// iteration, against the demo project (acme/teapot as `commitea demo`
// generates it) and a generated project of 3,500 open issues, and reports per question: the largest
// prompt's estimated tokens, the tool calls, and Reginald's overhead
// around the model: the whole Ask less the time inside the model client
// (the scripted server's loopback HTTP and langchaingo's encoding are the
// model's side). The overhead holds the header read, the tool calls, the
// prose check, and the conversation's read and write in Postgres.
func BenchmarkConversation(b *testing.B) {
	for _, c := range []struct {
		name string
		make func(testing.TB) *fixture
	}{
		{"demo", newDemoFixture},
		{"large-3500", func(tb testing.TB) *fixture {
			return newFixture(tb, storetest.ProjectShape{Open: 3500, Done: 1500, People: 15, DepShare: 0.3, Milestones: 8, Seed: 42})
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			f := c.make(b)
			conversation := conversationFor(b, f)
			f.svc.Fresh, f.svc.Stale = time.Hour, 2*time.Hour // a warm cache, as on a busy server
			small := modeltest.NewOpenAI(b)
			scriptConversation(b, small, conversation)
			r := f.reginald(b, small, nil)
			var questions, calls, maxTokens int
			var overhead time.Duration
			var overheads []time.Duration
			perQuestion := make([]string, len(conversation))
			converse := func(record bool) {
				id := ""
				for i, st := range conversation {
					out, err := r.Ask(context.Background(), reader, reginald.AskInput{Question: st.question, ConversationID: id})
					if err != nil {
						b.Fatal(err)
					}
					id = out.ConversationID
					if !record {
						continue
					}
					questions++
					calls += out.Stats.ToolCalls
					maxTokens = max(maxTokens, out.Stats.MaxPromptTokens())
					overhead += out.Stats.Overhead()
					overheads = append(overheads, out.Stats.Overhead())
					perQuestion[i] = fmt.Sprintf("%-50s calls %d  prompt tokens %-20s overhead %.2f ms  model %.2f ms",
						st.question, out.Stats.ToolCalls, fmt.Sprint(out.Stats.PromptTokens), float64(out.Stats.Overhead().Microseconds())/1000, out.Stats.ModelMillis)
				}
			}
			// One conversation first fills the tool service's snapshot cache,
			// which a running server holds between requests; it is not a
			// question's overhead.
			converse(false)
			for b.Loop() {
				converse(true)
			}
			slices.Sort(overheads)
			b.ReportMetric(float64(overheads[len(overheads)*95/100].Microseconds())/1000, "p95-overhead-ms/q")
			b.ReportMetric(float64(maxTokens), "max-prompt-tokens")
			b.ReportMetric(float64(calls)/float64(questions), "tool-calls/q")
			b.ReportMetric(float64(overhead.Microseconds())/1000/float64(questions), "overhead-ms/q")
			b.Logf("last conversation:\n%s", strings.Join(perQuestion, "\n"))
		})
	}
}
