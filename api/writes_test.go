package api

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
	"github.com/commitea/commitea/worker/models/modeltest"
	"github.com/commitea/commitea/worker/reginald"
	"github.com/commitea/commitea/worker/tools"
)

// writeToolStack serves the tools over a mirror of the loopback fake Gitea
// (the recorded ceo/demo: #1 closed, #2 and #3 open, #4 a pull request),
// brought in by the real backfill, with the write path wired to the fake.
func writeToolStack(t *testing.T) (toolStack, *giteafake.Server) {
	t.Helper()
	return writeStack(t, nil, nil)
}

// writeStack is writeToolStack with scripted models (nil: none): big
// answers capture_work and directive negotiation; small, when set, serves
// Reginald's ask beside the four tools, as `commitea serve` does.
func writeStack(t *testing.T, small, big *modeltest.Server) (toolStack, *giteafake.Server) {
	t.Helper()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	p, err := store.EnsureProject(ctx, pool, "ceo", "demo")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	fake, err := giteafake.New(giteafake.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	client, err := gitea.New(fake.URL, fake.Token(), gitea.Options{BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	syncer := &worker.Syncer{Pool: pool, Gitea: client, Replayer: worker.LifecycleReplayer{}, Log: quietLog(), Now: func() time.Time { return now }}
	if err := syncer.Backfill(ctx, p); err != nil {
		t.Fatal(err)
	}
	engine := &worker.Forecaster{Pool: pool, Log: quietLog(), Trials: 200, Now: func() time.Time { return now }}
	if err := engine.Recompute(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	svc := tools.NewService(pool, []store.Project{p}, quietLog())
	svc.Write = tools.WriteConfig{Gitea: client, Engine: engine, Now: func() time.Time { return now }}
	registry := svc.Registry()
	if small != nil || big != nil {
		router, _, _ := modeltest.Router(t, small, big)
		svc.Models = router
		if small != nil {
			r := &reginald.Reginald{Tools: registry, Models: router, Pool: pool, Log: quietLog(), Now: func() time.Time { return now }}
			registry = reginald.Registry(registry, r)
		}
	}
	srv := toolServer(t, Config{Tools: registry, PMState: svc.PMStateMarkdown, Tokens: testTokens, Version: "test", Log: quietLog()})
	t.Cleanup(srv.Close)
	fake.ResetRequests()
	return toolStack{pool: pool, project: p, srv: srv}, fake
}

func TestWriteToolsOverBothTransports(t *testing.T) {
	t.Parallel()
	s, fake := writeToolStack(t)
	applied := func(n float64) func(t *testing.T, o outcome) {
		return func(t *testing.T, o outcome) {
			if got := num(t, o.data, "applied"); got != n {
				t.Fatalf("applied = %v, want %v: %s", got, n, short(o.data))
			}
		}
	}
	runCases(t, s, []toolCase{
		{name: "apply/set_estimate", secret: writerSecret, tool: "apply_changes", input: `{"ops":[{"op":"set_estimate","issue":2,"estimate":"est/m"}]}`,
			check: applied(1)},
		{name: "apply/create_issue", secret: writerSecret, tool: "apply_changes", input: `{"ops":[{"op":"create_issue","title":"Export as CSV","body":"","labels":["p/1"],"deps":[2]}]}`,
			check: func(t *testing.T, o outcome) {
				applied(1)(t, o)
				if created := list(t, o.data, "created"); len(created) != 1 {
					t.Fatalf("created = %v", created)
				}
			}},
		{name: "apply/foreign-label-rejected", secret: writerSecret, tool: "apply_changes", input: `{"ops":[{"op":"set_priority","issue":2,"priority":"p/2"},{"op":"create_issue","title":"x","body":"","labels":["bug"]}]}`,
			check: func(t *testing.T, o outcome) {
				applied(0)(t, o)
				rej := list(t, o.data, "rejected")
				if len(rej) != 1 || num(t, rej[0], "op") != 1 || !strings.HasPrefix(str(t, rej[0], "reason"), "NAMESPACE_FORBIDDEN") {
					t.Fatalf("rejected = %v", rej)
				}
			}},
		{name: "apply/needs-approval", secret: approverSecret, tool: "apply_changes", input: `{"ops":[{"op":"close_issue","issue":3}]}`,
			code: tools.CodeNeedsApproval, field: "approved", status: http.StatusConflict, check: func(t *testing.T, o outcome) {
				if !strings.Contains(o.message, "Consequence preview") || o.preview == "" || !strings.Contains(o.message, o.preview) {
					t.Fatalf("message = %s, preview %q", o.message, o.preview)
				}
			}},
		{name: "apply/approve-needs-scope", secret: writerSecret, tool: "apply_changes", input: `{"ops":[{"op":"close_issue","issue":3}],"approved":true}`,
			code: tools.CodeForbidden, field: "approved", status: http.StatusForbidden},
		// Sent over HTTP, then over both MCP clients with the same key: applied once.
		{name: "apply/approved-with-key", secret: approverSecret, tool: "apply_changes", input: `{"ops":[{"op":"close_issue","issue":3},{"op":"remove_dep","issue":2,"dependsOn":3}],"approved":true,"idempotencyKey":"close-3"}`,
			check: applied(2)},
		{name: "apply/unknown-issue", secret: writerSecret, tool: "apply_changes", input: `{"ops":[{"op":"add_dep","issue":2,"dependsOn":404}]}`,
			check: func(t *testing.T, o outcome) {
				if rej := list(t, o.data, "rejected"); len(rej) != 1 || !strings.Contains(str(t, rej[0], "reason"), "#404") {
					t.Fatalf("rejected = %v", rej)
				}
			}},
		{name: "apply/empty", secret: writerSecret, tool: "apply_changes", input: `{"ops":[]}`, code: tools.CodeInvalidInput, field: "ops", status: http.StatusBadRequest},
		{name: "directive/reprioritize", secret: writerSecret, tool: "record_directive", input: `{"kind":"reprioritize","quote":"#2 comes first","target":{"issue":2},"params":{"priority":0}}`,
			check: func(t *testing.T, o outcome) {
				if num(t, o.data, "directiveId") <= 0 || !strings.Contains(str(t, o.data, "summary"), "pending") {
					t.Fatalf("answer = %s", short(o.data))
				}
			}},
		{name: "directive/capacity", secret: writerSecret, tool: "record_directive", input: `{"kind":"capacity","quote":"Bob is off next week","target":{"member":"bob"},"params":{"timeOff":[{"from":"2026-12-07","to":"2026-12-11"}]}}`,
			check: func(t *testing.T, o outcome) {
				if !strings.Contains(str(t, o.data, "summary"), "capacity calendar") {
					t.Fatalf("answer = %s", short(o.data))
				}
			}},
		{name: "directive/no-params", secret: writerSecret, tool: "record_directive", input: `{"kind":"reestimate","quote":"that one is bigger","target":{"issue":2}}`,
			code: tools.CodeModelUnavailable, field: "params", status: http.StatusServiceUnavailable},
		{name: "directive/bad-param", secret: writerSecret, tool: "record_directive", input: `{"kind":"reestimate","quote":"x","target":{"issue":2},"params":{"estimate":"enormous"}}`,
			code: tools.CodeInvalidInput, field: "params.estimate", status: http.StatusBadRequest},
		{name: "directive/reader", secret: readerSecret, tool: "record_directive", input: `{"kind":"note","quote":"x"}`, code: tools.CodeForbidden, status: http.StatusForbidden},
	})

	count := func(method, path string) int {
		n := 0
		for _, r := range fake.Requests() {
			if r.Method == method && r.Path == path {
				n++
			}
		}
		return n
	}
	if n := count(http.MethodPatch, "/repos/ceo/demo/issues/3"); n != 1 {
		t.Fatalf("the approved close was sent %d times over three transports with one key", n)
	}
	if n := count(http.MethodPost, "/repos/ceo/demo/issues"); n != 3 {
		t.Fatalf("create_issue sent %d times; want once per transport", n)
	}
	for _, r := range fake.Requests() {
		if r.Method != http.MethodGet && strings.Contains(string(r.Body), `"bug"`) {
			t.Fatalf("a rejected label reached Gitea: %s %s %s", r.Method, r.Path, r.Body)
		}
	}

	// The ledger as Markdown.
	get := func(secret string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, s.srv.URL+"/v1/pm-state.md", nil)
		if secret != "" {
			req.Header.Set("Authorization", "Bearer "+secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusOK && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/markdown") {
			t.Fatalf("content type %q", resp.Header.Get("Content-Type"))
		}
		return resp.StatusCode, string(b)
	}
	status, md := get(readerSecret)
	if status != http.StatusOK || !strings.Contains(md, "> #2 comes first") || !strings.Contains(md, "> Bob is off next week") || !strings.Contains(md, "## Pending") {
		t.Fatalf("pm-state.md = %d\n%s", status, md)
	}
	if status, _ := get(""); status != http.StatusUnauthorized {
		t.Fatalf("pm-state.md without a token = %d", status)
	}
}
