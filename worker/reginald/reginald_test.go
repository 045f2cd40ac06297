package reginald_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/models"
	"github.com/commitea/commitea/worker/models/modeltest"
	"github.com/commitea/commitea/worker/reginald"
	"github.com/commitea/commitea/worker/tools"
)

var testNow = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

var (
	reader = tools.Caller{Name: "reader", Scopes: []string{tools.ScopeRead}}
	writer = tools.Caller{Name: "planner", Scopes: []string{tools.ScopeRead, tools.ScopeWrite}}
)

// fixture is a generated project in a fresh database with a snapshot from
// the real recompute, and the tool service over it.
type fixture struct {
	pool *store.Pool
	p    store.Project
	svc  *tools.Service
	reg  *tools.Registry
	log  *slog.Logger
}

func newFixture(t testing.TB, shape storetest.ProjectShape) *fixture {
	t.Helper()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "ceo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	if err := storetest.SeedProject(ctx, pool, p.ID, shape, testNow); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	f := &worker.Forecaster{Pool: pool, Log: log, Trials: 200, Now: func() time.Time { return testNow }}
	if err := f.Recompute(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	svc := tools.NewService(pool, []store.Project{p}, log)
	return &fixture{pool: pool, p: p, svc: svc, reg: svc.Registry(), log: log}
}

var smallShape = storetest.ProjectShape{Open: 40, Done: 60, People: 4, DepShare: 0.2, Milestones: 3, Seed: 7}

// reginald builds Reginald over the fixture with scripted small and big
// servers (nil leaves a role out).
func (f *fixture) reginald(t testing.TB, small, big *modeltest.Server) *reginald.Reginald {
	t.Helper()
	router, _, _ := modeltest.Router(t, small, big)
	return &reginald.Reginald{Tools: f.reg, Models: router, Pool: f.pool, Log: f.log, Now: func() time.Time { return testNow }}
}

// results decodes the tool results a request carries, in order: each is an
// envelope inside a <data> block.
func results(t testing.TB, req modeltest.Request) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for _, m := range req.Messages {
		if m.Role != "tool" {
			continue
		}
		body := strings.TrimSpace(m.Content)
		if !strings.HasPrefix(body, `<data tool="query_project">`) || !strings.HasSuffix(body, "</data>") {
			t.Errorf("tool result not delimited as data: %.80s", body)
			continue
		}
		body = strings.TrimSuffix(strings.TrimPrefix(body, `<data tool="query_project">`), "</data>")
		var env struct {
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(body), &env); err != nil {
			t.Errorf("tool result is not an envelope: %v", err)
			continue
		}
		out = append(out, env.Data)
	}
	return out
}

func decode[T any](t testing.TB, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %T: %v", v, err)
	}
	return v
}

func call(name, args string) modeltest.Reply {
	return modeltest.Reply{Calls: []modeltest.Call{{Name: name, Arguments: args}}, PromptTokens: 900, CompletionTokens: 20}
}

// TestAnswerFromOneRead: the model reads the focus view once and names
// what to work on; the answer is confirmed and cites the issue.
func TestAnswerFromOneRead(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallShape)
	small := modeltest.NewOpenAI(t, call("query_project", `{"view":"focus"}`))
	small.Handle(func(req modeltest.Request) modeltest.Reply {
		res := results(t, req)
		if len(res) != 1 {
			return modeltest.Text("no data", 10, 2)
		}
		focus := decode[tools.FocusView](t, res[0])
		return modeltest.Text(fmt.Sprintf("Work on #%d next: %s.", focus.Now.Issue, focus.Now.Title), 1200, 30)
	})
	r := f.reginald(t, small, nil)
	out, err := r.Ask(context.Background(), reader, reginald.AskInput{Question: "What should I work on next?"})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Confirmed || out.Stats.ToolCalls != 1 || len(out.Cites) != 1 || out.Data != nil {
		t.Fatalf("answer = %+v", out)
	}
	reqs := small.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if !strings.Contains(reqs[0].LastUser(), "Today: 2026-12-01") || !strings.Contains(reqs[0].LastUser(), "v1.0") {
		t.Errorf("prompt lacks the header: %s", reqs[0].LastUser())
	}
	if got := strings.Join(reqs[0].Tools, ","); got != "query_project,record_directive,capture_work" {
		t.Errorf("functions offered = %s", got)
	}
	if !strings.Contains(reqs[0].System, "<data>") {
		t.Errorf("system prompt does not say tool results are data")
	}
	t.Logf("answer: %s (prompt tokens %v)", out.Answer, out.Stats.PromptTokens)
}

// TestAnswerFromTwoViews: the runway for the milestone's band, then the
// milestone view for its issues.
func TestAnswerFromTwoViews(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallShape)
	small := modeltest.NewOpenAI(t, call("query_project", `{"view":"runway"}`), call("query_project", `{"view":"milestone","filters":{"milestoneId":1}}`))
	small.Handle(func(req modeltest.Request) modeltest.Reply {
		res := results(t, req)
		if len(res) != 2 {
			return modeltest.Text("no data", 10, 2)
		}
		rw := decode[tools.RunwayView](t, res[0])
		ms := decode[tools.MilestoneView](t, res[1])
		m := rw.Milestones[0]
		text := fmt.Sprintf("Milestone %s is due %s; it lands between %s (p50) and %s (p80).", m.Title, m.Due, m.Band.P50, m.Band.P80)
		if len(ms.Issues) > 0 {
			text += fmt.Sprintf(" Its first open issue is #%d.", ms.Issues[0].Issue)
		}
		return modeltest.Text(text, 2000, 40)
	})
	out, err := f.reginald(t, small, nil).Ask(context.Background(), reader, reginald.AskInput{Question: "Will v1.0 make its date, and what is in it?"})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Confirmed || out.Stats.ToolCalls != 2 || len(out.Reads) != 2 || out.Stats.ModelRequests != 3 {
		t.Fatalf("answer = %+v", out)
	}
	var in tools.QueryProjectInput
	if err := json.Unmarshal(out.Reads[1].Input, &in); err != nil || in.Filters == nil || in.Filters.Limit == nil || *in.Filters.Limit != 10 {
		t.Errorf("second read input = %s; want the small limit set", out.Reads[1].Input)
	}
	t.Logf("answer: %s", out.Answer)
}

// TestLoopStopsAtTheLimit: a model that keeps calling is stopped after
// four calls with a clear answer and the data it read.
func TestLoopStopsAtTheLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallShape)
	small := modeltest.NewOpenAI(t)
	small.Handle(func(modeltest.Request) modeltest.Reply { return call("query_project", `{"view":"focus"}`) })
	out, err := f.reginald(t, small, nil).Ask(context.Background(), reader, reginald.AskInput{Question: "Anything on fire?"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stopped != "tool_call_limit" || out.Stats.ToolCalls != reginald.DefaultMaxToolCalls || len(out.Data) != 4 || out.Confirmed {
		t.Fatalf("answer = %+v", out)
	}
	if !strings.Contains(out.Answer, "stopped after 4 tool calls") {
		t.Errorf("answer = %q", out.Answer)
	}
	if n := len(small.Requests()); n != 5 { // four answered calls, then a fifth asked for
		t.Errorf("%d model requests, want 5", n)
	}
}

// TestInventedDateIsCaught: a date that no tool result holds is not
// stated; the answer names it and shows the data.
func TestInventedDateIsCaught(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallShape)
	small := modeltest.NewOpenAI(t, call("query_project", `{"view":"runway"}`),
		modeltest.Text("v1.0 ships on 2031-07-04, with 17 issues left.", 1500, 20))
	out, err := f.reginald(t, small, nil).Ask(context.Background(), reader, reginald.AskInput{Question: "When does v1.0 ship?"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Confirmed || len(out.Data) != 1 || !strings.Contains(strings.Join(out.Unconfirmed, " "), "2031-07-04") {
		t.Fatalf("answer = %+v", out)
	}
	if strings.Contains(out.Answer, "ships on") || !strings.Contains(out.Answer, "could not confirm") {
		t.Errorf("answer = %q", out.Answer)
	}
}

// TestInventedRelativeDateIsCaught: "last week" is checked from today like
// a written date.
func TestInventedRelativeDateIsCaught(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallShape)
	small := modeltest.NewOpenAI(t, call("query_project", `{"view":"runway"}`),
		modeltest.Text("v1.0 already shipped last week.", 1500, 20))
	out, err := f.reginald(t, small, nil).Ask(context.Background(), reader, reginald.AskInput{Question: "When does v1.0 ship?"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Confirmed || strings.Join(out.Unconfirmed, " ") != "last week" {
		t.Fatalf("answer = %+v", out)
	}
}

// TestNoSmallModel: MODEL_UNAVAILABLE, pointing at query_project.
func TestNoSmallModel(t *testing.T) {
	t.Parallel()
	f := newFixture(t, storetest.ProjectShape{Open: 5, Done: 5, People: 1, Milestones: 1, Seed: 1})
	r := f.reginald(t, nil, nil)
	_, err := r.Ask(context.Background(), reader, reginald.AskInput{Question: "What next?"})
	var te *tools.Error
	if !errors.As(err, &te) || te.Code != tools.CodeModelUnavailable || !strings.Contains(te.Message, "query_project directly") {
		t.Fatalf("err = %v", err)
	}
	r.Models = nil
	if _, err := r.Ask(context.Background(), reader, reginald.AskInput{Question: "What next?"}); !errors.As(err, &te) || te.Code != tools.CodeModelUnavailable {
		t.Fatalf("without a router: %v", err)
	}
}

// TestAskToolOverTheRegistry: ask is declared once and callable like the
// other tools; its input is decoded strictly.
func TestAskToolOverTheRegistry(t *testing.T) {
	t.Parallel()
	f := newFixture(t, storetest.ProjectShape{Open: 8, Done: 8, People: 2, Milestones: 1, Seed: 3})
	small := modeltest.NewOpenAI(t, modeltest.Text("Hello; ask me about the project.", 800, 10))
	reg := reginald.Registry(f.reg, f.reginald(t, small, nil))
	if _, ok := reg.Lookup("ask"); !ok {
		t.Fatal("no ask tool")
	}
	env, terr := reg.Call(context.Background(), reader, "ask", json.RawMessage(`{"question":"hi","conversationId":"c1"}`))
	if terr != nil {
		t.Fatal(terr)
	}
	out := env.Data.(reginald.AskOutput)
	if out.ConversationID != "c1" || !out.Confirmed || env.Instruction == "" {
		t.Fatalf("envelope = %+v", env)
	}
	if _, terr := reg.Call(context.Background(), reader, "ask", json.RawMessage(`{"question":"hi","bogus":1}`)); terr == nil || terr.Field != "bogus" {
		t.Fatalf("unknown field: %v", terr)
	}
	turns, err := store.RecentConversationTurns(context.Background(), f.pool, reader.Name, "c1", 5)
	if err != nil || len(turns) != 1 || !strings.Contains(turns[0].Summary, "Q: hi") {
		t.Fatalf("turns = %+v, %v", turns, err)
	}
	// The same id under another token is another conversation.
	small.Push(modeltest.Text("Hello again.", 0, 0))
	if _, terr := reg.Call(context.Background(), writer, "ask", json.RawMessage(`{"question":"hi there","conversationId":"c1"}`)); terr != nil {
		t.Fatal(terr)
	}
	reqs := small.Requests()
	if last := reqs[len(reqs)-1].LastUser(); strings.Contains(last, "[turn 1]") {
		t.Errorf("another caller's conversation leaked into the prompt:\n%s", last)
	}
	if turns, _ := store.RecentConversationTurns(context.Background(), f.pool, writer.Name, "c1", 5); len(turns) != 1 || turns[0].Turn != 1 {
		t.Errorf("writer's turns = %+v", turns)
	}
}

// TestPromptStaysInBudget: four large reads come to about 5,800 tokens;
// under a budget of 4,000 the largest results are cut (with the
// truncation marker) so every prompt stays within it.
func TestPromptStaysInBudget(t *testing.T) {
	t.Parallel()
	f := newFixture(t, storetest.ProjectShape{Open: 400, Done: 200, People: 8, DepShare: 0.3, Milestones: 4, Seed: 11})
	small := modeltest.NewOpenAI(t,
		call("query_project", `{"view":"board"}`),
		call("query_project", `{"view":"focus"}`),
		call("query_project", `{"view":"milestone","filters":{"milestoneId":1}}`),
		call("query_project", `{"view":"runway"}`),
		modeltest.Text("That is a lot of work.", 0, 0))
	r := f.reginald(t, small, nil)
	r.PromptBudget = 4000
	out, err := r.Ask(context.Background(), reader, reginald.AskInput{Question: "Give me the whole picture."})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stats.ToolCalls != 4 || !out.Confirmed {
		t.Fatalf("answer = %+v", out)
	}
	for i, n := range out.Stats.PromptTokens {
		if n > r.PromptBudget {
			t.Errorf("prompt %d: %d tokens, over the budget", i, n)
		}
	}
	reqs := small.Requests()
	if last := reqs[len(reqs)-1]; !strings.Contains(fmt.Sprint(last.Messages), "[truncated: shown") {
		t.Errorf("no result was cut")
	}
	t.Logf("prompt tokens: %v", out.Stats.PromptTokens)
}

// TestModelFailure: a small model that fails answers MODEL_UNAVAILABLE
// with the way around it, and nothing is kept of the turn.
func TestModelFailure(t *testing.T) {
	t.Parallel()
	f := newFixture(t, storetest.ProjectShape{Open: 5, Done: 5, People: 1, Milestones: 1, Seed: 2})
	small := modeltest.NewOpenAI(t, modeltest.Status(400, "model not loaded"))
	_, err := f.reginald(t, small, nil).Ask(context.Background(), reader, reginald.AskInput{Question: "What next?", ConversationID: "c-fail"})
	var te *tools.Error
	if !errors.As(err, &te) || te.Code != tools.CodeModelUnavailable || !strings.Contains(te.Message, "query_project directly") {
		t.Fatalf("err = %v", err)
	}
	if turns, _ := store.RecentConversationTurns(context.Background(), f.pool, reader.Name, "c-fail", 5); len(turns) != 0 {
		t.Errorf("a failed turn was kept: %+v", turns)
	}
}

// After a failover, the answer's stats count both requests and name the
// model that served it.
func TestStatsNameTheModelThatServed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, smallShape)
	down := modeltest.NewOpenAI(t, modeltest.Status(500, "crashed"))
	up := modeltest.NewOpenAI(t, modeltest.Text("Nothing to say.", 100, 5))
	router, err := models.NewRouter(models.RouterConfig{Roles: map[models.Role]models.RoleConfig{
		models.Small: {Primary: down.Client(t, "local"), Fallback: up.Client(t, "remote")},
	}}, &modeltest.Ledger{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &reginald.Reginald{Tools: f.reg, Models: router, Pool: f.pool, Log: f.log, Now: func() time.Time { return testNow }}
	out, err := r.Ask(context.Background(), reader, reginald.AskInput{Question: "Anything to report?"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Stats.ModelRequests != 2 || len(out.Stats.Models) != 1 || out.Stats.Models[0] != "openai:remote" {
		t.Fatalf("stats = %+v, want two requests served by openai:remote", out.Stats)
	}
}
