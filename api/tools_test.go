package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/tools"
)

// Token secrets of the tool tests, one per scope set.
const (
	readerSecret   = "reader-secret-0123456789"
	writerSecret   = "writer-secret-0123456789"
	approverSecret = "approver-secret-012345678"
	writeOnly      = "writeonly-secret-01234567"
)

var testTokens = []Token{
	{Name: "reader", Scopes: []string{"read"}, Secret: readerSecret},
	{Name: "writer", Scopes: []string{"read", "write"}, Secret: writerSecret},
	{Name: "approver", Scopes: []string{"read", "write", "approve"}, Secret: approverSecret},
	{Name: "writeonly", Scopes: []string{"write"}, Secret: writeOnly},
}

// toolStack is the real read path: a seeded project in Postgres, a
// snapshot from the real recompute, the tool registry and the router on a
// loopback server.
type toolStack struct {
	pool    *store.Pool
	project store.Project
	srv     *httptest.Server
}

var toolNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newToolStack(t *testing.T, recompute bool) toolStack {
	t.Helper()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "ceo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	shape := storetest.ProjectShape{Open: 60, Done: 40, People: 4, DepShare: 0.3, Milestones: 2, Seed: 7}
	if err := storetest.SeedProject(ctx, pool, p.ID, shape, toolNow); err != nil {
		t.Fatal(err)
	}
	// Issue 1001 has a long description and more comments than the view
	// shows; 1002 a word to search for.
	ms := int64(1)
	created := toolNow.AddDate(0, 0, -3)
	long := "The login form forgets the keychain entry on Safari. " + strings.Repeat("Steps: open, type, submit. ", 300)
	err = store.UpsertIssues(ctx, pool, p.ID, []store.IssueWrite{
		{Issue: store.Issue{Number: 1001, Title: "Flaky login on Safari", Body: long, State: "open", Author: "ceo",
			Labels: []string{"est/s", "p/1"}, Assignees: []string{"alice"}, Milestone: &ms,
			CreatedAt: created, UpdatedAt: created, LastActivityAt: created}},
		{Issue: store.Issue{Number: 1002, Title: "Rebuild the search index", Body: "The indexer stalls on large repositories.",
			State: "open", Author: "ceo", Labels: []string{"est/m"}, CreatedAt: created, UpdatedAt: created, LastActivityAt: created}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var comments []store.Comment
	for k := range 8 {
		at := created.Add(time.Duration(k+1) * time.Hour)
		comments = append(comments, store.Comment{ID: int64(5000 + k), Issue: 1001, Author: "bob", Body: fmt.Sprintf("comment %d", k+1), CreatedAt: at, UpdatedAt: at})
	}
	if err := store.UpsertComments(ctx, pool, p.ID, comments); err != nil {
		t.Fatal(err)
	}
	if err := store.AddDependency(ctx, pool, p.ID, store.Dependency{Issue: 1001, DependsOn: 1002}); err != nil {
		t.Fatal(err)
	}
	if recompute {
		f := &worker.Forecaster{Pool: pool, Log: quietLog(), Trials: 300, Now: func() time.Time { return toolNow }}
		if err := f.Recompute(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
	}
	reg := tools.NewService(pool, []store.Project{p}, quietLog()).Registry()
	srv := toolServer(t, Config{Tools: reg, Tokens: testTokens, Version: "test", Log: quietLog()})
	t.Cleanup(srv.Close)
	return toolStack{pool: pool, project: p, srv: srv}
}

// outcome is one tool call's result, whichever transport carried it.
type outcome struct {
	status      int // HTTP only
	code, field string
	message     string
	preview     string // NEEDS_APPROVAL
	data        any
	instruction string
	safety      string
}

type transport interface {
	name() string
	call(t *testing.T, secret, tool, input string) outcome
}

type httpTransport struct{ s toolStack }

func (httpTransport) name() string { return "http" }

func (h httpTransport) call(t *testing.T, secret, tool, input string) outcome {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.s.srv.URL+"/v1/tools/"+tool, strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	o := decodeOutcome(t, body)
	o.status = resp.StatusCode
	if (resp.StatusCode == http.StatusOK) != (o.code == "") {
		t.Fatalf("status %d with body %s", resp.StatusCode, body)
	}
	return o
}

func decodeOutcome(t *testing.T, body []byte) outcome {
	t.Helper()
	var v struct {
		Data        any          `json:"data"`
		Instruction string       `json:"instruction"`
		Safety      string       `json:"safety"`
		Error       *tools.Error `json:"error"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("answer is not JSON: %v\n%s", err, body)
	}
	if v.Error != nil {
		return outcome{code: v.Error.Code, field: v.Error.Field, message: v.Error.Message, preview: v.Error.Preview}
	}
	if v.Instruction == "" || v.Data == nil {
		t.Fatalf("envelope lacks data or instruction: %s", body)
	}
	return outcome{data: v.Data, instruction: v.Instruction, safety: v.Safety}
}

type mcpTransport struct {
	s        toolStack
	sessions map[string]*mcp.ClientSession
}

func (*mcpTransport) name() string { return "mcp" }

func (m *mcpTransport) call(t *testing.T, secret, tool, input string) outcome {
	t.Helper()
	cs := m.sessions[secret]
	if cs == nil {
		var err error
		if cs, err = mcpTryConnect(m.s.srv.URL+"/mcp", secret); err != nil {
			t.Fatalf("mcp connect: %v", err)
		}
		m.sessions[secret] = cs
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(input)})
	if err != nil {
		t.Fatalf("mcp call %s: %v", tool, err)
	}
	// The text content carries the envelope, the error envelope included.
	if len(res.Content) != 1 {
		t.Fatalf("content = %d items", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok || !json.Valid([]byte(tc.Text)) {
		t.Fatalf("content is not JSON text: %#v", res.Content[0])
	}
	o := decodeOutcome(t, []byte(tc.Text))
	if res.IsError != (o.code != "") {
		t.Fatalf("isError %v with text %s", res.IsError, tc.Text)
	}
	// A success is also structured content; a failure never is (it would
	// not match the output schema).
	if res.IsError {
		if res.StructuredContent != nil {
			t.Fatalf("an error result carries structured content %v", res.StructuredContent)
		}
		return o
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(t, raw, []byte(tc.Text)) {
		t.Fatalf("structured content %s differs from the text %s", raw, tc.Text)
	}
	return o
}

// jsonEqual reports whether two JSON texts hold the same value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("not JSON: %v: %s", err, a)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

// bearerTransport adds the bearer token to every MCP request.
type bearerTransport struct{ secret string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.secret != "" {
		r.Header.Set("Authorization", "Bearer "+b.secret)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func mcpConnect(t *testing.T, endpoint, secret string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcpTryConnect(endpoint, secret)
	if err != nil {
		t.Fatalf("mcp connect %s: %v", endpoint, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func mcpTryConnect(endpoint, secret string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "commitea-test", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearerTransport{secret}}, DisableStandaloneSSE: true}
	return client.Connect(context.Background(), tr, nil)
}

// get walks a decoded JSON value along a dotted path ("issues.0.title").
func get(t *testing.T, v any, path string) any {
	t.Helper()
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[k]; !ok {
				t.Fatalf("no %q in %s (path %s)", k, short(x), path)
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i >= len(x) {
				t.Fatalf("no index %s in list of %d (path %s)", k, len(x), path)
			}
			v = x[i]
		default:
			t.Fatalf("cannot walk %q into %T (path %s)", k, v, path)
		}
	}
	return v
}

func list(t *testing.T, v any, path string) []any {
	t.Helper()
	l, ok := get(t, v, path).([]any)
	if !ok {
		t.Fatalf("%s is not a list: %v", path, get(t, v, path))
	}
	return l
}

func num(t *testing.T, v any, path string) float64 {
	t.Helper()
	n, ok := get(t, v, path).(float64)
	if !ok {
		t.Fatalf("%s is not a number: %v", path, get(t, v, path))
	}
	return n
}

func str(t *testing.T, v any, path string) string {
	t.Helper()
	s, ok := get(t, v, path).(string)
	if !ok {
		t.Fatalf("%s is not a string: %v", path, get(t, v, path))
	}
	return s
}

func notes(v any) string {
	m, _ := v.(map[string]any)
	ns, _ := m["notes"].([]any)
	var out []string
	for _, n := range ns {
		out = append(out, fmt.Sprint(n))
	}
	return strings.Join(out, " | ")
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 400 {
		return string(b[:400]) + "..."
	}
	return string(b)
}

// toolCase is one call and what it must answer, run over both transports.
type toolCase struct {
	name   string
	secret string
	tool   string
	input  string
	// code is the expected error code; "" expects success.
	code   string
	field  string
	status int // expected HTTP status of an error
	check  func(t *testing.T, o outcome)
}

func caseSecret(c toolCase) string {
	if c.secret == "" {
		return readerSecret
	}
	return c.secret
}

func caseTool(c toolCase) string {
	if c.tool == "" {
		return "query_project"
	}
	return c.tool
}

func runCases(t *testing.T, s toolStack, cases []toolCase) {
	t.Helper()
	overMCP := &mcpTransport{s: s, sessions: map[string]*mcp.ClientSession{}}
	defer func() {
		for _, cs := range overMCP.sessions {
			_ = cs.Close()
		}
	}()
	// The TypeScript SDK makes every call in one run of its driver, in
	// the same order, after the other two transports.
	overTS := &tsTransport{s: s}
	for _, tr := range []transport{httpTransport{s}, overMCP, overTS} {
		if tr == overTS {
			overTS.prepare(t, cases)
		}
		for i, c := range cases {
			t.Run(tr.name()+"/"+c.name, func(t *testing.T) {
				var o outcome
				if tr == overTS {
					o = overTS.outcome(t, i)
				} else {
					o = tr.call(t, caseSecret(c), caseTool(c), c.input)
				}
				if o.code != c.code {
					t.Fatalf("code = %q (%s), want %q; data %s", o.code, o.message, c.code, short(o.data))
				}
				if c.code != "" {
					if c.field != "" && o.field != c.field {
						t.Fatalf("field = %q, want %q (%s)", o.field, c.field, o.message)
					}
					if o.message == "" {
						t.Fatal("error without a message")
					}
					if tr.name() == "http" && c.status != 0 && o.status != c.status {
						t.Fatalf("status = %d, want %d", o.status, c.status)
					}
				}
				if c.check != nil {
					c.check(t, o)
				}
			})
		}
	}
}

func TestQueryProjectViews(t *testing.T) {
	t.Parallel()
	s := newToolStack(t, true)
	ctx := context.Background()
	for _, d := range []store.Directive{
		{ProjectID: s.project.ID, Kind: "reprioritize", Quote: "Login first, everything else after.", Caller: "writer",
			Target: json.RawMessage(`{"issue":1001}`), Params: json.RawMessage(`{"priority":0}`), Summary: "v1.0 p80 moves 2 days earlier",
			Consequence: json.RawMessage(`[{"milestone":1,"before":{"p50":"2026-12-20"},"after":{"p50":"2026-12-18"}}]`)},
		{ProjectID: s.project.ID, Kind: "note", Quote: "Alice is out next Friday.", Caller: "writer", Status: store.DirectiveApplied, AppliedAt: &toolNow},
	} {
		if _, err := store.AppendDirective(ctx, s.pool, d); err != nil {
			t.Fatal(err)
		}
	}
	var statuses int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM issue_states WHERE project_id = $1`, s.project.ID).Scan(&statuses); err != nil {
		t.Fatal(err)
	}

	runCases(t, s, []toolCase{
		// focus
		{name: "focus", input: `{"view":"focus"}`, check: func(t *testing.T, o outcome) {
			now := get(t, o.data, "now")
			if now == nil {
				t.Fatal("no now item on a seeded project")
			}
			next, later := list(t, o.data, "next"), list(t, o.data, "later")
			if len(next) == 0 || len(next) > 3 {
				t.Fatalf("next = %d items, want the scheduler's 1..3", len(next))
			}
			for _, it := range slices.Concat([]any{now}, next, later) {
				if str(t, it, "rationale") == "" || str(t, it, "title") == "" || num(t, it, "issue") < 1 {
					t.Fatalf("focus item lacks issue, title or rationale: %s", short(it))
				}
			}
			if !strings.Contains(o.instruction, fmt.Sprintf("#%d", int(num(t, now, "issue")))) {
				t.Fatalf("instruction does not name the now issue: %s", o.instruction)
			}
			// Issue text is data: it never reaches the instruction.
			if strings.Contains(o.instruction, str(t, now, "title")) {
				t.Fatalf("instruction quotes an issue title: %s", o.instruction)
			}
			if num(t, o.data, "snapshot.version") < 1 {
				t.Fatal("no snapshot version")
			}
		}},
		{name: "focus/person", input: `{"view":"focus","filters":{"assignee":"dev01"}}`, check: func(t *testing.T, o outcome) {
			if str(t, o.data, "who") != "dev01" {
				t.Fatalf("who = %v", get(t, o.data, "who"))
			}
			items := slices.Concat(list(t, o.data, "next"), list(t, o.data, "later"))
			if now := get(t, o.data, "now"); now != nil {
				items = append(items, now)
			}
			if len(items) == 0 {
				t.Fatal("dev01 has nothing to do")
			}
			for _, it := range items {
				if a, _ := it.(map[string]any)["assignee"].(string); a != "" && a != "dev01" {
					t.Fatalf("dev01's focus holds %s's issue %v", a, get(t, it, "issue"))
				}
			}
		}},
		{name: "focus/limit-1", input: `{"view":"focus","filters":{"limit":1}}`, check: func(t *testing.T, o outcome) {
			for _, k := range []string{"next", "later"} {
				if len(list(t, o.data, k)) > 1 {
					t.Fatalf("%s has more than the limit", k)
				}
			}
			if !strings.Contains(notes(o.data), "shown 1 of") {
				t.Fatalf("notes do not say what was cut: %s", notes(o.data))
			}
		}},
		{name: "focus/limit-clamped", input: `{"view":"focus","filters":{"limit":1000}}`, check: func(t *testing.T, o outcome) {
			if !strings.Contains(o.instruction, "limit 1000 was clamped to the maximum 100") {
				t.Fatalf("instruction does not say the limit was clamped: %s", o.instruction)
			}
		}},
		{name: "focus/assignee-none", input: `{"view":"focus","filters":{"assignee":"nobody"}}`, check: func(t *testing.T, o outcome) {
			if get(t, o.data, "now") != nil || len(list(t, o.data, "next"))+len(list(t, o.data, "later")) != 0 {
				t.Fatal("unknown assignee has work")
			}
			if !strings.Contains(notes(o.data), "nobody has no open work") || !strings.Contains(o.instruction, "Nothing is open") {
				t.Fatalf("empty result not said in words: %s / %s", notes(o.data), o.instruction)
			}
		}},
		{name: "focus/label-none", input: `{"view":"focus","filters":{"label":"no-such-label"}}`, check: func(t *testing.T, o outcome) {
			if get(t, o.data, "now") != nil || !strings.Contains(notes(o.data), "now: nothing to start or continue matching label no-such-label") {
				t.Fatalf("filtered focus = %s", short(o.data))
			}
		}},
		{name: "focus/ignored-filter", input: `{"view":"focus","filters":{"query":"x"}}`, check: func(t *testing.T, o outcome) {
			if !strings.Contains(notes(o.data), "filter query does not apply to view focus") {
				t.Fatalf("ignored filter not noted: %s", notes(o.data))
			}
		}},
		{name: "focus/limit-0", input: `{"view":"focus","filters":{"limit":0}}`, code: tools.CodeInvalidInput, field: "filters.limit", status: 400},
		{name: "focus/bad-state", input: `{"view":"focus","filters":{"state":"doing"}}`, code: tools.CodeInvalidInput, field: "filters.state", status: 400},

		// issue
		{name: "issue", input: `{"view":"issue","filters":{"issueId":1001}}`, check: func(t *testing.T, o outcome) {
			if str(t, o.data, "intent.title") != "Flaky login on Safari" || str(t, o.data, "intent.assignee") != "alice" {
				t.Fatalf("intent = %s", short(get(t, o.data, "intent")))
			}
			desc := str(t, o.data, "intent.description")
			if !strings.Contains(desc, "[truncated: shown ") || len(desc) > tools.MaxBodyBytes+60 {
				t.Fatalf("long description not cut with a marker (%d bytes)", len(desc))
			}
			if c := list(t, o.data, "intent.comments"); len(c) != 5 || str(t, c[0], "body") != "comment 8" || num(t, o.data, "intent.commentsTotal") != 8 {
				t.Fatalf("comments = %s", short(get(t, o.data, "intent")))
			}
			if d := list(t, o.data, "derived.dependsOn"); len(d) != 1 || d[0].(float64) != 1002 {
				t.Fatalf("dependsOn = %v", d)
			}
			if str(t, o.data, "derived.state") == "" || get(t, o.data, "derived.provenance") == nil {
				t.Fatalf("derived = %s", short(get(t, o.data, "derived")))
			}
			if len(list(t, o.data, "derived.timeline")) == 0 {
				t.Fatal("no timeline for an issue the recompute saw")
			}
			if f := get(t, o.data, "derived.forecast"); f != nil && (str(t, f, "p50") == "" || str(t, f, "p80") < str(t, f, "p50")) {
				t.Fatalf("forecast is not a range: %v", f)
			}
		}},
		{name: "issue/done", input: `{"view":"issue","filters":{"issueId":1}}`, check: func(t *testing.T, o outcome) {
			if str(t, o.data, "derived.state") != "done" || str(t, o.data, "intent.giteaState") != "closed" {
				t.Fatalf("done issue = %s", short(get(t, o.data, "derived")))
			}
			if !strings.Contains(notes(o.data), "no comments") || !strings.Contains(notes(o.data), "no description") {
				t.Fatalf("empty parts not said in words: %s", notes(o.data))
			}
		}},
		{name: "issue/missing-id", input: `{"view":"issue"}`, code: tools.CodeInvalidInput, field: "filters.issueId", status: 400},
		{name: "issue/not-found", input: `{"view":"issue","filters":{"issueId":99999}}`, code: tools.CodeNotFound, field: "filters.issueId", status: 404},
		{name: "issue/negative-id", input: `{"view":"issue","filters":{"issueId":-3}}`, code: tools.CodeInvalidInput, field: "filters.issueId", status: 400},
		{name: "issue/string-id", input: `{"view":"issue","filters":{"issueId":"12"}}`, code: tools.CodeInvalidInput, field: "filters.issueId", status: 400},

		// milestone
		{name: "milestone", input: `{"view":"milestone","filters":{"milestoneId":1}}`, check: func(t *testing.T, o outcome) {
			if get(t, o.data, "hard") != true || str(t, o.data, "title") != "v1.0" || str(t, o.data, "due") == "" {
				t.Fatalf("milestone = %s", short(o.data))
			}
			if str(t, o.data, "cone.p10") > str(t, o.data, "cone.p50") || str(t, o.data, "cone.p50") > str(t, o.data, "cone.p80") {
				t.Fatalf("cone is not ordered: %v", get(t, o.data, "cone"))
			}
			total := num(t, o.data, "stats.total")
			if total < 1 || num(t, o.data, "stats.open")+num(t, o.data, "stats.done") != total {
				t.Fatalf("stats = %v", get(t, o.data, "stats"))
			}
			if len(list(t, o.data, "issues")) == 0 {
				t.Fatal("milestone lists no issues")
			}
		}},
		{name: "milestone/label-none", input: `{"view":"milestone","filters":{"milestoneId":2,"label":"nope"}}`, check: func(t *testing.T, o outcome) {
			if len(list(t, o.data, "issues")) != 0 || num(t, o.data, "stats.total") == 0 {
				t.Fatal("the list filter must narrow the list, not the stats")
			}
			if !strings.Contains(notes(o.data), "has no issues matching label nope") {
				t.Fatalf("notes = %s", notes(o.data))
			}
		}},
		{name: "milestone/missing-id", input: `{"view":"milestone"}`, code: tools.CodeInvalidInput, field: "filters.milestoneId", status: 400},
		{name: "milestone/not-found", input: `{"view":"milestone","filters":{"milestoneId":77}}`, code: tools.CodeNotFound, status: 404},

		// board
		{name: "board", input: `{"view":"board","filters":{"limit":100}}`, check: func(t *testing.T, o outcome) {
			cols := list(t, o.data, "columns")
			if len(cols) != 5 {
				t.Fatalf("columns = %d, want the five lifecycle states", len(cols))
			}
			sum := 0.0
			for i, c := range cols {
				if str(t, c, "state") != tools.States[i] {
					t.Fatalf("column %d = %s", i, str(t, c, "state"))
				}
				sum += num(t, c, "count")
			}
			if int(sum) != statuses {
				t.Fatalf("board counts %v issues, the snapshot has %d", sum, statuses)
			}
		}},
		{name: "board/state", input: `{"view":"board","filters":{"state":"done","limit":3}}`, check: func(t *testing.T, o outcome) {
			cols := list(t, o.data, "columns")
			if len(cols) != 1 || str(t, cols[0], "state") != "done" || len(list(t, cols[0], "issues")) != 3 || num(t, cols[0], "count") < 40 {
				t.Fatalf("columns = %s", short(cols))
			}
		}},
		{name: "board/empty", input: `{"view":"board","filters":{"label":"no-such-label"}}`, check: func(t *testing.T, o outcome) {
			if !strings.Contains(o.instruction, "No issue is on the board matching label no-such-label") {
				t.Fatalf("instruction = %s", o.instruction)
			}
		}},

		// runway
		{name: "runway", input: `{"view":"runway"}`, check: func(t *testing.T, o outcome) {
			ms := list(t, o.data, "milestones")
			if len(ms) != 2 {
				t.Fatalf("milestones = %s", short(ms))
			}
			if str(t, ms[0], "band.p50") > str(t, ms[0], "band.p80") || str(t, ms[0], "due") > str(t, ms[1], "due") {
				t.Fatalf("runway out of order: %s", short(ms))
			}
			capacity := list(t, o.data, "capacity")
			if len(capacity) == 0 || num(t, capacity[0], "hoursPerWeek") <= 0 {
				t.Fatalf("capacity = %s", short(capacity))
			}
		}},
		{name: "runway/one", input: `{"view":"runway","filters":{"milestoneId":2}}`, check: func(t *testing.T, o outcome) {
			if ms := list(t, o.data, "milestones"); len(ms) != 1 || num(t, ms[0], "id") != 2 {
				t.Fatalf("milestones = %s", short(ms))
			}
		}},
		{name: "runway/not-found", input: `{"view":"runway","filters":{"milestoneId":77}}`, code: tools.CodeNotFound, status: 404},

		// calibration
		{name: "calibration", input: `{"view":"calibration"}`, check: func(t *testing.T, o outcome) {
			if num(t, o.data, "globalMultiplier") <= 0 {
				t.Fatalf("calibration = %s", short(o.data))
			}
			list(t, o.data, "byLabelBias")
			list(t, o.data, "byPersonBias")
		}},
		{name: "calibration/person-none", input: `{"view":"calibration","filters":{"assignee":"nobody"}}`, check: func(t *testing.T, o outcome) {
			if len(list(t, o.data, "byPersonBias")) != 0 || !strings.Contains(notes(o.data), "byPersonBias: no person") {
				t.Fatalf("notes = %s", notes(o.data))
			}
		}},

		// directives
		{name: "directives", input: `{"view":"directives"}`, check: func(t *testing.T, o outcome) {
			p := list(t, o.data, "pending")
			if len(p) != 1 || str(t, p[0], "quote") != "Login first, everything else after." || len(list(t, p[0], "consequence")) != 1 {
				t.Fatalf("pending = %s", short(p))
			}
			if len(list(t, o.data, "recent")) != 2 || num(t, o.data, "pendingTotal") != 1 {
				t.Fatalf("directives = %s", short(o.data))
			}
		}},
		{name: "directives/limit-1", input: `{"view":"directives","filters":{"limit":1}}`, check: func(t *testing.T, o outcome) {
			if r := list(t, o.data, "recent"); len(r) != 1 || str(t, r[0], "kind") != "note" {
				t.Fatalf("recent = %s", short(r))
			}
			if !strings.Contains(notes(o.data), "recent: shown the latest 1") {
				t.Fatalf("notes = %s", notes(o.data))
			}
		}},

		// search
		{name: "search", input: `{"view":"search","filters":{"query":"keychain safari"}}`, check: func(t *testing.T, o outcome) {
			hits := list(t, o.data, "issues")
			if len(hits) != 1 || num(t, hits[0], "issue") != 1001 || !strings.Contains(strings.ToLower(str(t, hits[0], "snippet")), "keychain") {
				t.Fatalf("hits = %s", short(hits))
			}
		}},
		{name: "search/title", input: `{"view":"search","filters":{"query":"indexer OR \"search index\""}}`, check: func(t *testing.T, o outcome) {
			if hits := list(t, o.data, "issues"); len(hits) != 1 || num(t, hits[0], "issue") != 1002 {
				t.Fatalf("hits = %s", short(hits))
			}
		}},
		{name: "search/state-filter", input: `{"view":"search","filters":{"query":"work","state":"done","limit":5}}`, check: func(t *testing.T, o outcome) {
			hits := list(t, o.data, "issues")
			if len(hits) != 5 || num(t, o.data, "total") != 40 {
				t.Fatalf("done hits = %d of %v", len(hits), get(t, o.data, "total"))
			}
			for _, h := range hits {
				if str(t, h, "state") != "done" {
					t.Fatalf("hit not done: %s", short(h))
				}
			}
		}},
		{name: "search/nothing", input: `{"view":"search","filters":{"query":"zzyzx"}}`, check: func(t *testing.T, o outcome) {
			if num(t, o.data, "total") != 0 || !strings.Contains(notes(o.data), `nothing matches "zzyzx"`) || !strings.Contains(o.instruction, "Nothing matched") {
				t.Fatalf("empty search not said in words: %s / %s", notes(o.data), o.instruction)
			}
		}},
		{name: "search/no-query", input: `{"view":"search"}`, code: tools.CodeInvalidInput, field: "filters.query", status: 400},

		// input and project errors
		{name: "no-view", input: `{}`, code: tools.CodeInvalidInput, field: "view", status: 400},
		{name: "bad-view", input: `{"view":"gantt"}`, code: tools.CodeInvalidInput, field: "view", status: 400},
		{name: "unknown-field", input: `{"view":"focus","filter":{}}`, code: tools.CodeInvalidInput, field: "filter", status: 400},
		{name: "unknown-filter", input: `{"view":"focus","filters":{"milestone":1}}`, code: tools.CodeInvalidInput, field: "milestone", status: 400},
		{name: "project-named", input: `{"view":"runway","project":"CEO/Demo"}`},
		{name: "project-unknown", input: `{"view":"runway","project":"ceo/other"}`, code: tools.CodeNotFound, field: "project", status: 404},
		{name: "project-malformed", input: `{"view":"runway","project":"demo"}`, code: tools.CodeInvalidInput, field: "project", status: 400},
		{name: "write-only-token", secret: writeOnly, input: `{"view":"focus"}`, code: tools.CodeForbidden, status: 403},
	})

	// The standup view says there is none, then serves the stored one.
	runCases(t, s, []toolCase{{name: "standup/none", input: `{"view":"standup"}`, check: func(t *testing.T, o outcome) {
		if get(t, o.data, "standup") != nil || !strings.Contains(str(t, o.data, "message"), "No standup has been produced") {
			t.Fatalf("standup = %s", short(o.data))
		}
	}}})
	content := json.RawMessage(`{"project":"ceo/demo","day":"2026-11-30","drift":[{"milestone":1,"p80Before":"2026-12-20","p80After":"2026-12-22"}],
		"plan":[{"login":"alice","now":[{"number":1001,"title":"Flaky login on Safari"}]},{"login":"bob"}],"staleBlockers":[],"baseline":{"at":"2026-11-30T09:00:00Z"}}`)
	if _, _, err := store.InsertStandupOnce(ctx, s.pool, store.DailyStandup{ProjectID: s.project.ID, Day: toolNow, SnapshotVersion: 1, Content: content, Text: "v1.0 slipped two days."}); err != nil {
		t.Fatal(err)
	}
	runCases(t, s, []toolCase{
		{name: "standup", input: `{"view":"standup"}`, check: func(t *testing.T, o outcome) {
			if str(t, o.data, "standup.day") != "2026-11-30" || str(t, o.data, "standup.text") != "v1.0 slipped two days." || len(list(t, o.data, "standup.content.drift")) != 1 {
				t.Fatalf("standup = %s", short(o.data))
			}
			if len(list(t, o.data, "standup.content.plan")) != 2 || !strings.Contains(notes(o.data), "staleBlockers: no stale blocker") {
				t.Fatalf("standup = %s, notes %s", short(o.data), notes(o.data))
			}
			if _, ok := get(t, o.data, "standup.content").(map[string]any)["baseline"]; ok {
				t.Fatal("the baseline reached the view")
			}
		}},
		{name: "standup/person", input: `{"view":"standup","filters":{"assignee":"alice","limit":1}}`, check: func(t *testing.T, o outcome) {
			plan := list(t, o.data, "standup.content.plan")
			if len(plan) != 1 || str(t, plan[0], "login") != "alice" {
				t.Fatalf("alice's plan = %s", short(plan))
			}
		}},
		{name: "standup/person-none", input: `{"view":"standup","filters":{"assignee":"carol"}}`, check: func(t *testing.T, o outcome) {
			if len(list(t, o.data, "standup.content.plan")) != 0 || !strings.Contains(notes(o.data), "plan: carol has no plan") {
				t.Fatalf("notes = %s", notes(o.data))
			}
		}},
	})
}

// TestWriteToolRefusals: capture_work has no model yet; the write tools
// refuse what they must before touching anything (this stack has no Gitea
// client: an apply_changes that passes validation says Gitea is
// unavailable; writes_test.go covers the write path).
func TestWriteToolRefusals(t *testing.T) {
	t.Parallel()
	s := newToolStack(t, true)
	runCases(t, s, []toolCase{
		{name: "capture_work", secret: writerSecret, tool: "capture_work", input: `{"braindump":"We need SSO."}`, code: tools.CodeModelUnavailable, status: 503},
		{name: "capture_work/answers", secret: writerSecret, tool: "capture_work", input: `{"braindump":"SSO","answers":[{"question":"Which IdP?","answer":"Keycloak"}]}`, code: tools.CodeModelUnavailable, status: 503},
		{name: "capture_work/no-braindump", secret: writerSecret, tool: "capture_work", input: `{}`, code: tools.CodeInvalidInput, field: "braindump", status: 400},
		{name: "capture_work/reader", secret: readerSecret, tool: "capture_work", input: `{"braindump":"x"}`, code: tools.CodeForbidden, status: 403},
		{name: "apply_changes/no-gitea", secret: writerSecret, tool: "apply_changes", input: `{"ops":[{"op":"set_estimate","issue":1001,"estimate":"est/m"}]}`, code: tools.CodeGiteaUnavailable, status: 502},
		{name: "apply_changes/approved-without-approve", secret: writerSecret, tool: "apply_changes", input: `{"ops":[{"op":"close_issue","issue":1001}],"approved":true}`, code: tools.CodeForbidden, field: "approved", status: 403},
		{name: "apply_changes/approved-no-gitea", secret: approverSecret, tool: "apply_changes", input: `{"ops":[{"op":"close_issue","issue":1001}],"approved":true}`, code: tools.CodeGiteaUnavailable, status: 502},
		{name: "apply_changes/unapproved", secret: approverSecret, tool: "apply_changes", input: `{"ops":[{"op":"close_issue","issue":1001}]}`, code: tools.CodeNeedsApproval, field: "approved", status: 409},
		{name: "apply_changes/reader", secret: readerSecret, tool: "apply_changes", input: `{"ops":[]}`, code: tools.CodeForbidden, status: 403},
		{name: "apply_changes/bad-op-field", secret: writerSecret, tool: "apply_changes", input: `{"ops":[{"op":"close_issue","issue":1,"why":"x"}]}`, code: tools.CodeInvalidInput, field: "why", status: 400},
		{name: "record_directive/no-params", secret: writerSecret, tool: "record_directive", input: `{"kind":"reprioritize","quote":"Ship it first.","target":{"issue":1001}}`, code: tools.CodeModelUnavailable, field: "params", status: 503},
		{name: "record_directive/reader", secret: readerSecret, tool: "record_directive", input: `{"kind":"note","quote":"x"}`, code: tools.CodeForbidden, status: 403},
	})
	// Nothing was written by any of them.
	var n int
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM directives`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("directives = %d, %v; want none", n, err)
	}
}

func TestToolsBeforeFirstSnapshot(t *testing.T) {
	t.Parallel()
	s := newToolStack(t, false)
	runCases(t, s, []toolCase{{name: "not-ready", input: `{"view":"focus"}`, code: tools.CodeNotReady, status: 503, check: func(t *testing.T, o outcome) {
		if !strings.Contains(o.message, "no forecast for ceo/demo yet") {
			t.Fatalf("message = %s", o.message)
		}
	}}})
}

func TestToolAuth(t *testing.T) {
	t.Parallel()
	s := newToolStack(t, false)
	do := func(method, path, secret, body string) (int, string) {
		req, _ := http.NewRequest(method, s.srv.URL+path, strings.NewReader(body))
		if secret != "" {
			req.Header.Set("Authorization", "Bearer "+secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, c := range []struct {
		name, method, path, secret string
		status                     int
		code                       string
	}{
		{"call/no-token", http.MethodPost, "/v1/tools/query_project", "", 401, "UNAUTHORIZED"},
		{"call/wrong-token", http.MethodPost, "/v1/tools/query_project", "not-a-token-of-ours-123", 401, "UNAUTHORIZED"},
		{"list/no-token", http.MethodGet, "/v1/tools", "", 401, "UNAUTHORIZED"},
		{"list/write-only", http.MethodGet, "/v1/tools", writeOnly, 403, "FORBIDDEN"},
		{"mcp/no-token", http.MethodPost, "/mcp", "", 401, "UNAUTHORIZED"},
		{"mcp-readonly/write-only", http.MethodPost, "/mcp/readonly", writeOnly, 403, "FORBIDDEN"},
		{"unknown-tool", http.MethodPost, "/v1/tools/delete_everything", readerSecret, 404, "NOT_FOUND"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body := do(c.method, c.path, c.secret, `{"view":"focus"}`)
			if status != c.status || !strings.Contains(body, `"code":"`+c.code+`"`) {
				t.Fatalf("%s %s = %d %s, want %d %s", c.method, c.path, status, body, c.status, c.code)
			}
		})
	}
	if _, err := mcpTryConnect(s.srv.URL+"/mcp", ""); err == nil {
		t.Fatal("an MCP client without a token connected")
	}
}

func TestToolListAndMCPSchemas(t *testing.T) {
	t.Parallel()
	s := newToolStack(t, true)
	req, _ := http.NewRequest(http.MethodGet, s.srv.URL+"/v1/tools", nil)
	req.Header.Set("Authorization", "Bearer "+readerSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var listed struct {
		Tools []struct {
			Name, Description, Scope string
			ReadOnly                 bool
			InputSchema              map[string]any
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&listed)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range listed.Tools {
		names = append(names, tl.Name)
		if tl.Description == "" || tl.InputSchema["type"] != "object" {
			t.Fatalf("tool %s lacks a description or an object schema", tl.Name)
		}
	}
	want := []string{"query_project", "capture_work", "apply_changes", "record_directive"}
	if !slices.Equal(names, want) {
		t.Fatalf("GET /v1/tools names = %v, want %v", names, want)
	}

	ctx := context.Background()
	full := mcpConnect(t, s.srv.URL+"/mcp", writerSecret)
	res, err := full.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var mcpNames []string
	schemas := map[string]map[string]any{}
	for _, tl := range res.Tools {
		mcpNames = append(mcpNames, tl.Name)
		m, ok := tl.InputSchema.(map[string]any)
		if !ok {
			t.Fatalf("%s input schema = %T", tl.Name, tl.InputSchema)
		}
		schemas[tl.Name] = m
		if tl.OutputSchema == nil || tl.Annotations == nil {
			t.Fatalf("%s lacks an output schema or annotations", tl.Name)
		}
	}
	slices.Sort(mcpNames)
	if !slices.Equal(mcpNames, []string{"apply_changes", "capture_work", "query_project", "record_directive"}) {
		t.Fatalf("/mcp tools = %v", mcpNames)
	}
	// The schemas are the contract's: the view enum, the filters, the ops.
	views := get(t, schemas["query_project"], "properties.view.enum").([]any)
	if len(views) != 9 {
		t.Fatalf("view enum = %v", views)
	}
	filters := get(t, schemas["query_project"], "properties.filters.properties").(map[string]any)
	for _, f := range []string{"issueId", "milestoneId", "state", "assignee", "label", "query", "limit"} {
		if _, ok := filters[f]; !ok {
			t.Fatalf("filter %s missing from the schema", f)
		}
	}
	if ops := get(t, schemas["apply_changes"], "properties.ops.items.properties.op.enum").([]any); len(ops) != 10 {
		t.Fatalf("apply_changes declares %d ops, want 10", len(ops))
	}
	if kinds := get(t, schemas["record_directive"], "properties.kind.enum").([]any); len(kinds) != 6 {
		t.Fatalf("record_directive kinds = %v", kinds)
	}

	ro := mcpConnect(t, s.srv.URL+"/mcp/readonly", readerSecret)
	res, err = ro.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 1 || res.Tools[0].Name != "query_project" {
		t.Fatalf("/mcp/readonly tools = %v", res.Tools)
	}
	call, err := ro.CallTool(ctx, &mcp.CallToolParams{Name: "query_project", Arguments: map[string]any{"view": "runway"}})
	if err != nil || call.IsError {
		t.Fatalf("readonly query_project: %v %v", err, call)
	}
	if _, err := ro.CallTool(ctx, &mcp.CallToolParams{Name: "apply_changes", Arguments: map[string]any{"ops": []any{}}}); err == nil {
		t.Fatal("/mcp/readonly served apply_changes")
	}
	// Same envelope on both transports for the same call.
	var viaHTTP, viaMCP bytes.Buffer
	h := httpTransport{s}.call(t, readerSecret, "query_project", `{"view":"runway"}`)
	_ = json.NewEncoder(&viaHTTP).Encode(h.data)
	m := (&mcpTransport{s: s, sessions: map[string]*mcp.ClientSession{}}).call(t, readerSecret, "query_project", `{"view":"runway"}`)
	_ = json.NewEncoder(&viaMCP).Encode(m.data)
	if viaHTTP.String() != viaMCP.String() || h.instruction != m.instruction {
		t.Fatalf("transports differ:\nhttp %s\nmcp  %s", viaHTTP.String(), viaMCP.String())
	}
}

func TestIdempotencyKeyHeader(t *testing.T) {
	t.Parallel()
	s := newToolStack(t, true)
	post := func(tool, body, key string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/v1/tools/"+tool, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+writerSecret)
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// apply_changes takes the key (it reaches the handler, which asks for
	// approval of the destructive op).
	if status, body := post("apply_changes", `{"ops":[{"op":"close_issue","issue":1001}]}`, "k-1"); status != 409 || !strings.Contains(body, "NEEDS_APPROVAL") {
		t.Fatalf("apply_changes with a key = %d %s", status, body)
	}
	// A read does not: the header is refused, not ignored.
	if status, body := post("query_project", `{"view":"focus"}`, "k-2"); status != 400 || !strings.Contains(body, `"field":"Idempotency-Key"`) {
		t.Fatalf("query_project with a key = %d %s", status, body)
	}
}

// TestMCPBehindAReverseProxy: a proxy on the same machine forwards with the
// public Host header over loopback; the bearer token, not the Host, guards
// the endpoint.
func TestMCPBehindAReverseProxy(t *testing.T) {
	t.Parallel()
	s := newToolStack(t, true)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"proxy-test","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/mcp", strings.NewReader(body))
	req.Host = "commitea.example.com"
	req.Header.Set("Authorization", "Bearer "+readerSecret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"serverInfo"`) {
		t.Fatalf("initialize through a proxy = %d %s", resp.StatusCode, b)
	}
}
