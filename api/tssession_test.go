package api

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/models/modeltest"
	"github.com/commitea/commitea/worker/tools"
)

// TestTypeScriptClientSession is an agent's session through the official
// TypeScript SDK against everything `commitea serve` declares (the four
// tools, ask, the resources) with Gitea and both models on loopback: it
// lists the tools, calls every tool once to succeed and once to fail,
// reads an approval preview, reads the resources and checks
// /mcp/readonly. Every failure must arrive as an isError result naming
// its code, never as an exception.
func TestTypeScriptClientSession(t *testing.T) {
	t.Parallel()
	small := modeltest.NewOpenAI(t)
	small.Handle(func(modeltest.Request) modeltest.Reply {
		return modeltest.Text("Issue #2 is the one to watch.", 400, 12)
	})
	big := modeltest.NewOpenAI(t)
	big.Handle(func(modeltest.Request) modeltest.Reply {
		return modeltest.JSON(map[string]any{"kind": "proposal", "issues": []any{
			map[string]any{"title": "Export as CSV", "body": "A CSV export of the board.", "estimate": "est/s"},
		}}, 700, 60)
	})
	s, _ := writeStack(t, small, big)
	// An open milestone, so that there is a forecast to read.
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	due := now.AddDate(0, 1, 0)
	if err := store.UpsertMilestones(ctx, s.pool, s.project.ID, []store.Milestone{{ID: 7, Title: "v2.0", State: "open", DueOn: &due}}); err != nil {
		t.Fatal(err)
	}
	engine := &worker.Forecaster{Pool: s.pool, Log: quietLog(), Trials: 200, Now: func() time.Time { return now }}
	if err := engine.Recompute(ctx, s.project.ID); err != nil {
		t.Fatal(err)
	}

	type call struct {
		name, tool, input, code, field string
	}
	calls := []call{
		{"query/ok", "query_project", `{"view":"runway"}`, "", ""},
		{"query/unknown-view", "query_project", `{"view":"gantt"}`, tools.CodeInvalidInput, "view"},
		{"apply/ok", "apply_changes", `{"ops":[{"op":"set_estimate","issue":2,"estimate":"est/m"}]}`, "", ""},
		{"apply/needs-approval", "apply_changes", `{"ops":[{"op":"close_issue","issue":3}]}`, tools.CodeNeedsApproval, "approved"},
		{"directive/ok", "record_directive", `{"kind":"note","quote":"Bob is out on Friday."}`, "", ""},
		{"directive/unknown-issue", "record_directive", `{"kind":"reprioritize","quote":"#404 first","target":{"issue":404},"params":{"priority":0}}`, tools.CodeNotFound, ""},
		{"capture/ok", "capture_work", `{"braindump":"We need a CSV export of the board."}`, "", ""},
		{"capture/no-braindump", "capture_work", `{"braindump":""}`, tools.CodeInvalidInput, "braindump"},
		{"ask/ok", "ask", `{"question":"What should I watch?"}`, "", ""},
		{"ask/too-long", "ask", fmt.Sprintf(`{"question":%q}`, strings.Repeat("why ", 1001)), tools.CodeInvalidInput, "question"},
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	plan := tsPlan{Connections: map[string]tsConn{
		"readonly": {URL: s.srv.URL + "/mcp/readonly", Token: readerSecret},
		// This test binary as `commitea mcp` (see TestMain).
		"stdio": {Command: self, Args: []string{"-test.run=^$"},
			Env: map[string]string{stdioRelayEnv: "1", "COMMITEA_URL": s.srv.URL + "/mcp", "COMMITEA_TOKEN": approverSecret}},
	}}
	plan.Steps = append(plan.Steps, tsStep{Op: "listTools"})
	for _, c := range calls {
		plan.Steps = append(plan.Steps, tsStep{Op: "callTool", Name: c.tool, Arguments: json.RawMessage(c.input)})
	}
	resources := len(plan.Steps)
	plan.Steps = append(plan.Steps,
		tsStep{Op: "listResources"},
		tsStep{Op: "listResourceTemplates"},
		tsStep{Op: "readResource", URI: "commitea://ceo/demo/ledger"},
		tsStep{Op: "readResource", URI: "commitea://ceo/demo/standup"},
		tsStep{Op: "readResource", URI: "commitea://ceo/demo/milestones/7"},
		tsStep{Op: "readResource", URI: "commitea://ceo/demo/milestones/99"},
	)
	readonly := len(plan.Steps)
	plan.Steps = append(plan.Steps,
		tsStep{Conn: "readonly", Op: "listTools"},
		tsStep{Conn: "readonly", Op: "callTool", Name: "query_project", Arguments: json.RawMessage(`{"view":"focus"}`)},
		tsStep{Conn: "readonly", Op: "callTool", Name: "apply_changes", Arguments: json.RawMessage(`{"ops":[{"op":"set_estimate","issue":2,"estimate":"est/l"}]}`)},
		tsStep{Conn: "readonly", Op: "listResources"},
	)
	stdio := len(plan.Steps)
	plan.Steps = append(plan.Steps,
		tsStep{Conn: "stdio", Op: "listTools"},
		tsStep{Conn: "stdio", Op: "callTool", Name: "query_project", Arguments: json.RawMessage(`{"view":"gantt"}`)},
		tsStep{Conn: "stdio", Op: "callTool", Name: "apply_changes", Arguments: json.RawMessage(`{"ops":[{"op":"close_issue","issue":3}]}`)},
		tsStep{Conn: "stdio", Op: "callTool", Name: "query_project", Arguments: json.RawMessage(`{"view":"focus"}`)},
		tsStep{Conn: "stdio", Op: "readResource", URI: "commitea://ceo/demo/milestones/7"},
		tsStep{Conn: "stdio", Op: "readResource", URI: "commitea://ceo/demo/milestones/99"},
	)
	run := runTSClient(t, s.srv.URL+"/mcp", approverSecret, plan)

	// The tool list, as the SDK received it.
	var listed struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
			Annotations  map[string]bool `json:"annotations"`
		} `json:"tools"`
	}
	if run.Steps[0].Threw != "" || json.Unmarshal(run.Steps[0].Result, &listed) != nil {
		t.Fatalf("listTools: %s %s", run.Steps[0].Threw, run.Steps[0].Result)
	}
	var names []string
	for _, tl := range listed.Tools {
		names = append(names, tl.Name)
		if len(tl.OutputSchema) == 0 || len(tl.Annotations) != 4 {
			t.Errorf("%s: output schema %s, annotations %v", tl.Name, tl.OutputSchema, tl.Annotations)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"apply_changes", "ask", "capture_work", "query_project", "record_directive"}) {
		t.Fatalf("/mcp lists %v", names)
	}

	for i, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			o := run.Steps[1+i].toolOutcome(t)
			if o.code != c.code || (c.field != "" && o.field != c.field) {
				t.Fatalf("code %q field %q (%s), want %q %q", o.code, o.field, o.message, c.code, c.field)
			}
			if c.code != "" && o.message == "" {
				t.Fatal("an error without a message")
			}
			switch c.name {
			case "apply/needs-approval":
				// The preview an agent must show a person, readable apart
				// from the message.
				if o.preview == "" || !strings.Contains(o.message, o.preview) {
					t.Fatalf("preview %q, message %q", o.preview, o.message)
				}
			case "capture/ok":
				if op := str(t, o.data, "proposal.issues.0.op"); op != "create_issue" {
					t.Fatalf("proposal = %s", short(o.data))
				}
			case "ask/ok":
				if str(t, o.data, "answer") == "" || str(t, o.data, "conversationId") == "" {
					t.Fatalf("ask = %s", short(o.data))
				}
			}
		})
	}

	// Resources.
	var list struct {
		Resources []struct {
			URI      string `json:"uri"`
			MIMEType string `json:"mimeType"`
		} `json:"resources"`
	}
	if r := run.Steps[resources]; r.Threw != "" || json.Unmarshal(r.Result, &list) != nil {
		t.Fatalf("listResources: %s %s", r.Threw, r.Result)
	}
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI+" "+r.MIMEType)
	}
	for _, want := range []string{"commitea://ceo/demo/ledger text/markdown", "commitea://ceo/demo/standup application/json", "commitea://ceo/demo/milestones/7 application/json"} {
		if !slices.Contains(uris, want) {
			t.Fatalf("resources = %v, want %s", uris, want)
		}
	}
	if r := run.Steps[resources+1]; r.Threw != "" || !strings.Contains(string(r.Result), "commitea://{owner}/{repo}/milestones/{id}") {
		t.Fatalf("listResourceTemplates: %s %s", r.Threw, r.Result)
	}
	readText := func(i int) string {
		t.Helper()
		var res struct {
			Contents []struct {
				URI  string `json:"uri"`
				Text string `json:"text"`
			} `json:"contents"`
		}
		if r := run.Steps[i]; r.Threw != "" || json.Unmarshal(r.Result, &res) != nil || len(res.Contents) != 1 {
			t.Fatalf("readResource: %s %s", r.Threw, r.Result)
		}
		return res.Contents[0].Text
	}
	if md := readText(resources + 2); !strings.Contains(md, "> Bob is out on Friday.") {
		t.Fatalf("ledger = %.300s", md)
	}
	if js := readText(resources + 3); !json.Valid([]byte(js)) || !strings.Contains(js, `"message"`) {
		t.Fatalf("standup = %.300s", js)
	}
	if js := readText(resources + 4); !json.Valid([]byte(js)) || !strings.Contains(js, `"title":"v2.0"`) {
		t.Fatalf("milestone = %.300s", js)
	}
	if r := run.Steps[resources+5]; !strings.Contains(r.Threw, "NOT_FOUND") {
		t.Fatalf("reading a milestone that does not exist: threw %q, result %s", r.Threw, r.Result)
	}

	// /mcp/readonly: reads only, resources too.
	var ro struct {
		Tools []struct {
			Name        string          `json:"name"`
			Annotations map[string]bool `json:"annotations"`
		} `json:"tools"`
	}
	if r := run.Steps[readonly]; r.Threw != "" || json.Unmarshal(r.Result, &ro) != nil {
		t.Fatalf("readonly listTools: %s %s", r.Threw, r.Result)
	}
	var roNames []string
	for _, tl := range ro.Tools {
		roNames = append(roNames, tl.Name)
	}
	if !slices.Contains(roNames, "query_project") || slices.ContainsFunc(roNames, func(n string) bool {
		return n == "apply_changes" || n == "record_directive" || n == "capture_work"
	}) {
		t.Fatalf("/mcp/readonly lists %v", roNames)
	}
	if o := run.Steps[readonly+1].toolOutcome(t); o.code != "" {
		t.Fatalf("readonly query_project: %s %s", o.code, o.message)
	}
	if r := run.Steps[readonly+2]; r.Threw == "" {
		t.Fatalf("/mcp/readonly ran apply_changes: %s", r.Result)
	}
	if r := run.Steps[readonly+3]; r.Threw != "" || !strings.Contains(string(r.Result), "commitea://ceo/demo/ledger") {
		t.Fatalf("readonly listResources: %s %s", r.Threw, r.Result)
	}

	// Over stdio through `commitea mcp`: the same tools, errors and
	// resources, passed through unchanged, and the relay says it announces
	// new snapshots.
	if !strings.Contains(string(run.Connected["stdio"].Capabilities), `"listChanged":true`) {
		t.Errorf("stdio capabilities = %s", run.Connected["stdio"].Capabilities)
	}
	if !jsonEqual(t, run.Steps[stdio].Result, run.Steps[0].Result) {
		t.Errorf("tools/list over stdio differs from /mcp:\n%s", run.Steps[stdio].Result)
	}
	if !jsonEqual(t, run.Steps[stdio+1].Result, run.Steps[2].Result) {
		t.Errorf("an error over stdio differs from /mcp:\n%s\n%s", run.Steps[stdio+1].Result, run.Steps[2].Result)
	}
	if r := run.Steps[stdio+2]; r.Threw != "" || !strings.Contains(string(r.Result), "NEEDS_APPROVAL") || !strings.Contains(string(r.Result), `\"preview\"`) {
		t.Errorf("NEEDS_APPROVAL over stdio: %s %s", r.Threw, r.Result)
	}
	if r := run.Steps[stdio+3]; r.Threw != "" || !strings.Contains(string(r.Result), `"structuredContent"`) {
		t.Errorf("query_project over stdio: %s %s", r.Threw, r.Result)
	}
	if !jsonEqual(t, run.Steps[stdio+4].Result, run.Steps[resources+4].Result) {
		t.Errorf("a resource over stdio differs from /mcp:\n%s", run.Steps[stdio+4].Result)
	}
	if r := run.Steps[stdio+5]; r.Threw != run.Steps[resources+5].Threw {
		t.Errorf("reading a missing resource over stdio threw %q, over /mcp %q", r.Threw, run.Steps[resources+5].Threw)
	}
}
